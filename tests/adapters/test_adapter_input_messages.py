"""Messages that name their rule: a budget below the overhead, Anthropic blocks given to OpenAI."""

from __future__ import annotations

import pytest

from pycupel.adapters import openai
from pycupel.errors import MessageFormatError, PipelineConfigError


def test_a_budget_below_the_per_request_overhead_says_what_the_minimum_is() -> None:
    with pytest.raises(PipelineConfigError, match="per-request overhead") as caught:
        openai.fit_messages([{"role": "user", "content": "hi"}], budget=-5)
    assert caught.value.field == "budget"
    assert caught.value.value == -5


@pytest.mark.parametrize(
    ("block", "hint"),
    [
        ({"type": "tool_result", "tool_use_id": "t1", "content": "42"}, "role 'tool'"),
        ({"type": "tool_use", "id": "t1", "name": "f", "input": {}}, "tool_calls"),
    ],
)
def test_anthropic_tool_blocks_in_openai_messages_are_rejected(
    block: dict[str, object], hint: str
) -> None:
    messages = [{"role": "user", "content": [block]}]
    with pytest.raises(MessageFormatError, match="Anthropic content block") as caught:
        openai.fit_messages(messages, budget=1_000)
    assert hint in str(caught.value)
    assert "messages[0].content[0].type" in str(caught.value)
