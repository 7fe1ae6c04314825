"""What the workspace tools do when used as meant: commands run, scripts run, files round-trip."""

from __future__ import annotations

import pytest

from capabilities.base import CapabilityError
from capabilities.tools.workspace import Workspace
from config import ConfigError, load_config
from init_plugins import BUILTIN_MODULES
from tests.tools.sandbox_support import TcpServer, Tools, tools_registry

TOOLS = ["shell", "python_exec", "file_read", "file_write", "file_list", "file_search"]


@pytest.fixture
def tools(tmp_path):
    return Tools(tmp_path / "ws")


def test_a_command_runs_in_the_workspace(tools):
    (tools.workspace / "a.txt").write_text("one\ntwo\nthree\n")
    result = tools("shell", command="wc -l a.txt")
    assert result["exit_code"] == 0 and result["stdout"].split() == ["3", "a.txt"]
    assert tools("shell", command="pwd")["stdout"].strip() == str(tools.workspace.resolve())


def test_a_pipeline_feeds_one_program_into_the_next(tools):
    (tools.workspace / "log.txt").write_text("error a\nok\nerror b\n")
    result = tools("shell", command="grep error log.txt | sort -r | head -n 1")
    assert result["stdout"] == "error b\n" and result["argv"][0] == ["grep", "error", "log.txt"]


def test_globs_expand_inside_the_workspace(tools):
    for name in ("b.csv", "a.csv", "c.txt"):
        (tools.workspace / name).write_text("x")
    assert tools("shell", command="ls *.csv")["stdout"] == "a.csv\nb.csv\n"


def test_a_failing_command_is_a_result_and_stdin_is_given(tools):
    failed = tools("shell", command="ls no-such-file")
    assert failed["exit_code"] != 0 and "no-such-file" in failed["stderr"]
    assert tools("shell", command="tr a-z A-Z", stdin="flora")["stdout"] == "FLORA"


def test_a_script_runs_and_its_file_is_read_back(tools):
    code = "import json\nwith open('out.json', 'w') as f:\n    json.dump({'sum': sum(range(10))}, f)\nprint('done')"
    result = tools("python_exec", code=code)
    assert (result["exit_code"], result["stdout"], result["timed_out"]) == (0, "done\n", False)
    assert tools("file_read", path="out.json")["content"] == '{"sum": 45}'


def test_an_exception_in_the_script_is_a_result(tools):
    result = tools("python_exec", code="raise ValueError('bad input')")
    assert result["exit_code"] == 1 and "ValueError: bad input" in result["stderr"]


def test_network_on_still_cannot_reach_loopback_directly_or_through_the_proxy(tmp_path):
    server = TcpServer()
    try:
        tools = Tools(tmp_path / "ws", python={"network": True, "guard": False}, shell={"network": True})
        code = (f"import socket, urllib.request\n"
                f"try:\n    socket.create_connection(('127.0.0.1', {server.port}), timeout=2)\n    print('direct')\n"
                f"except OSError as exc:\n    print('no route', exc.errno)\n"
                f"try:\n    urllib.request.urlopen('http://127.0.0.1:{server.port}/', timeout=5)\n"
                f"except urllib.error.HTTPError as exc:\n    print('proxy', exc.code)\n")
        result = tools("python_exec", code=code)
        assert "direct" not in result["stdout"] and "proxy 403" in result["stdout"], result
        curl = tools("shell", command=f"curl -sS -o /dev/null -w %{{http_code}} http://127.0.0.1:{server.port}/")
        assert curl["stdout"] in ("403", "000"), curl
        assert server.connections == 0
    finally:
        server.close()


def test_network_on_goes_out_through_the_egress_proxy_where_the_operator_allows(tmp_path):
    from tests.tools.local_http import LocalHTTPServer, Reply

    with LocalHTTPServer(lambda request: Reply.text("hello from outside")) as web:
        tools = Tools(tmp_path / "ws", python={"network": True}, network_allow_private=["127.0.0.1"])
        code = f"import urllib.request\nprint(urllib.request.urlopen('{web.url}/page', timeout=10).read().decode())"
        result = tools("python_exec", code=code)
        assert result["stdout"] == "hello from outside\n", result
        assert len(web.requests) == 1 and web.requests[0].path == "/page"


def test_files_round_trip_and_overwrite_needs_the_flag(tools):
    written = tools("file_write", path="notes/todo.txt", content="buy milk\n")
    assert written == {"path": "notes/todo.txt", "bytes": 9, "created": True, "appended": False}
    assert tools("file_read", path="notes/todo.txt")["content"] == "buy milk\n"
    with pytest.raises(CapabilityError, match="overwrite=true") as caught:
        tools("file_write", path="notes/todo.txt", content="other")
    assert caught.value.error_type == "exists"
    tools("file_write", path="notes/todo.txt", content="call mum\n", overwrite=True, append=True)
    assert tools("file_read", path="notes/todo.txt")["content"] == "buy milk\ncall mum\n"


def test_read_is_cut_at_the_cap_and_binary_is_reported(tmp_path):
    tools = Tools(tmp_path / "ws", max_read_bytes=1024)
    (tools.workspace / "big.txt").write_text("z" * 5000)
    (tools.workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    big = tools("file_read", path="big.txt")
    assert big["truncated"] and len(big["content"]) == 1024 and big["size"] == 5000
    image = tools("file_read", path="img.png")
    assert image["binary"] and image["content"] is None and "108 bytes" in image["message"]


def test_write_above_the_cap_is_refused(tmp_path):
    tools = Tools(tmp_path / "ws", max_write_bytes=1024)
    with pytest.raises(CapabilityError, match="max_write_bytes") as caught:
        tools("file_write", path="x.txt", content="y" * 2000)
    assert caught.value.error_type == "too_large" and not (tools.workspace / "x.txt").exists()


def test_list_and_search(tools):
    tools("file_write", path="src/app.py", content="def main():\n    return 42\n")
    tools("file_write", path="src/util.py", content="VALUE = 1\n")
    tools("file_write", path="README.md", content="the main page\n")
    (tools.workspace / "blob.bin").write_bytes(b"\x00main\x00")
    listed = tools("file_list", path=".", recursive=True)
    assert [e["path"] for e in listed["entries"]] == ["README.md", "blob.bin", "src", "src/app.py", "src/util.py"]
    assert tools("file_search", name="*.py")["results"] == [{"path": "src/app.py"}, {"path": "src/util.py"}]
    found = tools("file_search", contains="main")
    assert [r["path"] for r in found["results"]] == ["README.md", "src/app.py"]
    assert found["skipped"] == [{"path": "blob.bin", "reason": "binary"}]
    assert tools("file_search", contains=r"return \d+", regex=True)["results"][0]["matches"] == [
        {"line": 2, "text": "    return 42"}]
    assert len(tools("file_search", name="*", max_results=2)["results"]) == 2


def test_a_search_whose_name_pattern_hides_the_text_says_where_the_text_is(tools):
    tools("file_write", path="ops.md", content="TODO: rotate the keys\n")
    found = tools("file_search", name="*.txt", contains="rotate the keys")
    assert found["results"] == [] and [r["path"] for r in found["without_name_pattern"]] == ["ops.md"]
    assert "without_name_pattern" not in tools("file_search", name="*.txt", contains="nowhere")


def test_per_user_workspaces_are_separate_directories(tmp_path):
    config = load_config({"tools": {"workspace": str(tmp_path)}})

    class Ctx:
        def __init__(self, user):
            self.config, self.tenant_id, self.user_id = config, "acme", user

    assert Workspace.for_context(Ctx("../../etc")).root == (tmp_path / "acme" / "_.._etc").resolve()
    assert Workspace.for_context(Ctx("bob")).root != Workspace.for_context(Ctx("alice")).root


def test_approval_is_asked_for_shell_python_and_overwrites():
    registry = tools_registry()
    assert registry.get_executable("shell").approval_needed({"command": "ls"})
    assert registry.get_executable("python_exec").approval_needed({"code": "print(1)"})
    write = registry.get_executable("file_write")
    assert not write.approval_needed({"path": "a", "content": "b", "overwrite": False})
    assert write.approval_needed({"path": "a", "content": "b", "overwrite": True})
    assert not registry.get_executable("file_read").approval_needed({"path": "a"})


@pytest.mark.parametrize("name", TOOLS)
def test_schemas_describe_every_parameter_in_both_languages(name):
    spec = tools_registry().get_executable(name)
    assert spec.parameters["additionalProperties"] is False
    assert "zh" in spec.parameters["x-flora-description"]
    for prop, schema in spec.properties.items():
        assert len(schema.get("description", "")) > 20, prop
    assert any(k.isascii() for k in spec.keywords) and any(not k.isascii() for k in spec.keywords)
    assert any(e.isascii() for e in spec.examples) and any(not e.isascii() for e in spec.examples)


def test_the_tools_are_built_in():
    assert {"capabilities.tools.shell", "capabilities.tools.python_exec", "capabilities.tools.files"} <= set(BUILTIN_MODULES)


@pytest.mark.parametrize("tools, key", [
    ({"shell": {"allow": ["/bin/ls"]}}, "tools.shell.allow"),
    ({"python": {"memory_mb": 1}}, "tools.python.memory_mb"),
    ({"isolation": "chroot"}, "tools.isolation"),
    ({"max_output_bytes": "lots"}, "tools.max_output_bytes"),
    ({"sandbox": True}, "tools.sandbox"),
])
def test_bad_tools_config_names_the_key(tools, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config({"tools": tools})


@pytest.mark.parametrize("text, capability, expected", [
    ("run the shell command df -h .", "shell", {"command": "df -h ."}),
    ("执行命令 grep -c ERROR app.log", "shell", {"command": "grep -c ERROR app.log"}),
    ("run python code print(6*7)", "python_exec", {"code": "print(6*7)"}),
    ("read the file notes/todo.txt", "file_read", {"path": "notes/todo.txt"}),
    ("show me the file notes/todo.txt.", "file_read", {"path": "notes/todo.txt"}),
])
def test_the_words_after_the_tools_name_are_its_command_code_or_path(text, capability, expected):
    from capabilities.routing.task_router import TaskRouter
    from config import FloraConfig
    from init_plugins import build_registry

    router = TaskRouter(build_registry(FloraConfig(), llm=None))
    (best, *_) = router.rank(text)
    assert best.spec.name == capability
    assert router.extract_parameters(best.spec, text) == expected


def test_the_bootstrap_runs_compiled_once_from_the_data_directory_or_from_source(tmp_path):
    from capabilities.tools.python_exec import BOOTSTRAP, bootstrap_file

    cache = tmp_path / "cache"
    compiled = bootstrap_file(cache)
    assert compiled.parent == cache and compiled.suffix == ".pyc" and bootstrap_file(cache) == compiled
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache would go")
    assert bootstrap_file(blocked / "cache") == BOOTSTRAP and bootstrap_file(None) == BOOTSTRAP


@pytest.mark.parametrize("text, capability, expected", [
    # however the request was understood to be a file's, a path is known by its look where no
    # keyword precedes it: the capability judges it (outside the workspace: refused), nobody asks again
    ("读一下文件 /nonexistent/x.txt", "file_read", {"path": "/nonexistent/x.txt"}),
    ("把文件 ../secret.env 读出来", "file_read", {"path": "../secret.env"}),
    ("put 'done' in out/status.txt", "file_write", {"path": "out/status.txt"}),
])
def test_a_path_in_the_request_is_the_files_path(text, capability, expected):
    from capabilities.routing.task_router import TaskRouter
    from config import FloraConfig
    from init_plugins import build_registry

    registry = build_registry(FloraConfig(), llm=None)
    values = TaskRouter.extract_parameters(registry.get_executable(capability), text)
    assert {k: values[k] for k in expected} == expected


@pytest.mark.parametrize("text, found", [
    ("读一下文件 /nonexistent/x.txt", ["/nonexistent/x.txt"]),
    ("读取文件report.md", ["report.md"]),
    ("看看 ./data/x.csv 吧", ["./data/x.csv"]),
    ("open ~/secrets", ["~/secrets"]),
    ("read https://example.com/a.txt please", []),  # an address is not a file path
    ("e.g. the one from python3.11, version 3.11", []),
])
def test_a_file_path_is_known_by_its_look_in_a_sentence(text, found):
    import re

    from capabilities.tools.files import FILE_PATH_IN_TEXT

    assert [m.group(0) for m in re.finditer(FILE_PATH_IN_TEXT, text)] == found


def test_without_the_sandbox_python_still_runs_as_flora_runs_it(tmp_path):
    tools = Tools(tmp_path / "ws", isolation="none")
    result = tools("python_exec", code="import os; print(os.getuid() == os.geteuid())")
    assert result == {**result, "exit_code": 0, "stdout": "True\n", "isolated": False}, result
