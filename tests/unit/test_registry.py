"""CapabilityRegistry and @capability: one namespace, lazy services, modules and entry-point plugins."""

from __future__ import annotations

import sys
import textwrap

import pytest

from capabilities.base import CAPABILITY_ATTR, CapabilitySpec, ExecutionContext, capability, spec_of
from capabilities.registry import (
    ENTRY_POINT_GROUP, CapabilityRegistry, DuplicateCapability, RegistryError, UnknownCapability,
)


@capability(name="echo", description="Say the text back",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
def echo(text: str) -> str:
    return text


@capability(name="whoami", description="Who asked")
def whoami(context: ExecutionContext) -> str:
    return f"{context.user_id}@{context.tenant_id}"


@pytest.fixture
def registry() -> CapabilityRegistry:
    return CapabilityRegistry()


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A folder on sys.path where a test writes plugin modules; they are forgotten afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write_module(name: str, source: str):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        written.append(name)
        return tmp_path

    write_module.path = tmp_path
    yield write_module
    for name in written:
        sys.modules.pop(name, None)


def context() -> ExecutionContext:
    return ExecutionContext(task_id="t1", user_id="alice", tenant_id="acme")


# -- names ------------------------------------------------------------------------------
def test_a_capability_name_can_be_registered_only_once(registry):
    registry.register_capability(echo)
    with pytest.raises(DuplicateCapability, match="'echo' is already registered"):
        registry.register_capability(echo)


def test_services_and_executables_share_one_namespace(registry):
    registry.register("echo", object())
    with pytest.raises(DuplicateCapability):
        registry.register_capability(echo)
    registry.register_capability(whoami)
    with pytest.raises(DuplicateCapability):
        registry.register("whoami", object(), factory=False)
    assert registry.names() == ["echo", "whoami"]


def test_the_first_registration_survives_a_refused_duplicate(registry):
    first = object()
    registry.register("llm", first)
    with pytest.raises(DuplicateCapability):
        registry.register("llm", object())
    assert registry.get_capability("llm") is first


def test_unknown_name_lists_the_known_ones(registry):
    registry.register("routing", object())
    registry.register_capability(echo)
    with pytest.raises(UnknownCapability) as info:
        registry.get_capability("wether")
    assert str(info.value) == "no capability named 'wether'; known: echo, routing"
    assert isinstance(info.value, KeyError)


def test_unknown_executable_lists_only_executables(registry):
    registry.register("routing", object())
    registry.register_capability(echo)
    with pytest.raises(UnknownCapability, match="known: echo$"):
        registry.get_executable("routing")


def test_unknown_name_in_an_empty_registry_says_none_is_known(registry):
    with pytest.raises(UnknownCapability, match="known: none"):
        registry.get_executable("echo")


def test_get_capability_returns_the_default_for_an_unknown_name(registry):
    assert registry.get_capability("memory", None) is None


def test_get_capability_finds_executables_too(registry):
    registry.register_capability(echo)
    assert registry.get_capability("echo") is spec_of(echo)
    assert registry.has_executable("echo") and "echo" in registry


def test_registering_a_plain_function_as_capability_is_refused(registry):
    def helper():
        pass

    with pytest.raises(RegistryError, match="not a capability"):
        registry.register_capability(helper)


# -- services ---------------------------------------------------------------------------
def test_factory_is_built_lazily_and_only_once(registry):
    calls = []

    def build(reg):
        calls.append(reg)
        return {"built": len(calls)}

    registry.register("conversation_manager", build, factory=True)
    assert calls == []
    first = registry.get_capability("conversation_manager")
    assert registry.get_capability("conversation_manager") is first
    assert calls == [registry] and first == {"built": 1}


def test_a_callable_registered_without_factory_is_returned_as_is(registry):
    def router(text):
        return "chat"

    registry.register("routing", router)
    assert registry.get_capability("routing") is router


# -- modules ----------------------------------------------------------------------------
def test_register_module_takes_only_functions_defined_in_that_module(registry, plugin_dir):
    plugin_dir("flora_test_home", """
        from capabilities.base import capability

        @capability(name="home_cap", description="defined at home")
        def home_cap():
            return "home"
    """)
    plugin_dir("flora_test_user", """
        from capabilities.base import capability
        from flora_test_home import home_cap  # imported: belongs to flora_test_home

        @capability(name="user_cap", description="defined here")
        def user_cap():
            return "user"

        def not_a_capability():
            return None
    """)
    assert registry.register_module("flora_test_user") == ["user_cap"]
    assert "home_cap" not in registry


def test_register_module_accepts_the_module_object(registry, plugin_dir):
    plugin_dir("flora_test_objects", """
        from capabilities.base import capability

        @capability(name="one", description="1")
        def one():
            return 1

        @capability(name="two", description="2")
        def two():
            return 2
    """)
    import flora_test_objects

    assert sorted(registry.register_module(flora_test_objects)) == ["one", "two"]
    assert registry.get_executable("two").invoke({}, context()) == 2


# -- entry points -----------------------------------------------------------------------
def install_distribution(path, entry_points: str, name: str = "flora_test_plugin") -> None:
    """What ``pip install`` leaves behind: a dist-info folder with METADATA and entry_points.txt."""
    info = path / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


def test_load_entry_points_registers_module_function_and_register_forms(registry, plugin_dir):
    plugin_dir("flora_ep_tools", """
        from capabilities.base import capability

        @capability(name="ep_upper", description="upper-case",
                    parameters={"type": "object", "properties": {"text": {"type": "string"}}})
        def ep_upper(text):
            return text.upper()

        @capability(name="ep_lower", description="lower-case")
        def ep_lower(text=""):
            return text.lower()
    """)
    plugin_dir("flora_ep_single", """
        from capabilities.base import capability

        @capability(name="ep_shout", description="shout")
        def ep_shout(text=""):
            return text + "!"

        @capability(name="ep_whisper", description="not advertised")
        def ep_whisper(text=""):
            return text
    """)
    plugin_dir("flora_ep_register", """
        from capabilities.base import capability

        @capability(name="ep_wave", description="wave")
        def ep_wave():
            return "o/"

        def register(registry):
            registry.register("ep_greeting", lambda reg: "hello", factory=True)
            registry.register_capability(ep_wave)
    """)
    install_distribution(plugin_dir.path, f"""
        [{ENTRY_POINT_GROUP}]
        whole_module = flora_ep_tools
        one_function = flora_ep_single:ep_shout
        registrar = flora_ep_register:register
    """)

    added = registry.load_entry_points()

    assert sorted(added) == ["ep_greeting", "ep_lower", "ep_shout", "ep_upper", "ep_wave"]
    assert "ep_whisper" not in registry
    assert registry.get_executable("ep_upper").invoke({"text": "hi"}, context()) == "HI"
    assert registry.get_executable("ep_shout").invoke({"text": "hi"}, context()) == "hi!"
    assert registry.get_capability("ep_greeting") == "hello"


def test_entry_point_clashing_with_a_registered_name_raises(registry, plugin_dir):
    plugin_dir("flora_ep_clash", """
        from capabilities.base import capability

        @capability(name="echo", description="a second echo")
        def echo(text=""):
            return text
    """)
    install_distribution(plugin_dir.path, f"""
        [{ENTRY_POINT_GROUP}]
        clash = flora_ep_clash
    """)
    registry.register_capability(echo)
    with pytest.raises(DuplicateCapability):
        registry.load_entry_points()


def test_entry_point_that_is_not_a_plugin_is_refused(registry, plugin_dir):
    plugin_dir("flora_ep_constant", "VALUE = 42\n")
    install_distribution(plugin_dir.path, f"""
        [{ENTRY_POINT_GROUP}]
        constant = flora_ep_constant:VALUE
    """)
    with pytest.raises(RegistryError, match="'constant'.*not a capability plugin"):
        registry.load_entry_points()


def test_no_entry_points_in_a_group_adds_nothing(registry):
    assert registry.load_entry_points(group="flora.capabilities.nobody-uses-this") == []
    assert registry.names() == []


# -- the decorator ----------------------------------------------------------------------
def test_decorator_attaches_a_spec_and_leaves_the_function_callable():
    spec = getattr(echo, CAPABILITY_ATTR)
    assert isinstance(spec, CapabilitySpec) and spec.handler is echo and spec.name == "echo"
    assert echo("still a function") == "still a function"


def test_decorator_without_parameters_reads_them_from_the_signature_where_context_is_none():
    assert spec_of(whoami).parameters == {"type": "object", "properties": {}, "required": [],
                                          "additionalProperties": False}


@pytest.mark.parametrize("parameters, words", [
    ({"type": "object", "properties": {"n": {"type": "int"}}}, "invalid parameter schema"),
    ({"type": "object", "required": "n"}, "invalid parameter schema"),
    ({"type": "array", "items": {"type": "string"}}, "of type object"),
])
def test_invalid_parameter_schema_is_refused_when_decorating(parameters, words):
    with pytest.raises(ValueError, match=words):
        @capability(name="broken", description="never registered", parameters=parameters)
        def broken(**kwargs):
            return kwargs


@pytest.mark.parametrize("name", ["", "two words", "semi;colon", "dash-ed"])
def test_capability_names_are_letters_digits_underscores_and_dots(name):
    with pytest.raises(ValueError, match="must be letters"):
        capability(name=name, description="x")(lambda: None)


def test_dotted_and_underscored_names_are_accepted():
    assert spec_of(capability(name="acme.data_query2", description="x")(lambda: None)).name == "acme.data_query2"


def test_invoke_passes_context_only_to_functions_that_ask_for_it():
    ctx = context()
    assert spec_of(whoami).invoke({}, ctx) == "alice@acme"
    assert spec_of(echo).invoke({"text": "hi"}, ctx) == "hi"  # echo(context=...) would raise TypeError


def test_invoke_does_not_change_the_given_parameters():
    seen = []

    @capability(name="grab", description="x")
    def grab(context, **values):
        seen.append(context)
        return values

    parameters = {"a": 1}
    assert spec_of(grab).invoke(parameters, context()) == {"a": 1}
    assert parameters == {"a": 1} and isinstance(seen[0], ExecutionContext)


def test_summary_is_what_prompts_and_the_api_show():
    spec = spec_of(echo)
    assert spec.summary() == {"name": "echo", "description": "Say the text back",
                              "parameters": spec.parameters, "needs_approval": False}
