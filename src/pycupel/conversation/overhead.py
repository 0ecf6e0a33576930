"""The fixed token costs a chat format adds around the text a counter sees."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from pycupel._checks import check_int
from pycupel.conversation.media import ImageProvider, image_tokens
from pycupel.errors import PipelineConfigError

__all__ = ["MessageOverhead"]

_NO_SIZES: Mapping[str, tuple[int, int]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class MessageOverhead:
    """Fixed token costs a chat format adds around the text the counter sees.

    The defaults of each adapter approximate its provider's chat format; providers do not
    publish exact numbers for every model, so tune these for yours (or compare against the
    provider's reported prompt tokens) when the budget is tight.

    Attributes:
        per_message: added once per message (role markers and separators).
        per_name: added once per message that carries a ``name`` (the name itself is counted
            as text).
        per_tool_call: added once per tool call (and, for Anthropic, per ``tool_result``
            block), for the structure around the counted name and arguments.
        per_request: added once per request (the reply priming); subtracted from the budget
            by ``fit_messages`` and included by ``count_tokens``.
        image: cost of one image part/block whose pixel size is unknown (an image read
            from its base64 data, or listed in ``image_sizes``, is priced from its size; see
            :mod:`pycupel.conversation.media`).
        audio: fixed cost of one audio part; ``None`` means "no estimate": a history holding
            audio then raises :class:`~pycupel.errors.PipelineConfigError` asking for one.
        document: fixed cost of one file/PDF part or block whose text is not given inline;
            ``None`` means "no estimate", as for ``audio``.
        image_sizes: ``(width, height)`` in pixels of images given by URL or file id (whose
            data the adapter cannot read), keyed by that URL or id.
    """

    per_message: int
    per_name: int = 0
    per_tool_call: int = 0
    per_request: int = 0
    image: int = 0
    audio: int | None = None
    document: int | None = None
    image_sizes: Mapping[str, tuple[int, int]] = field(
        default_factory=lambda: _NO_SIZES, hash=False
    )

    def __post_init__(self) -> None:
        err = PipelineConfigError
        if not isinstance(self.image_sizes, Mapping):
            raise PipelineConfigError("overhead.image_sizes", self.image_sizes, "must be a mapping")
        for key, size in self.image_sizes.items():
            at = f"overhead.image_sizes[{key!r}]"
            if not isinstance(key, str):
                raise PipelineConfigError(at, key, "keys must be image URLs or file ids (strings)")
            if not isinstance(size, tuple) or len(size) != 2:
                raise PipelineConfigError(at, size, "must be a (width, height) tuple")
            check_int(err, f"{at}[0]", size[0], minimum=1)
            check_int(err, f"{at}[1]", size[1], minimum=1)
        object.__setattr__(self, "image_sizes", MappingProxyType(dict(self.image_sizes)))
        for name in ("per_message", "per_name", "per_tool_call", "per_request", "image"):
            check_int(err, f"overhead.{name}", getattr(self, name), minimum=0)
        for name in ("audio", "document"):
            value = getattr(self, name)
            if value is not None:
                check_int(err, f"overhead.{name}", value, minimum=0)

    def media_cost(self, media: Literal["audio", "document"], location: str) -> int:
        """The fixed cost of an audio or document part, or an error asking for one."""
        cost = self.audio if media == "audio" else self.document
        if cost is None:
            raise PipelineConfigError(
                f"overhead.{media}",
                None,
                f"must be set to count the {media} at {location} "
                f"(its token cost cannot be estimated from the message)",
            )
        return cost

    def image_cost(
        self,
        pricing: ImageProvider,
        *,
        data: bytes | None = None,
        reference: str | None = None,
        detail: str = "auto",
    ) -> int:
        """One image's tokens by ``pricing``'s formula: sized from its bytes (``data``), else
        from :attr:`image_sizes` by its URL or file id (``reference``), else :attr:`image`."""
        return image_tokens(
            pricing,
            data=data,
            reference=reference,
            sizes=self.image_sizes,
            fallback=self.image,
            detail=detail,
        )
