"""Rules as data (capabilities/cognition/rule_tables.py): tables load, prove themselves by their
examples, and take the operator's phrases without code."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from capabilities.cognition import rule_tables
from capabilities.cognition.rule_tables import RuleTableError, phrase_pattern, problems, use_operator_files

TABLE = {
    "about": "a table for the tests",
    "rules": {
        "thanks": {"about": "thanks", "flags": ["IGNORECASE"], "en": [r"^\s*(?:thanks?|thank\s+you)\b"],
                   "zh": [r"^\s*(?:谢谢|多谢)"], "examples": ["Thanks a lot", "谢谢你"], "not": ["give thanks to the cook"]},
        "remind_me": {"flags": ["IGNORECASE"], "phrases": {"en": ["remind me"], "zh": ["提醒我"]},
                      "examples": ["please remind me at 5", "明天提醒我"], "not": ["reminders"]},
    },
}


@pytest.fixture
def tables(tmp_path, monkeypatch):
    """A tables folder of the tests' own, in place of the shipped one."""
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "sample.json").write_text(json.dumps(TABLE, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(rule_tables, "TABLES", folder)
    rule_tables.table.cache_clear()
    yield folder
    use_operator_files([])
    rule_tables.table.cache_clear()


def test_a_rule_matches_any_of_its_alternatives_in_either_language(tables):
    thanks = rule_tables.table("sample")["thanks"]
    assert thanks.search("thank you so much") and thanks.search("多谢啦")
    assert not thanks.search("I said thanks")  # anchored: its own pattern's meaning is kept
    assert problems(rule_tables.table("sample")) == []


def test_a_phrase_is_whole_words_in_latin_and_anywhere_in_chinese():
    import re

    assert re.search(phrase_pattern("remind me"), "pls remind   me later")
    assert not re.search(phrase_pattern("remind me"), "reminder meeting")
    assert re.search(phrase_pattern("提醒我"), "明天早上提醒我一下")


def test_an_example_its_rule_does_not_match_is_a_problem(tables):
    broken = json.loads(json.dumps(TABLE))
    broken["rules"]["thanks"]["examples"].append("cheers mate")
    broken["rules"]["remind_me"]["not"].append("remind me")
    broken["rules"]["unproven"] = {"en": ["x"]}
    (tables / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    found = problems(rule_tables.table("broken"))
    assert any("cheers mate" in p for p in found)
    assert any("'remind me', listed under 'not'" in p for p in found)
    assert any("broken.unproven: no example" in p for p in found)


def test_operator_phrases_extend_a_rule_and_leave_with_their_file(tables, tmp_path):
    remind = rule_tables.table("sample")["remind_me"]
    assert not remind.search("nudge me at 6")
    extra = tmp_path / "ours.json"
    extra.write_text(json.dumps({"table": "sample", "rules": {"remind_me": {"phrases": {"en": ["nudge me"]}}}}))
    use_operator_files([extra])
    assert remind.search("nudge me at 6") and remind.search("remind me at 6")
    use_operator_files([])
    assert not remind.search("nudge me at 6")


def test_parts_are_put_into_patterns_and_other_parts_as_written(tables):
    shared = {"parts": {"task_en": "(?:the\\s+)?(?:task|job)", "id": "t_[0-9a-f]{1,8}", "ref_en": "(?:{task_en}|{id})"},
              "rules": {"cancel": {"flags": ["IGNORECASE"], "en": ["^cancel\\s+{ref_en}$"],
                                   "examples": ["cancel the job", "cancel t_3f"], "not": ["cancel t_"]}}}
    (tables / "shared.json").write_text(json.dumps(shared), encoding="utf-8")
    cancel = rule_tables.table("shared")["cancel"]
    assert cancel.pattern.pattern == r"^cancel\s+(?:(?:the\s+)?(?:task|job)|t_[0-9a-f]{1,8})$"
    assert problems(rule_tables.table("shared")) == []


def test_an_operator_file_writes_with_the_shipped_tables_parts(tables, tmp_path):
    shared = {"parts": {"it_en": "(?:it|that)"}, "rules": {"cancel": {"en": ["^cancel\\s+{it_en}"], "examples": ["cancel it"]}}}
    (tables / "shared.json").write_text(json.dumps(shared), encoding="utf-8")
    extra = tmp_path / "ours.json"
    extra.write_text(json.dumps({"table": "shared", "rules": {"cancel": {"en": ["^call\\s+{it_en}\\s+off"]}}}))
    use_operator_files([extra])
    assert rule_tables.table("shared")["cancel"].search("call that off")


@pytest.mark.parametrize("parts, pattern, says", [
    ({}, "{nothing}", "{nothing} names no part"),
    ({"a": "x{b}", "b": "{a}"}, "{a}", "contains itself"),
    ({"a": 3}, "x", "'parts' must map a name"),
])
def test_a_part_that_cannot_be_put_in_is_refused(tables, parts, pattern, says):
    (tables / "bad.json").write_text(json.dumps({"parts": parts, "rules": {"r": {"en": [pattern]}}}), encoding="utf-8")
    with pytest.raises(RuleTableError) as caught:
        rule_tables.table("bad")
    assert says in str(caught.value) and "bad.json" in str(caught.value)


@pytest.mark.parametrize("content, says", [
    ({"table": "nope", "rules": {}}, "'table' must name a shipped table"),
    ({"table": "sample", "rules": {"no_such_rule": {"en": ["x"]}}}, "has no rule 'no_such_rule'"),
    ({"table": "sample", "rules": {"thanks": {"en": ["(unclosed"]}}}, "is not a regular expression"),
    ({"table": "sample", "rules": {"thanks": {"flags": ["LOUD"]}}}, "unknown flag 'LOUD'"),
    ({"table": "sample", "rules": {"thanks": {"wrong_key": 1}}}, "unknown keys ['wrong_key']"),
    ({"table": "sample", "rules": {"thanks": {"phrases": {"fr": ["merci"]}}}}, "phrases['fr']"),
])
def test_a_malformed_operator_file_is_refused_naming_file_and_rule(tables, tmp_path, content, says):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(RuleTableError) as caught:
        use_operator_files([path])
    assert says in str(caught.value) and str(path) in str(caught.value)


def test_a_config_naming_a_bad_rule_file_is_refused_with_the_reason(tmp_path):
    from config import ConfigError, load_config

    path = tmp_path / "rules.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError) as caught:
        load_config({"understanding": {"rule_files": [str(path)]}})
    assert "rule_files" in str(caught.value) and "cannot read the rule table" in str(caught.value)


def test_every_shipped_table_is_proven_by_its_examples():
    rule_tables.table.cache_clear()
    found = [p for t in rule_tables.shipped_tables() for p in problems(t)]
    assert found == []


def test_an_operators_phrase_makes_a_shipped_rule_read_it(tmp_path):
    # the README's example: a phrase of the operator's people becomes a reminder, no code
    from datetime import datetime, timezone
    from functools import partial

    from capabilities.loop.parse import parse_schedule
    from capabilities.loop.requests import read_loop_request

    parse = partial(parse_schedule, now=datetime(2026, 3, 2, 9, tzinfo=timezone.utc), timezone="UTC")
    said = "give me a bell tomorrow at 6pm about the boiler"
    assert read_loop_request(said, parse).reminder is False
    extra = tmp_path / "rules.json"
    extra.write_text(json.dumps({"table": "loop_requests", "rules": {"remind": {"phrases": {"en": ["give me a bell"]}}}}))
    use_operator_files([extra])
    try:
        assert read_loop_request(said, parse).reminder is True
    finally:
        use_operator_files([])


ROOT = Path(__file__).resolve().parents[2]
REGEX_LITERAL_LIMIT = 120  # regular expressions written out in Flora's code, outside its tests and benchmarks
_REGEX_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}
_NOT_COUNTED = {"tests", "bench", ".venv", "data", ".git"}  # at the top of the checkout


def _written_out(node: ast.AST) -> bool:
    """A pattern written in the code: a string, an f-string, or one joined with ``+`` to either."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _written_out(node.left) or _written_out(node.right)
    return False


def regex_literals(root: Path) -> dict[str, int]:
    """How many ``re.<call>(<pattern written out>, …)`` each Python file under ``root`` holds
    (a virtual environment anywhere, and the folders of ``_NOT_COUNTED`` at the top, left out)."""
    counts: dict[str, int] = {}
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        subfolders[:] = [d for d in subfolders if not (here == root and d in _NOT_COUNTED)
                         and not (here / d / "pyvenv.cfg").exists()]
        for name in files:
            if not name.endswith(".py"):
                continue
            tree = ast.parse((here / name).read_text(encoding="utf-8"))
            found = sum(1 for node in ast.walk(tree)
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in _REGEX_CALLS and isinstance(node.func.value, ast.Name)
                        and node.func.value.id in ("re", "regex") and node.args and _written_out(node.args[0]))
            if found:
                counts[str((here / name).relative_to(root))] = found
    return counts


def test_regex_literals_are_counted_where_a_pattern_is_written_out(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text('import re\nre.compile("a")\n')
    (tmp_path / "reader.py").write_text('import re\nA = re.compile(r"\\s+")\nB = re.sub(f"{A}|x", "", "")\n'
                                        'C = re.compile("(" + "|".join(["a"]) + ")")\nD = re.compile(B)\n'
                                        'E = re.escape("a")\n')
    assert regex_literals(tmp_path) == {"reader.py": 3}


def test_the_code_writes_few_regular_expressions():
    # the person's words belong in the rule tables; what stays in code reads the shape of a value or a format
    counts = regex_literals(ROOT)
    total = sum(counts.values())
    most = ", ".join(f"{path}: {n}" for path, n in sorted(counts.items(), key=lambda item: -item[1])[:8])
    assert total <= REGEX_LITERAL_LIMIT, f"{total} regular expressions written in the code (at most " \
                                         f"{REGEX_LITERAL_LIMIT}); the most in {most}"
