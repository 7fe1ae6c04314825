"""The probes of bench/probes.py as checks: malformed input to the actors and to every POST
route, tenant B against tenant A's paused task, Flora at its size limits, SQL tricks.

One API server (the fake model, two tenants' keys, a capability whose result is as large as
asked) and one Flora in this process for the actor probe. Counts are the probes' own where
the count is the point (1,000 of each); ``python -m bench.probes`` prints the numbers.
"""

from __future__ import annotations

import pytest

import main
from bench import probes
from tests.support.flora_process import end_marked, marked_pids

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process, mark, url = probes.start_server(tmp_path_factory.mktemp("probes"))
    yield url, mark
    process.terminate()
    process.wait(timeout=30)
    end_marked(mark)


@pytest.fixture(scope="module")
def flora(tmp_path_factory):
    running = main.start_flora({**probes.server_config(tmp_path_factory.mktemp("probe-actors")), "http": {}})
    yield running
    running.shutdown()


def test_a_thousand_malformed_messages_to_every_reachable_actor_crash_nothing(flora):
    result = probes.probe_actors(flora, 1000)
    assert result.sent >= 1000
    assert result.poison == [], result.poison[:5]
    assert result.died == []
    assert result.answers_after
    assert result.replies["task_error:malformed_message"] + result.replies["task_error:unknown_message_type"] > 500


def test_a_thousand_malformed_bodies_on_each_post_route_get_no_5xx_and_no_hang(server):
    url, _ = server
    result = probes.probe_http(url, probes.KEY_A, 1000)
    assert sum(sum(c.values()) for c in result.per_route.values()) == 1000 * len(probes.POST_ROUTES)
    assert result.server_errors == [] and result.hangs == []
    assert all(code < 500 for counts in result.per_route.values() for code in counts)
    assert result.answers_after


def test_tenant_b_sees_and_changes_nothing_of_tenant_as_paused_task(server):
    url, _ = server
    result = probes.probe_tenants(url, probes.KEY_A, probes.KEY_B)
    assert len(result.tried) >= 30
    assert result.leaks == []
    assert result.task_still_paused


def test_at_its_limits_flora_refuses_clearly_keeps_its_memory_and_answers(server, flora):
    url, mark = server
    result = probes.probe_limits(url, probes.KEY_A, lambda: marked_pids(mark), flora)
    assert result.http_10mb[0] == 413
    assert result.actor_10mb.startswith("task_error too_large") and "100,000" in result.actor_10mb
    assert result.concurrent == {"200": 200}
    assert result.big_result.startswith("200 task_error too_large") and "8 MB" in result.big_result
    # the 50 MB never travelled: the server's processes grew by far less than the result
    assert result.rss_mb["after 50 MB result"] - result.rss_mb["after 200 concurrent"] < 50
    assert result.answers_after


def test_sql_that_writes_attaches_or_changes_settings_is_refused_and_changes_nothing(tmp_path):
    result = probes.probe_sql(tmp_path)
    assert result.allowed == ["SELECT * FROM sales; -- trailing"]  # a read with a comment: fine
    assert result.refused == len(probes.SQL_TRICKS) - 1
    assert not result.changed and not result.other_created and result.reads_ok
