"""Token costs of images, from their pixel size, as each provider documents them.

Providers bill an image by its pixel size, not by the length of its base64 text, so base64
payloads are never counted as text: the adapters read the width and height from the image
header (PNG, JPEG, GIF and WebP) or take them from ``MessageOverhead.image_sizes`` (for images
given by URL or file id), and apply the provider's formula:

* **OpenAI** (the "Calculating costs" section of OpenAI's *Images and vision* guide; fits
  GPT-4o, GPT-4.1, GPT-4.5 and o1/o3, the models billed in 512-pixel tiles): ``detail: low``
  costs 85 tokens; ``high`` scales the image to fit in 2048 x 2048, then down so its shortest
  side is at most 768 pixels, and costs 85 + 170 per 512-pixel tile. ``auto`` (and
  ``original``) is counted as ``high`` (the model may pick either; the higher count is the
  safe one). Models billed in
  32-pixel patches (GPT-4.1 mini/nano, o4-mini) or with other multipliers (GPT-4o mini) need
  ``MessageOverhead(image=...)`` or their own ``image_pricing``.
* **Anthropic** (*Vision* guide, "Evaluate image size"): an image whose long edge exceeds 1568
  pixels, or that would cost more than about 1600 tokens, is first scaled down preserving its
  aspect ratio; it then costs ``width x height / 750`` tokens (rounded up).
* **Gemini** (*Understand and count tokens*, Gemini 2.x): 258 tokens when both sides are at
  most 384 pixels, otherwise 258 per 768 x 768 tile.

When the size cannot be known (a URL with no size given, an unreadable header), the format's
fixed ``MessageOverhead.image`` estimate is used.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Mapping
from typing import Literal

__all__ = [
    "ANTHROPIC_MAX_EDGE",
    "ANTHROPIC_MAX_TOKENS",
    "ImageProvider",
    "anthropic_image_tokens",
    "data_url_bytes",
    "gemini_image_tokens",
    "image_size",
    "image_tokens",
    "openai_image_tokens",
]

ImageProvider = Literal["openai", "anthropic", "gemini"]

ANTHROPIC_MAX_EDGE = 1568
"""Longest image edge Anthropic keeps before scaling down."""
ANTHROPIC_MAX_TOKENS = 1600
"""About the most an image costs on Anthropic; larger ones are scaled down to it."""
_ANTHROPIC_PIXELS_PER_TOKEN = 750

# Enough base64 to reach the size fields of any header we read, including a JPEG whose frame
# header follows large metadata segments (EXIF thumbnails, ICC profiles).
_HEADER_BYTES = 1 << 20


def openai_image_tokens(
    width: int, height: int, detail: str = "auto", *, base: int = 85, per_tile: int = 170
) -> int:
    """OpenAI's tile formula (see the module documentation)."""
    if detail == "low":
        return base
    if width > 2048 or height > 2048:
        scale = 2048 / max(width, height)
        width, height = int(width * scale), int(height * scale)
    shortest = min(width, height)
    if shortest > 768:
        scale = 768 / shortest
        width, height = int(width * scale), int(height * scale)
    tiles = math.ceil(width / 512) * math.ceil(height / 512)
    return base + per_tile * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's ``width x height / 750`` after its documented scaling down."""
    scale = min(
        1.0,
        ANTHROPIC_MAX_EDGE / max(width, height),
        math.sqrt(ANTHROPIC_MAX_TOKENS * _ANTHROPIC_PIXELS_PER_TOKEN / (width * height)),
    )
    if scale < 1.0:
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return math.ceil(width * height / _ANTHROPIC_PIXELS_PER_TOKEN)


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini 2.x: 258 tokens up to 384 x 384, else 258 per 768 x 768 tile."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def image_tokens(
    provider: ImageProvider,
    *,
    data: bytes | None,
    reference: str | None,
    sizes: Mapping[str, tuple[int, int]],
    fallback: int,
    detail: str = "auto",
) -> int:
    """Tokens of one image: sized from its bytes, else from ``sizes[reference]``, else
    ``fallback``."""
    size = image_size(data) if data is not None else None
    if size is None and reference is not None:
        size = sizes.get(reference)
    if size is None:
        return fallback
    width, height = size
    if provider == "openai":
        return openai_image_tokens(width, height, detail)
    if provider == "anthropic":
        return anthropic_image_tokens(width, height)
    return gemini_image_tokens(width, height)


def data_url_bytes(url: str) -> bytes | None:
    """The leading bytes of a ``data:...;base64,`` URL's payload; None for other URLs."""
    if not url.startswith("data:"):
        return None
    header, comma, payload = url.partition(",")
    if not comma or not header.endswith(";base64"):
        return None
    return base64_prefix(payload)


def base64_prefix(payload: str | bytes) -> bytes | None:
    """The first bytes of a base64 payload (enough for an image header); None if invalid."""
    if isinstance(payload, bytes):
        return payload[:_HEADER_BYTES]
    chunk = payload[: _HEADER_BYTES // 3 * 4]
    try:
        return base64.b64decode(chunk + "=" * (-len(chunk) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG, JPEG, GIF or WebP header; None when not recognised."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return _positive(width, height)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return _positive(width, height)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return _positive(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return _positive((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return _positive(width, height)
    return None


# Start-of-frame markers (baseline, progressive, lossless...) carry the size; 0xC4 (DHT),
# 0xC8 (JPG) and 0xCC (DAC) share the range but do not.
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    position = 2
    while position + 9 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            position += 2
            continue
        length = int.from_bytes(data[position + 2 : position + 4], "big")
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return _positive(width, height)
        position += 2 + length
    return None
