"""The conversation engine: chat histories as units, selected and shortened to fit a budget.

It knows no provider format and no session. A format module (:mod:`pycupel.adapters`)
parses its messages into :class:`~pycupel.conversation.parsed.ParsedMessage` objects and
renders a selection back; everything between is here, written once:

* :mod:`~pycupel.conversation.parsed`, :mod:`~pycupel.conversation.overhead`: a message as the
  engine sees it, and the fixed token costs of a format;
* :mod:`~pycupel.conversation.units`, :mod:`~pycupel.conversation.repair`: messages grouped into
  units (a tool call with its results), and the repair of what providers reject;
* :mod:`~pycupel.conversation.structure`: the structure-aware selection (pinned units, a recent
  tail, relevance with neighbours and dated headers);
* :mod:`~pycupel.conversation.versions`, :mod:`~pycupel.conversation.upgrade`: shorter versions
  of units (placeholders, truncations), and which version of each to keep;
* :mod:`~pycupel.conversation.explain`: the report of a selection, each unit with the
  specification's reason and, beside it, why the selection kept, shortened or dropped it
  (:attr:`SelectionReport.why <pycupel.diagnostics.SelectionReport.why>`);
* :mod:`~pycupel.conversation.summary`: a summary of what the fit dropped;
* :mod:`~pycupel.conversation.fit`, :mod:`~pycupel.conversation.afit`: the fit driver, and the
  fit with an asynchronous token counter; :mod:`~pycupel.conversation.arguments`: the fit's
  arguments (budget, counter, policy, structure) checked and resolved;
* :mod:`~pycupel.conversation.validate`, :mod:`~pycupel.conversation.media`,
  :mod:`~pycupel.conversation.media_length`, :mod:`~pycupel.conversation.tools`: the shared
  checks of message input, media pricing and tool-definition framing.

Decisions shared by every format:

* **Tool-call integrity.** Every message from one issuing a tool call up to the one answering it
  belongs to the same unit, so the output never holds an orphaned result or an unanswered call.
  A result that answers nothing (or answers a call twice) and a call id used twice raise
  :class:`~pycupel.errors.MessageFormatError`. A call that is never answered raises too
  (providers reject it in a request); ``fit_messages(..., unanswered_tool_calls="drop")``
  instead leaves such units out and reports them excluded with reason
  ``Filtered("unanswered-tool-call")``.
* **What is kept.** By default ``fit_messages`` selects by the conversation's structure
  (:class:`~pycupel.conversation.Structure`): the system prompt and the latest user turn, an
  unbroken tail of the newest turns (``keep_recent`` tokens, 10% of the budget by default), then
  the turns most relevant to the query (BM25 with query expansion; the query is the latest user
  message unless ``query=`` is given), each with the turns just before and after it and its
  session's dated header when they fit. :func:`~pycupel.conversation.select_structured` is that
  selection on its own, for callers that build units themselves. A ``policy=`` runs the ordinary
  pipeline instead (add ``structure=`` to combine its scorer with the structure).
* **Shrink, don't only drop.** When the history does not fit, the default selection keeps a
  long tool result or message as an excerpt sized to the room: the segments the question needs
  (log lines, JSON elements, code, table rows...), every gap marked ``[... 1,240 lines (9,876
  tokens) elided ...]`` (:mod:`~pycupel.conversation.excerpts`); or an older result as a
  placeholder (``[result cleared: 5,400 tokens]``) after its call, which stays whole, rather
  than dropping the pair. With ``recall=`` (a :class:`~pycupel.conversation.Recall`) each gap's
  marker carries a ref, and the format's recall tool gives the text back to the model
  (:mod:`~pycupel.conversation.recall_tool`). The result's id (``tool_call_id``,
  ``tool_use_id``, ``call_id``, a Gemini ``functionResponse``'s name and id) is kept, so the
  history stays valid; a shortened message is a new object, the others are yours. ``shrink=``
  sets it (:class:`~pycupel.conversation.Shrink`: excerpts or placeholders off, the newest N
  results never shortened, ``exclude_tools``); the report holds a shortened unit as its
  version's item, and :func:`~pycupel.conversation.variant_name` names the version.
* **Pinning.** System/developer prompts and the latest user turn are pinned by default; if they
  alone do not fit, the pipeline's :class:`~pycupel.errors.PinnedBudgetError` propagates.
* **Deduplication is off by default.** Two "ok" turns at different points of a chat are not
  duplicates; pass ``deduplicate=True`` to drop units whose rendered text is byte-identical.
* **Order.** Messages always come back in conversation order, whatever the policy's placer.
* **Limits.** At most :data:`MAX_MESSAGES` messages, :data:`MAX_PARTS_PER_MESSAGE` content parts
  per message, :data:`MAX_TOOL_CALLS_PER_MESSAGE` tool calls per message and tool-call ids of at
  most :data:`MAX_ID_LENGTH` characters; larger inputs raise MessageFormatError.
"""

from pycupel.conversation.fit import UNANSWERED_FILTER, FitResult
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import ParsedMessage
from pycupel.conversation.recall import MemoryRecallStore, Recall, RecallStore
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
    "MemoryRecallStore",
    "MessageOverhead",
    "MessageUnit",
    "MessageUnits",
    "ParsedMessage",
    "Recall",
    "RecallStore",
    "Shrink",
    "Structure",
    "StructuredSelection",
    "VariantName",
    "select_structured",
    "variant_name",
]
