"""LlamaIndex: a node postprocessor with a token budget, and a chat memory that fits its window.

* :class:`ContextWindowPostprocessor` is ``LongContextReorder`` with a budget: the retrieved
  nodes compete on relevance, the best that fit in ``budget`` tokens are kept, and they are
  placed U-shaped (the most relevant at both ends of the context, where models attend most).
  Relevance is the retriever's node score, min-max scaled over the retrieved set (nodes
  without a score rank by retrieval order), blended in equal parts with the lexical relevance
  of each node to the query (:class:`~pycupel.scorers.relevance.RelevanceScorer`) when the
  query bundle carries a query string. Byte-identical node texts are kept once.
  ``query_engine(node_postprocessors=[...])``.
* :class:`ContextWindowMemory` is a chat memory (``BaseChatStoreMemory``) that stores the whole
  history in a chat store and returns it from ``get()`` as the window of a
  :class:`pycupel.adapters.openai.Session`: fitted with the rules of :mod:`pycupel.adapters`
  (tool calls and results together, system prompt and latest user message kept, order kept)
  and append-only between compactions, so consecutive LLM calls share a cached prefix. With
  ``store=`` (a :class:`~pycupel.session.SessionStore`) the window's state is kept there
  under the memory's ``chat_store_key``, so every worker process serving the conversation
  (its history in a shared chat store) continues its window exactly.

Tokens are counted on what the LLM sees (``node.get_content(metadata_mode=LLM)``) with any
``pycupel.tokens`` counter (default :class:`~pycupel.tokens.HeuristicCounter`).

Needs ``pip install 'pycupel[llamaindex]'``; importing this module without it raises
:class:`~pycupel.errors.IntegrationUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pycupel.errors import IntegrationUnavailableError, MessageFormatError, PipelineConfigError

try:
    from llama_index.core.base.llms.types import (
        ChatMessage,
        ImageBlock,
        MessageRole,
        TextBlock,
        ToolCallBlock,
    )
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.memory.types import BaseChatStoreMemory
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise IntegrationUnavailableError("LlamaIndex", "llama-index-core", "llamaindex") from exc

from pycupel.adapters import openai as chat
from pycupel.conversation.arguments import resolve_budget, resolve_counter
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.validate import as_json_text
from pycupel.diagnostics import SelectionReport
from pycupel.integrations._sessions import check_store, session_budget
from pycupel.integrations._window import WindowSettings
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.placers import UShapedPlacer
from pycupel.policy import Policy
from pycupel.scorers import CompositeScorer, ReflexiveScorer
from pycupel.scorers.relevance import RelevanceScorer
from pycupel.session import SessionStore
from pycupel.slicers import GreedySlice
from pycupel.slicers.base import Slicer
from pycupel.tokens import TokenCounter

__all__ = ["ContextWindowMemory", "ContextWindowPostprocessor", "relevance_hints"]

ReportHook = Callable[[SelectionReport], None]


def relevance_hints(nodes: Sequence[NodeWithScore]) -> list[float]:
    """Each node's relevance in [0, 1]: its score min-max scaled over ``nodes``.

    Equal scores all get 1.0; a node without a score gets 0.0, unless no node has one: then
    retrieval order decides (the first node 1.0, falling evenly towards 0).
    """
    scores = [node.score for node in nodes]
    known = [score for score in scores if score is not None]
    if not known:
        count = len(nodes)
        return [1.0 - position / count for position in range(count)]
    low, high = min(known), max(known)
    span = high - low
    return [
        0.0 if score is None else (1.0 if span == 0 else (score - low) / span) for score in scores
    ]


class ContextWindowPostprocessor(BaseNodePostprocessor):
    """Keeps the most relevant retrieved nodes that fit ``budget`` tokens, placed U-shaped.

    Args:
        budget: tokens for the nodes' text (an int or a :class:`~pycupel.ContextBudget`).
            The query and the prompt template come on top: leave room for them.
        counter: a ``pycupel.tokens`` counter; default ``HeuristicCounter``.
        slicer: how the budget is filled; default ``GreedySlice`` (relevance per token).
        metadata_mode: which text of a node is counted (default what the LLM sees).
        on_report: called with the :class:`~pycupel.diagnostics.SelectionReport` of every
            call; each item's ``metadata["node_id"]`` names its node.
    """

    budget: Any = Field(description="Token budget for the nodes' text (int or ContextBudget).")
    counter: Any = Field(default=None, exclude=True)
    slicer: Any = Field(default=None, exclude=True)
    metadata_mode: MetadataMode = Field(default=MetadataMode.LLM)
    on_report: Any = Field(default=None, exclude=True)
    _pipeline: Pipeline = PrivateAttr()
    _query_pipeline: Pipeline = PrivateAttr()

    def __init__(
        self,
        *,
        budget: int | ContextBudget,
        counter: TokenCounter | None = None,
        slicer: Slicer | None = None,
        metadata_mode: MetadataMode = MetadataMode.LLM,
        on_report: ReportHook | None = None,
        **kwargs: Any,
    ) -> None:
        # Checked before pydantic sees the values, so a bad one raises our own error.
        chosen = slicer if slicer is not None else GreedySlice()
        if not isinstance(chosen, Slicer):
            raise PipelineConfigError("slicer", slicer, "must be a pycupel slicer or None")
        resolve_counter(counter)
        _check_hook(on_report)
        pipeline, query_pipeline = (
            Pipeline(
                budget=resolve_budget(budget, 0),
                scorer=scorer,
                slicer=chosen,
                placer=UShapedPlacer(),
                deduplicate=True,
            )
            # With a query: the retriever's ranking and the node's own match to the query.
            for scorer in (
                ReflexiveScorer(),
                CompositeScorer([(ReflexiveScorer(), 1.0), (RelevanceScorer(), 1.0)]),
            )
        )
        fields: dict[str, Any] = {
            "budget": budget,
            "counter": counter,
            "slicer": slicer,
            "metadata_mode": metadata_mode,
            "on_report": on_report,
        }
        super().__init__(**fields, **kwargs)
        self._pipeline = pipeline
        self._query_pipeline = query_pipeline

    @classmethod
    def class_name(cls) -> str:
        return "PycupelContextWindowPostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if not nodes:
            return []
        texts = [node.node.get_content(metadata_mode=self.metadata_mode) for node in nodes]
        counts = resolve_counter(self.counter).count_batch(texts)
        items = [
            ContextItem(
                text,
                tokens=tokens,
                future_relevance_hint=hint,
                metadata={"node_id": node.node.node_id},
            )
            for node, text, tokens, hint in zip(
                nodes, texts, counts, relevance_hints(nodes), strict=True
            )
        ]
        by_item = {id(item): node for item, node in zip(items, nodes, strict=True)}
        query = query_bundle.query_str if query_bundle is not None else ""
        if query.strip():
            result = self._query_pipeline.dry_run(items, query=query)
        else:
            result = self._pipeline.dry_run(items)
        if self.on_report is not None:
            self.on_report(result.report)
        return [by_item[id(item)] for item in result.items]


class ContextWindowMemory(BaseChatStoreMemory):
    """A chat memory that stores everything and returns the history fitted into ``budget``.

    ``ContextWindowMemory.from_defaults(budget=4_000)``, then pass it as ``memory=`` to a chat
    engine or an agent. ``get()`` is the window, ``get_all()`` the whole stored history.

    Args:
        budget: tokens for the history ``get()`` returns (an int or a
            :class:`~pycupel.ContextBudget`, whose target is used); the new user message and
            any retrieved context come on top.
        policy, counter, overhead: as for
            :class:`pycupel.integrations.langchain.ContextWindowMiddleware`.
        on_report: called with the :class:`~pycupel.session.SessionReport` of every
            ``get()``; when the stored history holds a tool call without its result (a run
            stopped in between), that call is left out by a stateless ``fit_messages`` and
            the hook receives its :class:`~pycupel.diagnostics.SelectionReport`.
        store: where the window's state is kept between calls (a
            :class:`~pycupel.session.SessionStore`), under ``chat_store_key``; ``None``
            keeps it in this object.
    """

    budget: Any = Field(description="Token budget for the returned history.")
    policy: Any = Field(default=None, exclude=True)
    counter: Any = Field(default=None, exclude=True)
    overhead: Any = Field(default=None, exclude=True)
    on_report: Any = Field(default=None, exclude=True)
    store: Any = Field(default=None, exclude=True)
    _settings: WindowSettings = PrivateAttr()
    _session: chat.Session = PrivateAttr()

    def __init__(
        self,
        *,
        budget: int | ContextBudget,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        on_report: ReportHook | None = None,
        store: SessionStore | None = None,
        **kwargs: Any,
    ) -> None:
        # A run cut off between a call and its result leaves an unanswered call: left out.
        settings = WindowSettings(
            budget=budget,
            policy=policy,
            counter=counter,
            overhead=overhead,
            unanswered_tool_calls="drop",
        )
        _check_hook(on_report)
        check_store(store)
        fields: dict[str, Any] = {
            "budget": budget,
            "policy": policy,
            "counter": counter,
            "overhead": overhead,
            "on_report": on_report,
            "store": store,
        }
        super().__init__(**fields, **kwargs)
        self._settings = settings
        self._session = chat.Session(
            budget=session_budget(settings.budget),
            policy=policy,
            counter=counter,
            overhead=overhead,
            store=store,
            key=self.chat_store_key if store is not None else None,
        )

    @classmethod
    def class_name(cls) -> str:
        return "PycupelContextWindowMemory"

    @classmethod
    def from_defaults(
        cls,
        chat_history: list[ChatMessage] | None = None,
        llm: Any = None,
        **kwargs: Any,
    ) -> ContextWindowMemory:
        """A memory over ``chat_store`` (default in-memory) holding ``chat_history``."""
        memory = cls(**kwargs)
        if chat_history:
            memory.set(chat_history)
        return memory

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        return self._fit(self.get_all())

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        return self._fit(await self.aget_all())

    def _fit(self, history: list[ChatMessage]) -> list[ChatMessage]:
        messages = [_as_chat_message(message) for message in history]
        report: object
        try:
            window = self._session.fit(messages)
            fitted, report = window.messages, window.report
        except MessageFormatError:
            # An unanswered tool call (or a malformed message, which raises again here).
            fitted, report = chat.fit_messages(
                messages,
                budget=self._settings.budget,
                policy=self._settings.policy,
                counter=self._settings.counter,
                overhead=self._settings.overhead,
                unanswered_tool_calls="drop",
                shrink=False,  # the kept messages are mapped back to the memory's by identity
            )
        if self.on_report is not None:
            self.on_report(report)
        kept = {id(message) for message in fitted}
        return [
            original
            for original, message in zip(history, messages, strict=True)
            if id(message) in kept
        ]


def _check_hook(on_report: object) -> None:
    if on_report is not None and not callable(on_report):
        raise PipelineConfigError("on_report", on_report, "must be callable or None")


_ROLES: Mapping[MessageRole, str] = MappingProxyType(
    {
        MessageRole.SYSTEM: "system",
        MessageRole.DEVELOPER: "developer",
        MessageRole.USER: "user",
        MessageRole.ASSISTANT: "assistant",
        MessageRole.CHATBOT: "assistant",
        MessageRole.MODEL: "assistant",
    }
)


def _as_chat_message(message: ChatMessage) -> dict[str, Any]:
    """A Chat Completions view of a LlamaIndex message, for counting and grouping."""
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": str(block.url or "image")}})
        elif isinstance(block, ToolCallBlock) and block.tool_call_id:
            calls.append(_call(block.tool_call_id, block.tool_name, block.tool_kwargs))
        else:
            parts.append({"type": "text", "text": block.model_dump_json()})
    known = {call["id"] for call in calls}
    for raw in message.additional_kwargs.get("tool_calls") or ():
        call_id, name, arguments = _legacy_call(raw)
        if call_id and call_id not in known:
            calls.append(_call(call_id, name, arguments))
            known.add(call_id)
    call_id = message.additional_kwargs.get("tool_call_id")
    if message.role in (MessageRole.TOOL, MessageRole.FUNCTION) and isinstance(call_id, str):
        return {"role": "tool", "tool_call_id": call_id, "content": parts}
    # A tool result without a call id cannot be paired: it stands as a message of its own.
    role = _ROLES.get(message.role, "assistant")
    if role == "assistant":
        return {"role": role, "content": parts or None, "tool_calls": calls or None}
    return {"role": role, "content": parts}


def _call(call_id: str, name: str, arguments: object) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else as_json_text(arguments)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name or "tool", "arguments": text},
    }


def _legacy_call(raw: object) -> tuple[str | None, str, object]:
    """The id, name and arguments of an ``additional_kwargs["tool_calls"]`` entry (a dict or
    an SDK object, with the OpenAI ``function`` wrapper or without)."""
    function = _field(raw, "function")
    holder = function if function is not None else raw
    call_id = _field(raw, "id")
    name = _field(holder, "name")
    arguments = _field(holder, "arguments")
    return (
        call_id if isinstance(call_id, str) else None,
        name if isinstance(name, str) else "tool",
        arguments if arguments is not None else "",
    )


def _field(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, dict) else getattr(value, key, None)
