"""OpenAI Agents SDK: a model-input filter and a session that returns a fitted window.

* :class:`ContextWindowFilter` is a ``RunConfig(call_model_input_filter=...)``. Before every
  model call of a run (the first one and every one after a tool round) it fits the input
  items, with the agent's instructions counted and kept, into the budget.
* :class:`ContextWindowSession` implements the SDK's ``Session`` protocol. It stores the whole
  history (in memory, or in any other session you pass as ``store``, such as
  ``SQLiteSession``) and ``get_items()`` returns the history fitted into the budget, so a long
  conversation never sends more than the budget of history. ``get_items(limit=n)`` keeps the
  protocol's meaning, the latest ``n`` stored items, which the runner uses to check its own
  writes. Use both for long agent runs: the session bounds the history a run starts from, the
  filter bounds every model call inside the run.

The SDK speaks Responses input items. They are fitted through the Chat Completions adapter
(:mod:`pycupel.adapters.openai`): every item becomes a chat message, consecutive
``function_call`` items become one assistant message with several tool calls, a
``*_call_output`` item becomes a tool result answering its ``call_id``, and a ``reasoning``
item travels with the item after it (reasoning without the output it produced is refused by
the API). Other item types (hosted tool calls, item references) are counted as their JSON
text. The window holds your original item objects, in order; a call and its output are never
separated.

Needs ``pip install 'pycupel[agents]'``; importing this module without it raises
:class:`~pycupel.errors.IntegrationUnavailableError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from pycupel.errors import IntegrationUnavailableError, PipelineConfigError

try:
    from agents import Session, SessionSettings
    from agents.items import TResponseInputItem
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise IntegrationUnavailableError("OpenAI Agents SDK", "openai-agents", "agents") from exc

from pycupel._checks import check_str
from pycupel.adapters import openai as chat
from pycupel.adapters._format import MAX_MESSAGES, as_json_text, expect_list, expect_mapping, fail
from pycupel.adapters._units import MessageOverhead
from pycupel.diagnostics import SelectionReport
from pycupel.integrations._window import WindowSettings
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.tokens import TokenCounter

__all__ = [
    "ContextWindowFilter",
    "ContextWindowSession",
    "FittedItems",
    "count_tokens",
    "fit_items",
]

SOURCE = "agents input items"
_MESSAGE_ROLES = frozenset({"system", "developer", "user", "assistant"})
_PART_TYPES: Mapping[str, str] = MappingProxyType(
    {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
)


@dataclass(frozen=True, slots=True)
class FittedItems:
    """The fitted window: your original items in order, and why each was kept or dropped."""

    items: list[TResponseInputItem]
    report: SelectionReport


def fit_items(
    items: Sequence[TResponseInputItem],
    settings: WindowSettings,
    *,
    instructions: str | None = None,
) -> FittedItems:
    """Fit Responses input items (and the instructions, counted and pinned) into the budget."""
    messages, groups = _as_chat_messages(items, instructions)
    fitted, report = chat.fit_messages(
        messages,
        budget=settings.budget,
        policy=settings.policy,
        counter=settings.counter,
        overhead=settings.overhead,
        unanswered_tool_calls=settings.unanswered_tool_calls,
    )
    kept = {id(message) for message in fitted}
    chosen = [
        items[index]
        for message, group in zip(messages, groups, strict=True)
        if id(message) in kept
        for index in group
    ]
    return FittedItems(chosen, report)


def count_tokens(
    items: Sequence[TResponseInputItem],
    *,
    instructions: str | None = None,
    counter: TokenCounter | None = None,
    overhead: MessageOverhead | None = None,
) -> int:
    """Tokens of a model input (items and instructions), counted as :func:`fit_items` does."""
    messages, _ = _as_chat_messages(items, instructions)
    return chat.count_tokens(messages, counter=counter, overhead=overhead)


class ContextWindowFilter:
    """A ``call_model_input_filter``: fits every model call's input into a token budget.

    ``Runner.run(agent, text, run_config=RunConfig(call_model_input_filter=
    ContextWindowFilter(budget=8_000)))``. Holds only its settings: share it freely.

    Args:
        budget: tokens for the instructions and the input items (an int, or a
            :class:`~pycupel.ContextBudget`). Tool schemas are not counted: leave room.
        policy: the selection policy or a pipeline; default :func:`pycupel.presets.chat`.
        counter: the token counter; default :class:`~pycupel.tokens.HeuristicCounter`.
        overhead: per-message costs; default :data:`pycupel.adapters.openai.DEFAULT_OVERHEAD`.
        unanswered_tool_calls: ``"error"`` or ``"drop"`` (see ``fit_messages``).
        on_report: called with the :class:`~pycupel.diagnostics.SelectionReport` of every fit.
    """

    __slots__ = ("on_report", "settings")

    def __init__(
        self,
        *,
        budget: int | ContextBudget,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        unanswered_tool_calls: Literal["error", "drop"] = "error",
        on_report: Callable[[SelectionReport], None] | None = None,
    ) -> None:
        self.settings = WindowSettings(
            budget=budget,
            policy=policy,
            counter=counter,
            overhead=overhead,
            unanswered_tool_calls=unanswered_tool_calls,
        )
        if on_report is not None and not callable(on_report):
            raise PipelineConfigError("on_report", on_report, "must be callable or None")
        self.on_report = on_report

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        fitted = fit_items(model_data.input, self.settings, instructions=model_data.instructions)
        if self.on_report is not None:
            self.on_report(fitted.report)
        return ModelInputData(input=fitted.items, instructions=model_data.instructions)


class ContextWindowSession:
    """A session (the SDK's ``Session`` protocol) that keeps everything and returns a window.

    Args:
        session_id: the conversation's id.
        budget: tokens for the history that ``get_items()`` returns (the run adds the new
            input and the instructions on top: leave room for them).
        store: where the full history lives: any ``Session`` (``SQLiteSession(...)``...);
            default an in-memory list.
        policy, counter, overhead, unanswered_tool_calls, on_report: as for
            :class:`ContextWindowFilter`. ``unanswered_tool_calls`` defaults to ``"drop"``
            here: a run stopped between a call and its output leaves an unanswered call in the
            stored history.
        session_settings: the SDK's session settings (its ``limit`` is applied as the SDK's
            raw tail, not fitted: leave it unset to get the fitted window).
    """

    def __init__(
        self,
        session_id: str,
        *,
        budget: int | ContextBudget,
        store: Session | None = None,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        unanswered_tool_calls: Literal["error", "drop"] = "drop",
        on_report: Callable[[SelectionReport], None] | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = check_str(PipelineConfigError, "session_id", session_id)
        self.settings = WindowSettings(
            budget=budget,
            policy=policy,
            counter=counter,
            overhead=overhead,
            unanswered_tool_calls=unanswered_tool_calls,
        )
        if store is not None and not isinstance(store, Session):
            raise PipelineConfigError(
                "store", store, "must implement the Agents SDK Session protocol or be None"
            )
        if on_report is not None and not callable(on_report):
            raise PipelineConfigError("on_report", on_report, "must be callable or None")
        self.store = store
        self.on_report = on_report
        self.session_settings = session_settings
        self._items: list[TResponseInputItem] = []
        self._lock = asyncio.Lock()

    async def all_items(self) -> list[TResponseInputItem]:
        """The whole stored history, unfitted."""
        if self.store is not None:
            return await self.store.get_items()
        async with self._lock:
            return list(self._items)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history fitted into the budget; with ``limit``, the latest ``limit`` stored items."""
        if limit is not None:
            if self.store is not None:
                return await self.store.get_items(limit=limit)
            async with self._lock:
                return list(self._items[-limit:]) if limit > 0 else []
        fitted = fit_items(await self.all_items(), self.settings)
        if self.on_report is not None:
            self.on_report(fitted.report)
        return fitted.items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if self.store is not None:
            await self.store.add_items(items)
            return
        async with self._lock:
            self._items.extend(items)

    async def pop_item(self) -> TResponseInputItem | None:
        if self.store is not None:
            return await self.store.pop_item()
        async with self._lock:
            return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        if self.store is not None:
            await self.store.clear_session()
            return
        async with self._lock:
            self._items.clear()


# --------------------------------------------------------------------------- conversion


def _as_chat_messages(
    items: object, instructions: str | None
) -> tuple[list[dict[str, Any]], list[tuple[int, ...]]]:
    """One chat message per item (parallel calls merged, reasoning joined to the next item),
    and for each message the indices of the items it stands for (none for the instructions)."""
    history = expect_list(SOURCE, "input", items, limit=MAX_MESSAGES)
    messages: list[dict[str, Any]] = []
    groups: list[tuple[int, ...]] = []
    if instructions is not None:
        messages.append({"role": "system", "content": instructions})
        groups.append(())
    reasoning: list[int] = []
    calls: list[dict[str, Any]] | None = None  # the tool calls of the item just before, if any
    for index, raw in enumerate(history):
        where = f"input[{index}]"
        item = expect_mapping(SOURCE, where, raw)
        kind = item.get("type", "message")
        if kind == "reasoning":
            reasoning.append(index)  # travels with the item it produced
            continue
        if isinstance(kind, str) and kind.endswith("_call") and "call_id" in item:
            call = _tool_call(item, where, kind)
            if calls is not None and not reasoning:  # parallel calls: one assistant turn
                calls.append(call)
                groups[-1] = (*groups[-1], index)
                continue
            calls = [call]
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
        else:
            calls = None
            message = _message(item, where, kind)
        messages.append(message)
        groups.append((*reasoning, index))
        reasoning = []
    if reasoning:  # trailing reasoning: it stays with the item before it
        if groups and groups[-1]:
            groups[-1] = (*groups[-1], *reasoning)
        else:
            messages.append({"role": "assistant", "content": ""})
            groups.append(tuple(reasoning))
    return messages, groups


def _message(item: Mapping[str, Any], where: str, kind: object) -> dict[str, Any]:
    """The chat message of an item that is not a tool call."""
    if isinstance(kind, str) and kind.endswith("_call_output"):
        return {
            "role": "tool",
            "tool_call_id": _call_id(item, where),
            "content": _output_text(item.get("output")),
        }
    if kind == "message":
        role = item.get("role")
        if not isinstance(role, str) or role not in _MESSAGE_ROLES:
            fail(
                SOURCE, f"{where}.role", f"must be one of {', '.join(sorted(_MESSAGE_ROLES))}", role
            )
        return {"role": role, "content": _content(item.get("content"), f"{where}.content")}
    # Hosted tool calls, item references...: counted as their JSON text.
    return {"role": "assistant", "content": as_json_text(dict(item))}


def _call_id(item: Mapping[str, Any], where: str) -> str:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        fail(SOURCE, f"{where}.call_id", "must be a non-empty string", call_id)
    return call_id


def _tool_call(item: Mapping[str, Any], where: str, kind: object) -> dict[str, Any]:
    name = item.get("name")
    arguments = item.get("arguments")
    if not isinstance(arguments, str):
        rest = {key: value for key, value in item.items() if key not in ("id", "call_id")}
        arguments = as_json_text(rest)
    return {
        "id": _call_id(item, where),
        "type": "function",
        "function": {
            "name": name if isinstance(name, str) and name else str(kind),
            "arguments": arguments,
        },
    }


def _output_text(output: object) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = []
        for part in output:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                texts.append(as_json_text(part))
        return "\n".join(texts)
    return as_json_text(output)


def _content(content: object, where: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for position, raw in enumerate(expect_list(SOURCE, where, content, limit=MAX_MESSAGES)):
        part = expect_mapping(SOURCE, f"{where}[{position}]", raw)
        kind = part.get("type")
        if kind in _PART_TYPES:
            field = "refusal" if kind == "refusal" else "text"
            text = part.get(field)
            if not isinstance(text, str):
                fail(SOURCE, f"{where}[{position}].{field}", "must be a string", text)
            parts.append({"type": _PART_TYPES[str(kind)], _PART_TYPES[str(kind)]: text})
        elif kind == "input_image":
            url = part.get("image_url") or part.get("file_id") or "image"
            parts.append({"type": "image_url", "image_url": {"url": str(url)}})
        elif kind == "input_file":
            parts.append({"type": "file", "file": {}})
        elif kind == "input_audio":
            parts.append({"type": "input_audio", "input_audio": {}})
        else:
            parts.append({"type": "text", "text": as_json_text(dict(part))})
    return parts
