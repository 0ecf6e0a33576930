"""Session stores: :mod:`~pycupel.session.stores.base` (the :class:`SessionStore` protocol),
:mod:`~pycupel.session.stores.sqlite` and :mod:`~pycupel.session.stores.redis`."""

from pycupel.session.stores.base import SessionStore, StoredState

__all__ = ["SessionStore", "StoredState"]
