"""The recall tool: refs in an excerpt's markers, the text they stand for given back, and
nothing given to a conversation that does not own it."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from pycupel.adapters import anthropic, gemini, langchain, openai, responses
from pycupel.conversation import MemoryRecallStore, Recall
from pycupel.errors import MessageFormatError, PipelineConfigError, RecallRefError
from pycupel.tokens import HeuristicCounter

REF = re.compile(r"elided: ref ([0-9a-f]{16}) \.\.\.\]")
QUESTION = "How many keys did cache shard 7 evict?"
BUDGET = 2_000


def _line(n: int) -> str:
    checksum = hashlib.sha256(str(n).encode()).hexdigest()[:10]
    return f"2026-11-21T10:{n // 60 % 60:02d}:{n % 60:02d}Z INFO step {n} ok checksum {checksum}"


NEEDLE = _line(2222)  # a line like its neighbours, which the question does not ask about


def log_output() -> str:
    lines = [_line(n) for n in range(3000)]
    lines[1711] = "2026-11-21T10:45:11Z WARN cache shard 7 evicted 1,204 keys (ttl 30s)"
    return "\n".join(lines)


def refs(window: object) -> list[str]:
    text = json.dumps(window, default=lambda message: message.content)
    return REF.findall(text.replace("\\n", "\n"))


@dataclass(frozen=True)
class Format:
    """One format's history, its fit, a model message calling a tool, and its checks."""

    name: str
    history: Callable[[str], list[Any]]
    fit: Callable[[list[Any], Recall], list[Any]]
    call: Callable[[str, dict[str, Any]], Any]
    answer: Callable[[Recall, Any], list[Any]]
    tool: Callable[[Recall], Any]
    text: Callable[[Any], str]
    valid: Callable[[list[Any], Any, list[Any]], None]


def _openai() -> Format:
    def history(output: str) -> list[Any]:
        call = {"id": "c1", "type": "function", "function": {"name": "logs", "arguments": "{}"}}
        return [
            {"role": "system", "content": "You are an ops agent."},
            {"role": "user", "content": "Read the logs."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": output},
            {"role": "user", "content": QUESTION},
        ]

    def call(name: str, arguments: dict[str, Any]) -> Any:
        function = {"name": name, "arguments": json.dumps(arguments)}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "r1", "type": "function", "function": function}],
        }

    def valid(window: list[Any], message: Any, answers: list[Any]) -> None:
        openai.from_messages([*window, message, *answers])

    return Format(
        "openai",
        history,
        lambda h, r: openai.fit_messages(h, budget=BUDGET, recall=r)[0],
        call,
        openai.answer_recall,
        openai.recall_tool,
        lambda answer: answer["content"],
        valid,
    )


def _responses() -> Format:
    def history(output: str) -> list[Any]:
        return [
            {"role": "user", "content": "Read the logs."},
            {"type": "function_call", "call_id": "c1", "name": "logs", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": output},
            {"role": "user", "content": QUESTION},
        ]

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return {
            "type": "function_call",
            "call_id": "r1",
            "name": name,
            "arguments": json.dumps(arguments),
        }

    def fit(h: list[Any], r: Recall) -> list[Any]:
        fitted = responses.fit_messages(h, budget=BUDGET, recall=r).input
        assert isinstance(fitted, list)
        return fitted

    return Format(
        "responses",
        history,
        fit,
        call,
        responses.answer_recall,
        responses.recall_tool,
        lambda answer: answer["output"],
        lambda window, message, answers: responses.from_messages([*window, message, *answers]),
    )


def _anthropic() -> Format:
    def history(output: str) -> list[Any]:
        return [
            {"role": "user", "content": "Read the logs."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c1", "name": "logs", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": output}],
            },
            {"role": "assistant", "content": "I read them."},
            {"role": "user", "content": QUESTION},
        ]

    def call(name: str, arguments: dict[str, Any]) -> Any:
        block = {"type": "tool_use", "id": "r1", "name": name, "input": arguments}
        return {"role": "assistant", "content": [block]}

    def valid(window: list[Any], message: Any, answers: list[Any]) -> None:
        anthropic.from_messages([*window, message, {"role": "user", "content": answers}])

    return Format(
        "anthropic",
        history,
        lambda h, r: anthropic.fit_messages(h, budget=BUDGET, recall=r).messages,
        call,
        anthropic.answer_recall,
        anthropic.recall_tool,
        lambda answer: answer["content"],
        valid,
    )


def _gemini(snake: bool) -> Format:
    call_key = "function_call" if snake else "functionCall"
    response_key = "function_response" if snake else "functionResponse"

    def history(output: str) -> list[Any]:
        return [
            {"role": "user", "parts": [{"text": "Read the logs."}]},
            {"role": "model", "parts": [{call_key: {"name": "logs", "args": {}, "id": "c1"}}]},
            {
                "role": "user",
                "parts": [
                    {response_key: {"name": "logs", "id": "c1", "response": {"output": output}}}
                ],
            },
            {"role": "model", "parts": [{"text": "I read them."}]},
            {"role": "user", "parts": [{"text": QUESTION}]},
        ]

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return {
            "role": "model",
            "parts": [{call_key: {"name": name, "args": arguments, "id": "r1"}}],
        }

    def text(answer: Any) -> str:
        body = answer[response_key]
        assert body["id"] == "r1"
        response = body["response"]
        return str(response.get("output", response.get("error")))

    def valid(window: list[Any], message: Any, answers: list[Any]) -> None:
        gemini.from_messages([*window, message, {"role": "user", "parts": answers}])

    return Format(
        "gemini-snake" if snake else "gemini",
        history,
        lambda h, r: gemini.fit_messages(h, budget=BUDGET, recall=r).contents,
        call,
        gemini.answer_recall,
        gemini.recall_tool,
        text,
        valid,
    )


def _langchain() -> Format:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    def history(output: str) -> list[Any]:
        return [
            SystemMessage("You are an ops agent."),
            HumanMessage("Read the logs."),
            AIMessage("", tool_calls=[{"name": "logs", "args": {}, "id": "c1"}]),
            ToolMessage(output, tool_call_id="c1"),
            HumanMessage(QUESTION),
        ]

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return AIMessage("", tool_calls=[{"name": name, "args": arguments, "id": "r1"}])

    return Format(
        "langchain",
        history,
        lambda h, r: langchain.fit_messages(h, budget=BUDGET, recall=r)[0],
        call,
        langchain.answer_recall,
        langchain.recall_tool,
        lambda answer: str(answer.content),
        lambda window, message, answers: langchain.from_messages([*window, message, *answers]),
    )


FORMATS = [_openai, _responses, _anthropic, lambda: _gemini(False), lambda: _gemini(True)]
FORMAT_IDS = ["openai", "responses", "anthropic", "gemini", "gemini-snake"]
try:
    import langchain_core  # noqa: F401

    FORMATS.append(_langchain)
    FORMAT_IDS.append("langchain")
except ImportError:  # pragma: no cover - the langchain extra is part of the test extras
    pass


@pytest.mark.parametrize("make", FORMATS, ids=FORMAT_IDS)
def test_a_recall_round_trip_gives_the_elided_line_back(make: Callable[[], Format]) -> None:
    form = make()
    recall = Recall("conversation-1")
    window = form.fit(form.history(log_output()), recall)
    shown = json.dumps(window, default=lambda message: message.content)
    assert "evicted 1,204 keys" in shown  # the line asked about is in the window
    assert NEEDLE not in shown  # the other one was elided...
    found = refs(window)
    assert found  # ...behind a ref
    # The model asks every ref for the other line; one of them holds it.
    recovered: list[str] = []
    for ref in found:
        message = form.call(recall.tool_name, {"ref": ref, "query": "step 2222"})
        answers = form.answer(recall, message)
        assert len(answers) == 1
        form.valid(window, message, answers)  # the answer is valid in the format
        recovered.append(form.text(answers[0]))
    assert any(NEEDLE in text for text in recovered)


@pytest.mark.parametrize("make", FORMATS, ids=FORMAT_IDS)
def test_another_conversation_and_a_guessed_ref_are_refused_alike(
    make: Callable[[], Format],
) -> None:
    form = make()
    store = MemoryRecallStore()
    secret = b"a shared secret of the workers!!"
    mine = Recall("user-a", store=store, secret=secret)
    theirs = Recall("user-b", store=store, secret=secret)
    window = form.fit(form.history(log_output()), mine)
    ref = refs(window)[0]
    answers: list[str] = []
    for recall, asked in [(theirs, ref), (mine, "0123456789abcdef"), (mine, "../../etc")]:
        message = form.call(recall.tool_name, {"ref": asked})
        (answer,) = form.answer(recall, message)
        answers.append(form.text(answer))
    assert answers[0] == f"Error: recall ref '{ref}': is not a ref of this conversation"
    assert answers[1] == "Error: recall ref '0123456789abcdef': is not a ref of this conversation"
    assert "is not a recall ref" in answers[2]
    assert all("INFO step" not in answer for answer in answers)


def test_the_tool_definitions_are_each_providers_shape() -> None:
    recall = Recall("c", tool_name="fetch_elided")
    chat = openai.recall_tool(recall)
    assert chat["type"] == "function"
    assert chat["function"]["name"] == "fetch_elided"
    assert chat["function"]["parameters"]["required"] == ["ref"]
    assert responses.recall_tool(recall)["name"] == "fetch_elided"
    assert anthropic.recall_tool(recall)["input_schema"]["properties"]["query"]["type"] == "string"
    declaration = gemini.recall_tool(recall)["functionDeclarations"][0]
    assert declaration["name"] == "fetch_elided"
    # The definition is counted like any other tool: the window leaves room for it.
    history = _openai().history(log_output())
    fitted, _ = openai.fit_messages(history, budget=BUDGET, tools=[chat], recall=recall)
    assert openai.count_tokens(fitted, tools=[chat]) <= BUDGET


def test_calls_of_other_tools_are_left_to_the_caller() -> None:
    recall = Recall("c")
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "logs", "arguments": "{}"}},
        ],
    }
    assert openai.answer_recall(recall, message) == []


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ("not json", "must be a JSON object"),
        ("[1, 2]", "must be an object"),
        ('{"query": "x"}', "is not a recall ref"),
        ('{"ref": 42}', "is not a recall ref"),
        ('{"ref": "0123456789abcdef", "query": 7}', "query must be a string"),
    ],
)
def test_malformed_arguments_are_answered_with_an_error(arguments: str, error: str) -> None:
    recall = Recall("c")
    function = {"name": "recall", "arguments": arguments}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "r", "type": "function", "function": function}],
    }
    (answer,) = openai.answer_recall(recall, message)
    assert answer["content"].startswith("Error: ")
    assert error in answer["content"]


def test_a_malformed_model_message_is_a_format_error() -> None:
    with pytest.raises(MessageFormatError, match="tool_calls"):
        openai.answer_recall(Recall("c"), {"role": "assistant", "tool_calls": "recall"})


def test_refs_are_keyed_to_the_scope_and_the_secret() -> None:
    text = "some elided text"
    one = Recall("a", secret=b"k" * 32)
    assert one.ref_of(text) == Recall("a", secret=b"k" * 32).ref_of(text)  # deterministic
    assert one.ref_of(text) != Recall("b", secret=b"k" * 32).ref_of(text)
    assert one.ref_of(text) != Recall("a", secret=b"j" * 32).ref_of(text)
    assert Recall("a").ref_of(text) != Recall("a").ref_of(text)  # a random key by default
    assert one.scoped("t1").scope == "a/t1"
    assert one.scoped("t1").ref_of(text) != one.ref_of(text)


def test_a_lookup_is_held_to_the_size_limit_and_finds_the_query() -> None:
    counter = HeuristicCounter()
    recall = Recall("c", max_tokens=300)
    ref = recall.remember(log_output())
    answer = recall.lookup(ref, "step 2222")
    assert counter.count(answer) <= 300
    assert NEEDLE in answer
    assert "elided" in answer  # the rest is marked, not silently cut
    assert recall.lookup(ref).startswith(_line(0))
    short = recall.remember("a short text")
    assert recall.lookup(short) == "a short text"
    with pytest.raises(RecallRefError) as info:
        recall.lookup("ffffffffffffffff")
    assert info.value.ref == "ffffffffffffffff"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"scope": ""}, "recall.scope"),
        ({"scope": "c", "secret": b"short"}, "recall.secret"),
        ({"scope": "c", "max_tokens": 10}, "recall.max_tokens"),
        ({"scope": "c", "max_tokens": True}, "recall.max_tokens"),
        ({"scope": "c", "tool_name": "no spaces allowed"}, "recall.tool_name"),
        ({"scope": "c", "store": {}}, "recall.store"),
        ({"scope": "c", "counter": len}, "recall.counter"),
    ],
)
def test_invalid_recall_settings_name_the_field(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(PipelineConfigError) as info:
        Recall(**settings)
    assert info.value.field == field


def test_recall_must_be_a_recall() -> None:
    with pytest.raises(PipelineConfigError, match="recall"):
        openai.fit_messages([{"role": "user", "content": "hi"}], budget=100, recall="c")  # type: ignore[typeddict-item]
    with pytest.raises(PipelineConfigError, match="recall"):
        openai.recall_tool("c")  # type: ignore[arg-type]


def test_the_memory_store_is_shared_safely_by_threads() -> None:
    store = MemoryRecallStore()
    recalls = [Recall(f"user-{n}", store=store) for n in range(8)]
    texts = [f"the private output of user {n}\n" * 50 for n in range(8)]
    found: dict[int, str] = {}

    def work(n: int) -> None:
        ref = recalls[n].remember(texts[n])
        found[n] = recalls[n].lookup(ref)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == dict(enumerate(texts))
    assert len(store) == 8


def test_the_newest_recall_answer_of_the_turn_is_kept_whole() -> None:
    # The model recalled gaps in this turn; left out, the newest would only be asked again.
    recall = Recall("conversation-1", max_tokens=1_500)
    history = _openai().history(log_output())
    window = openai.fit_messages(history, budget=BUDGET, recall=recall)[0]
    for number, ref in enumerate(refs(window)[:4]):
        function = {"name": "recall", "arguments": json.dumps({"ref": ref})}
        call = {"id": f"r{number}", "type": "function", "function": function}
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history += openai.answer_recall(recall, history[-1])
    newest = history[-1]["content"]
    assert len(newest) > 3_000  # about as large as the budget leaves room for
    window, report = openai.fit_messages(history, budget=BUDGET, recall=recall)
    assert openai.count_tokens(window) <= BUDGET
    assert window[-1]["content"] == newest  # whole, never cut again
    assert report.included[-1].reason.value == "Pinned"
