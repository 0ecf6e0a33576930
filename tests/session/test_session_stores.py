"""The two shipped session stores keep the :class:`~pycupel.session.SessionStore` contract,
against a real SQLite file (shared by real processes) and a real Redis server."""

from __future__ import annotations

import multiprocessing
import pickle
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_workers import Gate, InTransactionStore, wait_for

from pycupel.errors import SessionConfigError, SessionStoreError
from pycupel.session import RedisStore, SessionStore, SQLiteStore

STORES = ["sqlite-memory", "sqlite-file", "redis"]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    if request.param == "sqlite-memory":
        yield SQLiteStore(":memory:")
    elif request.param == "sqlite-file":
        yield SQLiteStore(tmp_path / "sessions.db")
    else:
        url = request.getfixturevalue("redis_url")
        # A prefix of its own: the server may be shared.
        yield RedisStore(url, prefix=f"pycupel-test:{uuid.uuid4().hex}:")


def test_a_state_is_saved_over_the_version_it_was_loaded_at(store: SessionStore) -> None:
    assert isinstance(store, SessionStore)
    assert store.load("c") is None
    first = store.save("c", b"one", expected=None)
    assert first is not None
    assert store.save("c", b"not over an existing state", expected=None) is None
    loaded = store.load("c")
    assert loaded is not None
    assert (loaded.version, loaded.state) == (first, b"one")
    second = store.save("c", b"two", expected=first)
    assert second is not None
    assert second != first
    # The loser of a compare-and-set writes nothing.
    assert store.save("c", b"late", expected=first) is None
    loaded = store.load("c")
    assert loaded is not None
    assert (loaded.version, loaded.state) == (second, b"two")
    # Keys are independent.
    assert store.load("other") is None


def test_a_known_version_is_loaded_without_its_bytes(store: SessionStore) -> None:
    version = store.save("c", b"x" * 10_000, expected=None)
    unchanged = store.load("c", known=version)
    assert unchanged is not None
    assert (unchanged.version, unchanged.state) == (version, None)
    assert version is not None
    changed = store.load("c", known=version - 1)
    assert changed is not None
    assert changed.state == b"x" * 10_000


def test_a_deleted_key_starts_again_at_another_version(store: SessionStore) -> None:
    versions = []
    for _ in range(3):
        version = store.save("c", b"state", expected=None)
        assert version is not None
        versions.append(store.save("c", b"state 2", expected=version))
        store.delete("c")
        assert store.load("c") is None
    # A new key starts at a random version: a worker still holding an old one is never
    # told that nothing happened.
    assert len(set(versions)) == 3
    store.delete("never-saved")


def test_blobs_are_kept_by_name_and_deleted_with_the_key(store: SessionStore) -> None:
    assert store.get_blob("c", "original-1") is None
    store.put_blob("c", "original-1", b"\x00\x01 whole tool output")
    store.put_blob("c", "original-2", b"second")
    store.put_blob("other", "original-1", b"another conversation")
    assert store.get_blob("c", "original-1") == b"\x00\x01 whole tool output"
    store.put_blob("c", "original-1", b"overwritten")
    assert store.get_blob("c", "original-1") == b"overwritten"
    version = store.save("c", b"state", expected=None)
    assert version is not None
    store.delete("c")
    assert store.get_blob("c", "original-1") is None
    assert store.get_blob("c", "original-2") is None
    assert store.get_blob("other", "original-1") == b"another conversation"


def test_keys_names_and_data_are_checked(store: SessionStore) -> None:
    for bad in ["", 42, None, "x" * 1_025, "a\x00b"]:
        with pytest.raises(SessionConfigError, match="key"):
            store.load(bad)  # type: ignore[arg-type]
    with pytest.raises(SessionConfigError, match="name"):
        store.put_blob("c", "", b"x")
    with pytest.raises(SessionConfigError, match="state: must be bytes"):
        store.save("c", "text", expected=None)  # type: ignore[arg-type]
    assert store.load("c") is None


def test_a_pickled_store_reaches_the_same_data(store: SessionStore, tmp_path: Path) -> None:
    version = store.save("c", b"state", expected=None)
    copy = pickle.loads(pickle.dumps(store))
    loaded = copy.load("c")
    if isinstance(store, SQLiteStore) and store.path == ":memory:":
        assert loaded is None  # a database in memory is one per process
    else:
        assert loaded is not None
        assert (loaded.version, loaded.state) == (version, b"state")


def _increment(store: SessionStore, key: str, times: int) -> int:
    """Add 1 to a counter kept as the state, ``times`` times, by compare-and-set; returns
    how many saves were refused on the way."""
    refused = 0
    done = 0
    while done < times:
        found = store.load(key)
        count = int(found.state or b"0") if found is not None else 0
        expected = found.version if found is not None else None
        if store.save(key, str(count + 1).encode(), expected=expected) is None:
            refused += 1
        else:
            done += 1
    return refused


def test_threads_never_lose_an_update(store: SessionStore) -> None:
    threads = [threading.Thread(target=_increment, args=(store, "counter", 25)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = store.load("counter")
    assert found is not None
    assert found.state == b"150"


def _increment_in_process(path: str, times: int) -> None:
    _increment(SQLiteStore(path), "counter", times)


def test_processes_on_one_sqlite_file_never_lose_an_update(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_increment_in_process, args=(path, 40)) for _ in range(2)]
    for process in processes:
        process.start()
    _increment(SQLiteStore(path), "counter", 40)
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    found = SQLiteStore(path).load("counter")
    assert found is not None
    assert found.state == b"120"


def _save_and_stop(path: str, gate: Gate) -> None:
    store = InTransactionStore(path, gate)
    found = store.load("c")
    assert found is not None
    store.save("c", b"never committed", expected=found.version)


def test_a_writer_killed_inside_its_transaction_leaves_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "shared.db")
    store = SQLiteStore(path, timeout=10)
    version = store.save("c", b"committed", expected=None)
    gate = Gate(reached=str(tmp_path / "in-transaction"))
    process = multiprocessing.get_context("spawn").Process(target=_save_and_stop, args=(path, gate))
    process.start()
    wait_for(Path(gate.reached), alive=process.is_alive)
    # It holds the write lock: a read still answers (WAL), with the committed state.
    found = store.load("c")
    assert found is not None
    assert (found.version, found.state) == (version, b"committed")
    process.kill()
    process.join(10)
    # Its lock died with it; its write was never committed.
    after = store.save("c", b"next", expected=version)
    assert after is not None
    found = store.load("c")
    assert found is not None
    assert (found.version, found.state) == (after, b"next")


def test_sqlite_settings_and_failures(tmp_path: Path) -> None:
    for bad in [42, b"bytes.db", ""]:
        with pytest.raises(SessionConfigError, match="path"):
            SQLiteStore(bad)  # type: ignore[arg-type]
    with pytest.raises(SessionConfigError, match="timeout"):
        SQLiteStore(tmp_path / "x.db", timeout=0)
    store = SQLiteStore(tmp_path / "missing-folder" / "x.db")
    with pytest.raises(
        SessionStoreError, match=r"SQLiteStore\(.*\)\.load\(key='c'\) failed"
    ) as caught:
        store.load("c")
    assert (caught.value.operation, caught.value.key) == ("load", "c")
    assert caught.value.__cause__ is not None
    store.close()


def test_redis_settings_and_failures(redis_url: str) -> None:
    for field, arguments in [
        ("url", {"url": ""}),
        ("url", {"url": "http://localhost:6379"}),
        ("prefix", {"url": redis_url, "prefix": "a{b}"}),
        ("ttl", {"url": redis_url, "ttl": 0}),
        ("timeout", {"url": redis_url, "timeout": float("nan")}),
    ]:
        with pytest.raises(SessionConfigError, match=field):
            RedisStore(**arguments)  # type: ignore[arg-type]
    unreachable = RedisStore("redis://user:secret@127.0.0.1:1/0", timeout=2)
    with pytest.raises(SessionStoreError, match="failed") as caught:
        unreachable.save("c", b"x", expected=None)
    assert "secret" not in str(caught.value)
    assert caught.value.operation == "save"


def test_redis_ttl_expires_a_conversation(redis_url: str) -> None:
    import redis

    prefix = f"pycupel-test:{uuid.uuid4().hex}:"
    store = RedisStore(redis_url, prefix=prefix, ttl=30)
    store.put_blob("c", "original", b"x")
    store.save("c", b"state", expected=None)
    client = redis.Redis.from_url(redis_url)
    keys = sorted(key.decode() for key in client.keys(f"{prefix}*"))
    assert keys == [f"{prefix}{{c}}", f"{prefix}{{c}}:blobs"]
    for key in keys:
        assert 0 < client.pttl(key) <= 30_000
    client.close()
