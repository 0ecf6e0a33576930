"""Token costs of documents and audio, from their length (PDF pages, seconds of audio).

Providers bill a PDF by its pages and audio by its duration, not by the length of their base64
text. When a part carries its data inline, the adapters read the page count (PDF) or the
duration (WAV) and apply the provider's rate; when they cannot (a URL or file id, a compressed
PDF whose page objects are packed in object streams, audio other than WAV), the format's fixed
``MessageOverhead.document`` / ``MessageOverhead.audio`` estimate is used, and a history
needing one that is not set raises :class:`~pycupel.errors.PipelineConfigError`.

Rates and their sources (see ``docs/token-accounting.md``):

* **Gemini** (*Understand and count tokens*, Gemini 2.x; documented): a PDF page is 258
  tokens, a second of audio 32.
* **Anthropic** (*PDF support*): each page costs its text (1,500 to 3,000 tokens, the
  documented range) plus an image of the page. No exact rule is published: the estimate is
  3,000 per page, the top of that range. Anthropic takes no audio input.
* **OpenAI** (Chat Completions and Responses *File inputs*): the model reads the extracted
  text and an image of each page; no per-page figure is published. The estimate is 1,800 per
  page: a page image at high detail (765 by the tile formula for a portrait page) plus about
  1,000 tokens of text. Audio: no rule is published for Chat Completions audio models; the
  estimate is 10 tokens per second, the Realtime API's documented rate for user audio (one
  token per 100 ms).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from pycupel.conversation.overhead import MessageOverhead

__all__ = [
    "MEDIA_RATES",
    "MediaRates",
    "audio_tokens",
    "decode_payload",
    "document_tokens",
    "pdf_pages",
    "wav_seconds",
]

MediaProvider = Literal["openai", "anthropic", "gemini"]


@dataclass(frozen=True, slots=True)
class MediaRates:
    """Tokens per PDF page and per second of audio (None: the provider takes no such input,
    or the fixed estimate applies)."""

    per_page: int | None
    per_audio_second: int | None


MEDIA_RATES: Mapping[str, MediaRates] = MappingProxyType(
    {
        "gemini": MediaRates(per_page=258, per_audio_second=32),
        "anthropic": MediaRates(per_page=3_000, per_audio_second=None),
        "openai": MediaRates(per_page=1_800, per_audio_second=10),
    }
)
"""Each provider's rates (module documentation: which are documented, which estimates)."""

# A page object's dictionary; ``/Pages`` (the page tree's nodes) does not match.
_PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def decode_payload(payload: object) -> bytes | None:
    """The bytes of an inline payload: base64 text, a ``data:...;base64,`` URL or raw bytes;
    None for anything else (a URL, a file id, invalid base64)."""
    if isinstance(payload, bytes):
        return payload
    if not isinstance(payload, str):
        return None
    if payload.startswith("data:"):
        header, comma, payload = payload.partition(",")
        if not comma or not header.endswith(";base64"):
            return None
    try:
        return base64.b64decode(payload + "=" * (-len(payload) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def pdf_pages(data: bytes) -> int | None:
    """The pages of a PDF, counted from its page objects; None when not a PDF or when the
    pages cannot be seen (packed in compressed object streams)."""
    if not data.startswith(b"%PDF-"):
        return None
    pages = len(_PAGE_OBJECT.findall(data))
    return pages or None


def wav_seconds(data: bytes) -> float | None:
    """The duration of a WAV (RIFF/WAVE) file from its header; None for other data."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    position = 12
    byte_rate = 0
    while position + 8 <= len(data):
        chunk = data[position : position + 4]
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        body = position + 8
        if chunk == b"fmt " and size >= 12 and body + 12 <= len(data):
            byte_rate = int.from_bytes(data[body + 8 : body + 12], "little")
        elif chunk == b"data":
            if byte_rate <= 0:
                return None
            if size in (0, 0xFFFFFFFF):  # a streamed file: its length was never filled in
                size = len(data) - body
            return size / byte_rate
        position = body + size + (size & 1)
    return None


def document_tokens(
    provider: MediaProvider, payload: object, overhead: MessageOverhead, location: str
) -> int:
    """Tokens of a document part: its pages at the provider's rate when its inline data is a
    readable PDF, else the fixed ``overhead.document`` (an error when unset)."""
    rate = MEDIA_RATES[provider].per_page
    return _by_length(
        rate, payload, measure=pdf_pages, overhead=overhead, media="document", location=location
    )


def audio_tokens(
    provider: MediaProvider, payload: object, overhead: MessageOverhead, location: str
) -> int:
    """Tokens of an audio part: its duration at the provider's rate when its inline data is a
    WAV file, else the fixed ``overhead.audio`` (an error when unset)."""
    rate = MEDIA_RATES[provider].per_audio_second
    return _by_length(
        rate, payload, measure=wav_seconds, overhead=overhead, media="audio", location=location
    )


def _by_length(
    rate: int | None,
    payload: object,
    *,
    measure: Callable[[bytes], float | None],
    overhead: MessageOverhead,
    media: Literal["audio", "document"],
    location: str,
) -> int:
    data = decode_payload(payload) if rate is not None else None
    length = measure(data) if data is not None else None
    if rate is None or length is None:
        return overhead.media_cost(media, location)
    return math.ceil(length * rate)
