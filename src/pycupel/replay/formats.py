"""The message formats a replay log may hold, and the adapter behind each.

Each record names its ``format``; this registry maps the name to the adapter module that splits
its messages into units (``from_messages``), maps a selection back (``to_messages``) and to the
selection rules of that provider (Anthropic drops leading assistant units). A format whose
adapter is not part of this installation (a newer format, or LangChain without
``langchain-core``) is refused with a clear message before any replay starts.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

from pycupel.adapters import MessageUnits
from pycupel.adapters.anthropic import START_WITH_USER_FILTER
from pycupel.conversation.fit import Fitted, LeadingFilter, fit_units
from pycupel.pipeline import Pipeline
from pycupel.replay.schema import FORMAT_NAMES, LoggedRequest
from pycupel.tokens import TokenCounter

__all__ = ["FORMATS", "ROLE_CATEGORIES", "ReplayFormat", "unavailable_reason"]

ROLE_CATEGORIES = ("system", "user", "assistant", "tool")
"""The role columns of the output: every provider role maps to one of these."""

_ROLES: Mapping[str, str] = MappingProxyType(
    {
        "system": "system",
        "developer": "system",
        "instructions": "system",
        "system_instruction": "system",
        "user": "user",
        "human": "user",
        "assistant": "assistant",
        "ai": "assistant",
        "model": "assistant",
        "tool": "tool",
        "function": "tool",
        "function_call": "tool",
        "function_call_output": "tool",
    }
)


def _starts_with_assistant(unit: Any) -> bool:
    return bool(unit.first_role == "assistant")


@dataclass(frozen=True, slots=True)
class ReplayFormat:
    """How to replay one message format.

    Attributes:
        name: the ``format`` value in the log.
        module: the adapter module (imported on first use).
        system_keyword: the ``from_messages`` argument taking the record's ``system``, or None
            when the format keeps its system prompt inside the messages.
        leading_filter: the adapter's rule for leading units (Anthropic: start with a user turn).
        extra: the pycupel extra that installs the adapter's dependency, if any.
    """

    name: str
    module: str
    system_keyword: str | None = None
    leading_filter: LeadingFilter | None = None
    extra: str | None = None

    def adapter(self) -> ModuleType:
        """The adapter module; ImportError when it is not installed."""
        return importlib.import_module(self.module)

    def units(
        self, adapter: ModuleType, request: LoggedRequest, counter: TokenCounter
    ) -> MessageUnits[Any]:
        """The request's messages split into units (MessageFormatError when malformed)."""
        units: MessageUnits[Any] = adapter.from_messages(
            self._messages(request), counter=counter, **self._system(request.system)
        )
        return units

    def count_tokens(
        self, adapter: ModuleType, messages: Sequence[Any], system: Any, counter: TokenCounter
    ) -> int:
        """The adapter's count of a request (it parses every message again)."""
        tokens: int = adapter.count_tokens(messages, counter=counter, **self._system(system))
        return tokens

    def system_argument(self, system: Any) -> dict[str, Any]:
        """The keyword argument passing a request's system prompt to the adapter (or none)."""
        return self._system(system)

    def _system(self, system: Any) -> dict[str, Any]:
        if system is None or self.system_keyword is None:
            return {}
        return {self.system_keyword: system}

    def _messages(self, request: LoggedRequest) -> Sequence[Any]:
        if self.name != "langchain":
            return request.messages
        from langchain_core.messages import convert_to_messages  # noqa: PLC0415 (optional)

        return list(convert_to_messages(request.messages))

    def fit(self, units: MessageUnits[Any], *, budget: int, pipeline: Pipeline) -> Fitted:
        """Select units within ``budget`` with the adapter's rules."""
        return fit_units(
            units,
            budget=budget,
            policy=pipeline,
            deduplicate=False,
            unanswered_tool_calls="error",
            leading_filter=self.leading_filter,
        )

    def fitted_messages(
        self, adapter: ModuleType, fitted: Fitted, units: MessageUnits[Any]
    ) -> tuple[Sequence[Any], Any]:
        """The fitted request: its messages and its system prompt (None when kept inside)."""
        result = adapter.to_messages(fitted.selected, units)
        if isinstance(result, list):
            return result, None
        # Every adapter keeping its system prompt apart returns (system, messages): Anthropic's
        # (system, messages), Responses' (instructions, input), Gemini's (system_instruction,
        # contents).
        system, messages = result[0], result[1]
        return list(messages) if isinstance(messages, list) else [messages], system

    @staticmethod
    def role_category(role: str) -> str:
        """The output column a provider role counts in (``"user"`` for unknown roles)."""
        return _ROLES.get(role, "user")


FORMATS: Mapping[str, ReplayFormat] = MappingProxyType(
    {
        "openai": ReplayFormat("openai", "pycupel.adapters.openai"),
        "anthropic": ReplayFormat(
            "anthropic",
            "pycupel.adapters.anthropic",
            system_keyword="system",
            leading_filter=LeadingFilter(START_WITH_USER_FILTER, _starts_with_assistant),
        ),
        "responses": ReplayFormat(
            "responses", "pycupel.adapters.responses", system_keyword="instructions"
        ),
        "gemini": ReplayFormat(
            "gemini", "pycupel.adapters.gemini", system_keyword="system_instruction"
        ),
        "langchain": ReplayFormat("langchain", "pycupel.adapters.langchain", extra="langchain"),
    }
)
assert tuple(FORMATS) == FORMAT_NAMES


def unavailable_reason(name: str) -> str | None:
    """Why the adapter of format ``name`` cannot run here, or None when it can."""
    spec = FORMATS[name]
    try:
        spec.adapter()
    except ImportError:
        return f"the {name!r} format has no adapter in this pycupel ({spec.module} is missing)"
    if spec.extra is not None:
        try:
            importlib.import_module("langchain_core.messages")
        except ImportError:
            return (
                f"the {name!r} format needs the 'langchain-core' package; install it with "
                f"pip install 'pycupel[{spec.extra}]'"
            )
    return None
