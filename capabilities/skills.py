"""Skills: capability plugins dropped into a folder, picked up and reloaded while Flora runs.

Each folder of ``capabilities.skills_dirs`` holds Python modules (``*.py``; names starting
with ``_`` or ``.`` are left alone) whose ``@capability`` functions become executable
capabilities. :class:`SkillLoader` registers them at start and then, before a lookup of
executables and at most once per ``capabilities.skills_reload_s`` seconds (at once when a
name is asked for that is not registered), compares the
folders with what it loaded (by each file's content, so an edit is seen however quickly it
follows the last one):

- a new file is imported and its capabilities registered;
- an edited file is imported afresh and its capabilities replaced by the new ones;
- a removed file's capabilities are withdrawn.

A file that fails to import (a syntax error, an exception at import time, an invalid
parameter schema), or that declares a name already taken by a built-in, a plugin or another
skill, registers nothing; the error is logged once and kept in :meth:`SkillLoader.problems`
(shown by ``main.py --status``), and the other skills are unaffected. A file registers all
of its capabilities or none. An edit that breaks a file withdraws what it had registered: what
runs is what the folder holds.

Every process that runs capabilities builds its own registry, so each one holds its own
loader and notices a change on its own, within the interval of its next lookup.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

from capabilities.base import CapabilitySpec, spec_of
from capabilities.registry import CapabilityRegistry

log = logging.getLogger("flora.skills")

DEFAULT_RELOAD_S = 1.0
MODULE_PREFIX = "flora_skill"


@dataclass
class _Loaded:
    digest: str
    names: list[str] = field(default_factory=list)
    module: str = ""  # its name in sys.modules; "" when it failed
    problem: str = ""


class SkillLoader:
    """Keeps a registry's skills in step with the skill folders."""

    def __init__(self, dirs: list[str | Path], *, reload_s: float = DEFAULT_RELOAD_S,
                 clock: Callable[[], float] = time.monotonic):
        self.dirs = [Path(d).absolute() for d in dirs]
        self.reload_s = reload_s
        self._clock = clock
        self._loaded: dict[Path, _Loaded] = {}
        self._checked_at: float | None = None
        self._lock = threading.Lock()

    def attach(self, registry: CapabilityRegistry) -> None:
        """Load the skills now and keep them current on the registry's lookups."""
        self.refresh(registry, force=True)
        registry.add_refresher(self.refresh)

    def refresh(self, registry: CapabilityRegistry, *, force: bool = False) -> None:
        """Bring the registry in line with the folders, unless it was done within ``reload_s``
        (and ``force`` is false)."""
        with self._lock:
            now = self._clock()
            if not force and self._checked_at is not None and now - self._checked_at < self.reload_s:
                return
            self._checked_at = now
            found = {path: (source, _digest(source)) for path, source in self._scan().items()}
            changed = [p for p, (_, digest) in found.items()
                       if p not in self._loaded or self._loaded[p].digest != digest]
            removed = [p for p in self._loaded if p not in found]
            if not changed and not removed:
                return
            for path in removed:
                self._unload(registry, path)
                log.info("skill %s removed", path)
            # a file refused for a taken name may fit now that another changed
            retry = [p for p, loaded in self._loaded.items() if loaded.problem and p not in changed]
            for path in changed + retry:
                self._load(registry, path, *found[path])

    def problems(self) -> dict[str, str]:
        """Skill files that registered nothing, and why."""
        return {str(p): loaded.problem for p, loaded in sorted(self._loaded.items()) if loaded.problem}

    def skills(self) -> dict[str, list[str]]:
        """Each loaded skill file and the capabilities it registered."""
        return {str(p): list(loaded.names) for p, loaded in sorted(self._loaded.items()) if not loaded.problem}

    # -- one file ----------------------------------------------------------------------
    def _scan(self) -> dict[Path, bytes]:
        found = {}
        for folder in self.dirs:
            try:
                files = sorted(folder.glob("*.py"))
            except OSError as exc:
                log.warning("skill folder %s cannot be read: %s", folder, exc)
                continue
            for path in files:
                if path.name.startswith(("_", ".")):
                    continue
                try:
                    found[path] = path.read_bytes()
                except OSError:
                    continue  # removed between listing and reading: gone
        return found

    def _load(self, registry: CapabilityRegistry, path: Path, source: bytes, digest: str) -> None:
        self._unload(registry, path)
        loaded = _Loaded(digest)
        self._loaded[path] = loaded
        try:
            module = self._import(path, source)
        except (Exception, SystemExit) as exc:  # a skill's own bug must not take the others down
            loaded.problem = f"{type(exc).__name__}: {exc}"
            log.error("skill %s failed to load: %s", path, loaded.problem, exc_info=True)
            return
        specs = _specs_in(module)
        taken = [spec.name for spec in specs if spec.name in registry]
        if taken:
            sys.modules.pop(module.__name__, None)
            loaded.problem = "; ".join(_taken_reason(registry, name) for name in taken)
            log.error("skill %s registers nothing: %s", path, loaded.problem)
            return
        for spec in specs:
            registry.register_capability(spec, owner=str(path))
        loaded.names, loaded.module = [spec.name for spec in specs], module.__name__
        log.info("skill %s registered %s", path, loaded.names)

    def _unload(self, registry: CapabilityRegistry, path: Path) -> None:
        loaded = self._loaded.pop(path, None)
        if loaded is None:
            return
        for name in loaded.names:
            registry.withdraw(name, str(path))
        if loaded.module:
            sys.modules.pop(loaded.module, None)

    def _import(self, path: Path, source: bytes) -> ModuleType:
        """The module compiled from ``source`` (the bytes just read, never a cached .pyc,
        whose freshness check by whole-second mtime could miss a quick edit)."""
        folder = next(i for i, d in enumerate(self.dirs) if path.parent == d)
        name = f"{MODULE_PREFIX}_{folder}_{path.stem}"
        code = compile(source, str(path), "exec")
        module = ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module  # as an import would: dataclasses and pickling look it up there
        try:
            exec(code, module.__dict__)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module


def _digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def _specs_in(module: ModuleType) -> list[CapabilitySpec]:
    specs = [spec_of(value) for value in vars(module).values()]
    return [s for s in specs if s is not None and getattr(s.handler, "__module__", None) == module.__name__]


def _taken_reason(registry: CapabilityRegistry, name: str) -> str:
    other = registry.owner_of(name)
    if other is not None:
        return f"capability {name!r} is already registered by the skill {other}"
    return f"capability {name!r} is a built-in or plugin capability, which a skill cannot replace"


def skills_status(config) -> dict:
    """The configured skills as a process starting now would load them (for ``main.py
    --status``)::

        {"dirs": ["/srv/skills"], "reload_s": 1.0,
         "loaded": {"/srv/skills/greet.py": ["greet"]},
         "failed": {"/srv/skills/broken.py": "SyntaxError: ..."}}
    """
    from init_plugins import build_registry  # it builds SkillLoaders: imported here, not at the top

    loader = build_registry(config).get_capability("skills", None)
    return {"dirs": [str(Path(d).absolute()) for d in config.capabilities.skills_dirs],
            "reload_s": config.capabilities.skills_reload_s,
            "loaded": loader.skills() if loader else {}, "failed": loader.problems() if loader else {}}


def render_skills(status: dict) -> str:
    """``skills_status`` as lines for a terminal."""
    lines = [f"skills: {sum(len(n) for n in status['loaded'].values())} capabilities from "
             f"{len(status['loaded'])} files in {', '.join(status['dirs'])}"]
    lines += [f"skill {path}: {', '.join(names)}" for path, names in status["loaded"].items()]
    lines += [f"skill FAILED {path}: {reason}" for path, reason in status["failed"].items()]
    return "\n".join(lines) + "\n"
