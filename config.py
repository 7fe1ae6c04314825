"""Flora's configuration: one typed object, loaded once by ``main`` and passed down.

Precedence, lowest first: defaults in code → a YAML or JSON file → ``FLORA_...``
environment variables. Nested keys use a double underscore:
``FLORA_LLM__BACKEND=none``, ``FLORA_ACTORS__EXECUTION_POOL_SIZE=4``. List and object
values are given as JSON (``FLORA_CAPABILITIES__PLUGIN_MODULES='["my.tools"]'``).
Secrets never live in the file: the config names the environment variable that holds them
(``llm.api_key_env``).

Any bad value stops start-up with :class:`ConfigError`, whose message names the key.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Mapping
from zoneinfo import ZoneInfo

import yaml
from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, SerializeAsAny, ValidationError, ValidationInfo, field_validator,
    model_validator,
)

ENV_PREFIX = "FLORA_"
CONFIG_FILE_ENV = "FLORA_CONFIG"

DEFAULT_DATA_DIR = "data"
DEFAULT_SYSTEM_BASE = "multiprocTCPBase"
DEFAULT_ADMIN_PORT = 0  # 0: a free port each start (embedded); fix it for a convention of nodes
DEFAULT_BIND_ADDRESS = "127.0.0.1"  # actor and admin sockets: loopback unless a cluster names its private address
DEFAULT_EXECUTION_POOL_SIZE = 2
DEFAULT_ASK_TIMEOUT_S = 120.0
DEFAULT_RECONFIRM_AFTER_S = 24 * 3600.0  # a paused task resumed later than this asks again before side effects
DEFAULT_HEARTBEAT_INTERVAL_S = 5.0
DEFAULT_MODEL = "qwen2.5-coder-1.5b"  # writes the replies people read
DEFAULT_UNDERSTANDING_MODEL = "qwen2.5-coder-0.5b"  # reads each message first: small and fast
DEFAULT_LLM_THREADS = 2
DEFAULT_LLM_CONTEXT = 4096
DEFAULT_LLM_TIMEOUT_S = 60.0
DEFAULT_LLM_RETRIES = 3
DEFAULT_IDLE_UNLOAD_S = 0.0  # keep the models loaded: a warm model answers at once, and its prompt prefix stays evaluated
DEFAULT_MAX_CONCURRENCY = 8
DEFAULT_MAX_BATCH = 8
DEFAULT_EXPLORE_TRIALS = 40
DEFAULT_MAX_EXPERT_ROUNDS = 5
DEFAULT_RETRY_MAX_ATTEMPTS = 0
DEFAULT_RETRY_BACKOFF_S = 1.0
DEFAULT_RETRY_BACKOFF_MAX_S = 60.0
DEFAULT_PLAN_MAX_STEPS = 50
DEFAULT_COUPLED_ROUNDS = 2
DEFAULT_STEP_RETRIES = 2
DEFAULT_RETRY_BACKOFF_S = 0.2
DEFAULT_RETRY_BACKOFF_MAX_S = 10.0
DEFAULT_PLAN_CONCURRENCY = 4
DEFAULT_PLAN_WORKERS = 8
DEFAULT_EMBEDDING_MODEL = "multilingual-e5-small"  # capabilities/memory/embedding.py's catalogue
DEFAULT_MEMORY_EMBEDDING_MODEL = "multilingual-e5-small+use"  # e5 and USE side by side (docs/memory.md)
DEFAULT_MEMORY_TOP_K = 5
DEFAULT_MAX_FACT_CHARS = 2000
DEFAULT_QUESTIONS_PER_LANGUAGE = 2  # questions a fact answers, stored beside it (capabilities/memory/questions.py); 0: facts alone
DEFAULT_AGENT_MAX_STEPS = 8  # tool calls of one agent task
DEFAULT_AGENT_MAX_SECONDS = 300.0  # running time of one agent task (waiting for the person not counted)
DEFAULT_AGENT_MAX_TOKENS = 20_000  # model tokens (prompt + reply) of one agent task
DEFAULT_AGENT_MAX_RESULT_CHARS = 2000  # of a tool's result, what the model is shown
DEFAULT_AGENT_MAX_INVALID = 3  # unusable model replies in a row before the loop gives up


def http_url(value: str, expected: str) -> str:
    """``value`` when it is empty or an http(s) URL with a host and a valid port; else a
    ValueError saying what was ``expected``."""
    from urllib.parse import urlparse

    if value:
        parts = urlparse(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected {expected}, got {value!r}")
        try:
            parts.port
        except ValueError:
            raise ValueError(f"bad port in {value!r}") from None
    return value


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ActorsConfig(_Section):
    system_base: Literal["multiprocTCPBase", "simpleSystemBase", "multiprocQueueBase"] = DEFAULT_SYSTEM_BASE
    admin_port: int = Field(DEFAULT_ADMIN_PORT, ge=0, le=65535)  # 0: any free port
    node: str = Field("local", min_length=1)
    # The one address every actor and admin socket listens on (and that other nodes are told), or
    # a host name resolved to it at start. Thespian unpickles whatever reaches these ports: keep it
    # loopback, or a private address only Flora's nodes reach. 0.0.0.0 (every interface) only when
    # set on purpose; start-up warns. See docs/deployment.md, "Ports and trust".
    bind_address: str = DEFAULT_BIND_ADDRESS
    execution_pool_size: int = Field(DEFAULT_EXECUTION_POOL_SIZE, ge=1, le=64)
    ask_timeout_s: float = Field(DEFAULT_ASK_TIMEOUT_S, gt=0)
    heartbeat_interval_s: float = Field(DEFAULT_HEARTBEAT_INTERVAL_S, gt=0)
    # Several nodes: every node names the leader's admin address, the leader its own
    # (admin_port equal to the port here). Empty: this node alone.
    convention_address: str = ""
    execution: bool = True  # this node accepts ExecutionActors
    execution_node: str = ""  # place this node's ExecutionActors on that node; empty: here, else any node that accepts them
    # A dead ExecutionActor's in-flight work: tried again this many times, after retry_backoff_s,
    # doubling up to retry_backoff_max_s; 0 fails it at once (it may have done part of its work).
    retry_max_attempts: int = Field(DEFAULT_RETRY_MAX_ATTEMPTS, ge=0, le=20)
    retry_backoff_s: float = Field(DEFAULT_RETRY_BACKOFF_S, gt=0, le=3600)
    retry_backoff_max_s: float = Field(DEFAULT_RETRY_BACKOFF_MAX_S, gt=0, le=86400)
    # a folder where each process writes where its messages' time goes (common/spans.py), for
    # bench/pipeline.py's breakdown; empty: nothing is timed
    spans_dir: str = ""

    @model_validator(mode="after")
    def _backoff_grows(self) -> "ActorsConfig":
        if self.retry_backoff_max_s < self.retry_backoff_s:
            raise ValueError(f"retry_backoff_max_s ({self.retry_backoff_max_s}) must not be below retry_backoff_s "
                             f"({self.retry_backoff_s})")
        return self

    @field_validator("bind_address")
    @classmethod
    def _ipv4_or_host(cls, value: str) -> str:
        import ipaddress
        import re

        value = value.strip()
        try:
            return str(ipaddress.IPv4Address(value))
        except ValueError:
            pass
        if re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?", value) and not value.replace(".", "").isdigit():
            return value  # a name of this host (a container's hostname), resolved once at start
        raise ValueError(f"expected one IPv4 address of this host (127.0.0.1, a private address, or 0.0.0.0 for "
                         f"every interface) or a host name that resolves to one, got {value!r}")

    @model_validator(mode="after")
    def _reachable_by_the_convention(self) -> "ActorsConfig":
        import ipaddress

        convention = self.convention()
        if convention is None or self.bind_address == "0.0.0.0":
            return self
        try:
            leader_loopback = ipaddress.ip_address(convention[0]).is_loopback
            bind_loopback = ipaddress.ip_address(self.bind_address).is_loopback
        except ValueError:  # a host name: cannot tell here
            return self
        if not leader_loopback and bind_loopback:
            raise ValueError(f"bind_address {self.bind_address} is loopback but the convention leader is "
                             f"{convention[0]}: set actors.bind_address to this node's private address")
        return self

    @field_validator("convention_address")
    @classmethod
    def _host_port(cls, value: str) -> str:
        if value:
            host, _, port = value.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"expected host:port of the leader's admin port, got {value!r}")
        return value

    def convention(self) -> tuple[str, int] | None:
        """The leader's (host, admin port), or None for a node on its own."""
        if not self.convention_address:
            return None
        host, _, port = self.convention_address.rpartition(":")
        return host, int(port)


class LimitsConfig(_Section):
    """How many tasks may run at once (0: no limit). Work beyond a limit is queued, never dropped;
    see common/tasks/limits.py."""

    per_tenant: int = Field(0, ge=0)
    per_user: int = Field(0, ge=0)  # per (tenant, user)
    per_capability: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)  # name -> limit
    capability_default: int = Field(0, ge=0)  # a capability not named in per_capability

    @field_validator("per_capability")
    @classmethod
    def _named(cls, value: dict[str, int]) -> dict[str, int]:
        if any(not name.strip() for name in value):
            raise ValueError("capability names must not be empty")
        return value


class TasksConfig(_Section):
    """Tasks that wait. ``reconfirm_after`` (seconds; 0: never): a paused task resumed longer
    than this after it was asked restates what it is about to do and asks once more before
    a step with side effects (docs/agent.md, "Stale work")."""

    reconfirm_after: float = Field(DEFAULT_RECONFIRM_AFTER_S, ge=0)


class StoreConfig(_Section):
    backend: Literal["sqlite", "redis"] = "sqlite"  # sqlite: sqlite_path; redis: redis.url
    sqlite_path: str = ""  # empty: <data_dir>/flora.db


class LLMConfig(_Section):
    backend: Literal["local", "openai", "function", "none"] = "local"
    model: str = DEFAULT_MODEL
    # backend local: the packaged model of the understanding step, on a host of its own; "" uses `model`
    understanding_model: str = DEFAULT_UNDERSTANDING_MODEL
    model_path: str = ""
    n_threads: int = Field(DEFAULT_LLM_THREADS, ge=1, le=256)
    n_ctx: int = Field(DEFAULT_LLM_CONTEXT, ge=256)
    base_url: str = ""
    api_key_env: str = "FLORA_LLM_API_KEY"
    model_name: str = ""
    # backend openai: how a JSON schema is asked for; llama-cpp-python's server takes only json_object
    schema_mode: Literal["json_schema", "json_object"] = "json_schema"
    timeout_s: float = Field(DEFAULT_LLM_TIMEOUT_S, gt=0)
    max_retries: int = Field(DEFAULT_LLM_RETRIES, ge=0, le=10)
    function: str = ""  # "package.module:attr" for backend=function
    host_url: str = ""  # set at run time to the shared model host; not for users
    understanding_host_url: str = ""  # likewise, the understanding model's host
    persona_host_urls: dict[str, str] = Field(default_factory=dict)  # likewise, personas' own models by name
    # backend local: a model host unloads its model after this many seconds without a request and
    # loads it again on the next one (which waits for it); 0 keeps it loaded
    idle_unload_s: float = Field(DEFAULT_IDLE_UNLOAD_S, ge=0)


class CapabilitiesConfig(_Section):
    plugin_modules: list[str] = Field(default_factory=list)
    entry_points: bool = True
    auto_approve: list[str] = Field(default_factory=list)
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    skills_dirs: list[str] = Field(default_factory=list)  # folders of skill modules, reloaded while running
    skills_reload_s: float = Field(1.0, ge=0, le=3600)  # how often a process looks for changed skills

    @field_validator("skills_dirs")
    @classmethod
    def _folders(cls, value: list[str]) -> list[str]:
        for folder in value:
            if not Path(folder).is_dir():
                raise ValueError(f"{folder!r} is not a folder")
        return value


class RabbitMQConfig(_Section):
    url: str = "amqp://guest:guest@127.0.0.1:5672/%2F"
    loop_trigger_queue: str = "loop.trigger.queue"


class RedisConfig(_Section):
    url: str = "redis://127.0.0.1:6379/0"


class LoopsConfig(_Section):
    """Loop tasks: where they are kept, how their triggers travel, how often the scheduler looks."""

    registry: Literal["sqlite", "redis"] = "sqlite"  # sqlite: the store's file; redis: redis.url
    queue: Literal["memory", "rabbitmq"] = "memory"  # memory: inside the scheduler; rabbitmq: rabbitmq.url
    tick_s: float = Field(1.0, gt=0, le=60)
    timezone: str = ""  # IANA name for "at 9:00"; empty: this machine's zone
    missed: Literal["catch_up", "skip", "latest"] = "latest"
    overlap: Literal["skip", "queue"] = "skip"
    redis_prefix: str = Field("flora", min_length=1)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        if value:
            try:
                ZoneInfo(value)
            except (KeyError, ValueError, OSError):
                raise ValueError(f"unknown timezone {value!r} (use an IANA name such as 'Asia/Shanghai')") from None
        return value

    def zone_name(self) -> str:
        """The timezone loop schedules are read in."""
        return self.timezone or local_zone_name()


def local_zone_name() -> str:
    """This machine's IANA zone: $TZ, then /etc/localtime's link, else UTC."""
    name = os.environ.get("TZ", "").lstrip(":")
    if not name:
        try:
            name = str(Path("/etc/localtime").resolve()).split("zoneinfo/", 1)[1]
        except (OSError, IndexError):
            name = "UTC"
    try:
        ZoneInfo(name)
    except (KeyError, ValueError, OSError):
        return "UTC"
    return name


class APIKey(_Section):
    """What an API key opens: a tenant, and optionally one user of it."""

    tenant: str = Field(min_length=1)
    user: str = ""


class HTTPConfig(_Section):
    """The HTTP API (``main.py --api``): where it listens and who may call it."""

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    # key -> tenant, or key -> {tenant, user}; more come from $<api_keys_env> ("key=tenant[:user],...")
    api_keys: dict[str, str | APIKey] = Field(default_factory=dict)
    api_keys_env: str = "FLORA_API_KEYS"
    default_user: str = Field("user_001", min_length=1)
    max_body_bytes: int = Field(1 << 20, ge=1024)
    ask_workers: int = Field(16, ge=1, le=256)  # threads making Thespian asks for requests
    stream_poll_s: float = Field(0.1, gt=0, le=5)  # how often an event stream looks for new events
    # Host names the API answers to besides localhost, 127.0.0.1 and [::1] (and http.host itself);
    # any other Host header gets 400, so a web page cannot reach the API by DNS rebinding. "*": any
    allowed_hosts: list[str] = Field(default_factory=list)
    header_timeout_s: float = Field(10.0, gt=0, le=300)  # a request's line and headers must arrive within
    max_header_bytes: int = Field(16 * 1024, ge=1024, le=1 << 20)  # a larger request head gets 431


class ParallelConfig(_Section):
    """How wide subtasks of one capability run, tuned by Optuna (``parallel_optimization``)."""

    storage: Literal["sqlite", "redis"] = "sqlite"  # sqlite: sqlite_path; redis: redis.url
    sqlite_path: str = ""  # empty: <data_dir>/optuna.db
    study_prefix: str = Field("flora-parallel", min_length=1)  # study names, and Redis keys
    max_concurrency: int = Field(DEFAULT_MAX_CONCURRENCY, ge=1, le=256)
    max_batch: int = Field(DEFAULT_MAX_BATCH, ge=1, le=1024)
    explore_trials: int = Field(DEFAULT_EXPLORE_TRIALS, ge=1)  # then the best setting found is used
    seed: int | None = None  # fixed: reproducible suggestions


class ExpertPersona(_Section):
    name: str = Field(min_length=1, max_length=64)
    prompt: str = Field(min_length=1)  # the system prompt this expert answers under
    weight: float = Field(1.0, ge=0)  # its say in the weighted strategy


DEFAULT_PERSONAS = (
    {"name": "analyst", "prompt": "You are a careful analyst. Reason from facts and numbers, check each step, "
                                  "and say what is uncertain.", "weight": 1.0},
    {"name": "practitioner", "prompt": "You are an experienced practitioner. Favour what works in practice "
                                       "and name the trade-offs.", "weight": 1.0},
    {"name": "critic", "prompt": "You are a sceptical reviewer. Look for mistakes, missing cases and risks "
                                 "before you agree with anything.", "weight": 1.0},
)


class ExpertsConfig(_Section):
    """The expert panel (``ask_experts``): who sits on it and how their answers become one."""

    personas: list[ExpertPersona] = Field(
        default_factory=lambda: [ExpertPersona(**p) for p in DEFAULT_PERSONAS], min_length=1)
    rounds: int = Field(1, ge=1, le=DEFAULT_MAX_EXPERT_ROUNDS)  # 1: answer once; each further round revises
    strategy: Literal["voting", "weighted", "map_reduce", "summary"] = "summary"
    tie: Literal["first", "weighted", "none", "llm"] = "weighted"  # voting / weighted ties
    min_ok: int = Field(1, ge=1)  # fewer experts answering fails the question
    reduce: Literal["concat", "summary"] = "concat"  # how map_reduce joins the answered parts
    max_tokens: int = Field(512, ge=16)

    @field_validator("personas")
    @classmethod
    def _unique_names(cls, value: list[ExpertPersona]) -> list[ExpertPersona]:
        names = [p.name for p in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"persona names must be unique; repeated: {', '.join(twice)}")
        return value


DEFAULT_PERSONA = "flora"  # Flora's own voice, with every capability: the persona when nothing else is chosen
DEFAULT_SPECIALIST_TEMPLATE = ("You are Flora, acting as a specialist in {specialty}. Answer as an expert in that "
                               "field would: precisely, briefly, and saying what you are unsure of.")


class PersonaRule(_Section):
    """When a persona takes a message. Every condition given must hold; at least one is given.
    ``channel`` matches the channel's kind (``telegram``) or one conversation (``telegram:12345``)."""

    keywords: list[str] = Field(default_factory=list)  # any of these, as words, case-insensitive
    regex: str = ""  # searched in the message, case-insensitive
    channel: str = ""
    user: str = ""  # the Flora user id (a channel maps its senders to users)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {value!r}: {exc}") from None
        return value

    @field_validator("keywords")
    @classmethod
    def _words(cls, value: list[str]) -> list[str]:
        if any(not word.strip() for word in value):
            raise ValueError("a keyword must not be empty")
        return value

    @model_validator(mode="after")
    def _says_something(self) -> "PersonaRule":
        if not (self.keywords or self.regex or self.channel or self.user):
            raise ValueError("a rule needs at least one of keywords, regex, channel, user")
        return self


class Persona(_Section):
    """One of the personas Flora speaks as (top-level ``personas``; not the expert panel's)."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""  # what it is for: shown to the model in auto mode
    prompt: str = Field(min_length=1)  # the system prompt of its chat replies
    capabilities: list[str] = Field(default_factory=list)  # what it may use; empty: everything installed
    model: str = ""  # a packaged model (capabilities/llm/models.py) for its chat replies, backend local only
    rules: list[PersonaRule] = Field(default_factory=list)

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        from capabilities.llm.models import CATALOGUE

        if value and value not in CATALOGUE:
            raise ValueError(f"unknown model {value!r}; known: {', '.join(sorted(CATALOGUE))}")
        return value


class PersonasConfig(_Section):
    """Personas (docs/personas.md): who Flora speaks as for a message, chosen once per message by
    the rules in order (first match wins), else by the model (``auto``), else ``default``."""

    roster: list[Persona] = Field(default_factory=list)  # empty: Flora's own voice, every capability
    default: str = DEFAULT_PERSONA  # a name in the roster, or the built-in "flora"
    auto: bool = False  # no rule matched: the understanding model picks the persona that fits
    template: str = ""  # auto: a specialist composed from this prompt with {specialty} filled in by the model

    @field_validator("roster")
    @classmethod
    def _unique_names(cls, value: list[Persona]) -> list[Persona]:
        names = [p.name for p in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"persona names must be unique; repeated: {', '.join(twice)}")
        return value

    @field_validator("template")
    @classmethod
    def _has_specialty(cls, value: str) -> str:
        if value and "{specialty}" not in value:
            raise ValueError("the template must contain {specialty}, where the model's specialty goes")
        try:
            value.format(specialty="x")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"the template may hold only {{specialty}} in braces ({exc!r}); "
                             "write a literal brace as {{ or }}") from None
        return value

    @model_validator(mode="after")
    def _default_known(self) -> "PersonasConfig":
        names = {p.name for p in self.roster} | {DEFAULT_PERSONA}
        if self.template and "specialist" in names:
            raise ValueError("roster: the name 'specialist' is taken by the personas composed from the template")
        if self.default not in names:
            raise ValueError(f"default: no persona named {self.default!r} (the roster has: "
                             f"{', '.join(sorted(names))})")
        return self


class PlanningConfig(_Section):
    """Plans of several steps (capabilities/routing): how big they may be, how coupled steps run."""

    max_steps: int = Field(DEFAULT_PLAN_MAX_STEPS, ge=1, le=1000)  # a longer plan is refused
    coupled_rounds: int = Field(DEFAULT_COUPLED_ROUNDS, ge=1, le=20)  # rounds a strongly coupled unit runs
    # grouped execution (capability_actors/task_group.py)
    max_retries: int = Field(DEFAULT_STEP_RETRIES, ge=0, le=20)  # further tries of a step failing retryably
    retry_backoff_s: float = Field(DEFAULT_RETRY_BACKOFF_S, gt=0, le=60)  # first wait; doubles each try
    retry_backoff_max_s: float = Field(DEFAULT_RETRY_BACKOFF_MAX_S, gt=0, le=600)
    failure_policy: Literal["fail_fast", "continue"] = "fail_fast"  # continue: aggregate what succeeded
    min_ok: int = Field(1, ge=1)  # with continue: fewer successful steps fail the plan
    parallelism: Literal["tuned", "fixed"] = "tuned"  # tuned: parallel_optimization; fixed: the two below
    concurrency: int = Field(DEFAULT_PLAN_CONCURRENCY, ge=1, le=256)  # steps of one plan running at once
    batch_size: int = Field(1, ge=1, le=1024)  # steps started together go to one ExecutionActor in batches
    max_workers: int = Field(DEFAULT_PLAN_WORKERS, ge=1, le=256)  # ExecutionActors that run plans' steps


DEFAULT_DISTIL_AFTER_IDLE_S = 10.0
DEFAULT_DISTIL_TIMEOUT_S = 30.0  # one model call of memory's, sent once: a busy model is tried again later


def known_embedding_model(value: str) -> str:
    """``value`` if the catalogue of packaged embedding models has it (capabilities/memory/embedding.py)."""
    from capabilities.memory.embedding import CATALOGUE

    if value not in CATALOGUE:
        raise ValueError(f"unknown embedding model {value!r}; known: {', '.join(CATALOGUE)}")
    return value


class MemoryConfig(_Section):
    """Long-term memory (docs/memory.md): facts about each person, in Chroma."""

    enabled: bool = True
    backend: Literal["embedded", "chroma_http"] = "embedded"  # embedded: <data_dir>/memory (or path)
    path: str = ""  # backend embedded: where Chroma keeps its files; empty: <data_dir>/memory
    chroma_url: str = ""  # backend chroma_http: http://host:port of the Chroma server
    # changing it re-embeds each person's memories from their text when they are next used
    embedding_model: str = DEFAULT_MEMORY_EMBEDDING_MODEL
    top_k: int = Field(DEFAULT_MEMORY_TOP_K, ge=1, le=50)  # memories put into a prompt
    # a recalled memory scores at least this to reach a prompt (a cosine; -1 keeps the top_k
    # whatever they are); empty: the embedding model's own (0.70 for the default)
    min_score: float | None = Field(None, ge=-1, le=1)
    max_fact_chars: int = Field(DEFAULT_MAX_FACT_CHARS, ge=100, le=100_000)  # longer facts are stored cut, with a note
    # this similar to an old fact: merged into it; empty: the embedding model's own (0.965 for the default)
    dedup_threshold: float | None = Field(None, gt=0, le=1)
    # each new fact is stored with this many questions it answers in English and as many in
    # Chinese, written by the model; recall matches them too (0: facts alone)
    questions_per_language: int = Field(DEFAULT_QUESTIONS_PER_LANGUAGE, ge=0, le=3)
    # the model writes memories only once nobody has said anything to this node for this long:
    # a distillation on the reply model makes the next reply wait for it
    distil_after_idle_s: float = Field(DEFAULT_DISTIL_AFTER_IDLE_S, ge=0, le=3600)
    # memory's own model calls (a turn's facts, a fact's questions) wait this long, are sent once
    # and at low priority (behind any reply the model host has to write); one that times out or
    # finds the model down leaves its turn waiting for the next pause, and a restart
    distil_timeout_s: float = Field(DEFAULT_DISTIL_TIMEOUT_S, gt=0, le=600)

    @field_validator("embedding_model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        return known_embedding_model(value)

    @field_validator("chroma_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_url(value, "http://host:port of a Chroma server")

    @model_validator(mode="after")
    def _server_named(self) -> "MemoryConfig":
        if self.backend == "chroma_http" and not self.chroma_url:
            raise ValueError("chroma_url: backend chroma_http needs the Chroma server's URL (http://host:port)")
        return self



class UnderstandingConfig(_Section):
    """How messages are read (docs/conversation.md): beside the rules and the model, each new
    message is read by the labelled examples nearest to it (capabilities/cognition/semantic.py)."""

    examples: bool = True  # false: rules and the model alone
    # more labelled utterances, JSON lines {"text": ..., "reading": "<family>/<kind>"}, beside the shipped ones
    examples_files: list[str] = Field(default_factory=list)
    embedding_model: str = DEFAULT_EMBEDDING_MODEL  # a multilingual one: the examples are Chinese and English
    # the operator's phrases and patterns for the reading rules: JSON files that add alternatives to
    # the shipped rule tables (capabilities/cognition/rule_tables.py, docs/conversation.md)
    rule_files: list[str] = Field(default_factory=list)

    @field_validator("embedding_model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        return known_embedding_model(value)

    @field_validator("examples_files")
    @classmethod
    def _readable(cls, value: list[str]) -> list[str]:
        from capabilities.cognition.semantic import BankError, load_bank

        for path in value:
            try:
                load_bank([Path(path)])
            except BankError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("rule_files")
    @classmethod
    def _rules_readable(cls, value: list[str]) -> list[str]:
        from capabilities.cognition.rule_tables import RuleTableError, read_operator_files

        try:
            read_operator_files(value)
        except RuleTableError as exc:
            raise ValueError(str(exc)) from None
        return value

DEFAULT_MCP_CALL_TIMEOUT_S = 60.0
DEFAULT_MCP_LIST_TIMEOUT_S = 20.0
MAX_MCP_SERVER_NAME = 64


def _env_name(name: str) -> bool:
    """Whether ``name`` can name an environment variable: ASCII letters, digits and ``_``, not
    starting with a digit."""
    return name.isascii() and name.isidentifier()


class MCPServerConfig(_Section):
    """One MCP server (docs/mcp.md): a command Flora starts (stdio), or a URL it calls
    (streamable HTTP). Secrets never stand in the file: ``env`` and ``headers`` name the
    environment variables whose values are passed on."""

    command: str = ""  # stdio: the executable (a name on PATH or a path)
    args: list[str] = Field(default_factory=list)
    # stdio: variables passed to the server: a list of names (passed through), or
    # {name the server sees: name of the variable in Flora's environment}
    env: list[str] | dict[str, str] = Field(default_factory=list)
    cwd: str = ""  # stdio: working directory; empty: Flora's
    url: str = ""  # streamable_http: the server's endpoint, e.g. http://127.0.0.1:8931/mcp
    headers: dict[str, str] = Field(default_factory=dict)  # header -> name of the variable holding its value
    transport: Literal["stdio", "streamable_http"] = "stdio"
    # which tools ask the person first: all, none, a list of tool names, or (unset) those whose
    # MCP annotations do not say read-only
    approve: Literal["all", "none"] | list[str] | None = None
    call_timeout_s: float | None = Field(None, gt=0, le=3600)  # unset: mcp.call_timeout_s
    enabled: bool = True
    # stdio: an untrusted server runs inside the tools' kernel sandbox (no network, no Flora files,
    # its own folder <data_dir>/mcp/<name> as the only writable place; docs/mcp.md)
    sandbox: bool = False

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: list[str] | dict[str, str]) -> list[str] | dict[str, str]:
        names = list(value) + (list(value.values()) if isinstance(value, dict) else [])
        bad = [n for n in names if not _env_name(n)]
        if bad:
            raise ValueError(f"expected names of environment variables (values are read from Flora's environment, "
                             f"never written here), got {bad[0]!r}")
        return value

    @field_validator("headers")
    @classmethod
    def _header_sources(cls, value: dict[str, str]) -> dict[str, str]:
        for header, source in value.items():
            if not _env_name(source):
                raise ValueError(f"{header}: expected the name of the environment variable that holds the value, "
                                 f"got {source!r} (secrets never stand in the file)")
        return value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_url(value, "the server's http(s):// endpoint")

    @model_validator(mode="after")
    def _one_way_in(self) -> "MCPServerConfig":
        if self.url and self.command:
            raise ValueError("give either command (a server Flora starts) or url (a server it calls), not both")
        if self.url and self.transport != "streamable_http":
            raise ValueError("url: a server reached by URL needs transport: streamable_http")
        if self.transport == "streamable_http" and not self.url:
            raise ValueError("url: transport streamable_http needs the server's URL")
        if self.transport == "stdio" and not self.command.strip():
            raise ValueError("command: a stdio server needs the command that starts it")
        if self.transport == "streamable_http" and (self.args or self.env or self.cwd):
            raise ValueError("args/env/cwd are for a server Flora starts (stdio), not one reached by URL")
        if self.transport == "stdio" and self.headers:
            raise ValueError("headers are for a server reached by URL (streamable_http)")
        return self


class MCPConfig(_Section):
    """MCP servers whose tools become capabilities named ``server.tool`` (docs/mcp.md)."""

    enabled: bool = True
    servers: dict[str, MCPServerConfig] = Field(default_factory=dict)
    call_timeout_s: float = Field(DEFAULT_MCP_CALL_TIMEOUT_S, gt=0, le=3600)  # one tool call
    list_timeout_s: float = Field(DEFAULT_MCP_LIST_TIMEOUT_S, gt=0, le=600)  # starting a server and listing its tools

    @field_validator("servers")
    @classmethod
    def _server_names(cls, value: dict[str, MCPServerConfig]) -> dict[str, MCPServerConfig]:
        for name in value:
            if not (_env_name(name) and name[0] != "_" and len(name) <= MAX_MCP_SERVER_NAME):
                raise ValueError(f"server name {name!r}: use a letter, then letters, digits or '_' (it starts the "
                                 "capability names of its tools: name.tool)")
        return value


class ChannelRetry(_Section):
    """How an outbound send is tried again: a 429's ``retry_after`` is waited out, other
    temporary failures back off from ``backoff_s`` doubling to ``backoff_max_s``."""

    max_attempts: int = Field(5, ge=1, le=20)
    backoff_s: float = Field(0.5, gt=0, le=60)
    backoff_max_s: float = Field(30.0, gt=0, le=3600)


class ChannelConfig(_Section):
    """What every chat channel's settings have (docs/channels.md). Each channel type subclasses
    it in its own package (``capabilities/channels/<type>/settings.py``) with ``type:
    Literal["<type>"]`` and its own keys; ``channels.<name>`` is validated by the model of the
    type it names (a union over the installed channel types, see
    :mod:`capabilities.channels.plugin`). Credentials are never here: the ``*_env`` keys name
    the environment variables that hold them.

    Class settings of a type: ``API_BASE`` (the service's address, ``api_base`` overrides it),
    ``MODES`` (the first is the default), ``CREDENTIALS`` (the ``*_env`` keys that must name
    a variable)."""

    API_BASE: ClassVar[str] = ""
    MODES: ClassVar[tuple[str, ...]] = ("webhook",)
    CREDENTIALS: ClassVar[tuple[str, ...]] = ()

    type: str
    enabled: bool = True
    mode: Literal["polling", "webhook"] = "webhook"  # how messages come in: the service calls, or Flora fetches
    api_base: str = ""  # empty: the service's own; tests point it at a local server
    allow: list[str] = Field(default_factory=list)  # sender ids allowed to talk to Flora; "*": anyone
    users: dict[str, str] = Field(default_factory=dict)  # sender id -> Flora user id (also allowed)
    tenant: str = ""  # empty: default_tenant
    http_timeout_s: float = Field(30.0, gt=0, le=300)
    retry: ChannelRetry = Field(default_factory=ChannelRetry)

    @field_validator("api_base")
    @classmethod
    def _http_base(cls, value: str) -> str:
        return http_url(value, "an http(s) URL").rstrip("/")

    @model_validator(mode="after")
    def _common_checks(self) -> "ChannelConfig":
        if "mode" not in self.model_fields_set:
            object.__setattr__(self, "mode", self.MODES[0])
        elif self.mode not in self.MODES:
            raise ValueError(f"mode: {self.type} has no {self.mode}; use mode: {self.MODES[0]}")
        for key in self.CREDENTIALS:
            if not getattr(self, key):
                raise ValueError(f"{key}: a {self.type} channel needs the name of the environment variable "
                                 f"that holds its credential")
        return self

    def base_url(self) -> str:
        return self.api_base or self.API_BASE


def _channel_of_its_type(value: Any, info: ValidationInfo) -> Any:
    """``channels.<name>`` as the settings model of the type it names: the installed channel
    types (or ``channels`` in the validation context) form the union, ``type`` picks."""
    from capabilities.channels.plugin import default_catalogue

    if isinstance(value, ChannelConfig) and type(value) is not ChannelConfig:
        return value
    if isinstance(value, ChannelConfig):
        value = value.model_dump()
    if not isinstance(value, Mapping):
        raise ValueError("a channel is a mapping with its type and settings")
    catalogue = (info.context or {}).get("channels") or default_catalogue()
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in catalogue:
        raise ValidationError.from_exception_data("ChannelConfig", [{  # the error names channels.<name>.type
            "type": "literal_error", "loc": ("type",), "input": kind,
            "ctx": {"expected": "an installed channel type: " + ", ".join(map(repr, catalogue.types()))}}])
    return catalogue.get(kind).settings.model_validate(dict(value), context=info.context)


ChannelEntry = Annotated[SerializeAsAny[ChannelConfig], BeforeValidator(_channel_of_its_type)]


DEFAULT_TOOL_TIMEOUT_S = 30.0
DEFAULT_TOOL_OUTPUT_BYTES = 64 * 1024  # each of stdout and stderr; more is cut, with a marker
DEFAULT_READ_BYTES = 1024 * 1024
DEFAULT_WRITE_BYTES = 10 * 1024 * 1024
DEFAULT_SANDBOX_FILE_BYTES = 100 * 1024 * 1024  # the largest file a sandboxed process may write
# Programs the shell never runs unless tools.shell.deny is replaced: shells and interpreters (they
# would run anything, past every check), wrappers that run another program, privilege and
# machine-wide commands. See docs/tools.md.
DEFAULT_SHELL_DENY = (
    "sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox",
    "python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "tclsh", "awk", "gawk", "mawk",
    "env", "xargs", "nohup", "setsid", "nice", "ionice", "timeout", "stdbuf", "chroot", "unshare", "nsenter",
    "sudo", "su", "doas", "pkexec", "runuser", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet",
    "mount", "umount", "losetup", "mkfs", "mke2fs", "mkswap", "fdisk", "sfdisk", "parted", "wipefs", "shred",
    "dd", "shutdown", "reboot", "halt", "poweroff", "init", "telinit", "systemctl", "service", "kill", "killall",
    "pkill", "crontab", "at", "iptables", "ip", "ifconfig", "insmod", "rmmod", "modprobe", "sysctl",
    "chown", "chgrp", "useradd", "userdel", "usermod", "passwd", "visudo",
)


class ShellToolConfig(_Section):
    """The ``shell`` tool's policy (docs/tools.md)."""

    allow: list[str] = Field(default_factory=list)  # program names; empty: any program not denied
    deny: list[str] = Field(default_factory=lambda: list(DEFAULT_SHELL_DENY))
    timeout_s: float = Field(DEFAULT_TOOL_TIMEOUT_S, gt=0, le=3600)  # the default; a call may ask for less
    network: bool = False  # True: out through Flora's egress proxy only (public addresses, docs/tools.md)
    cpu_s: int = Field(60, ge=1, le=3600)  # CPU seconds of each program (RLIMIT_CPU)
    memory_mb: int = Field(2048, ge=64, le=1 << 20)  # address space of each program (RLIMIT_AS)
    open_files: int = Field(256, ge=16, le=65536)  # RLIMIT_NOFILE
    processes: int = Field(128, ge=1, le=65536)  # RLIMIT_NPROC of the sandbox user

    @field_validator("allow", "deny")
    @classmethod
    def _program_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name or "/" in name or name != name.strip():
                raise ValueError(f"expected program names such as 'ls' (no paths, no spaces), got {name!r}")
        return value


class PythonToolConfig(_Section):
    """The ``python_exec`` tool's limits (docs/tools.md)."""

    network: bool = False  # True: out through Flora's egress proxy only (public addresses, docs/tools.md)
    timeout_s: float = Field(DEFAULT_TOOL_TIMEOUT_S, gt=0, le=3600)  # wall clock; the default for a call
    cpu_s: int = Field(30, ge=1, le=3600)  # CPU seconds (RLIMIT_CPU)
    memory_mb: int = Field(1024, ge=64, le=1 << 20)  # address space (RLIMIT_AS)
    open_files: int = Field(64, ge=16, le=65536)  # RLIMIT_NOFILE
    processes: int = Field(64, ge=1, le=65536)  # RLIMIT_NPROC (per user; see docs/tools.md)
    site_packages: bool = True  # False: -S, only the standard library can be imported
    read_paths: list[str] = Field(default_factory=list)  # more places the code may read besides the defaults
    guard: bool = True  # the audit hook's early, readable refusals; the kernel sandbox holds without it

    @field_validator("read_paths")
    @classmethod
    def _absolute(cls, value: list[str]) -> list[str]:
        for path in value:
            if not os.path.isabs(path):
                raise ValueError(f"read_paths must be absolute paths, got {path!r}")
        return value


class ToolsConfig(_Section):
    """The workspace tools: shell, python_exec, file_read/write/list/search (docs/tools.md)."""

    workspace: str = ""  # empty: <data_dir>/workspace; created on first use
    per_user: bool = True  # each (tenant, user) works in <workspace>/<tenant>/<user>
    # kernel: every program a tool runs is inside the bubblewrap sandbox, and nothing runs where it
    # cannot be set up; none: unconfined (warned about at start). auto/namespaces: older names of kernel
    isolation: Literal["kernel", "none"] = "kernel"
    sandbox_uid: int = Field(65534, ge=1, le=2**31 - 2)  # the uid sandboxed programs run as when Flora is root
    network_allow_private: list[str] = Field(default_factory=list)  # internal networks/hosts the egress proxy may reach
    max_output_bytes: int = Field(DEFAULT_TOOL_OUTPUT_BYTES, ge=1024, le=8 * 1024 * 1024)
    max_read_bytes: int = Field(DEFAULT_READ_BYTES, ge=1024, le=8 * 1024 * 1024)
    max_write_bytes: int = Field(DEFAULT_WRITE_BYTES, ge=1024)
    max_file_bytes: int = Field(DEFAULT_SANDBOX_FILE_BYTES, ge=1024)  # RLIMIT_FSIZE of sandboxed processes
    shell: ShellToolConfig = Field(default_factory=ShellToolConfig)
    python: PythonToolConfig = Field(default_factory=PythonToolConfig)

    @field_validator("isolation", mode="before")
    @classmethod
    def _older_names(cls, value: Any) -> Any:
        return "kernel" if value in ("auto", "namespaces") else value




class AgentConfig(_Section):
    """The ``agent`` capability: a model calling tools (docs/agent.md)."""

    enabled: bool = True
    max_steps: int = Field(DEFAULT_AGENT_MAX_STEPS, ge=1, le=200)
    max_seconds: float = Field(DEFAULT_AGENT_MAX_SECONDS, gt=0)
    max_tokens: int = Field(DEFAULT_AGENT_MAX_TOKENS, ge=256)
    max_invalid: int = Field(DEFAULT_AGENT_MAX_INVALID, ge=1, le=20)
    max_result_chars: int = Field(DEFAULT_AGENT_MAX_RESULT_CHARS, ge=100, le=1_000_000)
    reply_tokens: int = Field(512, ge=32, le=8192)  # the most one model reply (a call or the answer) may take
    native_tools: bool = False  # backend openai: the server's own function calling (tools/tool_calls)
    tools: list[str] = Field(default_factory=list)  # capabilities the loop may call; empty: every routable one
    max_tools: int = Field(6, ge=1, le=64)  # offered for one request: the most relevant that fit the context

    @field_validator("tools")
    @classmethod
    def _not_itself(cls, value: list[str]) -> list[str]:
        if "agent" in value:
            raise ValueError("the agent cannot call itself as a tool")
        return value


class FloraConfig(_Section):
    data_dir: str = DEFAULT_DATA_DIR
    default_tenant: str = Field("default", min_length=1)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    log_format: Literal["text", "json"] = "text"
    actors: ActorsConfig = Field(default_factory=ActorsConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    tasks: TasksConfig = Field(default_factory=TasksConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    capabilities: CapabilitiesConfig = Field(default_factory=CapabilitiesConfig)
    rabbitmq: RabbitMQConfig = Field(default_factory=RabbitMQConfig)
    redis: RedisConfig = Field(default_factory=RedisConfig)
    http: HTTPConfig = Field(default_factory=HTTPConfig)
    loops: LoopsConfig = Field(default_factory=LoopsConfig)
    parallel: ParallelConfig = Field(default_factory=ParallelConfig)
    experts: ExpertsConfig = Field(default_factory=ExpertsConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    planning: PlanningConfig = Field(default_factory=PlanningConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    understanding: UnderstandingConfig = Field(default_factory=UnderstandingConfig)
    personas: PersonasConfig = Field(default_factory=PersonasConfig)
    mcp: MCPConfig = Field(default_factory=MCPConfig)
    channels: dict[str, ChannelEntry] = Field(default_factory=dict)  # name -> chat channel (docs/channels.md)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)

    @model_validator(mode="after")
    def _shared_store_for_nodes(self) -> "FloraConfig":
        actors = self.actors
        if (actors.convention_address or actors.execution_node) and self.store.backend != "redis":
            raise ValueError("actors.convention_address / actors.execution_node: several nodes share tasks "
                             "through Redis; set store.backend: redis")
        if any(c.enabled for c in self.channels.values()) and actors.system_base == "simpleSystemBase":
            raise ValueError("channels: chat channels need a multiprocess actor system (actors.system_base "
                             "multiprocTCPBase): under simpleSystemBase actors only run inside a caller's ask")
        if actors.convention_address and actors.system_base != "multiprocTCPBase":
            raise ValueError("actors.convention_address: a convention of nodes needs actors.system_base "
                             "multiprocTCPBase")
        return self

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, value: dict[str, ChannelConfig]) -> dict[str, ChannelConfig]:
        import re

        for name in value:
            if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", name):
                raise ValueError(f"channel name {name!r}: lowercase letters, digits, '_' or '-', starting with a letter")
        return value

    @property
    def memory_path(self) -> Path:
        return Path(self.memory.path) if self.memory.path else Path(self.data_dir) / "memory"

    @property
    def workspace_path(self) -> Path:
        return Path(self.tools.workspace) if self.tools.workspace else Path(self.data_dir) / "workspace"

    @property
    def sqlite_path(self) -> Path:
        return Path(self.store.sqlite_path) if self.store.sqlite_path else Path(self.data_dir) / "flora.db"

    def to_dict(self) -> dict:
        """JSON-only view, as sent to actors in a ``configure`` message."""
        return self.model_dump(mode="json")


ConfigSource = FloraConfig | Mapping[str, Any] | str | os.PathLike | None


def load_config(source: ConfigSource = None, *, env: Mapping[str, str] | None = None,
                channels: Any = None) -> FloraConfig:
    """Build the config from a path, a dict, a FloraConfig or nothing (then ``$FLORA_CONFIG``).

    Environment overrides apply on top of whatever the source gave. ``channels``: the
    ChannelCatalogue whose types ``channels`` may name (default: the built-in and installed ones).
    """
    env = os.environ if env is None else env
    if isinstance(source, FloraConfig):
        data = source.to_dict()
    elif source is None:
        path = env.get(CONFIG_FILE_ENV)
        data = _read_file(Path(path)) if path else {}
    elif isinstance(source, Mapping):
        data = json.loads(json.dumps(dict(source)))  # deep copy, JSON values only
    else:
        data = _read_file(Path(source))
    _apply_env(data, env)
    try:
        return FloraConfig.model_validate(data, context={"channels": channels} if channels is not None else None)
    except ValidationError as exc:
        raise ConfigError(_explain(exc)) from None


def _read_file(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"config file {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


def _apply_env(data: dict, env: Mapping[str, str]) -> None:
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or name == CONFIG_FILE_ENV:
            continue
        path = name[len(ENV_PREFIX):].lower().split("__")
        if path[0] not in FloraConfig.model_fields:
            continue  # FLORA_LLM_API_KEY and friends are secrets, not config keys
        node = data
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"environment variable {name}: '{part}' is not a section")
            node = child
        node[path[-1]] = _env_value(raw)


def _env_value(raw: str) -> Any:
    text = raw.strip()
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return raw
    return raw


def _explain(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(root)"
        if err["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown configuration key")
        elif not err["loc"]:  # a rule across sections: its message names the keys
            lines.append(err["msg"].removeprefix("Value error, "))
        else:
            lines.append(f"{key}: {err['msg']} (got {err.get('input')!r})")
    return "invalid configuration: " + "; ".join(lines)
