"""Input prices for the replay's cost prediction, with prompt caching.

Providers bill the part of a prompt that repeats the start of a recent prompt (a cached prefix)
at a fraction of the input price. The replay predicts, for each request, how many of its input
tokens a provider would serve from its cache, and what the input costs:

* the **cached prefix** is the longest run of leading message units the request shares with the
  previous request of the same session (same rendered text, same tokens); a request without a
  session, or the first of its session, has none;
* it is billed as cached only from ``min_cached_tokens`` on, rounded down to a multiple of
  ``cache_increment`` above that minimum (OpenAI caches in 128-token steps from 1,024);
* ``cost = (tokens - cached) x input + cached x cached_input`` (USD per million tokens).

Cache lifetimes (minutes of inactivity) and Anthropic's cache-write premium are not modelled:
consecutive requests of a session are assumed to arrive while the cache is warm.

The defaults are list prices of one common model per format when this table was written; pass
your own :class:`Price` per format to :class:`~pycupel.replay.ReplayConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycupel._checks import check_float, check_int
from pycupel.errors import PipelineConfigError

__all__ = ["DEFAULT_PRICES", "Price"]


@dataclass(frozen=True, slots=True)
class Price:
    """What a model charges for input, per million tokens, and how its prompt cache works."""

    model: str
    input_per_mtok: float
    cached_input_per_mtok: float
    min_cached_tokens: int = 1024
    cache_increment: int = 1

    def __post_init__(self) -> None:
        err = PipelineConfigError
        check_float(err, "price.input_per_mtok", self.input_per_mtok, minimum=0.0)
        check_float(err, "price.cached_input_per_mtok", self.cached_input_per_mtok, minimum=0.0)
        check_int(err, "price.min_cached_tokens", self.min_cached_tokens, minimum=0)
        check_int(err, "price.cache_increment", self.cache_increment, minimum=1)

    def cached_tokens(self, prefix_tokens: int) -> int:
        """The tokens of a shared prefix the provider would bill as cached."""
        if prefix_tokens < self.min_cached_tokens or prefix_tokens <= 0:
            return 0
        return prefix_tokens - (prefix_tokens - self.min_cached_tokens) % self.cache_increment

    def cost(self, tokens: int, cached: int) -> float:
        """Input cost in USD of ``tokens`` input tokens of which ``cached`` are cached."""
        return ((tokens - cached) * self.input_per_mtok + cached * self.cached_input_per_mtok) / 1e6


_GPT = Price("gpt-4.1", 2.00, 0.50, min_cached_tokens=1024, cache_increment=128)

DEFAULT_PRICES: tuple[tuple[str, Price], ...] = (
    ("openai", _GPT),
    ("responses", _GPT),
    ("langchain", _GPT),
    ("anthropic", Price("claude-sonnet-4", 3.00, 0.30, min_cached_tokens=1024)),
    ("gemini", Price("gemini-2.5-flash", 0.30, 0.075, min_cached_tokens=1024)),
)
"""The price of each format (format name, price) when none is given."""
