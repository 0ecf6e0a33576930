"""The LlamaIndex postprocessor and memory inside llama-index-core's own engines."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from agent_checks import assert_valid_chat_completions
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from pycupel.adapters import openai as chat
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PipelineConfigError
from pycupel.integrations import llamaindex
from pycupel.integrations.llamaindex import (
    ContextWindowMemory,
    ContextWindowPostprocessor,
    relevance_hints,
)
from pycupel.tokens import HeuristicCounter

COUNTER = HeuristicCounter()


def documents() -> list[Document]:
    return [
        Document(text=f"Report {n}: " + " ".join(f"fact{n}-{k}" for k in range(10 + 6 * n)))
        for n in range(15)
    ]


def node_tokens(nodes: list[NodeWithScore]) -> int:
    return sum(COUNTER.count(n.node.get_content(metadata_mode=MetadataMode.LLM)) for n in nodes)


def test_query_engine_sees_only_the_budgeted_nodes() -> None:
    index = VectorStoreIndex.from_documents(documents(), embed_model=MockEmbedding(embed_dim=8))
    retrieved = index.as_retriever(similarity_top_k=15).retrieve("What does report 3 say?")
    assert node_tokens(retrieved) > 1_000
    reports: list[SelectionReport] = []
    processor = ContextWindowPostprocessor(budget=400, on_report=reports.append)
    engine = index.as_query_engine(
        llm=MockLLM(), similarity_top_k=15, node_postprocessors=[processor]
    )
    response = engine.query("What does report 3 say?")
    kept = response.source_nodes
    assert 0 < len(kept) < len(retrieved)
    assert node_tokens(kept) <= 400
    assert reports[-1].exclusion_counts() == {"BudgetExceeded": len(retrieved) - len(kept)}
    # MockLLM answers with its prompt: the synthesizer's prompt held exactly the kept nodes.
    prompt = str(response)
    for node in retrieved:
        text = node.node.get_content()
        assert (text in prompt) == any(k.node.node_id == node.node.node_id for k in kept)
    asynchronous = asyncio.run(engine.aquery("What does report 3 say?"))
    assert [n.node.node_id for n in asynchronous.source_nodes] == [n.node.node_id for n in kept]


def scored(scores: list[float | None], words: int = 20) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=f"n{i} " + "w " * words, id_=f"n{i}"), score=score)
        for i, score in enumerate(scores)
    ]


def test_most_relevant_nodes_kept_and_placed_u_shaped() -> None:
    scores = [0.31, 0.92, 0.10, 0.75, 0.55, 0.88, 0.20, 0.64]
    nodes = scored(scores)
    each = node_tokens(nodes[:1])
    processor = ContextWindowPostprocessor(budget=5 * each)
    kept = processor.postprocess_nodes(nodes, QueryBundle("which?"))
    assert len(kept) == 5
    best = sorted(nodes, key=lambda n: -(n.score or 0))[:5]
    assert {n.node.node_id for n in kept} == {n.node.node_id for n in best}
    # U-shaped: the best at the front, the second best at the back, the weakest in the middle.
    assert kept[0] is best[0]
    assert kept[-1] is best[1]
    assert kept[len(kept) // 2] is best[-1]
    assert processor.postprocess_nodes([]) == []


def test_relevance_without_scores_follows_retrieval_order() -> None:
    assert relevance_hints(scored([None, None, None, None])) == [1.0, 0.75, 0.5, 0.25]
    assert relevance_hints(scored([2.0, None, 4.0])) == [0.0, 0.0, 1.0]
    assert relevance_hints(scored([0.5, 0.5])) == [1.0, 1.0]


def test_identical_node_texts_are_kept_once() -> None:
    nodes = scored([0.9, 0.8])
    twin = NodeWithScore(node=TextNode(text=nodes[0].node.get_content(), id_="twin"), score=0.5)
    kept = ContextWindowPostprocessor(budget=10_000).postprocess_nodes([*nodes, twin])
    assert [n.node.node_id for n in kept] == ["n0", "n1"]


@pytest.mark.parametrize(
    "arguments",
    [{"budget": -1}, {"budget": 100, "counter": "tiktoken"}, {"budget": 100, "slicer": "greedy"}],
)
def test_postprocessor_settings_checked_at_construction(arguments: dict[str, Any]) -> None:
    with pytest.raises(PipelineConfigError):
        ContextWindowPostprocessor(**arguments)


def test_chat_engine_memory_keeps_everything_and_sends_a_window() -> None:
    llm = MockLLMWithChatMemoryOfLastCall()
    memory = ContextWindowMemory.from_defaults(
        chat_history=[ChatMessage(role="system", content="You are terse.")], budget=300
    )
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    for turn in range(8):
        engine.chat(f"Question {turn}: " + "why " * 40)
        sent = [llamaindex._as_chat_message(m) for m in llm.last_chat_messages or []]
        assert sent[0] == {
            "role": "system",
            "content": [{"type": "text", "text": "You are terse."}],
        }
        assert sent[-1]["content"][0]["text"].startswith(f"Question {turn}:")
        assert_valid_chat_completions(sent)
        # The history part (everything before the new question) fits the memory's budget.
        assert chat.count_tokens(sent[:-1]) <= 300
    stored = memory.get_all()
    assert len(stored) == 1 + 2 * 8
    window = memory.get()
    assert window[0] is stored[0]
    assert any(message is stored[-2] for message in window)  # the latest question is pinned
    assert len(window) < len(stored)
    assert asyncio.run(memory.aget()) == window


def test_memory_keeps_tool_calls_with_their_results() -> None:
    history = [ChatMessage(role="user", content="Look up both stations.")]
    for n in range(4):
        history.append(
            ChatMessage(
                role="assistant",
                blocks=[
                    ToolCallBlock(tool_call_id=f"c{n}", tool_name="log", tool_kwargs={"s": n}),
                    ToolCallBlock(tool_call_id=f"d{n}", tool_name="alert", tool_kwargs="{}"),
                ],
            )
        )
        for call in (f"c{n}", f"d{n}"):
            history.append(
                ChatMessage(
                    role="tool",
                    content="reading " * 30,
                    additional_kwargs={"tool_call_id": call},
                )
            )
    # The OpenAI integration's shape: calls in additional_kwargs.
    openai_call = {"id": "o1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history.append(ChatMessage(role="assistant", additional_kwargs={"tool_calls": [openai_call]}))
    history.append(
        ChatMessage(role="tool", content="result " * 30, additional_kwargs={"tool_call_id": "o1"})
    )
    history.append(ChatMessage(role="assistant", content="Both are calm."))
    views = [llamaindex._as_chat_message(m) for m in history]
    assert views[-3]["tool_calls"] == [openai_call]
    assert_valid_chat_completions(views)
    memory = ContextWindowMemory.from_defaults(chat_history=history, budget=250)
    window = memory.get()
    assert len(window) < len(history)
    assert_valid_chat_completions([llamaindex._as_chat_message(m) for m in window])
    assert chat.count_tokens([llamaindex._as_chat_message(m) for m in window]) <= 250
    with pytest.raises(PipelineConfigError):
        ContextWindowMemory.from_defaults(budget="lots")


def test_the_query_steers_the_postprocessor_when_given() -> None:
    nodes = [
        NodeWithScore(node=TextNode(text=f"note {i} " + "filler " * 20, id_=f"n{i}"), score=s)
        for i, s in enumerate([0.9, 0.8, 0.7, 0.6])
    ]
    nodes.append(
        NodeWithScore(
            node=TextNode(text="the lighthouse keeper logs " + "filler " * 18, id_="keeper"),
            score=0.1,
        )
    )
    budget = 2 * node_tokens(nodes[:1]) + 2
    processor = ContextWindowPostprocessor(budget=budget)
    without = processor.postprocess_nodes(nodes)
    with_query = processor.postprocess_nodes(nodes, QueryBundle("lighthouse keeper"))
    assert {n.node.node_id for n in without} == {"n0", "n1"}
    assert "keeper" in {n.node.node_id for n in with_query}
    assert processor.postprocess_nodes(nodes, QueryBundle("  ")) == without


def test_memory_windows_extend_each_other_between_compactions() -> None:
    reports: list[Any] = []
    memory = ContextWindowMemory.from_defaults(
        chat_history=[ChatMessage(role="system", content="You are terse.")],
        budget=400,
        on_report=reports.append,
    )
    previous: list[ChatMessage] = []
    for turn in range(12):
        memory.put(ChatMessage(role="user", content=f"Question {turn}: " + "why " * 20))
        window = memory.get()
        if previous and not reports[-1].compacted and reports[-1].cache_break is None:
            assert window[: len(previous)] == previous
        previous = window
        memory.put(ChatMessage(role="assistant", content="Because. " * 10))
    assert any(report.compacted for report in reports)
    assert sum(report.cache_break is None for report in reports) >= 6


def test_memory_with_an_unanswered_call_leaves_it_out() -> None:
    reports: list[Any] = []
    memory = ContextWindowMemory.from_defaults(budget=300, on_report=reports.append)
    memory.put(ChatMessage(role="user", content="Look it up."))
    memory.put(
        ChatMessage(
            role="assistant",
            blocks=[ToolCallBlock(tool_call_id="c1", tool_name="log", tool_kwargs={})],
        )
    )
    window = memory.get()
    assert [m.role.value for m in window] == ["user"]
    assert reports[-1].exclusion_counts() == {"Filtered": 1}
