"""The chroma_http backend against a real Chroma server (``chroma run`` from the chromadb
package), and what callers see when no server answers."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from capabilities.memory.service import MemoryCapability
from capabilities.memory.store import MemoryStore, MemoryUnavailable
from tests.memory.conftest import free_port, stop, wait_for_heartbeat


def test_remember_recall_and_forget_through_a_chroma_server(embedder, chroma_server):
    store = MemoryStore(embedder, backend="chroma_http", url=chroma_server)
    made = store.remember("acme", "server-li", "我在杭州的阿里巴巴工作", subject="employer", kind="work",
                          source_message_ids=["m1"]).record
    store.remember("acme", "server-wang", "I work at a bakery in Hangzhou", subject="employer", kind="work")
    assert store.recall("acme", "server-li", "Where is my job?", 5)[0].record == made
    assert [r.memory_id for r in store.list("acme", "server-li")] == [made.memory_id]
    assert store.get("acme", "server-wang", made.memory_id) is None
    assert store.remember("acme", "server-li", "我在杭州的阿里巴巴工作。", subject="employer",
                          kind="work").action == "merged"
    assert store.forget("acme", "server-li", made.memory_id) and store.count("acme", "server-li") == 0
    assert store.count("acme", "server-wang") == 1


def test_two_nodes_share_memories_through_the_server(embedder, chroma_server):
    node_a = MemoryStore(embedder, backend="chroma_http", url=chroma_server)
    node_b = MemoryStore(embedder, backend="chroma_http", url=chroma_server)
    written = node_a.remember("acme", "shared-li", "Has a standing meeting every Monday at 9", subject="meeting",
                              kind="recurring_need").record
    node_a.mark_sources("acme", "shared-li", ["m7"])
    assert node_b.recall("acme", "shared-li", "when is my weekly sync?", 1)[0].record == written
    assert node_b.seen_sources("acme", "shared-li", ["m7"]) == {"m7"}


def test_two_nodes_moving_one_persons_memories_to_a_new_model_at_once_both_keep_serving(embedder, chroma_server):
    """Both nodes upgraded: each finds the person's collection of the old model; whichever
    reads or drops it after the other has moved it finds nothing there, which is an answer,
    not an outage."""
    from capabilities.memory.embedding import get_embedder
    from capabilities.memory.store import COLLECTION_PREFIX, _collection_name

    old = MemoryStore(get_embedder("multilingual-e5-small"), backend="chroma_http", url=chroma_server)
    made = old.remember("acme", "moving-li", "I have a cat named Mochi", subject="pet").record
    earlier = _collection_name("acme", "moving-li", COLLECTION_PREFIX, "multilingual-e5-small")
    node_a = MemoryStore(embedder, backend="chroma_http", url=chroma_server)
    node_b = MemoryStore(embedder, backend="chroma_http", url=chroma_server)
    client = node_b._open()[0]
    seen_before = client.get_collection(earlier, embedding_function=None)  # node b found it...

    class LostTheRace:  # ...and node a moved it and dropped it meanwhile
        def get_collection(self, name, **kwargs):
            return seen_before

        def delete_collection(self, name):
            client.delete_collection(name)

    assert node_a.get("acme", "moving-li", made.memory_id) == made
    node_b._move_into(LostTheRace(), earlier, node_b._person_collection("acme", "moving-li"))
    node_b.ping()  # not marked unavailable
    assert node_b.get("acme", "moving-li", made.memory_id) == made
    assert node_b.recall("acme", "moving-li", "what animal lives with me?", 1)[0].record == made


def test_no_server_listening_is_memory_unavailable_at_once(embedder):
    store = MemoryStore(embedder, backend="chroma_http", url=f"http://127.0.0.1:{free_port()}")
    started = time.monotonic()
    with pytest.raises(MemoryUnavailable, match="chroma_http at http://127.0.0.1"):
        store.recall("acme", "li", "anything")
    with pytest.raises(MemoryUnavailable):  # and again without touching the network
        store.remember("acme", "li", "Likes tea")
    assert time.monotonic() - started < 3.0
    assert MemoryCapability(store).health().startswith("degraded: memory store (chroma_http")


def test_a_server_that_goes_away_is_memory_unavailable_then_recovers(embedder, tmp_path):
    cli = Path(sys.executable).parent / "chroma"
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def start():
        log = tmp_path / "server.log"
        process = subprocess.Popen([str(cli), "run", "--path", str(tmp_path / "data"), "--host", "127.0.0.1",
                                    "--port", str(port)], stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                                   start_new_session=True)
        wait_for_heartbeat(url, process, log)
        return process

    process = start()
    store = MemoryStore(embedder, backend="chroma_http", url=url, retry_after_s=0.0)
    memory = MemoryCapability(store)
    try:
        store.remember("acme", "li", "Runs a marathon every spring", subject="marathon")
        assert memory.health() == "ok"
        stop(process)
        started = time.monotonic()
        with pytest.raises(MemoryUnavailable):
            store.recall("acme", "li", "what sport do I do?")
        assert time.monotonic() - started < 12.0  # bounded by the client's timeouts, not hanging
        assert memory.health().startswith("degraded:")
        process = start()
        assert store.recall("acme", "li", "what sport do I do?", 1)[0].record.fact == "Runs a marathon every spring"
        assert memory.health() == "ok"
    finally:
        stop(process)


def test_operators_see_whether_memory_answers_in_status_and_health(chroma_server, tmp_path):
    from common.status import memory_health, render_prometheus, render_text
    from config import load_config

    def state(memory: dict) -> str:
        return memory_health(load_config({"data_dir": str(tmp_path), "memory": memory}, env={}))["state"]

    assert state({"backend": "chroma_http", "chroma_url": chroma_server}) == "ok"
    gone = state({"backend": "chroma_http", "chroma_url": f"http://127.0.0.1:{free_port()}"})
    assert gone.startswith("degraded: Chroma at http://127.0.0.1:") and "memory.chroma_url" in gone
    assert state({"enabled": False}) == "off"
    assert state({}) == "ok"  # embedded: its folder need not exist yet, only be creatable
    (tmp_path / "file").write_text("not a folder")
    assert state({"path": str(tmp_path / "file" / "memory")}).startswith("degraded: ")
    status = {"tasks": {"by_tenant": {}, "total": {}}, "queues": {}, "loop_tasks": {"by_tenant": {}, "total": {}},
              "nodes": [], "store": {"backend": "sqlite", "location": "x"},
              "loop_registry": {"backend": "sqlite", "location": "x"},
              "memory": {"backend": "chroma_http", "location": "http://c:8000", "state": "degraded: down"}}
    assert "memory: chroma_http http://c:8000 degraded: down" in render_text(status)
    assert "flora_memory_up 0" in render_prometheus(status)
