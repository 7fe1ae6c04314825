"""CapabilityRegistry: the named parts Flora is assembled from.

Two kinds of entries share one namespace, so a name means one thing:

- *services* — the seed's pluggable parts (``routing``, ``intent_router``, ``llm``,
  ``conversation_manager``, ``data_access`` ...), registered as an object or as a
  factory ``f(registry) -> object`` that is called once, on first use;
- *executables* — :class:`~capabilities.base.CapabilitySpec` entries that ExecutionActor
  runs (``dify_workflow``, ``http_request``, ``data_query``, decorated Python functions).

A registry is built per process by ``init_plugins.build_registry(config)`` and passed to
whoever needs it; there is no module-level mutable registry.

Most executables stay for the life of the process. Those registered with an ``owner`` (a
skill file, see :mod:`capabilities.skills`) may be withdrawn again by that owner, and a
*refresher* added with :meth:`CapabilityRegistry.add_refresher` is called before each
lookup of executables, so a source that changes while Flora runs (files being added, edited
or removed) is seen without a restart. A refresher decides itself how often it looks.

Exceptions::

    RegistryError
    ├── DuplicateCapability   a name is registered twice
    └── UnknownCapability     a name nobody registered
"""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Callable

from capabilities.base import CapabilitySpec, spec_of

log = logging.getLogger("flora.registry")

ENTRY_POINT_GROUP = "flora.capabilities"


class RegistryError(Exception):
    pass


class DuplicateCapability(RegistryError):
    def __init__(self, name: str):
        super().__init__(f"capability {name!r} is already registered")
        self.name = name


class UnknownCapability(RegistryError, KeyError):
    def __init__(self, name: str, known: list[str]):
        super().__init__(f"no capability named {name!r}; known: {', '.join(sorted(known)) or 'none'}")
        self.name = name

    def __str__(self) -> str:  # KeyError would quote the whole sentence
        return self.args[0]


_UNSET = object()


class CapabilityRegistry:
    def __init__(self) -> None:
        self._providers: dict[str, Any] = {}
        self._instances: dict[str, Any] = {}
        self._executables: dict[str, CapabilitySpec] = {}
        self._owners: dict[str, str] = {}  # executable name -> who may withdraw it
        self._refreshers: list[Callable[[CapabilityRegistry], None]] = []
        self._refreshing = False

    # -- registration -------------------------------------------------------------
    def register(self, name: str, provider: Any, *, factory: bool = False) -> None:
        """Register a service. With ``factory=True`` the provider is called lazily."""
        self._claim(name)
        self._providers[name] = (provider, factory)

    def register_capability(self, spec: CapabilitySpec | Callable[..., Any], *, owner: str | None = None
                            ) -> CapabilitySpec:
        """Register an executable capability (a spec or a ``@capability`` function). With an
        ``owner``, that owner may later :meth:`withdraw` it; without one it stays."""
        found = spec_of(spec)
        if found is None:
            raise RegistryError(f"{spec!r} is not a capability (decorate it with @capability)")
        self._claim(found.name)
        self._executables[found.name] = found
        if owner is not None:
            self._owners[found.name] = owner
        return found

    def withdraw(self, name: str, owner: str) -> None:
        """Remove an executable that ``owner`` registered; anything else raises RegistryError."""
        if self._owners.get(name) != owner:
            raise RegistryError(f"capability {name!r} was not registered by {owner!r}, so it cannot withdraw it")
        del self._executables[name]
        del self._owners[name]

    def owner_of(self, name: str) -> str | None:
        """Who registered ``name`` with an owner; None for a permanent entry or an unknown name."""
        return self._owners.get(name)

    def add_refresher(self, refresh: Callable[..., None]) -> None:
        """Call ``refresh(registry, force=...)`` before every lookup of executables from now on.
        ``force`` is True when a name was not found: another process may have seen a new
        capability already and sent work for it, so the refresher should look now."""
        self._refreshers.append(refresh)

    def register_module(self, module: ModuleType | str) -> list[str]:
        """Register every ``@capability`` function defined in a module."""
        if isinstance(module, str):
            module = importlib.import_module(module)
        names = []
        for value in vars(module).values():
            spec = spec_of(value)
            if spec is not None and getattr(spec.handler, "__module__", None) == module.__name__:
                names.append(self.register_capability(spec).name)
        log.debug("module %s registered %s", module.__name__, names)
        return names

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[str]:
        """Load third-party plugins advertised under a Python entry-point group.

        An entry point may name a module (all its decorated functions), a decorated
        function or spec, or a callable ``register(registry)``.
        """
        added: list[str] = []
        for ep in entry_points(group=group):
            target = ep.load()
            if isinstance(target, ModuleType):
                added += self.register_module(target)
            elif spec_of(target) is not None:
                added.append(self.register_capability(target).name)
            elif callable(target):
                before = set(self.names())
                target(self)
                added += sorted(set(self.names()) - before)
            else:
                raise RegistryError(f"entry point {ep.name!r} in {group!r} is not a capability plugin")
            log.info("plugin %s loaded from entry point group %s", ep.name, group)
        return added

    def _claim(self, name: str) -> None:
        if name in self._providers or name in self._executables:
            raise DuplicateCapability(name)

    def _refresh(self, *, force: bool = False) -> None:
        if not self._refreshers or self._refreshing:
            return
        self._refreshing = True  # a refresher registering or withdrawing does not refresh again
        try:
            for refresh in self._refreshers:
                refresh(self, force=force)
        finally:
            self._refreshing = False

    # -- lookup --------------------------------------------------------------------
    def get_capability(self, name: str, default: Any = _UNSET) -> Any:
        """The service registered under ``name`` (built on first use)."""
        if name in self._instances:
            return self._instances[name]
        if name not in self._providers:
            self._refresh()
            if name in self._executables:
                return self._executables[name]
            if default is not _UNSET:
                return default
            raise UnknownCapability(name, self.names())
        provider, factory = self._providers[name]
        instance = provider(self) if factory else provider
        self._instances[name] = instance
        return instance

    def get_executable(self, name: str) -> CapabilitySpec:
        self._refresh(force=not self._knows(name))
        try:
            return self._executables[name]
        except KeyError:
            raise UnknownCapability(name, list(self._executables)) from None

    def has_executable(self, name: str) -> bool:
        self._refresh(force=not self._knows(name))
        return name in self._executables

    def _knows(self, name: str) -> bool:
        return name in self._executables

    def executables(self) -> list[CapabilitySpec]:
        self._refresh()
        return list(self._executables.values())

    def names(self) -> list[str]:
        self._refresh()
        return sorted([*self._providers, *self._executables])

    def __contains__(self, name: object) -> bool:
        if name in self._providers:
            return True
        self._refresh()
        return name in self._executables
