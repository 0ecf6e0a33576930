"""The recall tool: the model asks for an elided text back by the ref in its marker.

A fit given a :class:`~pycupel.conversation.recall.Recall` marks each excerpt's gaps with a
ref (``[... 1,240 lines (9,876 tokens) elided: ref 3f9a2c5d0e1b7a44 ...]``). Offer the
model the tool (each format module's ``recall_tool(recall)``, in that provider's tool
format) and answer its calls (``answer_recall(recall, message)``: the tool results for the
recall calls a model message holds, in the format's own shape). The tool takes ``ref`` and
an optional ``query``; it answers with the stored text, or the part of it that best matches
the query within the recall's size limit.

The tool is described once here (a :class:`~pycupel.conversation.tools.ToolSpec`) and
handed to the format's codec, which writes its definition and its answers; a call is read
from the model's message by the codec's own parser, so a malformed message is reported like
any other.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from pycupel.conversation.codec import Codec
from pycupel.conversation.recall import Recall, checked_recall
from pycupel.conversation.tools import ToolSpec
from pycupel.errors import PipelineConfigError, RecallRefError

__all__ = [
    "RECALL_DESCRIPTION",
    "answer_arguments",
    "answer_recall",
    "answers_documented",
    "recall_parameters",
    "recall_spec",
    "recall_tool",
    "tool_documented",
]

M = TypeVar("M")
F = TypeVar("F", bound=Callable[..., Any])

RECALL_DESCRIPTION: Final = (
    "Get back text that was elided from an earlier tool output or message to fit the context "
    "window. Call it with the ref shown in a marker such as "
    "'[... 120 lines (2,400 tokens) elided: ref 3f9a2c5d0e1b7a44 ...]'. Give a query to get "
    "only the part that matches it; without one, the text comes back from its beginning, "
    "within a size limit."
)
"""What the model reads about the tool."""


def recall_parameters() -> dict[str, Any]:
    """The tool's parameters, as a JSON schema (a new dict each time: definitions are the
    caller's to keep or change)."""
    return {
        "type": "object",
        "properties": {
            "ref": {
                "type": "string",
                "description": "the 16-character ref from the marker of the elided text",
            },
            "query": {
                "type": "string",
                "description": "optional: what to look for in the elided text",
            },
        },
        "required": ["ref"],
    }


def recall_spec(recall: Recall) -> ToolSpec:
    """The recall tool of ``recall``'s conversation.

    Raises:
        PipelineConfigError: ``recall`` is not a :class:`~pycupel.conversation.Recall`.
    """
    if checked_recall(recall) is None:
        raise PipelineConfigError("recall", None, "must be a pycupel.conversation.Recall")

    def run(arguments: object) -> tuple[str, bool]:
        return answer_arguments(recall, arguments)

    return ToolSpec(recall.tool_name, RECALL_DESCRIPTION, recall_parameters(), run)


def answer_arguments(recall: Recall, arguments: object) -> tuple[str, bool]:
    """The recall tool's answer to one call's ``arguments`` (a JSON text or a mapping) and
    whether it is an error: a ref this conversation does not hold, malformed arguments."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return 'Error: the arguments must be a JSON object such as {"ref": "..."}.', True
    if not isinstance(arguments, Mapping):
        return 'Error: the arguments must be an object such as {"ref": "..."}.', True
    try:
        return recall.lookup(arguments.get("ref"), arguments.get("query")), False
    except RecallRefError as error:
        return f"Error: {error}", True


def recall_tool(codec: Codec[M], recall: Recall) -> object:
    """The recall tool's definition in ``codec``'s format: each format's ``recall_tool``."""
    return codec.tool_definition(recall_spec(recall))


def answer_recall(codec: Codec[M], recall: Recall, messages: object) -> list[object]:
    """The answers to the recall calls in ``messages`` (one model message, or a list of
    them), in the order they were made, as ``codec`` writes a tool's result: each format's
    ``answer_recall``. Calls of other tools are left to the caller.

    Raises:
        MessageFormatError: a message is malformed (the error names its location).
    """
    spec = recall_spec(recall)
    listed = _as_list(messages)
    answers: list[object] = []
    for parsed in codec.parse_all(listed, None, codec.default_overhead):
        for call in parsed.calls:
            if call.name == spec.name:
                text, error = spec.run(call.arguments)
                answers.append(codec.tool_answer(call, text, error=error))
    return answers


def _as_list(messages: object) -> list[object]:
    """One message as a list of one; a list (or tuple) of messages as a list."""
    if isinstance(messages, Sequence) and not isinstance(messages, (str, bytes, Mapping)):
        return list(messages)
    return [messages]


def tool_documented(function: F) -> F:
    """Add to a format's ``recall_tool`` docstring (what it returns) how the model uses it."""
    return _append(
        function,
        "The model calls it with a ref from an excerpt's marker of a fit given "
        "``recall=recall`` (see :mod:`pycupel.conversation.recall_tool`).",
    )


def answers_documented(function: F) -> F:
    """Add to a format's ``answer_recall`` docstring (what it returns for which message, and
    where the answers go) what an answer says and what it raises."""
    return _append(
        function,
        "Each answer is the elided text, or an error the model reads (a ref this conversation "
        "does not hold). Calls of other tools are yours to answer.",
        "Raises:\n    MessageFormatError: a message is malformed.\n    PipelineConfigError: "
        "``recall`` is not a :class:`~pycupel.conversation.Recall`.",
    )


def _append(function: F, *sections: str) -> F:
    summary = inspect.cleandoc(function.__doc__ or "")
    function.__doc__ = "\n\n".join((summary, textwrap.fill(sections[0], width=92), *sections[1:]))
    return function
