"""A mixin that freezes scorer configuration after construction.

Scorers are shared between threads and pipelines, so their configuration must not change
once built. Subclasses assign their slots with ``object.__setattr__`` inside ``__init__``;
any later assignment or deletion raises ``AttributeError``.
"""

from __future__ import annotations

from typing import NoReturn


class Immutable:
    """Mixin: attributes are set once in ``__init__`` (via ``object.__setattr__``), then frozen."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")
