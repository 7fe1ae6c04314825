"""The agent's prompt fits the model's context by construction: a 4,096-token model with every
tool installed, long histories, large tool results, a request too long to fit, a host that
counts more than Flora did. The fake model counts the prompt as a chat template would and
refuses, as llama.cpp's server does, what is over its context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capabilities.agent.budget import (
    MESSAGE_OVERHEAD, ContextBudget, EstimatingCounter, VocabCounter, cut, message_tokens,
)
from capabilities.agent.loop import AgentLoop, Budgets, ToolBox
from capabilities.agent.prompt import catalogue, compact
from capabilities.agent.selection import ToolSelector, WordRanker, fit_tools
from capabilities.base import ExecutionContext, capability, spec_of
from capabilities.llm.base import LLMReply, LLMRequestRejected
from capabilities.registry import CapabilityRegistry
from config import FloraConfig
from init_plugins import build_registry

N_CTX = 4096


class DenseCounter:
    """The test's "model tokenizer": more tokens per character than the estimate for ASCII
    (one per 2.5 bytes) and one per CJK character."""

    def count(self, text: str) -> int:
        return -(-len(text.encode("utf-8")) * 2 // 5)


class ContextLLM:
    """A scripted model with an ``n_ctx``: it records each prompt's tokens (by ``counter``, with
    the template's overhead) and refuses one over its context the way llama.cpp's server does."""

    name = "context-fake"

    def __init__(self, script, counter, n_ctx: int = N_CTX, overhead: int = 0):
        self.script, self.counter, self.n_ctx, self.overhead = list(script), counter, n_ctx, overhead
        self.prompts: list[int] = []
        self.asked: list[int] = []
        self.calls: list[list[dict]] = []

    def complete(self, messages, *, json_schema=None, max_tokens=256, temperature=0.0, stop=None):
        used = message_tokens(self.counter, messages) + self.overhead
        self.prompts.append(used)
        self.asked.append(max_tokens)
        self.calls.append(messages)
        if used + max_tokens > self.n_ctx:
            raise LLMRequestRejected(
                f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                f"{used + max_tokens} tokens ({used} in the messages, {max_tokens} in the completion).",
                status_code=400)
        item = self.script.pop(0)
        return LLMReply(json.dumps(item), prompt_tokens=used, completion_tokens=20)


def many_plugins(count: int = 40):
    """Plugins of a busy deployment: each with a long description and a schema of several parameters."""
    specs = []
    for i in range(count):
        def handler(**kwargs):
            return {"ok": True}

        specs.append(spec_of(capability(
            name=f"plugin_{i}", description=f"Plugin number {i}. " + "It does a great many things. " * 12,
            parameters={"type": "object", "properties": {
                f"p{j}": {"type": "string", "description": "A parameter with a long explanation. " * 6,
                          "default": "x" * 40, "x-flora-description": {"zh": "参数" * 20}} for j in range(6)},
                "required": ["p0"]})(handler)))
    return specs


@pytest.fixture(scope="module")
def every_tool():
    registry = build_registry(FloraConfig(memory={"enabled": False}, understanding={"examples": False}), llm=None)
    for spec in [*many_plugins(), spec_of(big_result)]:
        registry.register_capability(spec)
    return registry


@capability(name="big_result", description="Returns a very large text.")
def big_result() -> str:
    return "y" * 60_000


def context_for(registry, tmp_path, request: str, meta: dict | None = None) -> ExecutionContext:
    config = FloraConfig(data_dir=str(tmp_path), memory={"enabled": False})
    return ExecutionContext(task_id="t1", user_id="u1", config=config, registry=registry, request=request,
                            meta=meta or {})


def loop_for(registry, tmp_path, llm, request, counter, *, budgets=None, meta=None, selector=True):
    return AgentLoop(llm=llm, tools=ToolBox.from_registry(registry), context=context_for(registry, tmp_path, request,
                                                                                          meta),
                     budgets=budgets or Budgets(n_ctx=N_CTX, max_steps=40, max_tokens=10_000_000),
                     selector=ToolSelector(WordRanker(), 6) if selector else None, counter=counter)


def call(tool, **arguments):
    return {"tool": tool, "arguments": arguments}


def test_every_tool_at_once_would_not_fit_but_the_offered_ones_do(every_tool):
    counter = DenseCounter()
    tools = ToolBox.from_registry(every_tool).tools
    assert len(tools) > 50
    assert counter.count(catalogue(tools)) > N_CTX  # why the default install overflowed
    offered = fit_tools(ToolSelector(WordRanker(), 6).ranked("list the files here", tools), counter,
                        ContextBudget(N_CTX, 512), 6)
    assert 0 < len(offered) <= 6 and "file_list" in [s.name for s in offered]
    assert counter.count(catalogue(offered)) <= (N_CTX - 512) * 0.45


def test_compact_schemas_drop_floras_keywords_defaults_and_long_descriptions(every_tool):
    spec = every_tool.get_executable("http_request")
    short = json.dumps(compact(spec.parameters), ensure_ascii=False)
    assert "x-flora" not in short and '"default"' not in short and "pattern" not in short
    assert len(short) < len(json.dumps(spec.parameters, ensure_ascii=False)) * 0.75
    assert compact(spec.parameters)["required"] == ["url"]
    assert compact(spec.parameters)["properties"]["method"]["enum"][0] == "GET"


@pytest.mark.parametrize("counter", [DenseCounter(), EstimatingCounter()], ids=["dense", "estimate"])
def test_a_long_history_of_large_results_always_fits(every_tool, tmp_path, counter):
    request = "get the big result thirty times and tell me what you saw"
    llm = ContextLLM([call("big_result")] * 30 + [{"final": "done"}], counter)
    loop = loop_for(every_tool, tmp_path, llm, request, counter,
                    budgets=Budgets(n_ctx=N_CTX, max_steps=40, max_tokens=10_000_000, max_result_chars=20_000))
    result = loop.run(request)
    assert result["message"] == "done" and len(result["steps"]) == 30
    assert all(p + m <= N_CTX for p, m in zip(llm.prompts, llm.asked))
    assert max(llm.prompts) > N_CTX // 2  # the budget was used, not wasted
    last = llm.calls[-1]
    assert "earlier steps are left out" in json.dumps(last) and "[cut:" in last[-2]["content"]
    assert last[1]["content"] == request  # the request itself is never cut


def test_memories_and_a_chinese_request_fit_too(every_tool, tmp_path):
    counter = DenseCounter()
    memories = [{"memory_id": f"m{i}", "fact": "这个人喜欢很长的句子和很多细节。" * 10} for i in range(40)]
    request = "帮我看看这个目录里有哪些文件"
    llm = ContextLLM([call("file_list"), {"final": "好了"}, {"final": "好了"}], counter)
    loop_for(every_tool, tmp_path, llm, request, counter, meta={"memories": memories}).run(request)
    assert all(p + m <= N_CTX for p, m in zip(llm.prompts, llm.asked))
    # the language to answer in is said last, where a small model heeds it, and only there: the
    # system prompt before it is the same for every language (the model host keeps it evaluated)
    for prompt in llm.calls:
        assert prompt[-1] == {"role": "system", "content": "Write the final answer and any question in Chinese (简体中文)."}
        assert "Chinese" not in prompt[0]["content"] and "English" not in prompt[0]["content"]


def test_a_request_longer_than_the_context_gets_a_clear_reply(every_tool, tmp_path):
    counter = DenseCounter()
    request = "please summarise this: " + "lorem ipsum dolor sit amet " * 800
    llm = ContextLLM([{"final": "never"}], counter)
    result = loop_for(every_tool, tmp_path, llm, request, counter).run(request)
    assert result["stopped"] == "context" and llm.prompts == []
    assert "do not fit the model's context (4096 tokens)" in result["message"] and "llm.n_ctx" in result["message"]


def test_a_host_that_counts_more_gets_a_smaller_prompt_then_a_clear_reply(every_tool, tmp_path):
    counter = EstimatingCounter()
    request = "read the big result"
    # the host's template costs 700 tokens more than Flora counts: the full second prompt is
    # refused, and the same step asked again, shrunk by what the host said was over, fits
    llm = ContextLLM([call("big_result"), {"final": "read it"}], counter, overhead=700)
    budgets = Budgets(n_ctx=N_CTX, max_result_chars=100_000)
    result = loop_for(every_tool, tmp_path, llm, request, counter, budgets=budgets).run(request)
    assert result["message"] == "read it" and len(llm.prompts) == 3
    assert llm.prompts[1] + llm.asked[1] > N_CTX >= llm.prompts[2] + llm.asked[2]
    # a host that refuses everything: a clear reply, never its raw 400
    llm = ContextLLM([{"final": "never"}], counter, overhead=N_CTX)
    result = loop_for(every_tool, tmp_path, llm, request, counter).run(request)
    assert result["stopped"] == "context" and "maximum context length" not in result["message"]
    assert "do not fit the model's context" in result["message"]


def test_the_tools_are_chosen_once_and_kept_with_the_task(every_tool, tmp_path):
    counter = DenseCounter()
    request = "list the files in my workspace"
    llm = ContextLLM([call("file_list"), {"final": "three files"}], counter)
    loop = loop_for(every_tool, tmp_path, llm, request, counter)
    loop.run(request)
    first, second = llm.calls
    assert first[0] == second[0]  # the same system prompt (tools) on every step: the host keeps it evaluated
    assert "file_list" in first[0]["content"] and "plugin_3" not in first[0]["content"]


def test_cut_keeps_within_the_tokens():
    counter = DenseCounter()
    text = "abc " * 5000
    for tokens in (1, 10, 100, 1000):
        assert counter.count(cut(text, counter, tokens)) <= tokens


def test_the_real_vocabulary_counts_like_the_model():
    model = Path("data/models/qwen2.5-coder-1.5b.gguf")
    if not model.exists():
        pytest.skip("the packaged model is not assembled here")
    counter = VocabCounter(str(model))
    assert 0 < counter.count("hello world") <= 3
    assert counter.count("帮我看看这个目录里有哪些文件") < EstimatingCounter().count("帮我看看这个目录里有哪些文件")
    assert MESSAGE_OVERHEAD >= 5  # <|im_start|>role\n … <|im_end|>\n


def test_the_output_constraint_is_the_schemas_shape_only(every_tool):
    """A length written out whole made llama.cpp segfault (bench/agent_grammar_crash.py)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from capabilities.agent.prompt import output_schema

    tools = ToolBox.from_registry(every_tool).tools
    schema = json.dumps(output_schema(tools))
    for word in ("maxLength", "minLength", "pattern", "x-flora", "default"):
        assert f'"{word}"' not in schema
    for spec in tools:  # each compiles: rules that are not shapes are left to Flora's check
        json_schema_to_gbnf(json.dumps(output_schema([spec])))
    assert len(json_schema_to_gbnf(schema)) < 200_000
