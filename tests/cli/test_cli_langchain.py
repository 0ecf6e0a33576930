"""``--format langchain``: LangChain histories serialized by messages_to_dict or dumpd."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pycupel.adapters import langchain as lc_adapter
from pycupel.cli import main
from pycupel.cli._input import detect_format, read_candidates
from pycupel.errors import MessageFormatError

messages_module = pytest.importorskip("langchain_core.messages")
load_module = pytest.importorskip("langchain_core.load")


def history() -> list[Any]:
    return [
        messages_module.SystemMessage("You answer questions about invoices."),
        messages_module.HumanMessage("Which invoices are overdue? " * 20),
        messages_module.AIMessage(
            "", tool_calls=[{"name": "list_invoices", "args": {"status": "due"}, "id": "c1"}]
        ),
        messages_module.ToolMessage("INV-1, INV-7 " * 40, tool_call_id="c1"),
        messages_module.AIMessage("INV-1 and INV-7. " * 20),
        messages_module.HumanMessage("Email ACME a reminder."),
    ]


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "160"}).invoke(main, list(args), catch_exceptions=False)


def forms() -> list[Any]:
    messages = history()
    as_dicts = messages_module.messages_to_dict(messages)
    dumped = [load_module.dumpd(message) for message in messages]
    return [as_dicts, dumped, {"messages": as_dicts}, {"messages": dumped}]


@pytest.mark.parametrize("form", range(4))
def test_both_serializations_are_detected_and_read_as_the_adapter_reads(
    tmp_path: Path, form: int
) -> None:
    document = forms()[form]
    assert detect_format(document) == "langchain"
    path = tmp_path / "history.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    candidates = read_candidates(str(path))
    assert candidates.format == "langchain"
    expected = lc_adapter.from_messages(history())
    assert [item.content for item in candidates.items] == [item.content for item in expected.items]
    assert [item.tokens for item in candidates.items] == [item.tokens for item in expected.items]


def test_select_prints_the_kept_history_as_langchain_json(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(forms()[1]), encoding="utf-8")
    budget = lc_adapter.count_tokens(history()) - 100
    result = run("select", str(path), "--budget", str(budget), "--json")
    assert result.exit_code == 0, result.output
    kept = messages_module.messages_from_dict(json.loads(result.output)["history"]["messages"])
    assert len(kept) < len(history())
    assert kept[0] == history()[0]
    assert kept[-1] == history()[-1]
    # a tool call and its result stay together
    assert any(isinstance(m, messages_module.ToolMessage) for m in kept) == any(
        isinstance(m, messages_module.AIMessage) and m.tool_calls for m in kept
    )


def test_a_bad_entry_is_named(tmp_path: Path) -> None:
    document = forms()[1]
    document[2]["id"] = ["langchain", "schema", "messages", "RemoveMessage"]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(MessageFormatError, match=r"messages\[2\]\.id"):
        read_candidates(str(path))
    result = CliRunner().invoke(main, ["select", str(path), "--budget", "500"])
    assert result.exit_code == 1
    assert "messages[2].id" in result.output
    document = forms()[0]
    document[1]["data"] = {"content": 42}
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(MessageFormatError, match=r"messages\[1\]: not a valid LangChain"):
        read_candidates(str(path), "langchain")
