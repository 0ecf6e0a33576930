"""Session stores: :mod:`~pycupel.session.stores.base` (the :class:`SessionStore` protocol),
:mod:`~pycupel.session.stores.sqlite` and :mod:`~pycupel.session.stores.redis`; the recall
tool's originals in a store's blob area (:mod:`~pycupel.session.stores.recall`)."""

from pycupel.session.stores.base import SessionStore, StoredState
from pycupel.session.stores.recall import BlobRecallStore

__all__ = ["BlobRecallStore", "SessionStore", "StoredState"]
