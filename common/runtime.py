"""Runtime: the per-process parts an actor works with, built from the configuration.

Actors may live in separate processes (multiprocTCPBase), so each one builds its own
runtime when it receives ``configure``: a store connection, an EventBus over it and a
CapabilityRegistry (which imports the plugin modules in that process).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from capabilities.registry import CapabilityRegistry
from common import spans
from common.tasks.store import TaskStore, open_store
from config import FloraConfig, load_config
from events.event_bus import EventBus


@dataclass
class Runtime:
    config: FloraConfig
    store: TaskStore
    events: EventBus
    registry: CapabilityRegistry

    @classmethod
    def from_config(cls, config: FloraConfig | dict) -> "Runtime":
        from init_plugins import build_registry

        config = config if isinstance(config, FloraConfig) else load_config(config, env={})
        spans.configure(config.actors.spans_dir)
        store = open_store(config)
        if spans.enabled():  # each call of the store timed on its own
            store = spans.Timed(store, "store")
        events = EventBus(store)
        registry = build_registry(config, store=store, events=events)
        return cls(config, store, events, registry)

    @cached_property
    def llm(self):
        return self.registry.get_capability("llm")

    @cached_property
    def understanding_llm(self):
        """The understanding step's model (``llm.understanding_model``), or ``llm``."""
        return self.registry.get_capability("understanding_llm")

    @cached_property
    def loops(self):
        """The LoopService (loop tasks over ``loops.registry``), built on first use."""
        return self.registry.get_capability("loop_tasks")

    def close(self) -> None:
        if "loops" in self.__dict__:  # built on first use
            self.loops.registry.close()
        self.store.close()
