"""Chat-message adapters: provider message lists in, a valid smaller history out.

One module per format, each with the same four functions:

* ``from_messages(messages, ...)`` splits a history into :class:`MessageUnit` objects (a tool
  call and the results answering it are one unit) and returns :class:`MessageUnits`, whose
  ``.items`` are the candidate :class:`~pycupel.ContextItem` objects for a pipeline;
* ``to_messages(selection, units)`` maps selected items back to the provider's messages, in
  the original order, as your original message objects;
* ``count_tokens(messages, ...)`` counts a request the way the adapter budgets it;
* ``fit_messages(messages, *, budget, ...)`` does it all in one call and returns the fitted
  messages with the :class:`~pycupel.diagnostics.SelectionReport`.

Modules: :mod:`pycupel.adapters.openai` (Chat Completions), :mod:`pycupel.adapters.responses`
(OpenAI Responses API input items, with ``instructions``), :mod:`pycupel.adapters.anthropic`
(Messages API, with its separate ``system``), :mod:`pycupel.adapters.gemini` (``contents``, with
``system_instruction``) and :mod:`pycupel.adapters.langchain` (message objects; needs the
``langchain`` extra).

Decisions shared by all of them:

* **Tool-call integrity.** Every message from one issuing a tool call up to the one answering
  it belongs to the same unit, so the output never holds an orphaned result or an unanswered
  call. A result that answers nothing (or answers a call twice) and a call id used twice raise
  :class:`~pycupel.errors.MessageFormatError`. A call that is never answered raises too
  (providers reject it in a request); ``fit_messages(..., unanswered_tool_calls="drop")``
  instead leaves such units out and reports them excluded with reason
  ``Filtered("unanswered-tool-call")``.
* **What is kept.** By default ``fit_messages`` selects by the conversation's structure
  (:class:`Structure`): the system prompt and the latest user turn, an unbroken tail of the
  newest turns (``keep_recent`` tokens, 10% of the budget by default), then the turns most
  relevant to the query (BM25 with query expansion; the query is the latest user message
  unless ``query=`` is given), each with the turns just before and after it and its
  session's dated header when they fit. :func:`select_structured` is that selection on its
  own, for callers that build units themselves. A ``policy=`` runs the ordinary pipeline
  instead (add ``structure=`` to combine its scorer with the structure).
* **Shrink, don't only drop.** When the history does not fit, the default selection keeps an
  older tool result as a placeholder (``[result cleared: 5,400 tokens]``) after its call,
  which stays whole, rather than dropping the pair, and a long result or message may be kept
  as its head and tail around ``[... N tokens elided ...]``. The result's id
  (``tool_call_id``, ``tool_use_id``, ``call_id``, a Gemini ``functionResponse``'s name and
  id) is kept, so the history stays valid; a shortened message is a new object, the others
  are yours. ``shrink=`` sets it (:class:`Shrink`: placeholders or truncations off, the
  newest N results never shortened, ``exclude_tools``); the report holds a shortened unit as
  its version's item, and :func:`variant_name` names the version.
* **Pinning.** System/developer prompts and the latest user turn are pinned by default; if
  they alone do not fit, the pipeline's :class:`~pycupel.errors.PinnedBudgetError` propagates.
* **Deduplication is off by default.** Two "ok" turns at different points of a chat are not
  duplicates; pass ``deduplicate=True`` to drop units whose rendered text is byte-identical.
* **Order.** Messages always come back in conversation order, whatever the policy's placer.
* **Limits.** At most :data:`MAX_MESSAGES` messages, :data:`MAX_PARTS_PER_MESSAGE` content
  parts per message, :data:`MAX_TOOL_CALLS_PER_MESSAGE` tool calls per message and tool-call
  ids of at most :data:`MAX_ID_LENGTH` characters; larger inputs raise MessageFormatError.
"""

from pycupel.conversation import (
    MAX_ID_LENGTH,
    MAX_MESSAGES,
    MAX_PARTS_PER_MESSAGE,
    MAX_TOOL_CALLS_PER_MESSAGE,
    SYNTHETIC_EPOCH,
    UNANSWERED_FILTER,
    FitResult,
    MessageOverhead,
    MessageUnit,
    MessageUnits,
    Shrink,
    Structure,
    StructuredSelection,
    VariantName,
    select_structured,
    variant_name,
)

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
    "Shrink",
    "Structure",
    "StructuredSelection",
    "VariantName",
    "select_structured",
    "variant_name",
]
