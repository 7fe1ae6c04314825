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
from pathlib import Path
from typing import Any, Literal, Mapping
from zoneinfo import ZoneInfo

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ENV_PREFIX = "FLORA_"
CONFIG_FILE_ENV = "FLORA_CONFIG"

DEFAULT_DATA_DIR = "data"
DEFAULT_SYSTEM_BASE = "multiprocTCPBase"
DEFAULT_ADMIN_PORT = 0  # 0: a free port each start (embedded); fix it for a convention of nodes
DEFAULT_EXECUTION_POOL_SIZE = 2
DEFAULT_ASK_TIMEOUT_S = 120.0
DEFAULT_HEARTBEAT_INTERVAL_S = 5.0
DEFAULT_MODEL = "qwen2.5-coder-0.5b"
DEFAULT_LLM_THREADS = 2
DEFAULT_LLM_CONTEXT = 4096
DEFAULT_LLM_TIMEOUT_S = 60.0
DEFAULT_LLM_RETRIES = 3


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ActorsConfig(_Section):
    system_base: Literal["multiprocTCPBase", "simpleSystemBase", "multiprocQueueBase"] = DEFAULT_SYSTEM_BASE
    admin_port: int = Field(DEFAULT_ADMIN_PORT, ge=0, le=65535)  # 0: any free port
    node: str = Field("local", min_length=1)
    execution_pool_size: int = Field(DEFAULT_EXECUTION_POOL_SIZE, ge=1, le=64)
    ask_timeout_s: float = Field(DEFAULT_ASK_TIMEOUT_S, gt=0)
    heartbeat_interval_s: float = Field(DEFAULT_HEARTBEAT_INTERVAL_S, gt=0)


class StoreConfig(_Section):
    backend: Literal["sqlite", "redis"] = "sqlite"  # sqlite: sqlite_path; redis: redis.url
    sqlite_path: str = ""  # empty: <data_dir>/flora.db


class LLMConfig(_Section):
    backend: Literal["local", "openai", "function", "none"] = "local"
    model: str = DEFAULT_MODEL
    model_path: str = ""
    n_threads: int = Field(DEFAULT_LLM_THREADS, ge=1, le=256)
    n_ctx: int = Field(DEFAULT_LLM_CONTEXT, ge=256)
    base_url: str = ""
    api_key_env: str = "FLORA_LLM_API_KEY"
    model_name: str = ""
    timeout_s: float = Field(DEFAULT_LLM_TIMEOUT_S, gt=0)
    max_retries: int = Field(DEFAULT_LLM_RETRIES, ge=0, le=10)
    function: str = ""  # "package.module:attr" for backend=function
    host_url: str = ""  # set at run time to the shared model host; not for users


class CapabilitiesConfig(_Section):
    plugin_modules: list[str] = Field(default_factory=list)
    entry_points: bool = True
    auto_approve: list[str] = Field(default_factory=list)
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)


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


class FloraConfig(_Section):
    data_dir: str = DEFAULT_DATA_DIR
    default_tenant: str = Field("default", min_length=1)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    log_format: Literal["text", "json"] = "text"
    actors: ActorsConfig = Field(default_factory=ActorsConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    capabilities: CapabilitiesConfig = Field(default_factory=CapabilitiesConfig)
    rabbitmq: RabbitMQConfig = Field(default_factory=RabbitMQConfig)
    redis: RedisConfig = Field(default_factory=RedisConfig)
    http: HTTPConfig = Field(default_factory=HTTPConfig)
    loops: LoopsConfig = Field(default_factory=LoopsConfig)

    @property
    def sqlite_path(self) -> Path:
        return Path(self.store.sqlite_path) if self.store.sqlite_path else Path(self.data_dir) / "flora.db"

    def to_dict(self) -> dict:
        """JSON-only view, as sent to actors in a ``configure`` message."""
        return self.model_dump(mode="json")


ConfigSource = FloraConfig | Mapping[str, Any] | str | os.PathLike | None


def load_config(source: ConfigSource = None, *, env: Mapping[str, str] | None = None) -> FloraConfig:
    """Build the config from a path, a dict, a FloraConfig or nothing (then ``$FLORA_CONFIG``).

    Environment overrides apply on top of whatever the source gave.
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
        return FloraConfig.model_validate(data)
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
        else:
            lines.append(f"{key}: {err['msg']} (got {err.get('input')!r})")
    return "invalid configuration: " + "; ".join(lines)
