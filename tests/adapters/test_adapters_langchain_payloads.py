"""LangChain adapter: images priced by pixel size, bound tools counted, repair mode."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest
from adapter_histories import WordCounter, assert_openai_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from test_adapters_repair import broken, event, openai_history

from pycupel.adapters import MessageOverhead
from pycupel.adapters import langchain as lc_adapter
from pycupel.conversation.media import anthropic_image_tokens, openai_image_tokens
from pycupel.conversation.repair import ORPHAN_FILTER
from pycupel.errors import MessageFormatError, PinnedBudgetError, PipelineConfigError

messages_module = pytest.importorskip("langchain_core.messages")
AIMessage = messages_module.AIMessage
HumanMessage = messages_module.HumanMessage
SystemMessage = messages_module.SystemMessage
ToolMessage = messages_module.ToolMessage

COUNTER = WordCounter()


def png(width: int, height: int) -> bytes:
    body = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    ihdr = struct.pack(">I", len(body)) + b"IHDR" + body + struct.pack(">I", zlib.crc32(body))
    return b"\x89PNG\r\n\x1a\n" + ihdr


def image_blocks(data: bytes) -> list[dict[str, Any]]:
    """One image in each block form LangChain messages carry."""
    encoded = base64.b64encode(data).decode()
    return [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}},
        {"type": "image_url", "image_url": f"data:image/png;base64,{encoded}"},
        {"type": "image", "source_type": "base64", "data": encoded, "mime_type": "image/png"},
        {"type": "image", "base64": encoded, "mime_type": "image/png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": encoded}},
    ]


def image_cost(block: dict[str, Any], **options: Any) -> int:
    with_image = lc_adapter.count_tokens(
        [HumanMessage(content=[{"type": "text", "text": "x"}, block])], **options
    )
    placeholder = lc_adapter.count_tokens([HumanMessage("x\n[image]")], **options)
    return with_image - placeholder


@pytest.mark.parametrize("index", range(5))
def test_every_image_block_form_is_priced_from_its_pixel_size(index: int) -> None:
    block = image_blocks(png(1024, 1024))[index]
    assert image_cost(block) == openai_image_tokens(1024, 1024, "high") == 765
    assert image_cost(block, image_pricing="anthropic") == anthropic_image_tokens(1024, 1024)


def test_image_urls_use_given_sizes_else_the_fixed_estimate() -> None:
    url = "https://example.com/chart.png"
    block = {"type": "image", "source_type": "url", "url": url}
    assert image_cost(block) == lc_adapter.DEFAULT_OVERHEAD.image
    sized = MessageOverhead(per_message=3, per_request=3, image=765, image_sizes={url: (512, 512)})
    assert image_cost(block, overhead=sized) == 85 + 170
    low = {"type": "image_url", "image_url": {"url": url, "detail": "low"}}
    assert image_cost(low, overhead=sized) == 85


def test_bad_image_options_are_named() -> None:
    with pytest.raises(PipelineConfigError, match="image_pricing"):
        lc_adapter.count_tokens([HumanMessage("x")], image_pricing="claude")  # type: ignore[arg-type]
    block = {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "huge"}}
    with pytest.raises(MessageFormatError, match=r"content\[0\]\.detail"):
        lc_adapter.count_tokens([HumanMessage(content=[block])])
    block = {"type": "image", "base64": 42}
    with pytest.raises(MessageFormatError, match=r"content\[0\]\.base64"):
        lc_adapter.count_tokens([HumanMessage(content=[block])])


# --------------------------------------------------------------------------- bound tools


def test_bound_tools_are_counted_as_their_openai_schemas() -> None:
    tools_module = pytest.importorskip("langchain_core.tools")
    convert = pytest.importorskip("langchain_core.utils.function_calling").convert_to_openai_tool

    @tools_module.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return city

    schema = {
        "type": "function",
        "function": {"name": "lookup", "description": "Look up.", "parameters": {}},
    }
    messages = [HumanMessage("weather in Paris please")]
    bare = lc_adapter.count_tokens(messages, counter=COUNTER)
    texts = [json.dumps(convert(tool), ensure_ascii=False) for tool in (get_weather, schema)]
    expected = bare + sum(COUNTER.count(text) for text in texts) + 12 + 7 * 2
    tools = [get_weather, schema]
    assert lc_adapter.count_tokens(messages, counter=COUNTER, tools=tools) == expected
    assert lc_adapter.from_messages(
        messages, counter=COUNTER, tools=tools
    ).overhead.per_request == (expected - bare + lc_adapter.DEFAULT_OVERHEAD.per_request)


def test_fit_leaves_room_for_the_bound_tools() -> None:
    schema = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city, with the forecast for tomorrow.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    messages = [
        HumanMessage("one two three four five"),
        AIMessage("six seven eight nine ten"),
        HumanMessage("eleven"),
    ]
    budget = lc_adapter.count_tokens(messages, counter=COUNTER)
    fitted, _ = lc_adapter.fit_messages(messages, budget=budget, counter=COUNTER)
    assert fitted == messages
    budget = lc_adapter.count_tokens(messages, counter=COUNTER, tools=[schema]) - 1
    fitted, report = lc_adapter.fit_messages(
        messages, budget=budget, counter=COUNTER, tools=[schema]
    )
    assert len(fitted) < len(messages)
    assert lc_adapter.count_tokens(fitted, counter=COUNTER, tools=[schema]) <= budget
    assert report.excluded


def test_a_tool_langchain_cannot_bind_is_named() -> None:
    with pytest.raises(MessageFormatError, match=r"tools\[1\]"):
        lc_adapter.count_tokens([HumanMessage("x")], tools=[{"type": "function"}, 42])


# --------------------------------------------------------------------------- repair


def test_repair_drops_orphans_and_unanswered_calls_and_reports_them() -> None:
    call = {"name": "lookup", "args": {}, "id": "c1"}
    messages = [
        SystemMessage("Be brief."),
        ToolMessage("stale result", tool_call_id="ghost"),
        HumanMessage("hi"),
        AIMessage("hello"),
        HumanMessage("look it up"),
        AIMessage("", tool_calls=[call]),
    ]
    with pytest.raises(MessageFormatError, match="orphaned tool result"):
        lc_adapter.fit_messages(messages, budget=500, counter=COUNTER)
    fitted, report = lc_adapter.fit_messages(messages, budget=500, counter=COUNTER, repair=True)
    assert fitted == [messages[0], *messages[2:5]]
    reasons = sorted(
        (entry.reason.filter_name, entry.item.metadata["message_indices"])
        for entry in report.excluded
    )
    assert reasons == [(ORPHAN_FILTER, (1,)), ("unanswered-tool-call", (5,))]
    units = lc_adapter.from_messages(messages, counter=COUNTER, repair=True)
    assert [entry.item.metadata["message_indices"] for entry in units.repairs] == [(1,)]
    with pytest.raises(PipelineConfigError, match="repair"):
        lc_adapter.from_messages(messages, repair="yes")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(events=st.lists(event, max_size=14), budget=st.integers(20, 300))
def test_repair_gives_valid_histories(events: list[Any], budget: int) -> None:
    original = openai_history(events)
    messages = messages_module.convert_to_messages(original)
    try:
        fitted, report = lc_adapter.fit_messages(
            messages, budget=budget, counter=COUNTER, repair=True
        )
    except PinnedBudgetError:
        return
    position = {id(message): index for index, message in enumerate(messages)}
    assert_openai_valid([original[position[id(message)]] for message in fitted], original)
    assert all(entry.reason.describe() for entry in report.excluded)
    if not broken(events):
        assert lc_adapter.fit_messages(messages, budget=budget, counter=COUNTER)[0] == fitted
