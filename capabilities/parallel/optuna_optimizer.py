"""OptunaOptimizer (the ``parallel_optimization`` capability): how wide to run each capability.

For every capability there is one Optuna study (``<study_prefix>:<capability>``) over two
integers, ``concurrency`` (1..max_concurrency) and ``batch_size`` (1..max_batch), maximising
good items per second, ``(items - errors) / elapsed_s``, so a setting that is fast but fails
often loses to a slower one that delivers. The caller asks for a setting before a batch
(:meth:`suggest`), runs it, and reports what it saw (:meth:`report`).

``suggest`` explores (a new Optuna trial, sampled by TPE) until the study holds
``explore_trials`` finished trials, then returns the best setting found (``trial=None``).
Reports of such fixed settings are added to the study as finished trials too, so the study
keeps learning from every run, and ``best`` reflects all of them.

The studies live in Optuna's own storage, so they survive restarts and are shared by every
process that opens the same one: ``sqlite:///<data_dir>/optuna.db`` (Optuna's RDB storage)
or ``redis://...`` (Optuna's journal storage on Redis, keys under ``<study_prefix>:``).

Exceptions::

    OptimizerError (ValueError)   a bad storage URL, capability name or report
"""

from __future__ import annotations

import logging
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import optuna
from optuna.distributions import IntDistribution
from optuna.exceptions import ExperimentalWarning
from optuna.trial import TrialState

log = logging.getLogger("flora.parallel")

DEFAULT_MAX_CONCURRENCY = 8
DEFAULT_MAX_BATCH = 8
DEFAULT_EXPLORE_TRIALS = 40
DEFAULT_STARTUP_TRIALS = 8  # random settings before TPE has enough history to model
DEFAULT_STUDY_PREFIX = "flora-parallel"
OPTUNA_DB = "optuna.db"


class OptimizerError(ValueError):
    """The optimiser was misused: the message names the argument."""


@dataclass(frozen=True)
class ParallelSetting:
    concurrency: int
    batch_size: int
    trial: int | None  # the Optuna trial to report back to (None: fixed/exploited setting)

    def to_dict(self) -> dict:
        return {"concurrency": self.concurrency, "batch_size": self.batch_size, "trial": self.trial}


class OptunaOptimizer:
    def __init__(self, storage_url: str, *, max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
                 max_batch: int = DEFAULT_MAX_BATCH, seed: int | None = None,
                 explore_trials: int = DEFAULT_EXPLORE_TRIALS, study_prefix: str = DEFAULT_STUDY_PREFIX,
                 startup_trials: int = DEFAULT_STARTUP_TRIALS):
        if max_concurrency < 1 or max_batch < 1:
            raise OptimizerError(f"max_concurrency and max_batch must be >= 1, got {max_concurrency}, {max_batch}")
        if explore_trials < 1:
            raise OptimizerError(f"explore_trials must be >= 1, got {explore_trials}")
        if not study_prefix:
            raise OptimizerError("study_prefix must not be empty")
        quiet_optuna()
        self.storage_url = storage_url
        self.study_prefix = study_prefix
        self._distributions = {"concurrency": IntDistribution(1, max_concurrency),
                               "batch_size": IntDistribution(1, max_batch)}
        self._seed = seed
        self._explore = explore_trials
        self._startup = startup_trials
        self._storage = _open_storage(storage_url, study_prefix)
        self._studies: dict[str, optuna.Study] = {}
        self._asked: dict[tuple[str, int], optuna.Trial] = {}
        self._lock = threading.Lock()  # one actor may serve several batches from threads

    @classmethod
    def from_config(cls, config) -> "OptunaOptimizer":
        """The optimiser the ``parallel`` section of a FloraConfig describes."""
        section = config.parallel
        return cls(parallel_storage_url(config), max_concurrency=section.max_concurrency,
                   max_batch=section.max_batch, seed=section.seed, explore_trials=section.explore_trials,
                   study_prefix=section.study_prefix)

    # -- the loop: suggest, run, report -------------------------------------------------
    def suggest(self, capability: str) -> ParallelSetting:
        with self._lock:
            study = self._study(capability, create=True)
            if _finished(study) >= self._explore:
                best = _best(study)
                if best is not None:
                    return best
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ExperimentalWarning)
                trial = study.ask(self._distributions)
            self._asked[(capability, trial.number)] = trial
            setting = ParallelSetting(trial.params["concurrency"], trial.params["batch_size"], trial.number)
        log.debug("parallel setting for %s: %s", capability, setting)
        return setting

    def report(self, setting: ParallelSetting, capability: str, *, items: int, elapsed_s: float,
               errors: int) -> None:
        if items < 0 or errors < 0 or errors > items:
            raise OptimizerError(f"report for {capability}: need 0 <= errors <= items, got items={items}, "
                                 f"errors={errors}")
        if not elapsed_s > 0:
            raise OptimizerError(f"report for {capability}: elapsed_s must be > 0, got {elapsed_s!r}")
        value = (items - errors) / elapsed_s
        attrs = {"items": items, "errors": errors, "elapsed_s": elapsed_s,
                 "error_rate": errors / items if items else 0.0,
                 "latency_s": elapsed_s / items if items else elapsed_s}
        with self._lock:
            study = self._study(capability, create=True)
            if setting.trial is None:
                params = {"concurrency": self._clamp(setting.concurrency, "concurrency"),
                          "batch_size": self._clamp(setting.batch_size, "batch_size")}
                study.add_trial(optuna.trial.create_trial(params=params, distributions=self._distributions,
                                                          value=value, user_attrs=attrs))
            else:
                # attributes can be set only through the live Trial, which exists in the process
                # that asked for it; a report from elsewhere records the value alone
                trial = self._asked.pop((capability, setting.trial), None)
                if trial is not None:
                    for name, attr in attrs.items():
                        trial.set_user_attr(name, attr)
                try:
                    study.tell(setting.trial, value)
                except (KeyError, ValueError, RuntimeError) as exc:  # unknown or already finished trial
                    raise OptimizerError(f"report for {capability}: trial {setting.trial}: {exc}") from exc
        log.info("parallel report capability=%s concurrency=%d batch=%d items=%d errors=%d elapsed_s=%.3f "
                 "good_per_s=%.2f", capability, setting.concurrency, setting.batch_size, items, errors,
                 elapsed_s, value)

    def best(self, capability: str) -> ParallelSetting | None:
        with self._lock:
            study = self._study(capability, create=False)
            return _best(study) if study is not None else None

    def trials(self, capability: str) -> list[dict]:
        """The finished trials of a capability's study (for benches, listings and tests)."""
        with self._lock:
            study = self._study(capability, create=False)
            if study is None:
                return []
            return [{"number": t.number, **t.params, "value": t.value, **t.user_attrs}
                    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))]

    # -- helpers -----------------------------------------------------------------------
    def study_name(self, capability: str) -> str:
        if not capability or not isinstance(capability, str):
            raise OptimizerError(f"capability must be a non-empty name, got {capability!r}")
        return f"{self.study_prefix}:{capability}"

    def _study(self, capability: str, *, create: bool) -> optuna.Study | None:
        study = self._studies.get(capability)
        if study is not None:
            return study
        name = self.study_name(capability)
        sampler = optuna.samplers.TPESampler(seed=self._seed, n_startup_trials=self._startup)
        if create:
            study = optuna.create_study(storage=self._storage, study_name=name, direction="maximize",
                                        sampler=sampler, load_if_exists=True)
        else:
            try:
                study = optuna.load_study(study_name=name, storage=self._storage, sampler=sampler)
            except KeyError:  # no study yet: nothing was ever reported for this capability
                return None
        self._studies[capability] = study
        return study

    def _clamp(self, value: int, name: str) -> int:
        dist = self._distributions[name]
        return min(max(int(value), dist.low), dist.high)


def _finished(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def _best(study: optuna.Study) -> ParallelSetting | None:
    if not _finished(study):
        return None
    params = study.best_trial.params
    return ParallelSetting(int(params["concurrency"]), int(params["batch_size"]), None)


def _open_storage(url: str, prefix: str):
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        return optuna.storages.RDBStorage(url)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from optuna.storages.journal import JournalRedisBackend, JournalStorage

        with warnings.catch_warnings():  # stable in use since Optuna 3.1, still labelled experimental
            warnings.simplefilter("ignore", ExperimentalWarning)
            return JournalStorage(JournalRedisBackend(url, prefix=prefix))
    raise OptimizerError(f"parallel storage: {url!r} is neither sqlite:///<path> nor redis://...")


def parallel_storage_url(config) -> str:
    """Where the studies of a FloraConfig live: ``parallel.storage`` sqlite (``parallel.sqlite_path``,
    default ``<data_dir>/optuna.db``) or redis (``redis.url``)."""
    section = config.parallel
    if section.storage == "redis":
        return config.redis.url
    path = Path(section.sqlite_path) if section.sqlite_path else Path(config.data_dir) / OPTUNA_DB
    return f"sqlite:///{path.resolve()}"


def quiet_optuna() -> None:
    """Optuna reports every trial at INFO; Flora's logs keep only its warnings."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
