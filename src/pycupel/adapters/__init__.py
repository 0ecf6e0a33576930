"""Chat-message adapters: provider message lists in, a valid smaller history out.

One module per format, each with the same four functions:

* ``from_messages(messages, ...)`` splits a history into :class:`MessageUnit` objects (a tool
  call and the results answering it are one unit) and returns :class:`MessageUnits`, whose
  ``.items`` are the candidate :class:`~pycupel.ContextItem` objects for a pipeline;
* ``to_messages(selection, units)`` maps selected items back to the provider's messages, in
  the original order, as your original message objects;
* ``count_tokens(messages, ...)`` counts a request the way the adapter budgets it;
* ``fit_messages(messages, *, budget, ...)`` does it all in one call and returns the fitted
  messages with the :class:`~pycupel.diagnostics.SelectionReport`;
* ``recall_tool(recall)`` and ``answer_recall(recall, message)`` offer the model the recall
  tool, in the format's tool shape, and answer its calls with the text an excerpt elided
  (a fit given ``recall=``).

Modules: :mod:`pycupel.adapters.openai` (Chat Completions), :mod:`pycupel.adapters.responses`
(OpenAI Responses API input items, with ``instructions``), :mod:`pycupel.adapters.anthropic`
(Messages API, with its separate ``system``), :mod:`pycupel.adapters.gemini` (``contents``, with
``system_instruction``) and :mod:`pycupel.adapters.langchain` (message objects; needs the
``langchain`` extra).

The decisions shared by every format (tool-call integrity, what is kept, shorter versions,
pinning, deduplication, order, limits) are the conversation engine's:
:mod:`pycupel.conversation`. Each module is a codec of its format
(:class:`~pycupel.conversation.codec.Codec`) and the public functions over it.
"""

from pycupel.conversation import (
    MAX_ID_LENGTH,
    MAX_MESSAGES,
    MAX_PARTS_PER_MESSAGE,
    MAX_TOOL_CALLS_PER_MESSAGE,
    SYNTHETIC_EPOCH,
    UNANSWERED_FILTER,
    FitResult,
    MemoryRecallStore,
    MessageOverhead,
    MessageUnit,
    MessageUnits,
    Recall,
    RecallStore,
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
    "MemoryRecallStore",
    "MessageOverhead",
    "MessageUnit",
    "MessageUnits",
    "Recall",
    "RecallStore",
    "Shrink",
    "Structure",
    "StructuredSelection",
    "VariantName",
    "select_structured",
    "variant_name",
]
