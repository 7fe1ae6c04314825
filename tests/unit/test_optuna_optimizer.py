"""OptunaOptimizer: it finds the best concurrency of a simulated capability, and its studies
persist in SQLite and in the real Redis."""


import pytest
import redis

from capabilities.parallel.optuna_optimizer import (
    OptimizerError, OptunaOptimizer, ParallelSetting, parallel_storage_url)
from config import load_config
from tests.unit.conftest import REDIS_URL

BEST_CONCURRENCY = 4
ITEMS = 40


def throughput(concurrency: int) -> float:
    """Items per second of a capability that saturates past 4 workers and then thrashes."""
    return concurrency / (1 + max(0, concurrency - BEST_CONCURRENCY) ** 2 * 0.5)


def run_batches(optimizer: OptunaOptimizer, capability: str, n: int) -> list[ParallelSetting]:
    settings = []
    for _ in range(n):
        setting = optimizer.suggest(capability)
        optimizer.report(setting, capability, items=ITEMS, elapsed_s=ITEMS / throughput(setting.concurrency), errors=0)
        settings.append(setting)
    return settings


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'optuna.db'}"


@pytest.mark.slow
def test_optimizer_moves_toward_the_known_best_concurrency(sqlite_url):
    optimizer = OptunaOptimizer(sqlite_url, max_concurrency=8, max_batch=4, seed=11, explore_trials=30)
    settings = run_batches(optimizer, "sim", 30)
    assert all(s.trial is not None for s in settings)  # all exploration, reported to their trials
    distance = [abs(s.concurrency - BEST_CONCURRENCY) for s in settings]
    assert sum(distance[-10:]) < sum(distance[:10])
    assert optimizer.best("sim").concurrency == BEST_CONCURRENCY
    # the exploration budget is spent: the best setting is used from now on, as a fixed one
    exploit = optimizer.suggest("sim")
    assert (exploit.concurrency, exploit.trial) == (BEST_CONCURRENCY, None)


def test_a_fixed_setting_report_becomes_a_finished_trial(sqlite_url):
    optimizer = OptunaOptimizer(sqlite_url, max_concurrency=8, max_batch=8, seed=1)
    optimizer.report(ParallelSetting(3, 2, None), "sim", items=10, elapsed_s=2.0, errors=0)
    optimizer.report(ParallelSetting(12, 2, None), "sim", items=10, elapsed_s=1.0, errors=0)  # clamped to 8
    assert [(t["concurrency"], t["value"]) for t in optimizer.trials("sim")] == [(3, 5.0), (8, 10.0)]
    assert optimizer.best("sim") == ParallelSetting(8, 2, None)


def test_errors_count_against_a_setting(sqlite_url):
    optimizer = OptunaOptimizer(sqlite_url, seed=1)
    fast = optimizer.suggest("flaky")
    optimizer.report(fast, "flaky", items=10, elapsed_s=1.0, errors=8)
    slow = optimizer.suggest("flaky")
    optimizer.report(slow, "flaky", items=10, elapsed_s=2.0, errors=0)
    trials = optimizer.trials("flaky")
    assert [t["value"] for t in trials] == [2.0, 5.0]
    assert trials[0]["error_rate"] == 0.8 and trials[1]["latency_s"] == 0.2
    assert optimizer.best("flaky") == ParallelSetting(slow.concurrency, slow.batch_size, None)


def test_studies_are_per_capability_and_unknown_ones_have_no_best(sqlite_url):
    optimizer = OptunaOptimizer(sqlite_url, seed=3)
    run_batches(optimizer, "a", 2)
    assert optimizer.best("b") is None
    assert optimizer.trials("b") == []
    assert len(optimizer.trials("a")) == 2


def test_bad_reports_are_refused(sqlite_url):
    optimizer = OptunaOptimizer(sqlite_url, seed=3)
    setting = optimizer.suggest("sim")
    with pytest.raises(OptimizerError, match="errors <= items"):
        optimizer.report(setting, "sim", items=2, elapsed_s=1.0, errors=3)
    with pytest.raises(OptimizerError, match="elapsed_s must be > 0"):
        optimizer.report(setting, "sim", items=2, elapsed_s=0, errors=0)
    optimizer.report(setting, "sim", items=2, elapsed_s=1.0, errors=0)
    with pytest.raises(OptimizerError, match=f"trial {setting.trial}"):
        optimizer.report(setting, "sim", items=2, elapsed_s=1.0, errors=0)  # already told
    with pytest.raises(OptimizerError, match="neither sqlite"):
        OptunaOptimizer("postgres://nowhere")


def test_sqlite_study_persists_across_restarts(sqlite_url):
    first = OptunaOptimizer(sqlite_url, seed=5, explore_trials=100)
    run_batches(first, "sim", 6)
    before = first.trials("sim")
    asked = first.suggest("sim")  # asked but never reported, as when a process dies mid-batch

    second = OptunaOptimizer(sqlite_url, seed=5, explore_trials=100)  # a new process on the same file
    assert second.trials("sim") == [{k: v for k, v in t.items()} for t in before]
    assert second.best("sim") == first.best("sim")
    second.report(asked, "sim", items=10, elapsed_s=1.0, errors=0)  # the trial lives in the storage
    assert len(first.trials("sim")) == 7


def test_redis_study_persists_across_restarts(redis_prefix):
    first = OptunaOptimizer(REDIS_URL, seed=5, study_prefix=redis_prefix)
    run_batches(first, "sim", 4)
    second = OptunaOptimizer(REDIS_URL, seed=5, study_prefix=redis_prefix)
    assert [t["number"] for t in second.trials("sim")] == [0, 1, 2, 3]
    assert second.best("sim") == first.best("sim")
    assert redis.Redis.from_url(REDIS_URL).exists(f"{redis_prefix}:log_number")
    other = OptunaOptimizer(REDIS_URL, seed=5, study_prefix=f"{redis_prefix}:other")
    assert other.best("sim") is None  # another prefix is another set of studies


def test_storage_url_from_config(tmp_path):
    config = load_config({"data_dir": str(tmp_path)}, env={})
    assert parallel_storage_url(config) == f"sqlite:///{(tmp_path / 'optuna.db').resolve()}"
    config = load_config({"parallel": {"storage": "redis"}, "redis": {"url": "redis://127.0.0.1:6379/3"}}, env={})
    assert parallel_storage_url(config) == "redis://127.0.0.1:6379/3"
    optimizer = OptunaOptimizer.from_config(load_config({"data_dir": str(tmp_path / "d"),
                                                         "parallel": {"max_concurrency": 3}}, env={}))
    assert (tmp_path / "d" / "optuna.db").exists()
    assert optimizer.suggest("x").concurrency <= 3
