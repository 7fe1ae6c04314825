"""``run_last``: a test that disturbs what its module shares (restarting the broker under a
running Flora) runs after the module's other tests, whatever order they were written in."""

from __future__ import annotations


def pytest_configure(config):
    config.addinivalue_line("markers", "run_last: run after the other tests of its module")


def pytest_collection_modifyitems(session, config, items):
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(item.nodeid.split("::", 1)[0], index)
    items.sort(key=lambda item: (first_seen[item.nodeid.split("::", 1)[0]],
                                 item.get_closest_marker("run_last") is not None))
