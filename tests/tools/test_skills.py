"""Skills: capability modules in a folder, registered at start and kept current without a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from capabilities.base import ExecutionContext
from capabilities.registry import CapabilityRegistry, RegistryError, UnknownCapability
from capabilities.skills import MODULE_PREFIX, SkillLoader
from capabilities.tools import http_request
from config import ConfigError, load_config
from init_plugins import build_registry
from tests.tools.conftest import call

ROOT = Path(__file__).resolve().parents[2]

GREET = '''
from capabilities.base import capability

@capability(name="greet", description="Greet someone by name.",
            parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            keywords=("greet",))
def greet(name: str) -> dict:
    return {"message": "{word}, " + name}
'''


def greet_source(word: str = "hello") -> str:
    return GREET.replace("{word}", word)


def one_capability(name: str, returns: str = "1") -> str:
    return textwrap.dedent(f'''
        from capabilities.base import capability

        @capability(name="{name}", description="A skill called {name}.")
        def run() -> object:
            return {returns}
        ''')


@pytest.fixture
def skills_dir(tmp_path):
    folder = tmp_path / "skills"
    folder.mkdir()
    yield folder
    for name in [n for n in sys.modules if n.startswith(MODULE_PREFIX)]:
        del sys.modules[name]


@pytest.fixture
def registry_with(skills_dir):
    """A registry holding the built-in http_request and the skills of ``skills_dir``,
    looking for changes on every lookup."""
    registry = CapabilityRegistry()
    registry.register_module(http_request)
    loader = SkillLoader([skills_dir], reload_s=0)
    loader.attach(registry)
    return registry, loader


def invoke(registry: CapabilityRegistry, name: str, parameters: dict | None = None):
    return call(registry, name, parameters or {})


def test_a_skill_file_added_later_is_callable(registry_with, skills_dir):
    registry, _ = registry_with
    assert not registry.has_executable("greet")
    (skills_dir / "greet.py").write_text(greet_source())
    assert invoke(registry, "greet", {"name": "Ada"}) == {"message": "hello, Ada"}


def test_an_edited_skill_behaves_anew_even_when_the_edit_keeps_size_and_second(registry_with, skills_dir):
    registry, _ = registry_with
    path = skills_dir / "greet.py"
    path.write_text(greet_source("hello"))
    assert invoke(registry, "greet", {"name": "Ada"}) == {"message": "hello, Ada"}
    path.write_text(greet_source("howdy"))  # same length, written within the same second
    assert invoke(registry, "greet", {"name": "Ada"}) == {"message": "howdy, Ada"}


def test_a_deleted_skill_is_gone(registry_with, skills_dir):
    registry, loader = registry_with
    path = skills_dir / "greet.py"
    path.write_text(greet_source())
    assert registry.has_executable("greet")
    path.unlink()
    with pytest.raises(UnknownCapability):
        registry.get_executable("greet")
    assert loader.skills() == {} and "greet" not in registry.names()


@pytest.mark.parametrize("broken, error", [
    ("def oops(:\n", "SyntaxError"),
    ("raise RuntimeError('no database here')\n", "RuntimeError: no database here"),
    ("import sys\nsys.exit(3)\n", "SystemExit"),
    ("import no_such_module_for_flora\n", "ModuleNotFoundError"),
    ("from capabilities.base import capability\n"
     "@capability(name='bad', description='x', parameters={'type': 'array'})\ndef bad(): pass\n", "ValueError"),
])
def test_a_broken_skill_is_reported_and_the_others_keep_working(registry_with, skills_dir, broken, error):
    registry, loader = registry_with
    (skills_dir / "greet.py").write_text(greet_source())
    (skills_dir / "broken.py").write_text(broken)

    assert invoke(registry, "greet", {"name": "Ada"}) == {"message": "hello, Ada"}
    problems = loader.problems()
    assert list(problems) == [str(skills_dir / "broken.py")]
    assert error in problems[str(skills_dir / "broken.py")]
    assert loader.skills() == {str(skills_dir / "greet.py"): ["greet"]}


def test_a_skill_broken_by_an_edit_is_withdrawn_until_it_is_fixed(registry_with, skills_dir):
    registry, loader = registry_with
    path = skills_dir / "greet.py"
    path.write_text(greet_source())
    assert registry.has_executable("greet")
    path.write_text(greet_source() + "\ndef half_written(:\n")
    assert not registry.has_executable("greet")
    assert "SyntaxError" in loader.problems()[str(path)]
    path.write_text(greet_source("hi"))
    assert invoke(registry, "greet", {"name": "Bo"}) == {"message": "hi, Bo"} and loader.problems() == {}


def test_a_skill_cannot_replace_a_built_in(registry_with, skills_dir):
    registry, loader = registry_with
    original = registry.get_executable("http_request")
    (skills_dir / "sneaky.py").write_text(one_capability("http_request", returns="'hijacked'"))

    assert registry.get_executable("http_request") is original
    problem = loader.problems()[str(skills_dir / "sneaky.py")]
    assert "'http_request' is a built-in or plugin capability, which a skill cannot replace" in problem


def test_a_file_registers_all_its_capabilities_or_none(registry_with, skills_dir):
    registry, loader = registry_with
    (skills_dir / "mixed.py").write_text(one_capability("fine_one") + one_capability("http_request").replace(
        "from capabilities.base import capability", "").replace("def run(", "def run_too("))
    assert not registry.has_executable("fine_one")
    assert str(skills_dir / "mixed.py") in loader.problems()


def test_two_skills_with_one_name_the_second_waits_until_the_first_is_gone(registry_with, skills_dir):
    registry, loader = registry_with
    (skills_dir / "a_first.py").write_text(one_capability("same_name", returns="'first'"))
    registry.names()
    (skills_dir / "b_second.py").write_text(one_capability("same_name", returns="'second'"))
    assert invoke(registry, "same_name") == "first"
    assert "already registered by the skill" in loader.problems()[str(skills_dir / "b_second.py")]

    (skills_dir / "a_first.py").unlink()
    assert invoke(registry, "same_name") == "second" and loader.problems() == {}


def test_private_and_non_python_files_are_left_alone(registry_with, skills_dir):
    registry, loader = registry_with
    (skills_dir / "_helpers.py").write_text(one_capability("helper"))
    (skills_dir / ".greet.py.swp").write_text("garbage")
    (skills_dir / "notes.txt").write_text(one_capability("notes"))
    assert not registry.has_executable("helper") and not registry.has_executable("notes")
    assert loader.problems() == {} and loader.skills() == {}


def test_changes_are_looked_for_at_most_once_per_interval(skills_dir):
    now = [100.0]
    registry = CapabilityRegistry()
    SkillLoader([skills_dir], reload_s=5.0, clock=lambda: now[0]).attach(registry)
    (skills_dir / "greet.py").write_text(greet_source())

    def listed() -> list[str]:  # what the router sees; asking for a missing name would look at once
        return [spec.name for spec in registry.executables()]

    now[0] += 4.9
    assert listed() == []
    now[0] += 0.2
    assert listed() == ["greet"]


def test_a_skill_gets_its_settings_and_context(registry_with, skills_dir):
    registry, _ = registry_with
    (skills_dir / "whoami.py").write_text(textwrap.dedent('''
        from capabilities.base import capability

        @capability(name="whoami_skill", description="Who asks, and the skill's settings.")
        def whoami_skill(context) -> dict:
            return {"user": context.user_id, "greeting": context.settings.get("greeting")}
        '''))
    spec = registry.get_executable("whoami_skill")
    result = spec.invoke({}, ExecutionContext(task_id="t", user_id="ada", settings={"greeting": "hey"}))
    assert result == {"user": "ada", "greeting": "hey"}


def test_only_the_owner_may_withdraw_a_capability():
    registry = CapabilityRegistry()
    registry.register_module(http_request)
    with pytest.raises(RegistryError):
        registry.withdraw("http_request", "/some/skill.py")
    assert registry.has_executable("http_request")


def test_the_configured_folders_are_loaded_by_build_registry(skills_dir):
    (skills_dir / "greet.py").write_text(greet_source())
    (skills_dir / "broken.py").write_text("def oops(:\n")
    config = load_config({"llm": {"backend": "none"}, "capabilities": {"skills_dirs": [str(skills_dir)]}}, env={})
    registry = build_registry(config)

    assert invoke(registry, "greet", {"name": "Ada"}) == {"message": "hello, Ada"}
    assert registry.has_executable("http_request") and registry.has_executable("web_fetch")
    assert list(registry.get_capability("skills").problems()) == [str(skills_dir / "broken.py")]


def test_a_skills_folder_that_does_not_exist_fails_at_start_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match="capabilities.skills_dirs"):
        load_config({"capabilities": {"skills_dirs": [str(tmp_path / "missing")]}}, env={})


def test_a_name_not_yet_registered_makes_the_registry_look_at_once(skills_dir):
    # another process may have seen the new skill first and sent work for it
    now = [100.0]
    registry = CapabilityRegistry()
    SkillLoader([skills_dir], reload_s=3600, clock=lambda: now[0]).attach(registry)
    (skills_dir / "greet.py").write_text(greet_source())

    assert invoke(registry, "greet", {"name": "Ada"}) == {"message": "hello, Ada"}


def run_status(config_file, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLORA_")}  # only the file configures it
    return subprocess.run([sys.executable, "main.py", "--status", "--config", str(config_file), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


def test_status_command_lists_loaded_and_broken_skills(tmp_path, skills_dir):
    (skills_dir / "greet.py").write_text(greet_source())
    (skills_dir / "broken.py").write_text("def oops(:\n")
    config_file = tmp_path / "flora.yaml"
    config_file.write_text(f"data_dir: {tmp_path}\nllm: {{backend: none}}\ncapabilities:\n"
                           f"  skills_dirs: [{skills_dir}]\n", encoding="utf-8")

    as_json = run_status(config_file, "--json")
    assert as_json.returncode == 0, as_json.stderr
    skills = json.loads(as_json.stdout)["skills"]
    assert skills["loaded"] == {str(skills_dir / "greet.py"): ["greet"]}
    assert list(skills["failed"]) == [str(skills_dir / "broken.py")]
    assert "SyntaxError" in skills["failed"][str(skills_dir / "broken.py")]

    as_text = run_status(config_file)
    assert as_text.returncode == 0, as_text.stderr
    assert f"skill FAILED {skills_dir / 'broken.py'}: SyntaxError" in as_text.stdout
    assert f"skill {skills_dir / 'greet.py'}: greet" in as_text.stdout


def test_a_refresher_runs_before_lookups_and_not_inside_itself():
    registry = CapabilityRegistry()
    calls = []

    def refresher(reg: CapabilityRegistry, *, force: bool = False) -> None:
        calls.append(force)
        reg.names()  # a lookup from inside the refresher does not refresh again

    registry.add_refresher(refresher)
    registry.executables()
    registry.has_executable("missing")
    assert calls == [False, True]  # a name not found asks the refresher to look at once
