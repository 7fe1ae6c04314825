"""MemoryStore on a real embedded Chroma with the real packaged embedding models (memory's default)."""

from __future__ import annotations

import os
import threading

import pytest

import capabilities.memory.chroma as chroma_module

from capabilities.memory.embedding import get_embedder
from capabilities.memory.store import COLLECTION_PREFIX, MemoryStore, _collection_name, _earlier_names

T, U = "acme", "li"


def remember(store, fact, user=U, tenant=T, **kw):
    return store.remember(tenant, user, fact, **kw)


def test_a_remembered_fact_is_recalled_by_a_paraphrased_question(store):
    remember(store, "I have a cat named Mochi", subject="pet", kind="personal", source_message_ids=["m1"])
    remember(store, "I work on the billing team", subject="team", kind="work")
    remember(store, "我每周五下午要交周报", subject="周报", kind="recurring_need")

    hits = store.recall(T, U, "what animal lives with me?", 3)
    assert hits[0].record.fact == "I have a cat named Mochi"
    assert hits[0].record.source_message_ids == ("m1",)
    assert store.recall(T, U, "我哪天要交报告？", 1)[0].record.fact == "我每周五下午要交周报"
    assert all(-1.0 <= h.score <= 1.0 for h in hits) and hits == sorted(hits, key=lambda h: -h.score)


def test_min_score_drops_weak_matches(store):
    remember(store, "I have a cat named Mochi")
    assert store.recall(T, U, "what animal lives with me?", 5, min_score=0.99) == []


def test_a_near_duplicate_merges_into_the_old_record(store):
    first = remember(store, "I have a cat named Mochi", subject="pet", kind="personal", confidence=0.6,
                     source_message_ids=["m1"])
    again = remember(store, "I have a cat called Mochi.", subject="cat", kind="personal", confidence=0.9,
                     source_message_ids=["m2"])
    assert (first.action, again.action) == ("created", "merged")
    assert again.record.memory_id == first.record.memory_id
    assert again.record.source_message_ids == ("m1", "m2") and again.record.confidence == 0.9
    assert store.count(T, U) == 1


@pytest.mark.parametrize("old, new", [("I have a cat named Mochi", "I have a dog named Mochi"),
                                      ("我喜欢喝绿茶", "我喜欢喝红茶"), ("My sister lives in Toronto", "My brother lives in Toronto")])
def test_a_different_fact_of_the_same_shape_is_kept_apart(store, old, new):
    remember(store, old)
    assert remember(store, new).action == "created"
    assert store.count(T, U) == 2


def test_the_same_text_merges_even_in_another_case(store):
    remember(store, "Prefers green tea")
    assert remember(store, "prefers GREEN tea.").action == "merged"
    assert store.count(T, U) == 1


def test_a_contradicting_fact_of_the_same_subject_updates_and_keeps_history(store):
    old = remember(store, "Lives in Beijing", subject="home city", kind="personal", source_message_ids=["m1"])
    new = remember(store, "Moved to Shanghai last month", subject="Home  City", kind="personal",
                   source_message_ids=["m9"])
    assert new.action == "updated" and new.record.memory_id == old.record.memory_id
    assert new.record.fact == "Moved to Shanghai last month"
    assert [v["fact"] for v in new.record.history] == ["Lives in Beijing"]
    assert new.record.history[0]["source_message_ids"] == ["m1"]
    assert new.replaced.fact == "Lives in Beijing"
    assert store.count(T, U) == 1
    assert store.recall(T, U, "which city do I live in?", 1)[0].record.fact == "Moved to Shanghai last month"
    assert store.get(T, U, old.record.memory_id).history == new.record.history


def test_a_new_name_replaces_the_old_whatever_the_subject(store):
    remember(store, "The person's name is Li Wei", subject="name", kind="name")
    changed = remember(store, "我叫王芳", subject="名字", kind="name")
    assert changed.action == "updated"
    assert [r.fact for r in store.list(T, U)] == ["我叫王芳"]


def test_different_facts_of_the_same_kind_without_a_shared_subject_are_kept_apart(store):
    remember(store, "Has a cat named Mochi", subject="cat", kind="personal")
    remember(store, "Has a dog named Biscuit", subject="dog", kind="personal")
    assert store.count(T, U) == 2


def test_a_fact_over_the_limit_is_stored_truncated_with_a_note(embedder, tmp_path):
    store = MemoryStore(embedder, path=tmp_path / "memory", max_fact_chars=2000)
    huge = "I keep notes about my garden. " * 40_000  # ~1.2 MB
    done = remember(store, huge)
    assert len(done.record.fact) <= 2000
    assert done.record.fact.endswith(f"[…truncated: {len(huge.strip())} characters]")
    assert done.record.truncated_from == len(huge.strip())
    assert store.get(T, U, done.record.memory_id).fact == done.record.fact


def test_forget_removes_one_memory(store):
    keep = remember(store, "Works on the billing team", subject="team", kind="work").record
    gone = remember(store, "Has a cat named Mochi", subject="cat").record
    assert store.forget(T, U, gone.memory_id) is True
    assert store.forget(T, U, gone.memory_id) is False
    assert [r.memory_id for r in store.list(T, U)] == [keep.memory_id]


def test_forget_matching_removes_what_the_sentence_says_and_nothing_else(store):
    remember(store, "I have a cat named Mochi", subject="cat")
    remember(store, "I'm allergic to peanuts", subject="allergy")
    remember(store, "我在杭州工作", subject="work city")
    removed = store.forget_matching(T, U, "I have a cat")
    assert [r.fact for r in removed] == ["I have a cat named Mochi"]
    assert sorted(r.fact for r in store.list(T, U)) == ["I'm allergic to peanuts", "我在杭州工作"]
    assert store.forget_matching(T, U, "我在杭州工作") and store.count(T, U) == 1
    assert store.forget_matching(T, U, "the weather in Paris") == []


def test_clear_removes_every_memory_of_the_person(store):
    for fact in ("Likes hiking in the mountains", "Plays the violin", "我女儿叫小美"):
        remember(store, fact, subject=fact)
    assert store.clear(T, U) == 3 and store.count(T, U) == 0 and store.list(T, U) == []


def test_list_is_newest_first(embedder, tmp_path):
    ticks = iter(range(100))
    store = MemoryStore(embedder, path=tmp_path / "memory", clock=lambda: float(next(ticks)))
    for fact in ("Likes hiking", "Plays the violin", "Drinks oolong tea"):
        remember(store, fact, subject=fact)
    assert [r.fact for r in store.list(T, U)] == ["Drinks oolong tea", "Plays the violin", "Likes hiking"]


def test_memories_survive_reopening_the_store(embedder, tmp_path):
    first = MemoryStore(embedder, path=tmp_path / "memory")
    made = remember(first, "My daughter's name is Xiaomei", subject="daughter", kind="relation").record
    first.mark_sources(T, U, ["m1"])
    again = MemoryStore(embedder, path=tmp_path / "memory")
    assert again.get(T, U, made.memory_id) == made
    assert again.seen_sources(T, U, ["m1", "m2"]) == {"m1"}


def test_memories_kept_with_another_embedding_model_are_re_embedded_on_first_use(embedder, tmp_path):
    """memory.embedding_model changed (or Flora upgraded to another default): a person's
    memories and their questions move to the new model's collections, embedded anew from their
    text, and the old collections go; other people's move when they are next used."""
    import chromadb
    from chromadb.config import Settings

    e5 = get_embedder("multilingual-e5-small")
    old = MemoryStore(e5, path=tmp_path / "memory")
    cat = remember(old, "I have a cat named Mochi", subject="pet", source_message_ids=["m1"]).record
    old.set_questions(T, U, cat.memory_id, ["What pet do I have?", "我养了什么宠物？"])
    remember(old, "我在杭州工作", subject="work city")
    remember(old, "I play the cello", user="bob")
    del old

    new = MemoryStore(embedder, path=tmp_path / "memory")
    assert new.get(T, U, cat.memory_id) == cat
    assert new.questions(T, U, cat.memory_id) == ["What pet do I have?", "我养了什么宠物？"]
    assert new.recall(T, U, "what animal lives with me?", 1)[0].record.memory_id == cat.memory_id
    assert sorted(r.fact for r in new.list(T, U)) == ["I have a cat named Mochi", "我在杭州工作"]
    names = {c.name for c in chromadb.PersistentClient(path=str(tmp_path / "memory"),
                                                        settings=Settings(anonymized_telemetry=False)).list_collections()}
    assert _collection_name(T, U, COLLECTION_PREFIX, e5.name) not in names
    assert _collection_name(T, U, COLLECTION_PREFIX, embedder.name) in names
    assert _collection_name(T, "bob", COLLECTION_PREFIX, e5.name) in names  # not used yet
    assert [r.fact for r in new.list(T, "bob")] == ["I play the cello"]
    assert _collection_name(T, "bob", COLLECTION_PREFIX, e5.name) not in {
        c.name for c in chromadb.PersistentClient(path=str(tmp_path / "memory"),
                                                  settings=Settings(anonymized_telemetry=False)).list_collections()}


def test_memories_from_before_collections_named_their_model_are_kept(embedder, tmp_path):
    """Collections were once named by the person alone (then always multilingual-e5-small's)."""
    e5 = get_embedder("multilingual-e5-small")
    old = MemoryStore(e5, path=tmp_path / "memory")
    made = remember(old, "My daughter's name is Xiaomei", subject="daughter", kind="relation").record
    legacy = _earlier_names(T, U, COLLECTION_PREFIX, e5.name)[0]
    old._person_collection(T, U).modify(name=legacy)  # as an earlier version left it
    del old
    assert MemoryStore(embedder, path=tmp_path / "memory").get(T, U, made.memory_id) == made


def test_an_empty_fact_or_scope_is_refused(store):
    with pytest.raises(ValueError):
        remember(store, "   ")
    with pytest.raises(ValueError):
        store.recall(T, "", "anything")


# -- isolation: nothing done for one person reaches another --------------------------------
OTHERS = [("acme", "wang"), ("globex", "li")]  # another user of the tenant; the same user id in another tenant


@pytest.fixture
def three_people(store):
    """Li of acme, Wang of acme and Li of globex each say the same things."""
    ids = {}
    for tenant, user in [(T, U), *OTHERS]:
        ids[(tenant, user)] = [
            remember(store, "I have a cat named Mochi", tenant=tenant, user=user, subject="cat").record.memory_id,
            remember(store, "I'm allergic to peanuts", tenant=tenant, user=user, subject="allergy").record.memory_id,
        ]
        store.mark_sources(tenant, user, [f"msg-{tenant}-{user}"])
    return ids


def _owned(store, tenant, user, expected_ids):
    assert sorted(r.memory_id for r in store.list(tenant, user)) == sorted(expected_ids)
    assert all((r.tenant_id, r.user_id) == (tenant, user) for r in store.list(tenant, user))


def test_recall_list_get_and_count_see_only_the_person_asking(store, three_people):
    for (tenant, user), ids in three_people.items():
        assert {h.record.memory_id for h in store.recall(tenant, user, "what pet do I have?", 10)} <= set(ids)
        assert all((h.record.tenant_id, h.record.user_id) == (tenant, user)
                   for h in store.recall(tenant, user, "allergy", 10))
        _owned(store, tenant, user, ids)
        assert store.count(tenant, user) == 2
        for other, other_ids in three_people.items():
            if other != (tenant, user):
                assert store.get(tenant, user, other_ids[0]) is None
    assert store.recall(T, "nobody", "what pet do I have?", 10) == []


def test_forgetting_by_id_cannot_reach_another_persons_memory(store, three_people):
    wang_cat = three_people[OTHERS[0]][0]
    assert store.forget(T, U, wang_cat) is False
    _owned(store, *OTHERS[0], three_people[OTHERS[0]])


def test_forget_matching_and_clear_touch_only_the_person_asking(store, three_people):
    assert len(store.forget_matching(T, U, "I have a cat named Mochi")) == 1
    assert store.clear(T, U) == 1
    for other in OTHERS:
        _owned(store, *other, three_people[other])


def test_writes_merge_and_update_only_within_the_person(store, three_people):
    done = remember(store, "I have a cat named Mochi", tenant="acme", user="new-user", subject="cat")
    assert done.action == "created"
    updated = remember(store, "No longer allergic to peanuts", tenant="globex", user="li", subject="allergy")
    assert updated.action == "updated" and updated.record.memory_id == three_people[("globex", "li")][1]
    assert store.get(T, U, three_people[(T, U)][1]).fact == "I'm allergic to peanuts"


def test_distilled_sources_are_per_person(store, three_people):
    assert store.seen_sources(T, U, [f"msg-{T}-{U}", "msg-acme-wang"]) == {f"msg-{T}-{U}"}
    assert store.seen_sources("globex", "li", [f"msg-{T}-{U}"]) == set()


# -- the questions a memory answers ------------------------------------------------------
def test_a_memory_is_recalled_by_the_questions_it_answers(store):
    manager = remember(store, "Bitwarden keeps all my passwords").record
    other = remember(store, "I forget my passwords a lot").record
    asked = "Which password manager do I use?"
    assert store.recall(T, U, asked, 1)[0].record.memory_id == other.memory_id  # by the words alone

    assert store.set_questions(T, U, manager.memory_id, ["What password manager do I use?", "我用什么密码管理器？"]) == 2
    store.set_questions(T, U, other.memory_id, ["What is my favourite thing?"])
    hits = store.recall(T, U, asked, 2)
    assert [h.record.memory_id for h in hits] == [manager.memory_id, other.memory_id]
    assert all(-1.0 <= h.score <= 1.0 for h in hits)
    assert store.questions(T, U, manager.memory_id) == ["What password manager do I use?", "我用什么密码管理器？"]


def test_a_memory_found_only_by_its_question_is_scored_by_its_fact_too(store):
    for i in range(12):  # enough facts that the question's memory is not among the nearest facts
        remember(store, f"I visited the museum number {i} last year")
    target = remember(store, "Biscuit is a golden retriever").record
    store.set_questions(T, U, target.memory_id, ["What breed is my dog?"])
    hit = store.recall(T, U, "What breed is my dog?", 1)[0]
    assert hit.record.memory_id == target.memory_id and hit.record.fact == "Biscuit is a golden retriever"
    # its fact, not among the 4 nearest, counts at most as much as the 4th nearest: not the question's 1.0 alone
    assert hit.score < 1.0


def test_a_memory_gone_between_the_query_and_the_fetch_is_skipped_and_the_next_takes_its_place(store):
    pets = [remember(store, text).record for text in
            ("I have a cat named Mochi", "My dog Biscuit is a golden retriever", "I keep two goldfish")]
    for i in range(10):  # more facts than recall asks Chroma for: the gone memory's fact is not known to be gone
        remember(store, f"I visited the museum number {i} last year")
    store.set_questions(T, U, pets[0].memory_id, ["What pets do I have?"])
    store._person_collection(T, U).delete(ids=[pets[0].memory_id])  # its question is left, naming it
    hits = store.recall(T, U, "What pets do I have?", 2)
    assert [h.record.memory_id for h in hits] and pets[0].memory_id not in {h.record.memory_id for h in hits}
    assert len(hits) == 2


def test_questions_are_replaced_kept_at_most_eight_and_go_with_their_memory(store):
    cat = remember(store, "I have a cat named Mochi", subject="cat").record
    store.set_questions(T, U, cat.memory_id, [f"question {i}?" for i in range(12)])
    assert len(store.questions(T, U, cat.memory_id)) == 8
    store.set_questions(T, U, cat.memory_id, ["What is my cat called?", "  "])
    assert store.questions(T, U, cat.memory_id) == ["What is my cat called?"]
    updated = remember(store, "My cat Mochi died last spring", subject="cat")
    assert updated.action == "updated" and store.questions(T, U, cat.memory_id) == []  # they asked about the old text

    allergy = remember(store, "I'm allergic to peanuts").record
    store.set_questions(T, U, allergy.memory_id, ["What am I allergic to?"])
    assert store.forget(T, U, allergy.memory_id)
    assert store.questions(T, U, allergy.memory_id) == []
    with pytest.raises(KeyError):
        store.set_questions(T, U, allergy.memory_id, ["What am I allergic to?"])

    coffee = remember(store, "I drink my coffee black").record
    store.set_questions(T, U, coffee.memory_id, ["How do I take my coffee?"])
    assert store.clear(T, U) == 2 and store.questions(T, U, coffee.memory_id) == []  # the cat and the coffee
    assert store.recall(T, U, "How do I take my coffee?", 5) == []


def test_another_persons_questions_never_bring_their_memory(store, three_people):
    wang_cat = three_people[OTHERS[0]][0]
    store.set_questions(*OTHERS[0], wang_cat, ["Which animal do I share my home with?"])
    hits = store.recall(T, U, "Which animal do I share my home with?", 10)
    assert hits and {h.record.memory_id for h in hits} <= set(three_people[(T, U)])
    assert store.questions(T, U, wang_cat) == []
    with pytest.raises(KeyError):
        store.set_questions(T, U, wang_cat, ["Whose cat is this?"])


def test_recall_runs_its_two_queries_side_by_side_and_a_failure_of_either_is_raised():
    both = threading.Barrier(2, timeout=10)  # broken unless the two calls wait on it at once
    assert chroma_module._side_by_side(lambda: both.wait() * 0 + 1, lambda: both.wait() * 0 + 2) == (1, 2)

    def fails():
        raise ValueError("the questions query failed")

    with pytest.raises(ValueError, match="questions query"):
        chroma_module._side_by_side(lambda: 1, fails)
    with pytest.raises(ValueError, match="questions query"):
        chroma_module._side_by_side(fails, lambda: 2)


def test_a_forked_process_makes_its_own_worker_for_the_second_query(monkeypatch):
    chroma_module._side_by_side(lambda: 1, lambda: 2)
    parents = chroma_module._beside
    monkeypatch.setattr(chroma_module, "_beside", parents)  # put back afterwards
    monkeypatch.setattr(chroma_module.os, "getpid", lambda: parents[0] + 1)  # as in a child after fork
    assert chroma_module._side_by_side(lambda: 1, lambda: 2) == (1, 2)
    childs = chroma_module._beside
    assert childs[0] == parents[0] + 1 and childs[1] is not parents[1]
    childs[1].shutdown()


def test_a_forked_child_gets_a_free_lock_even_if_the_fork_came_while_it_was_held():
    import multiprocessing

    with chroma_module._beside_lock:  # held by this thread while the child is forked
        child = multiprocessing.get_context("fork").Process(
            target=lambda: os._exit(0 if chroma_module._side_by_side(lambda: 1, lambda: 2) == (1, 2) else 1))
        child.start()
    try:
        child.join(30)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.kill()
            child.join()


def test_a_process_forked_after_embedded_chroma_was_opened_refuses_it_instead_of_hanging(store, embedder, tmp_path):
    """Chroma's native runtime does not survive a fork: the child says so at once (and its
    parent's store goes on working)."""
    import multiprocessing

    from capabilities.memory.store import MemoryUnavailable, embedded_opened_in

    remember(store, "I have a cat named Mochi")
    assert embedded_opened_in() == os.getpid()

    def child(answer):
        try:
            MemoryStore(embedder, path=tmp_path / "child").count(T, U)
            answer.send("opened")
        except MemoryUnavailable as exc:
            answer.send(str(exc))

    parent_end, child_end = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=child, args=(child_end,))
    process.start()
    try:
        assert parent_end.poll(30), "the forked process did not answer"
        said = parent_end.recv()
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()
    assert "does not survive a fork" in said and str(os.getpid()) in said
    assert store.count(T, U) == 1


def test_stores_opening_one_path_at_once_all_work(embedder, tmp_path):
    """Two actors of one process open the same embedded Chroma at the same moment."""
    import threading

    stores = [MemoryStore(embedder, path=tmp_path / "shared") for _ in range(4)]
    failures = []

    def use(store, i):
        try:
            remember(store, f"fact number {i} about tea", user=f"u{i}")
        except Exception as exc:  # noqa: BLE001 — the test reports whatever went wrong
            failures.append(exc)

    threads = [threading.Thread(target=use, args=(s, i)) for i, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert [s.count(T, f"u{i}") for i, s in enumerate(stores)] == [1, 1, 1, 1]
