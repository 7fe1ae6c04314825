"""docker-compose.yml describes a deployment Flora accepts: Compose validates it, and each
Flora service's environment and command give a configuration Flora loads, the one it
describes (leader and worker in one convention on the shared Redis)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import main
from api.auth import KeyRing

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
KEYS = "sk-change-me=team-a"


def compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def rendered() -> dict:
    """The file as Compose resolves it (anchors, interpolation), for the cluster profile."""
    command = compose_command()
    assert command is not None, "Compose is needed to check docker-compose.yml (scripts/install_test_tools.sh)"
    done = subprocess.run([*command, "-f", str(COMPOSE), "--profile", "cluster", "config"], capture_output=True,
                          text=True, env={**os.environ, "FLORA_API_KEYS": KEYS}, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def flora_config(service: dict):
    env = {k: str(v) for k, v in (service.get("environment") or {}).items()}
    args = main.argument_parser().parse_args(service.get("command") or [])
    return args, main.cli_config(args, env=env), env


def test_compose_accepts_the_file_with_and_without_the_cluster_profile():
    command = compose_command()
    assert command is not None, "Compose is needed to check docker-compose.yml (scripts/install_test_tools.sh)"
    for profile in ([], ["--profile", "cluster"]):
        done = subprocess.run([*command, "-f", str(COMPOSE), *profile, "config", "-q"], capture_output=True,
                              text=True, cwd=REPO)
        assert done.returncode == 0, done.stderr


def test_leader_and_worker_form_one_convention_on_the_shared_redis():
    services = rendered()["services"]
    assert {"redis", "rabbitmq", "model", "leader", "worker"} <= set(services)

    leader_args, leader, leader_env = flora_config(services["leader"])
    worker_args, worker, _ = flora_config(services["worker"])
    assert leader_args.api and worker_args.worker
    assert leader.store.backend == worker.store.backend == "redis"
    assert leader.redis.url == worker.redis.url == "redis://redis:6379/0"
    assert leader.actors.convention() == worker.actors.convention() == ("leader", leader.actors.admin_port)
    assert leader.actors.node != worker.actors.node and leader.actors.admin_port != worker.actors.admin_port
    assert not leader.actors.execution and worker.actors.execution  # the work is placed on the worker
    assert leader.loops.queue == "rabbitmq" and "rabbitmq:5672" in leader.rabbitmq.url
    assert leader.llm.backend == "openai" and leader.llm.base_url.startswith("http://model:8080")
    main.check_api_exposure(leader, env=leader_env)  # 0.0.0.0 with keys: accepted
    assert not KeyRing.from_config(leader, leader_env).open


def test_only_the_leaders_http_port_is_published_and_on_loopback():
    services = rendered()["services"]
    published = {name: s.get("ports", []) for name, s in services.items() if s.get("ports")}
    assert list(published) == ["leader"]
    (port,) = published["leader"]
    if isinstance(port, str):  # Compose v1 writes "HOST_IP:PUBLISHED:TARGET"
        host_ip, _, target = port.split("/")[0].split(":")
        port = {"host_ip": host_ip, "target": target}
    assert port.get("host_ip", "") == "127.0.0.1" and int(port["target"]) == 8000


def test_without_api_keys_the_leader_refuses_to_serve():
    service = yaml.safe_load(COMPOSE.read_text())["services"]["leader"]
    env = {k: str(v) for k, v in service["environment"].items() if not k.startswith("<<")}
    env["FLORA_API_KEYS"] = ""
    args = main.argument_parser().parse_args(service["command"])
    with pytest.raises(main.StartupError, match="without API keys"):
        main.check_api_exposure(main.cli_config(args, env={**env, "FLORA_STORE__BACKEND": "redis"}), env=env)
