"""The recall tool's originals in a session store: :class:`BlobRecallStore`.

A :class:`~pycupel.conversation.Recall` keeps the text an excerpt elides in a
:class:`~pycupel.conversation.RecallStore`. When a conversation's turns land on different
workers, the worker answering a recall call may not be the one that made the excerpt, so the
originals must live where every worker reads them: in the blob area of the
:class:`~pycupel.session.SessionStore` that already holds the session's state. A recall's
scope is the store key its texts go under, so deleting the conversation's key deletes them
too; give the recall the session's ``key`` as its scope::

    store = SQLiteStore("sessions.db")
    recall = Recall(scope=conversation_id, store=BlobRecallStore(store), secret=SECRET)
    session = openai.Session(budget=8_000, store=store, key=conversation_id, recall=recall)

Every worker must use the same ``secret`` (from your secret manager, at least 16 random
bytes): a ref is an HMAC of the text with it, so a worker with another secret makes other
refs, and the window it sends changes.
"""

from __future__ import annotations

from pycupel.errors import SessionConfigError
from pycupel.session.stores.base import SessionStore, check_key

__all__ = ["BlobRecallStore"]

BLOB_PREFIX = "recall:"
"""The blob names of recalled texts: this prefix, then the ref."""


class BlobRecallStore:
    """A :class:`~pycupel.conversation.RecallStore` in a session store's blob area: the text
    of ``ref`` in ``scope`` is the blob ``recall:<ref>`` of the key ``scope``.

    Safe from several threads and processes, as the session store is.

    Raises:
        SessionConfigError: ``store`` is not a :class:`~pycupel.session.SessionStore`.
    """

    __slots__ = ("_store",)

    def __init__(self, store: SessionStore) -> None:
        if not isinstance(store, SessionStore):
            raise SessionConfigError(
                "store", store, "must be a pycupel.session.SessionStore (SQLiteStore, RedisStore)"
            )
        self._store = store

    def put(self, scope: str, ref: str, text: str) -> None:
        key = check_key("recall.scope", scope)
        if not isinstance(text, str):
            raise SessionConfigError("text", text, "must be a string")
        name = BLOB_PREFIX + check_key("ref", ref)
        self._store.put_blob(key, name, text.encode("utf-8", "surrogatepass"))

    def get(self, scope: str, ref: str) -> str | None:
        key = check_key("recall.scope", scope)
        data = self._store.get_blob(key, BLOB_PREFIX + check_key("ref", ref))
        return None if data is None else data.decode("utf-8", "surrogatepass")

    def __repr__(self) -> str:
        return f"BlobRecallStore({self._store!r})"
