"""The replay computation and the local engine on a generated corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pycupel import presets
from pycupel.adapters import openai
from pycupel.analytics.cost import DEFAULT_PRICES, ModelPrice
from pycupel.errors import PipelineConfigError, ReplayLogError
from pycupel.replay import ReplayConfig, ReplayPolicy, replay_logs
from pycupel.replay.formats import unavailable_reason
from pycupel.replay.output import COLUMNS, identity_columns
from pycupel.replay.reader import plan_chunks
from pycupel.replay.schema import FORMAT_NAMES
from pycupel.replay.tasks import replay_entries, scan_chunk


def _rows(path: Path, config: ReplayConfig, *, session: bool = False) -> list[dict]:  # type: ignore[type-arg]
    """Every record of ``path`` replayed in this process, in file order."""
    entries = [entry for chunk in plan_chunks([str(path)]) for entry in scan_chunk(chunk)]
    return replay_entries(config, [str(path)], entries, session=session)


def test_one_row_per_request_and_policy_in_input_order(corpus, local_result, config) -> None:  # type: ignore[no-untyped-def]
    records = [json.loads(line) for line in corpus.read_text("utf-8").splitlines()]
    table = local_result.table
    assert local_result.records == len(records) == 27
    assert local_result.skipped == 0
    assert local_result.sessions == len({r["session_id"] for r in records if "session_id" in r})
    assert table.num_rows == 27 * len(config.policies)
    assert table.column_names == [name for name, _ in COLUMNS]
    keys = list(
        zip(
            *(table[name].to_pylist() for name in ("file_index", "line", "policy_index")),
            strict=True,
        )
    )
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_every_fitted_history_is_valid_and_within_budget(local_result, config) -> None:  # type: ignore[no-untyped-def]
    rows = local_result.table.to_pylist()
    assert {row["status"] for row in rows} == {"ok"}
    assert all(row["valid"] for row in rows), [row["invalid_reason"] for row in rows]
    assert all(row["tokens_after"] <= config.budget for row in rows)
    assert any(row["tokens_before"] > config.budget for row in rows)
    for row in rows:
        dropped = sum(row[f"dropped_{role}"] for role in ("system", "user", "assistant", "tool"))
        assert dropped == row["messages_before"] - row["messages_after"]
        by_kind = sum(
            row[f"dropped_kind_{kind}"] for kind in ("message", "tool_output", "system_prompt")
        )
        assert by_kind == dropped
        assert row["dropped_system"] == 0  # system prompts are pinned


def test_rows_do_not_depend_on_chunking_or_workers(corpus: Path, config, local_result) -> None:  # type: ignore[no-untyped-def]
    again = replay_logs([str(corpus)], config, workers=1, chunk_bytes=4096)
    columns = list(identity_columns())
    assert again.table.select(columns).equals(local_result.table.select(columns))


def test_session_requests_share_a_cached_prefix(local_result) -> None:  # type: ignore[no-untyped-def]
    rows = [row for row in local_result.table.to_pylist() if row["session_id"] is not None]
    firsts = [row for row in rows if row["turn"] == 0]
    later = [row for row in rows if row["turn"] > 0]
    assert all(row["cached_tokens_before"] == 0 for row in firsts)
    assert any(row["cached_tokens_before"] > 0 for row in later)
    independent = [row for row in local_result.table.to_pylist() if row["session_id"] is None]
    assert all(row["cached_tokens_before"] == 0 for row in independent)


def test_cache_and_cost_follow_the_price_rule(tmp_path: Path) -> None:
    first = [
        {"role": "system", "content": "You answer questions about invoices."},
        {"role": "user", "content": "Which invoices are overdue?"},
    ]
    second = [
        *first,
        {"role": "assistant", "content": "INV-1."},
        {"role": "user", "content": "Why?"},
    ]
    path = tmp_path / "session.jsonl"
    with open(path, "w", encoding="utf-8") as file:
        # Listed out of order: the turn decides.
        for turn, messages in ((1, second), (0, first)):
            record = {"format": "openai", "session_id": "s", "turn": turn, "messages": messages}
            file.write(json.dumps(record) + "\n")
    price = ModelPrice("test", "automatic", 2.0, 0.5, min_cacheable_tokens=0)
    config = ReplayConfig(
        policies=(ReplayPolicy("chat", presets.chat()),),
        budget=10_000,
        prices=(("openai", price),),
    )
    entries = [entry for chunk in plan_chunks([str(path)]) for entry in scan_chunk(chunk)]
    entries.sort(key=lambda entry: entry["turn"])
    rows = replay_entries(config, [str(path)], entries, session=True)
    assert [row["turn"] for row in rows] == [0, 1]
    prefix = openai.count_tokens(first) - openai.DEFAULT_OVERHEAD.per_request
    total = openai.count_tokens(second)
    assert rows[1]["tokens_before"] == rows[1]["tokens_after"] == total
    assert rows[1]["cached_tokens_before"] == rows[1]["cached_tokens_after"] == prefix
    assert rows[1]["cost_after_usd"] == pytest.approx(((total - prefix) * 2.0 + prefix * 0.5) / 1e6)
    assert rows[0]["cached_tokens_after"] == 0


def test_prices_come_from_the_shared_price_table() -> None:
    config = ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=1_000)
    assert config.price("openai") is DEFAULT_PRICES["gpt-4.1"]
    assert config.price("gemini") is DEFAULT_PRICES["gemini-2.5-flash"]
    custom = ModelPrice("mine", "automatic", 1.0, 0.1)
    config = ReplayConfig(policies=config.policies, budget=1_000, prices=(("anthropic", custom),))
    assert config.price("anthropic") is custom
    assert config.price("responses") is DEFAULT_PRICES["gpt-4.1"]
    with pytest.raises(PipelineConfigError, match=r"prices\[0\].*format one of"):
        ReplayConfig(policies=config.policies, budget=1_000, prices=(("cohere", custom),))


def test_evidence_recall(tmp_path: Path) -> None:
    old = {"role": "user", "content": "my order number is 4471 " * 40}
    messages = [
        {"role": "system", "content": "Be brief."},
        old,
        {"role": "assistant", "content": "Noted. " * 40},
        {"role": "user", "content": "When does it ship?"},
    ]
    path = tmp_path / "evidence.jsonl"
    path.write_text(
        json.dumps({"format": "openai", "messages": messages, "evidence": [1, 3]}) + "\n",
        encoding="utf-8",
    )
    config = ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=150)
    (row,) = _rows(path, config)
    assert row["evidence_total"] == 2
    assert row["evidence_kept"] == 1  # the old user turn is dropped, the latest one pinned
    assert row["evidence_recall"] == 0.5


def test_pinned_over_budget_is_a_failed_row_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    messages = [{"role": "system", "content": "rule " * 500}, {"role": "user", "content": "hi"}]
    path.write_text(json.dumps({"format": "openai", "messages": messages}) + "\n", "utf-8")
    config = ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=100)
    (row,) = _rows(path, config)
    assert row["status"] == "PinnedBudgetError"
    assert row["tokens_after"] is None
    assert row["valid"] is None
    assert "pinned items require" in row["detail"]


def _bad_log(tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    good = {"format": "openai", "messages": [{"role": "user", "content": "hi"}]}
    orphan = {
        "format": "openai",
        "messages": [{"role": "tool", "tool_call_id": "c1", "content": "42"}],
    }
    path.write_text(
        json.dumps(good) + "\n" + '{"format": "openai",\n' + json.dumps(orphan) + "\n", "utf-8"
    )
    return path


def test_on_error_fail_names_the_file_and_line(tmp_path: Path) -> None:
    path = _bad_log(tmp_path)
    config = ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=500)
    with pytest.raises(ReplayLogError) as caught:
        replay_logs([str(path)], config, workers=1)
    assert caught.value.source == str(path)
    assert caught.value.location == "line 2"


def test_on_error_skip_counts_and_keeps_rows_for_skipped_lines(tmp_path: Path) -> None:
    path = _bad_log(tmp_path)
    config = ReplayConfig(
        policies=(ReplayPolicy("chat", presets.chat()),), budget=500, on_error="skip"
    )
    rows = _rows(path, config)
    assert [(row["line"], row["status"]) for row in rows] == [
        (1, "ok"),
        (2, "skipped"),
        (3, "skipped"),
    ]
    assert "line 3: messages[0].tool_call_id" in rows[2]["detail"]
    result = replay_logs([str(path)], config, workers=1)
    assert result.skipped == 1  # found by the scan; line 3 fails in the adapter
    assert result.table["status"].to_pylist() == ["ok", "skipped", "skipped"]


def test_a_format_without_adapter_stops_before_any_work(tmp_path: Path) -> None:
    missing = [name for name in FORMAT_NAMES if unavailable_reason(name) is not None]
    if not missing:
        pytest.skip("every format of the schema has an adapter here")
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"format": missing[0], "messages": []}) + "\n", "utf-8")
    out = tmp_path / "out.parquet"
    config = ReplayConfig(
        policies=(ReplayPolicy("chat", presets.chat()),), budget=500, on_error="skip"
    )
    with pytest.raises(ReplayLogError, match="no adapter") as caught:
        replay_logs([str(path)], config, workers=1, out=str(out))
    assert caught.value.location == "line 1: format"
    assert not out.exists()


def test_parquet_input_gives_the_same_rows(  # type: ignore[no-untyped-def]
    tmp_path: Path, corpus: Path, config, local_result
) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    records = [json.loads(line) for line in corpus.read_text("utf-8").splitlines()]
    columns: dict[str, list[object]] = {
        "format": [r["format"] for r in records],
        "session_id": [r.get("session_id") for r in records],
        "turn": [r.get("turn") for r in records],
    }
    for name in ("messages", "system", "evidence"):
        columns[name] = [None if name not in r else json.dumps(r[name]) for r in records]
    path = tmp_path / "corpus.parquet"
    pq.write_table(pa.table(columns), path, row_group_size=5)
    result = replay_logs([str(path)], config, workers=1)
    names = [name for name in identity_columns() if name not in ("line", "file")]
    assert result.table.select(names).equals(local_result.table.select(names))
    assert [line + 1 for line in result.table["line"].to_pylist()] == local_result.table[
        "line"
    ].to_pylist()


def test_config_is_checked() -> None:
    chat = ReplayPolicy("chat", presets.chat())
    with pytest.raises(PipelineConfigError, match="unique"):
        ReplayConfig(policies=(chat, chat), budget=100)
    with pytest.raises(PipelineConfigError, match="at least one"):
        ReplayConfig(policies=(), budget=100)
    with pytest.raises(PipelineConfigError, match="on_error"):
        ReplayConfig(policies=(chat,), budget=100, on_error="ignore")  # type: ignore[arg-type]


def test_session_policies_fit_through_the_adapter_session(tmp_path: Path) -> None:
    from pycupel.replay.synthetic import generate_log

    path = tmp_path / "sessions.jsonl"
    generate_log(path, 10, min_messages=20, max_messages=160, session_turns=5, seed=5)
    config = ReplayConfig(
        policies=(
            ReplayPolicy("chat", presets.chat()),
            ReplayPolicy("session:chat", presets.chat(), session=True),
        ),
        budget=2_500,
    )
    entries = [entry for chunk in plan_chunks([str(path)]) for entry in scan_chunk(chunk)]
    by_session: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for entry in entries:
        by_session.setdefault(entry["session_id"], []).append(entry)
    rows = [
        row
        for members in by_session.values()
        for row in replay_entries(config, [str(path)], members, session=True)
    ]
    assert all(row["valid"] for row in rows), [row["invalid_reason"] for row in rows]
    assert all(row["tokens_after"] <= 2_500 for row in rows)
    stateless = [row for row in rows if row["policy"] == "chat"]
    session = [row for row in rows if row["policy"] == "session:chat"]
    assert len(session) == len(stateless) == 10
    # A Session keeps its window append-only between compactions: later turns reuse a prefix.
    assert any(row["cached_tokens_after"] > 0 for row in session if row["turn"] > 0)


def test_responses_and_gemini_records_replay(tmp_path: Path) -> None:
    responses = {
        "format": "responses",
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "What is the weather in Paris this weekend? " * 3},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "18 C, rain"},
            {"role": "assistant", "content": "Rainy, 18 C."},
            {"role": "user", "content": "Thanks!"},
        ],
        "evidence": [2],
    }
    gemini = {
        "format": "gemini",
        "system": {"parts": [{"text": "Be brief."}]},
        "messages": [
            {"role": "user", "parts": [{"text": "Hello there, how are you doing today? " * 3}]},
            {"role": "model", "parts": [{"text": "Fine, thanks."}]},
            {"role": "user", "parts": [{"text": "Good."}]},
        ],
    }
    missing = [name for name in ("responses", "gemini") if unavailable_reason(name)]
    if missing:
        pytest.skip(f"no adapter for {missing}")
    path = tmp_path / "formats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (responses, gemini)), "utf-8")
    config = ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=40)
    rows = _rows(path, config)
    assert [row["format"] for row in rows] == ["responses", "gemini"]
    for row in rows:
        assert row["status"] == "ok"
        assert row["valid"], row["invalid_reason"]
        assert row["tokens_after"] < row["tokens_before"]
        assert row["kept_system"] == 1
    assert rows[0]["dropped_tool"] == 2  # the call and its output, together
