"""The token usage a provider reports for one request, read from its usage object or dict.

Providers report how many prompt tokens they actually billed; that count is the ground truth
a session calibrates its estimate against (:mod:`pycupel.session.calibration`). Three shapes
are understood, as objects (the SDKs' pydantic models) or as plain mappings:

* OpenAI Chat Completions: ``prompt_tokens`` and ``prompt_tokens_details.cached_tokens``
  (with ``prompt_tokens_details.cache_write_tokens`` on GPT-5.6 and later, which bill cache
  writes);
* OpenAI Responses: ``input_tokens`` and ``input_tokens_details.cached_tokens`` (and
  ``input_tokens_details.cache_write_tokens``);
* Anthropic Messages: ``input_tokens`` (the uncached part only), ``cache_read_input_tokens``
  and ``cache_creation_input_tokens``; the prompt is the sum of the three;
* LangChain ``usage_metadata``: ``input_tokens`` (the whole prompt) and
  ``input_token_details.cache_read`` / ``cache_creation``;
* Gemini ``usage_metadata``: ``prompt_token_count`` and ``cached_content_token_count``
  (``promptTokenCount`` / ``cachedContentTokenCount`` in the REST spelling).

Anything else (a negative or non-integer count, a missing prompt count, a value of the wrong
type) raises :class:`~pycupel.errors.ProviderUsageError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pycupel._checks import MAX_BUDGET
from pycupel.errors import ProviderUsageError

__all__ = ["ProviderUsage", "read_usage"]


@dataclass(frozen=True, slots=True)
class ProviderUsage:
    """The prompt side of one request's usage, provider-neutral.

    Attributes:
        prompt_tokens: every input token of the request (cached, written and uncached).
        cache_read_tokens: input tokens served from the provider's prompt cache.
        cache_write_tokens: input tokens written to the cache (Anthropic's
            ``cache_creation_input_tokens``; OpenAI's ``cache_write_tokens``, reported by the
            GPT-5.6 family and later, which bill writes; 0 where a provider reports none).
    """

    prompt_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "cache_read_tokens", "cache_write_tokens"):
            _count(name, getattr(self, name))
        if self.cache_read_tokens + self.cache_write_tokens > self.prompt_tokens:
            raise ProviderUsageError(
                "usage.cache_read_tokens",
                self.cache_read_tokens,
                f"cached ({self.cache_read_tokens}) plus written ({self.cache_write_tokens}) "
                f"tokens must not exceed the prompt tokens ({self.prompt_tokens})",
            )

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return self.prompt_tokens - self.cache_read_tokens - self.cache_write_tokens


def read_usage(usage: object) -> ProviderUsage:
    """Read an OpenAI (Chat or Responses) or Anthropic usage object or mapping.

    Raises:
        ProviderUsageError: ``usage`` is none of the known shapes, or a count is not a non-negative
            integer.
    """
    if isinstance(usage, ProviderUsage):
        return usage
    if usage is None or isinstance(usage, str | bytes | int | float | list | tuple):
        raise ProviderUsageError(
            "usage",
            usage,
            "must be a provider usage object or mapping (OpenAI prompt_tokens / input_tokens, "
            "Anthropic input_tokens with cache_read_input_tokens)",
        )
    if _has(usage, "cache_read_input_tokens") or _has(usage, "cache_creation_input_tokens"):
        uncached = _count("usage.input_tokens", _get(usage, "input_tokens"))
        read = _optional_count("usage.cache_read_input_tokens", usage, "cache_read_input_tokens")
        written = _optional_count(
            "usage.cache_creation_input_tokens", usage, "cache_creation_input_tokens"
        )
        return ProviderUsage(uncached + read + written, read, written)
    for prompt_name, cached_name in _GEMINI:
        if _has(usage, prompt_name):
            prompt = _count(f"usage.{prompt_name}", _get(usage, prompt_name))
            cached = _optional_count(f"usage.{cached_name}", usage, cached_name)
            if cached > prompt:
                raise ProviderUsageError(
                    f"usage.{cached_name}",
                    cached,
                    f"must not exceed usage.{prompt_name} ({prompt})",
                )
            return ProviderUsage(prompt, cached, 0)
    if _has(usage, "prompt_tokens"):
        prompt = _count("usage.prompt_tokens", _get(usage, "prompt_tokens"))
        cached, written = _details_cached(usage, "prompt_tokens_details")
        return _openai(prompt, cached, written, "prompt_tokens")
    if _has(usage, "input_tokens"):
        prompt = _count("usage.input_tokens", _get(usage, "input_tokens"))
        details = _get(usage, "input_token_details")
        if details is not None:  # LangChain's usage_metadata
            if isinstance(details, str | bytes | int | float | list | tuple):
                raise ProviderUsageError(
                    "usage.input_token_details", details, "must be an object or mapping"
                )
            read = _optional_count("usage.input_token_details.cache_read", details, "cache_read")
            written = _optional_count(
                "usage.input_token_details.cache_creation", details, "cache_creation"
            )
            return ProviderUsage(prompt, read, written)
        cached, written = _details_cached(usage, "input_tokens_details")
        return _openai(prompt, cached, written, "input_tokens")
    raise ProviderUsageError(
        "usage",
        usage,
        "must have prompt_tokens (OpenAI Chat), input_tokens (OpenAI Responses, Anthropic), "
        "cache_read_input_tokens (Anthropic) or prompt_token_count (Gemini)",
    )


_GEMINI = (
    ("prompt_token_count", "cached_content_token_count"),
    ("promptTokenCount", "cachedContentTokenCount"),
)


def _openai(prompt: int, cached: int, written: int, field: str) -> ProviderUsage:
    if cached > prompt:
        raise ProviderUsageError(
            f"usage.{field}_details.cached_tokens",
            cached,
            f"must not exceed usage.{field} ({prompt})",
        )
    if cached + written > prompt:
        raise ProviderUsageError(
            f"usage.{field}_details.cache_write_tokens",
            written,
            f"plus cached_tokens ({cached}) must not exceed usage.{field} ({prompt})",
        )
    return ProviderUsage(prompt, cached, written)


def _details_cached(usage: object, details_name: str) -> tuple[int, int]:
    """The cached and the written tokens of OpenAI's ``*_tokens_details``."""
    details = _get(usage, details_name)
    if details is None:
        return 0, 0
    if isinstance(details, str | bytes | int | float | list | tuple):
        raise ProviderUsageError(f"usage.{details_name}", details, "must be an object or mapping")
    cached = _optional_count(f"usage.{details_name}.cached_tokens", details, "cached_tokens")
    written = _optional_count(
        f"usage.{details_name}.cache_write_tokens", details, "cache_write_tokens"
    )
    return cached, written


def _has(usage: object, name: str) -> bool:
    return _get(usage, name) is not None


def _get(usage: object, name: str) -> object:
    if isinstance(usage, Mapping):
        return usage.get(name)
    return getattr(usage, name, None)


def _optional_count(field: str, usage: object, name: str) -> int:
    value = _get(usage, name)
    return 0 if value is None else _count(field, value)


def _count(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProviderUsageError(field, value, "must be an integer token count")
    if value < 0:
        raise ProviderUsageError(field, value, "must be >= 0")
    if value > MAX_BUDGET:
        raise ProviderUsageError(field, value, f"must be <= {MAX_BUDGET} (no prompt is larger)")
    return value
