"""Image token costs from pixel sizes, against the providers' documented figures."""

from __future__ import annotations

import base64
import io
import json
import math
import struct
import zlib

import pytest
from adapter_histories import WordCounter

from pycupel.adapters import MessageOverhead, anthropic, gemini, openai, responses
from pycupel.conversation.media import (
    anthropic_image_tokens,
    data_url_bytes,
    gemini_image_tokens,
    image_size,
    openai_image_tokens,
)
from pycupel.errors import MessageFormatError, PipelineConfigError

# --------------------------------------------------------------------------- documented figures

# OpenAI, "Images and vision" guide, worked examples of the tile formula.
OPENAI_DOCUMENTED = [
    ((1024, 1024, "high"), 765),  # scaled to 768x768: 4 tiles
    ((2048, 4096, "high"), 1105),  # 1024x2048, then 768x1536: 6 tiles
    ((4096, 8192, "low"), 85),  # low detail is a flat 85
]
# Anthropic, "Vision" guide, the approximate-cost table (tokens = width x height / 750).
ANTHROPIC_DOCUMENTED = [((200, 200), 54), ((1000, 1000), 1334), ((1092, 1092), 1590)]
# Gemini, "Understand and count tokens": 258 up to 384x384, else 258 per 768x768 tile.
GEMINI_DOCUMENTED = [((384, 384), 258), ((100, 50), 258), ((768, 768), 258), ((1024, 1024), 1032)]


@pytest.mark.parametrize(("size", "tokens"), OPENAI_DOCUMENTED)
def test_openai_tile_formula_matches_the_documented_examples(
    size: tuple[int, int, str], tokens: int
) -> None:
    assert openai_image_tokens(*size) == tokens


@pytest.mark.parametrize(("size", "tokens"), ANTHROPIC_DOCUMENTED)
def test_anthropic_area_formula_matches_the_documented_table(
    size: tuple[int, int], tokens: int
) -> None:
    assert anthropic_image_tokens(*size) == tokens


@pytest.mark.parametrize(("size", "tokens"), GEMINI_DOCUMENTED)
def test_gemini_tiles_match_the_documented_rule(size: tuple[int, int], tokens: int) -> None:
    assert gemini_image_tokens(*size) == tokens


SIZES = [(1, 1), (300, 200), (512, 512), (800, 600), (1920, 1080), (3000, 4000), (8000, 300)]


@pytest.mark.parametrize("size", SIZES)
def test_openai_table_follows_the_documented_steps(size: tuple[int, int]) -> None:
    width, height = size
    # Step 1: fit in 2048 x 2048; step 2: shortest side down to 768; then 512-pixel tiles.
    fit = min(1.0, 2048 / max(width, height))
    width, height = int(width * fit), int(height * fit)
    short = min(1.0, 768 / min(width, height))
    width, height = int(width * short), int(height * short)
    tiles = math.ceil(width / 512) * math.ceil(height / 512)
    assert openai_image_tokens(*size, "high") == 85 + 170 * tiles
    assert openai_image_tokens(*size, "auto") == openai_image_tokens(*size, "high")
    assert openai_image_tokens(*size, "low") == 85


@pytest.mark.parametrize("size", SIZES)
def test_anthropic_table_stays_within_the_documented_limits(size: tuple[int, int]) -> None:
    tokens = anthropic_image_tokens(*size)
    width, height = size
    if max(width, height) <= 1568 and width * height / 750 <= 1600:
        assert tokens == math.ceil(width * height / 750)  # no scaling below the limits
    else:
        assert tokens <= 1600  # scaled down to about 1600 tokens at most
        assert tokens >= 1600 * 0.9 or max(width, height) / min(width, height) > 2


# --------------------------------------------------------------------------- image headers


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x80" * width for _ in range(height)))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def jpeg_header(width: int, height: int) -> bytes:
    """SOI, a large APP1 (EXIF-like) segment, then a progressive SOF2 frame header."""
    app1 = b"\xff\xe1" + struct.pack(">H", 2 + 40_000) + b"Exif\x00\x00" + b"\x00" * 39_994
    sof = b"\xff\xc2" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app1 + sof + b"\xff\xd9"


def webp_lossless(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    body = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + bits.to_bytes(4, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


@pytest.mark.parametrize("build", [png, gif, jpeg_header, webp_lossless])
@pytest.mark.parametrize("size", [(1, 1), (1024, 1024), (1920, 1080), (300, 7000)])
def test_headers_give_the_pixel_size(build: object, size: tuple[int, int]) -> None:
    assert callable(build)
    if build is gif and max(size) > 65535:
        return
    assert image_size(build(*size)) == size


def test_real_encoders_agree_with_the_header_reader() -> None:
    image_module = pytest.importorskip("PIL.Image")
    for fmt in ("PNG", "JPEG", "GIF", "WEBP"):
        buffer = io.BytesIO()
        image_module.new("RGB", (640, 480), "white").save(buffer, fmt)
        assert image_size(buffer.getvalue()) == (640, 480), fmt


def test_unknown_or_truncated_data_has_no_size() -> None:
    assert image_size(b"not an image") is None
    assert image_size(png(10, 10)[:20]) is None
    assert image_size(b"\xff\xd8\xff\xe1\x00") is None
    assert data_url_bytes("https://example.com/a.png") is None
    assert data_url_bytes("data:image/png;base64,%%%") is None


# --------------------------------------------------------------------------- in the adapters


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def test_openai_prices_a_base64_image_by_its_size_not_its_text() -> None:
    big = png(1024, 1024)
    small = png(300, 200)
    text_only = openai.count_tokens([{"role": "user", "content": [{"type": "text", "text": "x"}]}])

    def with_image(url: str, detail: str = "high") -> int:
        part = {"type": "image_url", "image_url": {"url": url, "detail": detail}}
        content = [{"type": "text", "text": "x"}, part]
        return openai.count_tokens([{"role": "user", "content": content}])

    placeholder = openai.count_tokens([{"role": "user", "content": "x\n[image]"}]) - text_only
    assert with_image(data_url(big)) - text_only - placeholder == 765
    assert with_image(data_url(small)) - text_only - placeholder == 85 + 170
    assert with_image(data_url(big), "low") - text_only - placeholder == 85
    # A URL costs the fixed estimate unless its size is given.
    url = "https://example.com/photo.jpg"
    assert with_image(url) - text_only - placeholder == openai.DEFAULT_OVERHEAD.image
    sized = MessageOverhead(per_message=4, per_request=3, image=765, image_sizes={url: (512, 512)})
    part = {"type": "image_url", "image_url": {"url": url}}
    assert (
        openai.count_tokens(
            [{"role": "user", "content": [{"type": "text", "text": "x"}, part]}], overhead=sized
        )
        == text_only - 0 + placeholder + 85 + 170
    )


def test_responses_anthropic_and_gemini_read_sizes_from_their_payloads() -> None:
    data = png(1000, 1000)
    encoded = base64.b64encode(data).decode()
    image_part = {"type": "input_image", "image_url": data_url(data), "detail": "high"}
    with_image = responses.count_tokens([{"role": "user", "content": [image_part]}])
    without = responses.count_tokens([{"role": "user", "content": "[image]"}])
    assert with_image - without == openai_image_tokens(1000, 1000, "high")

    block = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": encoded},
    }
    with_block = anthropic.count_tokens([{"role": "user", "content": [block]}])
    without = anthropic.count_tokens([{"role": "user", "content": "[image]"}])
    assert with_block - without == 1334

    part = {"inlineData": {"mimeType": "image/png", "data": encoded}}
    with_part = gemini.count_tokens([{"role": "user", "parts": [part]}])
    without = gemini.count_tokens([{"role": "user", "parts": [{"text": "[image]"}]}])
    assert with_part - without == gemini_image_tokens(1000, 1000)


def test_image_sizes_are_validated() -> None:
    with pytest.raises(PipelineConfigError, match="image_sizes"):
        MessageOverhead(per_message=4, image_sizes={"a": (0, 10)})
    with pytest.raises(PipelineConfigError, match="image_sizes"):
        MessageOverhead(per_message=4, image_sizes={"a": [10, 10]})  # type: ignore[dict-item]


# --------------------------------------------------------------------------- tool definitions

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def test_tool_definitions_are_counted_once_per_request() -> None:
    counter = WordCounter()
    messages = [{"role": "user", "content": "weather in Paris please"}]
    bare = openai.count_tokens(messages, counter=counter)
    text = counter.count(json.dumps(TOOLS[0], ensure_ascii=False))
    assert openai.count_tokens(messages, counter=counter, tools=TOOLS) == bare + text + 12 + 7
    assert openai.count_tokens(messages, counter=counter, tools=[]) == bare
    claude = anthropic.count_tokens(messages, counter=counter, tools=[{"name": "t"}])
    text = counter.count(json.dumps({"name": "t"}))
    assert claude == anthropic.count_tokens(messages, counter=counter) + text + 346


def test_fit_leaves_room_for_the_tools() -> None:
    counter = WordCounter()
    messages = [
        {"role": "user", "content": "one two three four five"},
        {"role": "assistant", "content": "six seven eight nine ten"},
        {"role": "user", "content": "eleven"},
    ]
    budget = openai.count_tokens(messages, counter=counter)
    fitted, _ = openai.fit_messages(messages, budget=budget, counter=counter)
    assert fitted == messages
    tools_cost = openai.count_tokens(messages, counter=counter, tools=TOOLS) - budget
    budget += tools_cost - 1
    with_tools, report = openai.fit_messages(messages, budget=budget, counter=counter, tools=TOOLS)
    assert len(with_tools) < len(messages)
    assert openai.count_tokens(with_tools, counter=counter, tools=TOOLS) <= budget
    assert report.excluded


def test_malformed_tools_name_the_location() -> None:
    with pytest.raises(MessageFormatError, match=r"tools\[1\]"):
        gemini.count_tokens([], tools=[{"functionDeclarations": []}, "nope"])  # type: ignore[list-item]


def test_openai_image_detail_is_checked() -> None:
    part = {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "huge"}}
    with pytest.raises(MessageFormatError, match=r"image_url\.detail"):
        openai.count_tokens([{"role": "user", "content": [part]}])
    part["image_url"]["detail"] = "original"  # type: ignore[index]
    assert openai.count_tokens([{"role": "user", "content": [part]}]) > 0
