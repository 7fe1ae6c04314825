"""Assemble a CapabilityRegistry from the configuration.

The seed's services are registered under their names (built lazily, on first use), then the
built-in executable capabilities, then the modules named in
``capabilities.plugin_modules`` (their ``@capability`` functions), then third-party
packages advertising the ``flora.capabilities`` entry-point group, then the skills in the
folders of ``capabilities.skills_dirs`` (kept current while the process runs; the
``skills`` service is their SkillLoader). Every process that runs
capabilities calls this once, so a plugin module is imported in each of them.

Registered services: ``llm``, ``understanding_llm`` (the understanding step's model: its own
small packaged model on a host of its own where configured, else ``llm``), ``routing``, ``intent_router``, ``conversation_manager``,
``loop_tasks`` (LoopService), ``loop_queue`` (QueueFactory's trigger queue), ``data_access``,
``result_aggregation`` (ResultAggregator), ``parallel_optimization`` (OptunaOptimizer),
``planning`` (TaskPlanner), ``context_resolver`` (ContextResolver), ``memory`` (MemoryCapability,
when ``memory.enabled``; its embedding model's package must be installed, or start-up stops here),
``mcp`` (MCPTools, when MCP servers are configured: their tools are registered as ``server.tool``
from the catalogue, see docs/mcp.md).
"""

from __future__ import annotations

import importlib
import logging

from capabilities.loop.queues import QueueFactory
from capabilities.registry import CapabilityRegistry, RegistryError
from capabilities.skills import SkillLoader
from config import ConfigError, FloraConfig

log = logging.getLogger("flora.plugins")

BUILTIN_MODULES = (
    "capabilities.tools.dify",
    "capabilities.tools.http_request",
    "capabilities.tools.web_fetch",
    "capabilities.tools.web_search",
    "capabilities.tools.data_query",
    "capabilities.loop.reminders",
    "capabilities.tools.ask_experts",
    "capabilities.memory.whiteboard",
    "capabilities.tools.shell",
    "capabilities.tools.python_exec",
    "capabilities.tools.files",
)
AGENT_MODULE = "capabilities.agent.capability"  # the tool-using loop (agent.enabled)


def build_registry(config: FloraConfig, *, store=None, events=None, llm=None) -> CapabilityRegistry:
    """The registry for one process. ``llm`` overrides the configured model (tests)."""
    from capabilities.cognition.intent_router import IntentRouter
    from capabilities.cognition.rule_tables import use_operator_files
    from capabilities.context.conversation_manager import ConversationManager
    from capabilities.routing.task_router import TaskRouter
    from capabilities.tools.data_access import DataAccessor

    use_operator_files(config.understanding.rule_files)  # the reading rules' tables, with the operator's phrases
    registry = CapabilityRegistry()
    if llm is not None:
        registry.register("llm", llm)
        registry.register("understanding_llm", llm)
        registry.register("background_llm", llm)
    else:
        registry.register("llm", lambda _: build_configured_llm(config), factory=True)
        registry.register("understanding_llm", lambda r: build_configured_llm(config, understanding=True)
                          if config.llm.understanding_model and config.llm.backend == "local"
                          else r.get_capability("llm"), factory=True)
        registry.register("background_llm", lambda _: build_configured_llm(config, background=True), factory=True)
    registry.register("routing", TaskRouter, factory=True)
    registry.register("intent_router", lambda r: IntentRouter(r.get_capability("routing"),
                                                              r.get_capability("understanding_llm")),
                      factory=True)
    if store is not None and events is not None:
        registry.register("conversation_manager", lambda r: ConversationManager(store, events, r), factory=True)
    if store is not None and events is not None:
        registry.register("loop_tasks", lambda _: build_loop_service(config, store, events), factory=True)
        registry.register("loop_queue", lambda _: QueueFactory.create(config), factory=True)
    registry.register("data_access",
                      lambda _: DataAccessor.from_settings(config.capabilities.settings.get("data_access", {})),
                      factory=True)
    registry.register("result_aggregation", _result_aggregator, factory=True)
    registry.register("parallel_optimization", lambda _: _parallel_optimizer(config), factory=True)
    registry.register("planning", lambda r: _task_planner(r, config), factory=True)
    registry.register("context_resolver", lambda _: _context_resolver(), factory=True)
    if config.memory.enabled:
        _check_embedding_model(config.memory.embedding_model, "memory.embedding_model")
        registry.register("memory", lambda r: _memory(r, config), factory=True)
    if config.understanding.examples:
        _check_embedding_model(config.understanding.embedding_model, "understanding.embedding_model")
        registry.register("semantic_examples", lambda r: _semantic_examples(r, config), factory=True)
        registry.register("semantic_reader", lambda r: _semantic_reader(r, config), factory=True)

    for module in BUILTIN_MODULES:
        registry.register_module(module)
    for module in config.capabilities.plugin_modules:
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(f"capabilities.plugin_modules: cannot import {module!r}: {exc}") from exc
        try:
            names = registry.register_module(imported)
        except RegistryError as exc:
            raise ConfigError(f"capabilities.plugin_modules: {module!r}: {exc}") from exc
        log.info("plugin module %s registered %s", module, names)
    if config.capabilities.entry_points:
        registry.load_entry_points()
    if config.mcp.enabled and config.mcp.servers:  # after them: a plugin's own name wins over an MCP tool's
        from capabilities.mcp import register_mcp_tools

        names = register_mcp_tools(registry, config)
        log.info("MCP tools registered: %s", names)
    if config.capabilities.skills_dirs:  # last: a skill cannot take a name the above hold
        skills = SkillLoader(config.capabilities.skills_dirs, reload_s=config.capabilities.skills_reload_s)
        registry.register("skills", skills)
        skills.attach(registry)
    if config.agent.enabled:  # last: where a list of capabilities is cut, the agent gives way
        registry.register_module(AGENT_MODULE)
    _check_persona_capabilities(config, registry)
    return registry


def _check_persona_capabilities(config: FloraConfig, registry: CapabilityRegistry) -> None:
    """A persona's allow-list names installed capabilities only (a typo would quietly forbid)."""
    installed = {spec.name for spec in registry.executables()}
    for i, persona in enumerate(config.personas.roster):
        unknown = [name for name in persona.capabilities if name not in installed]
        if unknown:
            raise ConfigError(f"personas.roster.{i}.capabilities: persona {persona.name!r} names "
                              f"{', '.join(map(repr, unknown))}, which no installed capability is called; "
                              f"installed: {', '.join(sorted(installed)) or 'none'}")


def _task_planner(registry: CapabilityRegistry, config: FloraConfig):
    from capabilities.routing.task_planner import TaskPlanner

    return TaskPlanner(registry, registry.get_capability("llm"), max_steps=config.planning.max_steps)


def _check_embedding_model(model: str, key: str) -> None:
    from capabilities.memory.embedding import EmbeddingModelMissing, check_installed

    try:
        check_installed(model)
    except EmbeddingModelMissing as exc:
        raise ConfigError(f"{key}: {exc}") from exc


def _semantic_examples(registry: CapabilityRegistry, config: FloraConfig):
    """The labelled utterances messages are read by: the shipped bank, the configured files, and
    what each installed capability declares as its examples (``task/<name>``)."""
    from pathlib import Path

    from capabilities.cognition.semantic import SHIPPED, ExampleBank, Utterance, load_bank

    bank = load_bank([SHIPPED, *(Path(p) for p in config.understanding.examples_files)])
    declared = [Utterance(" ".join(example.split()), "task", spec.name)
                for spec in registry.executables() if spec.routable for example in spec.examples if example.strip()]
    return ExampleBank.of(bank + declared)


def _semantic_reader(registry: CapabilityRegistry, config: FloraConfig):
    """The reader of messages by their nearest labelled examples."""
    from capabilities.cognition.semantic import SemanticReader
    from capabilities.memory.embedding import get_embedder

    return SemanticReader(get_embedder(config.understanding.embedding_model),
                          list(registry.get_capability("semantic_examples").utterances))


def _memory(registry: CapabilityRegistry, config: FloraConfig):
    from capabilities.memory.service import MemoryCapability

    # off the reply path: the better model, at low priority, with a short timeout of its own
    return MemoryCapability.from_config(config, registry.get_capability("background_llm"))


def _context_resolver():
    from capabilities.routing.context_resolver import ContextResolver

    return ContextResolver()


def build_loop_service(config: FloraConfig, store, events):
    """Loop tasks over the configured registry (``loops.registry``: the store's SQLite file or Redis)."""
    from capabilities.loop.service import LoopService
    from common.loops.registry import open_loop_registry

    loops = config.loops
    registry = open_loop_registry(loops.registry, sqlite_path=config.sqlite_path, redis_url=config.redis.url,
                                  prefix=loops.redis_prefix)
    return LoopService(registry, store, events, timezone=loops.zone_name(), missed=loops.missed,
                       overlap=loops.overlap)


def _result_aggregator(registry: CapabilityRegistry):
    """ResultAggregator over the process's model (used by ``tie="llm"`` and ``reduce="summary"``)."""
    from capabilities.aggregation.result_aggregator import ResultAggregator

    return ResultAggregator(llm_provider=lambda: registry.get_capability("llm", None))


def _parallel_optimizer(config: FloraConfig):
    """OptunaOptimizer over the configured study storage (``parallel.storage``)."""
    from capabilities.parallel.optuna_optimizer import OptunaOptimizer

    return OptunaOptimizer.from_config(config)


def build_configured_llm(config: FloraConfig, *, understanding: bool = False, background: bool = False):
    """The configured LLM adapter (None when ``llm.backend`` is ``none``); with
    ``understanding``, the understanding step's own model where one is configured; with
    ``background``, the chat model for work nobody waits for (memory): ``memory.distil_timeout_s``,
    no retries, low priority on Flora's model host."""
    from capabilities.llm import build_llm, understanding_settings

    settings = config.llm.model_dump()
    settings["data_dir"] = config.data_dir
    if background:
        settings.update(timeout_s=config.memory.distil_timeout_s, max_retries=0, priority="background")
    if understanding:
        own = understanding_settings(settings)
        if own is not None:
            return build_llm(own)
    return build_llm(settings)
