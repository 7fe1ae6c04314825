"""The tools the agent offers for a request: ranked by the packaged multilingual embeddings
against each tool's description and examples (the real model, when installed), by words
without it; a broken ranker never stops the agent."""

from __future__ import annotations

import pytest

from capabilities.agent.loop import ToolBox
from capabilities.agent.selection import EmbeddingRanker, ToolSelector, WordRanker, tool_texts
from config import FloraConfig
from init_plugins import build_registry


@pytest.fixture(scope="module")
def tools():
    registry = build_registry(FloraConfig(memory={"enabled": False}, understanding={"examples": False}), llm=None)
    return ToolBox.from_registry(registry).tools


@pytest.fixture(scope="module")
def embedder():
    from capabilities.memory.embedding import EmbeddingError, get_embedder

    try:
        return get_embedder("multilingual-e5-small")
    except EmbeddingError:
        pytest.skip("the packaged embedding model is not installed")


@pytest.mark.parametrize("request_text, tool", [
    ("use python to compute the sha256 of the text hello", "python_exec"),
    ("帮我看看这个目录里有哪些文件", "file_list"),
    ("how much disk space is left here?", "shell"),
    ("which file in my workspace mentions 'rotate the keys'?", "file_search"),
    ("看看 https://example.org/status 这个页面上写了什么", "web_fetch"),
    ("创建 plan.txt，写上：第一步 备份数据", "file_write"),
])
def test_the_tool_a_request_needs_ranks_among_the_first(tools, embedder, tmp_path, request_text, tool):
    ranked = ToolSelector(EmbeddingRanker(embedder, tmp_path), 6).ranked(request_text, tools)
    assert tool in [s.name for s in ranked[:5]]


def test_the_tools_vectors_are_kept_on_disk(tools, embedder, tmp_path, monkeypatch):
    from capabilities.cognition import semantic

    monkeypatch.setattr(semantic, "_memo", {})  # as in a fresh process
    ToolSelector(EmbeddingRanker(embedder, tmp_path), 6).ranked("list my files", tools)
    assert list(tmp_path.glob("*.npz"))


def test_a_tool_is_known_by_its_description_its_translation_and_examples(tools):
    spec = next(s for s in tools if s.name == "python_exec")
    texts = tool_texts(spec)
    assert texts[0].startswith("python exec: Run a Python script")
    assert any("Python" in t and "运行" in t for t in texts) and any("用 Python" in t for t in texts)


def test_a_broken_ranker_falls_back_to_words(tools):
    class Broken:
        def scores(self, request, specs):
            raise RuntimeError("no model")

    ranked = ToolSelector(Broken(), 6).ranked("run the shell command df -h", tools)
    assert ranked[0].name == "shell"
    assert WordRanker().scores("run the shell command", [ranked[0]])[0] > 0
