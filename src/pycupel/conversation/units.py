"""Message units: the messages that are kept or dropped together, and their items.

A tool call and the result(s) answering it must be kept or dropped together, so every message
from the one issuing a call up to the one answering it forms one *unit*
(:mod:`pycupel.conversation.grouping` builds them). A unit stands for its messages as one
candidate :class:`~pycupel.ContextItem`; :class:`MessageUnits` holds a history's units and
the way back: :meth:`MessageUnits.select` turns a selection of items back into units in the
original order, from which the format rebuilds its message list.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Generic, TypeVar

from pycupel.conversation.overhead import MessageOverhead
from pycupel.diagnostics import ExcludedItem
from pycupel.errors import ItemValidationError
from pycupel.model import ContextItem

__all__ = ["SYNTHETIC_EPOCH", "MessageUnit", "MessageUnits"]

M = TypeVar("M")

SYNTHETIC_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Base of the synthetic timestamps: message ``i`` is stamped ``SYNTHETIC_EPOCH + (i+1) s``."""


@dataclass(frozen=True, slots=True, eq=False)
class MessageUnit:
    """Messages that are selected or dropped together, and the candidate item standing for them.

    Attributes:
        item: the candidate :class:`~pycupel.ContextItem` for the pipeline.
        message_indices: positions of the unit's messages in the provider's message list, in
            order and contiguous (empty for a system prompt passed beside the list).
        roles: the provider role of each message of the unit, in order (``"system"`` first
            for a system prompt passed beside the list).
        system_parameter: True for the unit holding a system prompt passed beside the list.
        call_ids: ids of the tool calls issued inside the unit.
        unanswered_call_ids: ids of calls no message answers (only with unanswered calls
            allowed); providers reject such a unit in a request.
        user_text: the text of the unit's last user-authored message (empty when it has
            none); the latest one is the default query of relevance scoring.
    """

    item: ContextItem
    message_indices: tuple[int, ...]
    roles: tuple[str, ...]
    system_parameter: bool = False
    call_ids: tuple[str, ...] = ()
    unanswered_call_ids: tuple[str, ...] = ()
    user_text: str = ""

    @property
    def first_role(self) -> str:
        """The role of the unit's first message."""
        return self.roles[0]


@dataclass(frozen=True, slots=True, eq=False)
class MessageUnits(Generic[M]):
    """The result of ``from_messages``: a history split into units, and the way back.

    It holds the caller's message objects (never modified) and everything needed to turn a
    selection of :attr:`items` back into messages; all state of one conversion lives here.

    Attributes:
        provider: ``"openai"``, ``"responses"``, ``"anthropic"``, ``"gemini"`` or
            ``"langchain"``.
        messages: the caller's messages, as given (the same objects).
        units: the units in conversation order.
        items: the candidate items, one per unit, in conversation order.
        overhead: the fixed costs used for counting.
        repairs: messages left out by repair mode (orphaned tool results), as exclusions
            for the report; they belong to no unit.
        system: what the format passes beside the list (Anthropic's ``system`` and Gemini's
            ``system_instruction`` as given; the Responses adapter's instructions and input
            form), ``None`` elsewhere.
    """

    provider: str
    messages: tuple[M, ...]
    units: tuple[MessageUnit, ...]
    overhead: MessageOverhead
    system: object = None
    repairs: tuple[ExcludedItem, ...] = ()
    items: tuple[ContextItem, ...] = field(init=False)
    _by_item: Mapping[ContextItem, MessageUnit] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(unit.item for unit in self.units))
        object.__setattr__(
            self, "_by_item", MappingProxyType({unit.item: unit for unit in self.units})
        )

    def __len__(self) -> int:
        return len(self.units)

    def __iter__(self) -> Iterator[MessageUnit]:
        return iter(self.units)

    @property
    def total_tokens(self) -> int:
        """Tokens of the whole history: every unit plus the per-request overhead."""
        return sum(unit.item.tokens for unit in self.units) + self.overhead.per_request

    def unit_of(self, item: ContextItem) -> MessageUnit:
        """The unit an item stands for; raises ItemValidationError for a foreign item."""
        unit = self._by_item.get(item)
        if unit is None:
            raise ItemValidationError(
                "item", item, "must be one of the items produced by this from_messages call"
            )
        return unit

    def select(self, selection: Iterable[ContextItem]) -> tuple[MessageUnit, ...]:
        """The units of the selected items, in conversation order (whatever the input order).

        Raises ItemValidationError for an item that is not one of :attr:`items` or that is
        given twice.
        """
        chosen: set[ContextItem] = set()
        for position, item in enumerate(selection):
            if item not in self._by_item:
                raise ItemValidationError(
                    f"selection[{position}]",
                    item,
                    "must be one of the items produced by this from_messages call",
                )
            if item in chosen:
                raise ItemValidationError(
                    f"selection[{position}]", item, "must not select the same item twice"
                )
            chosen.add(item)
        return tuple(unit for unit in self.units if unit.item in chosen)
