"""A skill written into the skills folder while Flora runs is used without a restart, on one
process and across actor processes (each of which keeps its own registry current)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

import main
from tests.actors.conftest import BASES
from tests.support.asking import ask_flora

TIMEOUT = 30

SHOUT = textwrap.dedent('''
    from capabilities.base import capability

    @capability(name="shout_text", description="Say a text loudly.",
                parameters={"type": "object", "additionalProperties": False, "required": ["text"],
                            "properties": {"text": {"type": "string", "description": "what to shout",
                                                    "x-flora-request-text": True}}},
                keywords=("shout",))
    def shout_text(text: str) -> dict:
        return {"said": text.upper() + "{ending}"}
    ''')


@pytest.fixture(scope="module", params=BASES)
def flora_with_skills(request, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp(f"flora-skills-{request.param}")
    skills = data_dir / "skills"
    skills.mkdir()
    running = main.start_flora({
        "data_dir": str(data_dir),
        "llm": {"backend": "function", "function": "tests.support.fake_llm:respond"},
        "actors": {"system_base": request.param, "ask_timeout_s": 30, "execution_pool_size": 2},
        "capabilities": {"skills_dirs": [str(skills)], "skills_reload_s": 0},
    })
    yield running, skills
    running.shutdown()


def ask(flora, user: str, content: str, **fields) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT, **fields)


def test_a_skill_added_after_start_is_used_then_its_edit_then_its_removal(flora_with_skills):
    flora, skills = flora_with_skills
    before = ask(flora, "skill-user-1", "shout hello flora")
    assert before["message_type"] == "chat_reply"

    path = skills / "shout.py"
    path.write_text(SHOUT.replace("{ending}", "!"))
    done = ask(flora, "skill-user-2", "shout hello flora")
    assert done["message_type"] == "task_completed", done
    assert done["result"] == {"said": "HELLO FLORA!"}

    path.write_text(SHOUT.replace("{ending}", "?"))
    edited = ask(flora, "skill-user-3", "shout hello flora")
    assert edited["message_type"] == "task_completed", edited
    assert edited["result"] == {"said": "HELLO FLORA?"}

    path.unlink()
    gone = ask(flora, "skill-user-4", "shout hello flora")
    assert gone["message_type"] == "chat_reply"


def test_the_skill_written_in_the_docs_answers_as_the_docs_say(flora_with_skills):
    flora, skills = flora_with_skills
    page = (Path(__file__).resolve().parents[2] / "docs" / "skills.md").read_text(encoding="utf-8")
    source = re.search(r"```python\n(# skills/word_count.py\n.*?)```", page, re.S).group(1)
    asked, answer = re.search(r'save the file and ask "(.+?)"\. The reply\s+is `(\{.+?\})`', page).groups()

    (skills / "word_count.py").write_text(source, encoding="utf-8")
    done = ask(flora, "skill-docs-user", asked)
    assert done["message_type"] == "task_completed", done
    assert done["result"] == json.loads(answer)
