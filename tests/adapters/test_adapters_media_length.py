"""Documents and audio priced from their length (PDF pages, WAV seconds), per provider."""

from __future__ import annotations

import base64
import io
import math
import wave

import pytest
from adapter_histories import WordCounter

from pycupel.adapters import MessageOverhead, anthropic, gemini, openai, responses
from pycupel.conversation.media_length import (
    MEDIA_RATES,
    decode_payload,
    pdf_pages,
    wav_seconds,
)
from pycupel.errors import PipelineConfigError

COUNTER = WordCounter()


def wav(seconds: float, rate: int = 16_000, channels: int = 1) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(channels)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(b"\x00\x00" * channels * int(seconds * rate))
    return buffer.getvalue()


def pdf(pages: int) -> bytes:
    """A small PDF of ``pages`` empty pages (a catalog, a page tree and its pages)."""
    kids = " ".join(f"{3 + page} 0 R" for page in range(pages))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>",
        *("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>" for _ in range(pages)),
    ]
    body = "".join(f"{number} 0 obj\n{text}\nendobj\n" for number, text in enumerate(objects, 1))
    return f"%PDF-1.4\n{body}trailer\n<< /Root 1 0 R >>\n%%EOF\n".encode()


def test_pages_of_a_pdf_written_by_a_real_encoder() -> None:
    image_module = pytest.importorskip("PIL.Image")
    sheets = [image_module.new("RGB", (120, 160), (255, 255, 255)) for _ in range(4)]
    buffer = io.BytesIO()
    sheets[0].save(buffer, "PDF", save_all=True, append_images=sheets[1:])
    assert pdf_pages(buffer.getvalue()) == 4


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_lengths_are_read_from_real_files() -> None:
    assert wav_seconds(wav(2.5)) == pytest.approx(2.5)
    assert wav_seconds(wav(1.0, rate=44_100, channels=2)) == pytest.approx(1.0)
    assert wav_seconds(b"ID3\x04 an mp3") is None
    assert pdf_pages(pdf(3)) == 3
    assert pdf_pages(pdf(1)) == 1
    assert pdf_pages(b"%PDF-1.7 no visible pages") is None
    assert pdf_pages(b"not a pdf") is None
    assert decode_payload("data:application/pdf;base64," + b64(b"%PDF-")) == b"%PDF-"
    assert decode_payload("https://example.com/a.pdf") is None
    assert decode_payload(None) is None


def gemini_part(mime: str, data: bytes) -> int:
    part = {"inlineData": {"mimeType": mime, "data": b64(data)}}
    with_part = gemini.count_tokens([{"role": "user", "parts": [part]}], counter=COUNTER)
    label = "[audio]" if mime.startswith("audio/") else "[document]"
    bare = gemini.count_tokens([{"role": "user", "parts": [{"text": label}]}], counter=COUNTER)
    return with_part - bare


def test_gemini_uses_its_documented_rates() -> None:
    assert gemini_part("audio/wav", wav(2.5)) == 80  # 32 tokens per second
    assert gemini_part("application/pdf", pdf(3)) == 3 * 258  # 258 per page


def test_openai_and_anthropic_use_their_documented_estimates() -> None:
    document = pdf(2)
    part = {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{b64(document)}"}}
    with_file = openai.count_tokens([{"role": "user", "content": [part]}], counter=COUNTER)
    bare = openai.count_tokens([{"role": "user", "content": "[file]"}], counter=COUNTER)
    assert with_file - bare == 2 * MEDIA_RATES["openai"].per_page == 3_600

    item = {"type": "input_file", "file_data": f"data:application/pdf;base64,{b64(document)}"}
    with_file = responses.count_tokens([{"role": "user", "content": [item]}], counter=COUNTER)
    bare = responses.count_tokens([{"role": "user", "content": "[file]"}], counter=COUNTER)
    assert with_file - bare == 3_600

    audio = {"type": "input_audio", "input_audio": {"data": b64(wav(1.25)), "format": "wav"}}
    with_audio = openai.count_tokens([{"role": "user", "content": [audio]}], counter=COUNTER)
    bare = openai.count_tokens([{"role": "user", "content": "[audio]"}], counter=COUNTER)
    assert with_audio - bare == math.ceil(1.25 * 10)

    source = {"type": "base64", "media_type": "application/pdf", "data": b64(document)}
    block = {"type": "document", "source": source}
    with_doc = anthropic.count_tokens([{"role": "user", "content": [block]}], counter=COUNTER)
    bare = anthropic.count_tokens([{"role": "user", "content": "[document]"}], counter=COUNTER)
    assert with_doc - bare == 2 * 3_000


def test_unreadable_lengths_fall_back_to_the_fixed_estimate() -> None:
    mp3 = {"type": "input_audio", "input_audio": {"data": b64(b"ID3 not wav"), "format": "mp3"}}
    messages = [{"role": "user", "content": [mp3]}]
    with pytest.raises(PipelineConfigError, match=r"overhead\.audio"):
        openai.count_tokens(messages)
    fixed = MessageOverhead(per_message=4, per_request=3, audio=500)
    bare = openai.count_tokens([{"role": "user", "content": "[audio]"}], counter=COUNTER)
    assert openai.count_tokens(messages, counter=COUNTER, overhead=fixed) - bare == 500
    by_id = {"type": "file", "file": {"file_id": "file-abc"}}
    with pytest.raises(PipelineConfigError, match=r"overhead\.document"):
        openai.count_tokens([{"role": "user", "content": [by_id]}])


def test_langchain_blocks_are_priced_for_the_provider_behind_the_model() -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    from pycupel.adapters import langchain

    block = {"type": "file", "base64": b64(pdf(2)), "mime_type": "application/pdf"}
    message = messages_module.HumanMessage(content=[block])
    bare = langchain.count_tokens([messages_module.HumanMessage("[file]")], counter=COUNTER)
    for provider, rate in (("gemini", 258), ("anthropic", 3_000), ("openai", 1_800)):
        counted = langchain.count_tokens([message], counter=COUNTER, image_pricing=provider)
        assert counted - bare == 2 * rate
    audio = {"type": "audio", "source_type": "base64", "data": b64(wav(2.0))}
    message = messages_module.HumanMessage(content=[audio])
    bare = langchain.count_tokens([messages_module.HumanMessage("[audio]")], counter=COUNTER)
    assert langchain.count_tokens([message], counter=COUNTER) - bare == 20
