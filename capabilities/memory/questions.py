"""QuestionWriter: the questions a remembered fact answers, in English and in Chinese.

A person rarely asks in the words they told: "I drink my coffee black" is asked back as "how
do I take my morning brew?", and "我对花生过敏" perhaps in English. A small embedding model
matches a question to a question far better than to a statement, and its Chinese and English
meet poorly. So a new fact is stored with a few questions it answers — written by the model
once, off the reply path, in both languages — and recall scores a memory by its fact and by
the nearest of its questions (ranking.py, ``QUESTION_WEIGHT``).

One ``complete_json`` call per fact, constrained by :data:`QUESTIONS_SCHEMA`. A reply that is
not valid for the schema gives no questions (the fact is still recalled by its own text); it
is logged, never retried.
"""

from __future__ import annotations

import json
import logging

from capabilities.llm.base import LLM, LLMError, complete_json

log = logging.getLogger("flora.memory.questions")

DEFAULT_PER_LANGUAGE = 2
MAX_QUESTION_CHARS = 120
QUESTIONS_MAX_TOKENS = 160
MAX_FACT_CHARS = 500  # of the fact shown to the model

PROMPT = """Write questions that a note about a person answers, as the person would ask them later: \
{n} in English and {n} in Chinese, each asking for exactly what the note says, in other words than the note's.
Example note: "My aunt Rosa lives in Porto"
{example_en}
Example note: "我每周日下午去爬山"
{example_zh}
Note: "{fact}"
JSON:"""

# the examples' notes say what people often tell (where family lives, a weekly habit) in words none
# of bench/memory's facts use, so that the bench measures questions written for notes it was not shown
_EXAMPLES = {
    "en": (("Where does my aunt live?", "Which city is Rosa in?", "Who do I have in Portugal?"),
           ("我姑姑住在哪里？", "罗莎在哪个城市？", "我有亲人在葡萄牙吗？")),
    "zh": (("When do I go hiking?", "What sport do I do on Sunday afternoons?", "What do I do at weekends?"),
           ("我什么时候去爬山？", "我每周日下午做什么运动？", "我周末一般去户外干什么？")),
}


def questions_schema(per_language: int) -> dict:
    items = {"type": "array", "minItems": per_language, "maxItems": per_language,
             "items": {"type": "string", "minLength": 3, "maxLength": MAX_QUESTION_CHARS}}
    return {"title": "Questions the note answers", "type": "object",
            "properties": {"english_questions": items, "chinese_questions": items},
            "required": ["english_questions", "chinese_questions"], "additionalProperties": False}


class QuestionWriter:
    def __init__(self, llm: LLM, *, per_language: int = DEFAULT_PER_LANGUAGE,
                 max_tokens: int = QUESTIONS_MAX_TOKENS):
        if not 1 <= per_language <= 3:
            raise ValueError("per_language must be 1, 2 or 3")
        self._llm = llm
        self._n = per_language
        self._schema = questions_schema(per_language)
        self._max_tokens = max_tokens

    def questions(self, fact: str) -> tuple[str, ...]:
        """Distinct questions ``fact`` answers, English first; () when the model's reply is refused."""
        fact = " ".join(fact.split())[:MAX_FACT_CHARS]
        if not fact:
            return ()
        prompt = PROMPT.format(n=self._n, fact=fact.replace('"', "'"), example_en=self._example("en"),
                               example_zh=self._example("zh"))
        try:
            answer = complete_json(self._llm, [{"role": "user", "content": prompt}], self._schema,
                                   max_tokens=self._max_tokens, temperature=0.0)
        except LLMError as exc:
            log.warning("writing the questions of a memory failed: %s", exc)
            return ()
        written = [" ".join(q.split()) for q in answer["english_questions"] + answer["chinese_questions"]]
        return tuple(dict.fromkeys(q for q in written if q and q.casefold() != fact.casefold()))

    def _example(self, note: str) -> str:
        english, chinese = _EXAMPLES[note]
        return json.dumps({"english_questions": list(english[:self._n]), "chinese_questions": list(chinese[:self._n])},
                          ensure_ascii=False)
