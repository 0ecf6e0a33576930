"""Fast identity sets of items.

Items are told apart by identity (``is``). A set of ``id(item)`` values states that directly,
but it is slow for large lists: every ``id`` is a fresh large integer, and object addresses
share their low bits, so the integers crowd a few hash slots. When an object's type keeps
``object``'s own ``__eq__`` and ``__hash__`` (``ContextItem`` does), the object itself hashes
by identity, spread well, at no allocation: a set of the objects is the same set, faster.
A subclass that redefines equality falls back to ids.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator

__all__ = ["by_id", "identity_key", "same_by_identity"]

_OBJECT_EQ: object = object.__eq__
_OBJECT_HASH: object = object.__hash__


def _identity_hashed(groups: tuple[Iterable[object], ...]) -> bool:
    for group in groups:
        for cls in set(map(type, group)):
            eq: object = cls.__eq__
            hash_: object = cls.__hash__
            if eq is not _OBJECT_EQ or hash_ is not _OBJECT_HASH:
                return False
    return True


def _itself(objects: Iterable[object]) -> Iterator[Hashable]:
    return iter(objects)


def by_id(objects: Iterable[object]) -> Iterator[Hashable]:
    """Keys by ``id``: always valid, whatever equality the objects define."""
    return map(id, objects)


def identity_key(*groups: Iterable[object]) -> Callable[[Iterable[object]], Iterator[Hashable]]:
    """A function that maps objects to keys equal exactly when the objects are the same object.

    Valid for the objects of ``groups`` (re-iterable collections): the objects themselves when
    every type among them compares and hashes by identity, else their ``id``.
    """
    return _itself if _identity_hashed(groups) else by_id


def same_by_identity(left: Iterable[object], right: Iterable[object]) -> bool:
    """Whether ``left`` and ``right`` hold the same objects (by identity), ignoring order and
    repeats; both must be re-iterable collections."""
    keys = identity_key(left, right)
    return set(keys(left)) == set(keys(right))
