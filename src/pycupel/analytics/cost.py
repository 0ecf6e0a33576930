"""Input cost of a conversation's requests with prompt caching, replayed turn by turn.

Providers bill the leading part of a prompt that an earlier request already sent (a cached
prefix) at a fraction of the input price. This module measures that prefix independently of
whoever built the requests: each request is rendered message by message (canonical JSON, with
Anthropic's ``cache_control`` markers removed, since they do not change what is cached), and
the cached prefix is the longest run of leading messages equal to a prefix an earlier request
left in the cache. Tokens are counted per message with the adapters' counting (any
:class:`~pycupel.tokens.TokenCounter`).

How each provider caches (as documented by the providers; see ``docs/costs.md``):

* **OpenAI** caches automatically: every prompt prefix of at least 1,024 tokens that was
  processed recently can be reused, in steps of 128 tokens; cached input is billed at the
  model's cached-input price, writing costs nothing extra (a model with a write price, of
  automatic style, is billed for the part of each request it did not read).
* **OpenAI GPT-5.6 and later** match a cached prefix only where a breakpoint ended it: the
  explicit ``prompt_cache_breakpoint`` marks and, unless ``prompt_cache_options`` asks for
  ``"explicit"`` mode, one implicit breakpoint at the request's latest message
  (:attr:`ModelPrice.implicit_breakpoint`); writes cost 1.25x the input price, reads 0.1x.
* **Anthropic** caches only up to ``cache_control`` breakpoints (at most four per request):
  a request reads the longest prefix that an earlier request wrote (one ending at one of its
  breakpoints), and writes the prefix up to its own last breakpoint at 1.25x the input price
  (5-minute lifetime) or 2x (1-hour lifetime); reads cost 0.1x. A prefix shorter than the
  model's minimum cacheable length (1,024 to 4,096 tokens) is neither read nor written.
* **Gemini** 2.5 models cache implicitly, like OpenAI: a recent prefix of at least 1,024
  (Flash) or 2,048 (Pro) tokens is billed at the cached price, with no write charge.

Requests are assumed to arrive while the cache is warm (within the lifetime). Anthropic's limit
of looking back at most 20 blocks for an earlier cache entry is not modelled.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from pycupel._checks import check_float, check_int
from pycupel.errors import PipelineConfigError
from pycupel.tokens import TokenCounter

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_CHECKED",
    "CostReport",
    "ModelPrice",
    "RenderedRequest",
    "TurnCost",
    "render_request",
    "replay_cost",
    "replay_windows",
    "resolve_price",
]

CacheStyle = Literal["automatic", "breakpoints"]

PRICES_CHECKED = "2025-11-24"
"""When the default prices and caching rules were taken from the providers' published pages."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """A model's input prices (USD per million tokens) and how its prompt cache works.

    Attributes:
        model: the model's name.
        cache: ``"automatic"`` (OpenAI before GPT-5.6: every recent prefix is cached) or
            ``"breakpoints"`` (Anthropic, OpenAI GPT-5.6 and later: cached up to the
            breakpoints, ``cache_control`` or ``prompt_cache_breakpoint``).
        input_per_mtok: uncached input.
        cache_read_per_mtok: input served from the cache.
        cache_write_per_mtok: input written to the cache (0 where writes are free).
        min_cacheable_tokens: a prefix shorter than this is never cached.
        cache_increment: cached prefixes are counted in steps of this many tokens above the
            minimum (OpenAI: 128).
        implicit_breakpoint: the provider adds a breakpoint at the end of every request
            (OpenAI GPT-5.6's default ``"implicit"`` mode; ``False`` for its ``"explicit"``
            mode and for Anthropic).
    """

    model: str
    cache: CacheStyle
    input_per_mtok: float
    cache_read_per_mtok: float
    cache_write_per_mtok: float = 0.0
    min_cacheable_tokens: int = 1024
    cache_increment: int = 1
    implicit_breakpoint: bool = False

    def __post_init__(self) -> None:
        err = PipelineConfigError
        if not isinstance(self.implicit_breakpoint, bool):
            raise PipelineConfigError(
                "price.implicit_breakpoint", self.implicit_breakpoint, "must be a bool"
            )
        if self.cache not in ("automatic", "breakpoints"):
            raise PipelineConfigError(
                "price.cache", self.cache, "must be 'automatic' or 'breakpoints'"
            )
        for name in ("input_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok"):
            check_float(err, f"price.{name}", getattr(self, name), minimum=0.0)
        check_int(err, "price.min_cacheable_tokens", self.min_cacheable_tokens, minimum=0)
        check_int(err, "price.cache_increment", self.cache_increment, minimum=1)

    def billable_prefix(self, prefix_tokens: int) -> int:
        """The tokens of a cached prefix the provider bills as cached."""
        if prefix_tokens <= 0 or prefix_tokens < self.min_cacheable_tokens:
            return 0
        return prefix_tokens - (prefix_tokens - self.min_cacheable_tokens) % self.cache_increment


def _anthropic(model: str, base: float, minimum: int, ttl: str) -> ModelPrice:
    write = 1.25 if ttl == "5m" else 2.0
    return ModelPrice(
        model if ttl == "5m" else f"{model}@1h",
        "breakpoints",
        base,
        round(base * 0.1, 6),
        round(base * write, 6),
        min_cacheable_tokens=minimum,
    )


def _openai(model: str, base: float, cached: float) -> ModelPrice:
    return ModelPrice(model, "automatic", base, cached, 0.0, 1024, 128)


def _openai_breakpoints(model: str, base: float) -> ModelPrice:
    # GPT-5.6 and later: reads 0.1x, writes 1.25x, matched at breakpoints (one implicit).
    return ModelPrice(
        model,
        "breakpoints",
        base,
        round(base * 0.1, 6),
        round(base * 1.25, 6),
        1024,
        1,
        implicit_breakpoint=True,
    )


def _gemini(model: str, base: float, cached: float, minimum: int) -> ModelPrice:
    # Implicit caching: automatic like OpenAI's, counted per token, no write charge.
    return ModelPrice(model, "automatic", base, cached, 0.0, minimum, 1)


_ANTHROPIC_MODELS = (
    # model, input price per MTok, minimum cacheable tokens
    ("claude-opus-4-5", 5.00, 4096),
    ("claude-opus-4-1", 15.00, 1024),
    ("claude-sonnet-4-5", 3.00, 1024),
    ("claude-sonnet-4", 3.00, 1024),
    ("claude-haiku-4-5", 1.00, 4096),
    ("claude-3-5-haiku", 0.80, 2048),
)

DEFAULT_PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        price.model: price
        for price in (
            *(_anthropic(m, b, n, "5m") for m, b, n in _ANTHROPIC_MODELS),
            *(_anthropic(m, b, n, "1h") for m, b, n in _ANTHROPIC_MODELS),
            _openai_breakpoints("gpt-5.6-sol", 5.00),
            _openai_breakpoints("gpt-5.6-terra", 2.50),
            _openai_breakpoints("gpt-5.6-luna", 1.00),
            _openai("gpt-5", 1.25, 0.125),
            _openai("gpt-5-mini", 0.25, 0.025),
            _openai("gpt-4.1", 2.00, 0.50),
            _openai("gpt-4.1-mini", 0.40, 0.10),
            _openai("gpt-4o", 2.50, 1.25),
            _openai("gpt-4o-mini", 0.15, 0.075),
            _gemini("gemini-2.5-flash", 0.30, 0.075, 1024),
            _gemini("gemini-2.5-pro", 1.25, 0.31, 2048),
        )
    }
)
"""List prices per model (``<model>@1h`` for Anthropic's 1-hour cache lifetime), as published
on :data:`PRICES_CHECKED`; pass your own :class:`ModelPrice` for other models or contracts."""


@dataclass(frozen=True, slots=True)
class RenderedRequest:
    """A request as the cache sees it: one canonical text and token count per message.

    Attributes:
        blocks: the canonical rendering of each message (the system prompt first when it is
            sent beside the messages), without cache markers.
        tokens: the tokens of each block.
        fixed_tokens: tokens of the request outside the blocks (the reply priming).
        breakpoints: for each ``cache_control`` breakpoint, the number of blocks up to and
            including the marked one.
        compacted: whether the request follows a compaction (None when unknown).
    """

    blocks: tuple[str, ...]
    tokens: tuple[int, ...]
    fixed_tokens: int = 0
    breakpoints: tuple[int, ...] = ()
    compacted: bool | None = None

    def __post_init__(self) -> None:
        if len(self.blocks) != len(self.tokens):
            raise PipelineConfigError(
                "request.tokens",
                f"<{len(self.tokens)} counts>",
                f"must hold one count per block ({len(self.blocks)})",
            )

    @property
    def total_tokens(self) -> int:
        """Every input token of the request."""
        return sum(self.tokens) + self.fixed_tokens


@dataclass(frozen=True, slots=True)
class TurnCost:
    """One request's input, split the way the provider bills it."""

    turn: int
    prompt_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    uncached_tokens: int
    cost_usd: float
    compacted: bool | None
    cache_break: bool
    """Whether the request shares less with the previous one than the previous one held."""


@dataclass(frozen=True, slots=True)
class CostReport:
    """Per-turn and total input cost of a replay."""

    price: ModelPrice
    turns: tuple[TurnCost, ...]
    total_cost_usd: float = field(init=False)
    prompt_tokens: int = field(init=False)
    cache_read_tokens: int = field(init=False)
    cache_write_tokens: int = field(init=False)

    def __post_init__(self) -> None:
        setter = object.__setattr__
        setter(self, "total_cost_usd", sum(turn.cost_usd for turn in self.turns))
        setter(self, "prompt_tokens", sum(turn.prompt_tokens for turn in self.turns))
        setter(self, "cache_read_tokens", sum(turn.cache_read_tokens for turn in self.turns))
        setter(self, "cache_write_tokens", sum(turn.cache_write_tokens for turn in self.turns))

    @property
    def cached_share(self) -> float:
        """Share of all input tokens served from the cache."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def compactions(self) -> int:
        """Turns flagged as compactions (sessions' windows), else turns that broke the cache."""
        if any(turn.compacted is not None for turn in self.turns):
            return sum(1 for turn in self.turns if turn.compacted)
        return sum(1 for turn in self.turns if turn.cache_break)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary with every turn."""
        return {
            "model": self.price.model,
            "turns": len(self.turns),
            "total_cost_usd": self.total_cost_usd,
            "prompt_tokens": self.prompt_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cached_share": self.cached_share,
            "compactions": self.compactions,
            "per_turn": [
                {
                    "turn": turn.turn,
                    "prompt_tokens": turn.prompt_tokens,
                    "cache_read_tokens": turn.cache_read_tokens,
                    "cache_write_tokens": turn.cache_write_tokens,
                    "uncached_tokens": turn.uncached_tokens,
                    "cost_usd": turn.cost_usd,
                    "compacted": turn.compacted,
                    "cache_break": turn.cache_break,
                }
                for turn in self.turns
            ],
        }


def replay_cost(requests: Iterable[RenderedRequest], *, price: ModelPrice | str) -> CostReport:
    """Bill each request in order against the cache the earlier ones left (module docs)."""
    chosen = resolve_price(price)
    cached: set[int] = set()  # keys of the prefixes in the cache
    turns: list[TurnCost] = []
    previous: tuple[str, ...] = ()
    for turn, request in enumerate(requests, start=1):
        if not isinstance(request, RenderedRequest):
            raise PipelineConfigError(
                f"requests[{turn - 1}]", request, "must be a RenderedRequest (see render_request)"
            )
        keys = _prefix_keys(request.blocks)
        ends = _ends(request.tokens)
        limit = len(request.blocks)
        marks = request.breakpoints
        if chosen.implicit_breakpoint and request.blocks:
            marks = (*marks, len(request.blocks))
        if chosen.cache == "breakpoints":
            limit = max(marks, default=0)
        hit = 0
        for length in range(min(limit, len(keys)), 0, -1):
            if keys[length - 1] in cached:
                hit = length
                break
        read = chosen.billable_prefix(ends[hit])
        written = 0
        if chosen.cache == "breakpoints":
            for mark in marks:
                if ends[mark] >= chosen.min_cacheable_tokens:
                    cached.add(keys[mark - 1])
            last = max(marks, default=0)
            if last > hit and ends[last] >= chosen.min_cacheable_tokens:
                written = ends[last] - read
        else:
            cached.update(keys)
            if chosen.cache_write_per_mtok and ends[-1] >= chosen.min_cacheable_tokens:
                written = ends[-1] - read  # the rest of the request, written to the cache
        prompt = request.total_tokens
        uncached = prompt - read - written
        cost = (
            uncached * chosen.input_per_mtok
            + read * chosen.cache_read_per_mtok
            + written * chosen.cache_write_per_mtok
        ) / 1e6
        common = 0
        for before, now in zip(previous, request.blocks, strict=False):
            if before != now:
                break
            common += 1
        turns.append(
            TurnCost(
                turn=turn,
                prompt_tokens=prompt,
                cache_read_tokens=read,
                cache_write_tokens=written,
                uncached_tokens=uncached,
                cost_usd=cost,
                compacted=request.compacted,
                cache_break=turn > 1 and common < len(previous),
            )
        )
        previous = request.blocks
    return CostReport(chosen, tuple(turns))


def resolve_price(price: ModelPrice | str) -> ModelPrice:
    """A :class:`ModelPrice`, or the default price of a model name."""
    if isinstance(price, ModelPrice):
        return price
    if isinstance(price, str) and price in DEFAULT_PRICES:
        return DEFAULT_PRICES[price]
    raise PipelineConfigError(
        "price", price, f"must be a ModelPrice or one of {', '.join(sorted(DEFAULT_PRICES))}"
    )


def _prefix_keys(blocks: Sequence[str]) -> list[int]:
    keys = []
    key = 0
    for block in blocks:
        key = hash((key, block))
        keys.append(key)
    return keys


def _ends(tokens: Sequence[int]) -> list[int]:
    ends = [0]
    for count in tokens:
        ends.append(ends[-1] + count)
    return ends


def render_request(
    messages: Sequence[Any],
    *,
    format: Literal["openai", "anthropic"] = "openai",
    system: object = None,
    counter: TokenCounter | None = None,
    compacted: bool | None = None,
) -> RenderedRequest:
    """Render a request for :func:`replay_cost`, counted as the adapter counts it.

    ``system`` is Anthropic's system prompt beside the messages. Anthropic ``cache_control``
    markers on the system prompt or the messages, and OpenAI ``prompt_cache_breakpoint``
    marks on content parts, become :attr:`RenderedRequest.breakpoints`.
    """
    from pycupel.conversation.arguments import resolve_counter  # noqa: PLC0415
    from pycupel.conversation.parsed import message_tokens  # noqa: PLC0415

    chosen_counter = resolve_counter(counter)
    if format == "openai":
        from pycupel.adapters import openai  # noqa: PLC0415

        overhead = openai.DEFAULT_OVERHEAD
        parsed = openai.CODEC.parse_all(messages, None, overhead)
        sources: list[Any] = list(messages)
    elif format == "anthropic":
        from pycupel.adapters import anthropic  # noqa: PLC0415

        overhead = anthropic.DEFAULT_OVERHEAD
        parsed = anthropic.CODEC.parse_all(messages, system, overhead)
        # The API reads the messages from the latest compaction block on.
        start = anthropic.CODEC.history_start(messages)
        sources = ([system] if system is not None else []) + list(messages)[start:]
    else:
        raise PipelineConfigError("format", format, "must be 'openai' or 'anthropic'")
    tokens = message_tokens(parsed, chosen_counter)
    blocks = []
    breakpoints = []
    for position, source in enumerate(sources):
        text, marked = _canonical(source)
        blocks.append(text)
        if marked:
            breakpoints.append(position + 1)
    return RenderedRequest(
        tuple(blocks), tuple(tokens), overhead.per_request, tuple(breakpoints), compacted
    )


def replay_windows(
    windows: Iterable[Any],
    *,
    price: ModelPrice | str,
    format: Literal["openai", "anthropic"] = "openai",
    counter: TokenCounter | None = None,
) -> CostReport:
    """The cost of a session's windows (``SessionWindow`` objects), turn by turn."""
    return replay_cost(
        (
            render_request(
                window.messages,
                format=format,
                system=window.system,
                counter=counter,
                compacted=window.compacted,
            )
            for window in windows
        ),
        price=price,
    )


def _canonical(value: object) -> tuple[str, bool]:
    """Canonical JSON of a message or system prompt without cache markers, and whether it
    carried one."""
    marked = False

    def strip(item: object) -> object:
        nonlocal marked
        if isinstance(item, Mapping):
            if _MARKS.intersection(item):
                marked = True
            return {str(k): strip(v) for k, v in item.items() if k not in _MARKS}
        if isinstance(item, list | tuple):
            return [strip(v) for v in item]
        return item

    plain = strip(value)
    # A breakpoint turns a string content into one text block: compare them as equal.
    if isinstance(plain, dict):
        content = plain.get("content")
        if isinstance(content, list) and len(content) == 1 and _is_text(content[0]):
            plain["content"] = content[0]["text"]
    elif isinstance(plain, list) and len(plain) == 1 and _is_text(plain[0]):
        plain = plain[0]["text"]
    return json.dumps(plain, sort_keys=True, ensure_ascii=False, default=str), marked


_MARKS = frozenset({"cache_control", "prompt_cache_breakpoint"})
"""Keys that mark a breakpoint without changing what is cached."""


def _is_text(block: object) -> bool:
    return isinstance(block, dict) and set(block) == {"type", "text"} and block["type"] == "text"
