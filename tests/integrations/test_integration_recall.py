"""The recall tool inside LangChain's own agent loop: the model reads a ref in an excerpt's
marker, calls the tool, and gets the elided line back; another thread cannot read it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from pycupel.adapters import langchain as lc_adapter
from pycupel.conversation import Recall
from pycupel.errors import PipelineConfigError
from pycupel.integrations.langchain import ContextWindowMiddleware, recall_tool

REF = re.compile(r"elided: ref ([0-9a-f]{16}) \.\.\.\]")
BUDGET = 2_500


def _line(n: int) -> str:
    checksum = hashlib.sha256(str(n).encode()).hexdigest()[:10]
    return f"2026-11-21T10:{n // 60 % 60:02d}:{n % 60:02d}Z INFO step {n} ok checksum {checksum}"


@tool
def read_log(service: str) -> str:
    """Read a service's build log (long)."""
    lines = [_line(n) for n in range(2500)]
    lines[1711] = f"2026-11-21T10:45:11Z WARN {service}: cache shard 7 evicted 1,204 keys"
    return "\n".join(lines)


class RecallingModel(BaseChatModel):
    """A scripted model: reads the log, then asks the recall tool about step 2222 with every
    ref it sees in a marker (or with ``forced_ref``), then answers with what came back."""

    forced_ref: str | None = None
    inputs: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-recalling-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecallingModel:  # type: ignore[override]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.inputs.append(list(messages))
        results = [m for m in messages if isinstance(m, ToolMessage)]
        recalled = [m for m in results if m.name == "recall"]
        if not results:
            call = {"name": "read_log", "args": {"service": "billing"}, "id": "log1"}
            reply = AIMessage("", tool_calls=[call])
        elif not recalled:
            ref = self.forced_ref or _gap_holding(str(results[-1].content), 2222)
            call = {"name": "recall", "args": {"ref": ref, "query": "step 2222"}, "id": "r1"}
            reply = AIMessage("", tool_calls=[call])
        else:
            found = [str(m.content) for m in recalled if _line(2222) in str(m.content)]
            reply = AIMessage(_line(2222) if found else "not found: " + str(recalled[0].content))
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _gap_holding(excerpt: str, step: int) -> str:
    """The ref of the marker between the kept lines around ``step`` (as a model reads it)."""
    before = -1
    lines = excerpt.splitlines()
    for number, line in enumerate(lines):
        marker = REF.search(line)
        if marker is None:
            found = re.search(r"step (\d+) ok", line)
            before = int(found.group(1)) if found else before
            continue
        after = next(
            (
                int(m.group(1))
                for m in map(re.compile(r"step (\d+) ok").search, lines[number:])
                if m
            ),
            10**9,
        )
        if before < step < after:
            return marker.group(1)
    raise AssertionError(f"no marker stands for step {step}")


MODES = ("drop", "error")  # a fit per model call; a session per thread


def run(model: RecallingModel, recall: Recall, thread: str, mode: str = "drop") -> Any:
    middleware = ContextWindowMiddleware(budget=BUDGET, recall=recall, unanswered_tool_calls=mode)
    agent = create_agent(
        model,
        [read_log, recall_tool(recall)],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    question = HumanMessage("Did the billing build log show any cache evictions?")
    config: Any = {"configurable": {"thread_id": thread}}
    return agent.invoke({"messages": [question]}, config=config)


@pytest.mark.parametrize("mode", MODES)
def test_the_model_gets_an_elided_line_back_through_the_recall_tool(mode: str) -> None:
    recall = Recall("agent", max_tokens=400)
    model = RecallingModel()
    result = run(model, recall, "thread-1", mode)
    assert result["messages"][-1].content == _line(2222)
    # What the model saw of the log: within the budget, the eviction line kept, step 2222 not.
    seen = model.inputs[1]
    assert lc_adapter.count_tokens(seen) <= BUDGET
    log = next(m for m in seen if isinstance(m, ToolMessage))
    assert "evicted 1,204 keys" in str(log.content)
    assert _line(2222) not in str(log.content)
    assert REF.search(str(log.content))
    # The recall answers are ordinary tool results in the graph's state.
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "recall"]
    assert any(_line(2222) in str(m.content) for m in answers)


@pytest.mark.parametrize("mode", MODES)
def test_another_thread_cannot_read_the_first_threads_output(mode: str) -> None:
    recall = Recall("agent", max_tokens=400)
    first = RecallingModel()
    run(first, recall, "thread-1", mode)
    log = next(m for m in first.inputs[1] if isinstance(m, ToolMessage))
    stolen = REF.findall(str(log.content))[0]
    # A prompt-injected model in another thread asks for the first thread's ref.
    second = RecallingModel(forced_ref=stolen)
    result = run(second, recall, "thread-2", mode)
    answer = result["messages"][-1].content
    assert answer == f"not found: Error: recall ref '{stolen}': is not a ref of this conversation"
    failed = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "recall"]
    assert failed[0].status == "error"


def test_a_recall_that_is_not_one_is_refused() -> None:
    with pytest.raises(PipelineConfigError, match="recall"):
        ContextWindowMiddleware(budget=BUDGET, recall="agent")  # type: ignore[arg-type]
