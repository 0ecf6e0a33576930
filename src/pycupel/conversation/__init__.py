"""The conversation engine: chat histories as units, selected and shortened to fit a budget.

It knows no provider format and no session. A format module (:mod:`pycupel.adapters`)
parses its messages into :class:`~pycupel.conversation.parsed.ParsedMessage` objects and
renders a selection back; everything between is here, written once:

* :mod:`~pycupel.conversation.parsed`, :mod:`~pycupel.conversation.overhead`: a message as
  the engine sees it, and the fixed token costs of a format;
* :mod:`~pycupel.conversation.units`, :mod:`~pycupel.conversation.repair`: messages grouped
  into units (a tool call with its results), and the repair of what providers reject;
* :mod:`~pycupel.conversation.structure`: the structure-aware selection (pinned units, a
  recent tail, relevance with neighbours and dated headers);
* :mod:`~pycupel.conversation.versions`, :mod:`~pycupel.conversation.upgrade`: shorter
  versions of units (placeholders, truncations), and which version of each to keep;
* :mod:`~pycupel.conversation.summary`: a summary of what the fit dropped;
* :mod:`~pycupel.conversation.fit`, :mod:`~pycupel.conversation.afit`: the fit driver, and
  the fit with an asynchronous token counter;
* :mod:`~pycupel.conversation.validate`, :mod:`~pycupel.conversation.media`,
  :mod:`~pycupel.conversation.media_length`, :mod:`~pycupel.conversation.tools`: the shared
  checks of message input, media pricing and tool-definition framing.
"""

from pycupel.conversation.fit import UNANSWERED_FILTER, FitResult
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import ParsedMessage
from pycupel.conversation.structure import Structure, StructuredSelection, select_structured
from pycupel.conversation.units import SYNTHETIC_EPOCH, MessageUnit, MessageUnits
from pycupel.conversation.validate import (
    MAX_ID_LENGTH,
    MAX_MESSAGES,
    MAX_PARTS_PER_MESSAGE,
    MAX_TOOL_CALLS_PER_MESSAGE,
)
from pycupel.conversation.versions import Shrink, VariantName, variant_name

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_MESSAGES",
    "MAX_PARTS_PER_MESSAGE",
    "MAX_TOOL_CALLS_PER_MESSAGE",
    "SYNTHETIC_EPOCH",
    "UNANSWERED_FILTER",
    "FitResult",
    "MessageOverhead",
    "MessageUnit",
    "MessageUnits",
    "ParsedMessage",
    "Shrink",
    "Structure",
    "StructuredSelection",
    "VariantName",
    "select_structured",
    "variant_name",
]
