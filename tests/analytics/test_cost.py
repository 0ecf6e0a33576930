"""pycupel.analytics.cost: cached prefixes measured from the requests, billed per provider."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pycupel.adapters import anthropic, openai
from pycupel.analytics import (
    DEFAULT_PRICES,
    ModelPrice,
    RenderedRequest,
    render_request,
    replay_cost,
    replay_windows,
)
from pycupel.errors import PipelineConfigError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "session"))
from session_histories import chat_turns

GPT = DEFAULT_PRICES["gpt-4.1"]
CLAUDE = DEFAULT_PRICES["claude-sonnet-4-5"]


def test_openai_caches_every_prefix_in_128_token_steps() -> None:
    first = RenderedRequest(("a", "b"), (600, 600), fixed_tokens=3)
    second = RenderedRequest(("a", "b", "c"), (600, 600, 300), fixed_tokens=3)
    report = replay_cost([first, second], price=GPT)
    assert report.turns[0].cache_read_tokens == 0
    expected = 1200 - (1200 - GPT.min_cacheable_tokens) % GPT.cache_increment
    assert report.turns[1].cache_read_tokens == expected
    assert report.turns[1].cache_write_tokens == 0
    cost = ((1503 - expected) * GPT.input_per_mtok + expected * GPT.cache_read_per_mtok) / 1e6
    assert report.turns[1].cost_usd == pytest.approx(cost)
    short = replay_cost(
        [RenderedRequest(("a",), (900,)), RenderedRequest(("a", "b"), (900, 9))], price=GPT
    )
    assert short.turns[1].cache_read_tokens == 0  # under the 1,024-token minimum


def test_anthropic_reads_and_writes_only_at_breakpoints() -> None:
    plain = [
        RenderedRequest(("s", "a"), (1500, 100)),
        RenderedRequest(("s", "a", "b"), (1500, 100, 50)),
    ]
    assert replay_cost(plain, price=CLAUDE).cache_read_tokens == 0  # nothing marked
    marked = [
        RenderedRequest(("s", "a"), (1500, 100), breakpoints=(1, 2)),
        RenderedRequest(("s", "a", "b"), (1500, 100, 50), breakpoints=(1, 3)),
    ]
    report = replay_cost(marked, price=CLAUDE)
    assert report.turns[0].cache_write_tokens == 1600
    assert report.turns[1].cache_read_tokens == 1600
    assert report.turns[1].cache_write_tokens == 50
    first = (1600 * CLAUDE.cache_write_per_mtok) / 1e6
    assert report.turns[0].cost_usd == pytest.approx(first)
    assert CLAUDE.cache_write_per_mtok == pytest.approx(1.25 * CLAUDE.input_per_mtok)
    assert DEFAULT_PRICES["claude-sonnet-4-5@1h"].cache_write_per_mtok == pytest.approx(
        2 * CLAUDE.input_per_mtok
    )
    assert report.cached_share == pytest.approx(1600 / (1600 + 1650))


def test_sliding_window_shares_nothing_and_counts_breaks() -> None:
    requests = [
        RenderedRequest(tuple(f"m{n}" for n in range(start, start + 10)), (200,) * 10)
        for start in range(5)
    ]
    report = replay_cost(requests, price=GPT)
    assert report.cache_read_tokens == 0
    assert report.compactions == 4  # every turn broke the prefix


def test_a_session_replayed_from_its_rendered_windows() -> None:
    session = openai.Session(budget=4_000)
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    windows = []
    for user, assistant in chat_turns(150):
        history.append(user)
        windows.append(session.fit(history))
        history.append(assistant)
    report = replay_windows(windows, price="gpt-4.1")
    assert report.compactions == sum(1 for window in windows if window.compacted) > 0
    assert report.prompt_tokens == sum(openai.count_tokens(w.messages) for w in windows)
    assert report.cached_share > 0.6


def test_anthropic_windows_carry_their_breakpoints() -> None:
    session = anthropic.Session(budget=6_000)
    history: list[dict[str, Any]] = []
    windows = []
    for user, assistant in chat_turns(120):
        history.append(user)
        windows.append(session.fit(history, system="Be brief. " * 300))
        history.append(assistant)
    rendered = render_request(windows[-1].messages, format="anthropic", system=windows[-1].system)
    assert rendered.breakpoints[0] == 1  # the system prompt
    assert rendered.breakpoints[-1] == len(rendered.blocks)
    report = replay_windows(windows, price=CLAUDE, format="anthropic")
    assert report.cache_write_tokens > 0
    assert report.cached_share > 0.6


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: replay_cost([], price="no-such-model"), "price"),
        (lambda: replay_cost(["x"], price=GPT), r"requests\[0\]"),
        (lambda: RenderedRequest(("a",), (1, 2)), "request.tokens"),
        (lambda: ModelPrice("m", "magic", 1.0, 0.1), "price.cache"),
        (lambda: ModelPrice("m", "automatic", -1.0, 0.1), "price.input_per_mtok"),
        (lambda: render_request([], format="gemini"), "format"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_is_refused(call: Any, field: str) -> None:
    with pytest.raises(PipelineConfigError, match=field):
        call()
