"""Spans (common/spans.py): nothing recorded and nothing allocated when off; when on, each name's
own time (its nested spans' time is theirs), its count and the SQL statements run inside it,
written to a file per process and added up by the bench."""

from __future__ import annotations

import sqlite3
import time

from common import spans


def test_off_a_span_is_one_shared_object_that_records_nothing(monkeypatch):
    monkeypatch.setattr(spans, "_recorder", None)
    assert spans.span("store.get_task") is spans.span("reading")
    with spans.span("reading"):
        pass
    assert not spans.enabled()


def test_on_nested_spans_keep_their_own_time_and_their_statements(tmp_path, monkeypatch):
    monkeypatch.setattr(spans, "_recorder", None)
    spans.configure(str(tmp_path))
    db = sqlite3.connect(":memory:")
    spans.count_statements(db)
    with spans.span("handler.agent.agent_task"):
        time.sleep(0.02)
        with spans.span("store.get_task"):
            db.execute("SELECT 1").fetchall()
            db.execute("SELECT 2").fetchall()
            time.sleep(0.02)
    spans._recorder.flush()
    totals = spans.read_totals(tmp_path)
    outer, inner = totals["handler.agent.agent_task"], totals["store.get_task"]
    assert (outer[0], inner[0]) == (1, 1) and (outer[2], inner[2]) == (0, 2)
    assert 0.015 < outer[1] < 0.035 and 0.015 < inner[1] < 0.035  # the outer one's own time excludes the inner
    assert spans.difference(totals, {"store.get_task": [1, inner[1], 2]}) == {"handler.agent.agent_task": outer}


def test_a_forked_process_records_afresh(tmp_path, monkeypatch):
    monkeypatch.setattr(spans, "_recorder", None)
    spans.configure(str(tmp_path))
    parent = spans._recorder
    monkeypatch.setattr(parent, "pid", -1)  # as a child of it sees it
    spans.configure(str(tmp_path))
    assert spans._recorder is not parent and spans._recorder.totals == {}


def test_each_calls_own_time_is_kept_for_percentiles(tmp_path, monkeypatch):
    monkeypatch.setattr(spans, "_recorder", None)
    spans.configure(str(tmp_path))
    with spans.span("reading"):
        time.sleep(0.01)
    spans._recorder.flush()
    before = spans.read_samples(tmp_path)
    for pause in (0.001, 0.03):
        with spans.span("reading"):
            time.sleep(pause)
    spans._recorder.flush()
    kept = spans.samples_between(spans.read_samples(tmp_path), before)["reading"]
    assert len(kept) == 2 and kept[0] < 0.02 <= kept[1]
    assert set(spans.read_totals(tmp_path)) == {"reading"}  # the samples file is no totals file


def test_a_recorder_whose_folder_is_gone_stops_flushing_quietly(tmp_path, monkeypatch):
    import shutil
    import threading

    monkeypatch.setattr(spans, "FLUSH_S", 0.01)
    (tmp_path / "run").mkdir()
    recorder = spans.Recorder(tmp_path / "run" / "1.json")
    recorder.totals["reading"] = [1, 0.01, 0]  # something not yet written
    shutil.rmtree(tmp_path / "run")  # the run it measured ended and took its folder
    raised: list[BaseException] = []

    def flush_forever() -> None:
        try:
            recorder._flush_forever()
        except BaseException as exc:  # what would end the thread with a traceback
            raised.append(exc)

    flusher = threading.Thread(target=flush_forever)
    flusher.start()
    flusher.join(timeout=5)
    assert not flusher.is_alive() and raised == []  # it returned quietly
