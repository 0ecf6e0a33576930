"""Shared test configuration: where the conformance vectors live.

* The public Cupel vectors are read from ``$PYCUPEL_CONFORMANCE_DIR`` when set, else from
  ``<repo root>/../shared/cupel-conformance``; tests that need them are skipped (with the
  reason) when that folder does not exist. They are never copied into the repository.
* The project's own vectors are under ``tests/vectors/``.

A test that takes a ``public_vector`` or ``own_vector`` argument is run once per vector file,
with the file's path relative to its root as the test id.

* ``redis_url``: a Redis server for the session-store tests (``$PYCUPEL_REDIS_URL``, or one
  started for the test session when ``redis-server`` is installed; skipped otherwise).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
OWN_VECTORS_DIR = REPO_ROOT / "tests" / "vectors"
CONFORMANCE_DIR_ENV = "PYCUPEL_CONFORMANCE_DIR"


def public_vectors_dir() -> Path:
    """The folder of the public conformance vectors (it may not exist)."""
    override = os.environ.get(CONFORMANCE_DIR_ENV)
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "cupel-conformance"


def _missing_reason(path: Path) -> str:
    return f"public conformance vectors not found at {path} (set {CONFORMANCE_DIR_ENV})"


@pytest.fixture
def conformance_dir() -> Path:
    """The public vectors folder; skips the test when it is absent."""
    path = public_vectors_dir()
    if not path.is_dir():
        pytest.skip(_missing_reason(path))
    return path


def _vector_params(root: Path, missing_reason: str) -> list[object]:
    files = sorted(root.rglob("*.toml")) if root.is_dir() else []
    if not files:
        return [pytest.param(None, id="no-vectors", marks=pytest.mark.skip(reason=missing_reason))]
    return [pytest.param(path, id=path.relative_to(root).as_posix()) for path in files]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "public_vector" in metafunc.fixturenames:
        root = public_vectors_dir()
        metafunc.parametrize("public_vector", _vector_params(root, _missing_reason(root)))
    if "own_vector" in metafunc.fixturenames:
        metafunc.parametrize(
            "own_vector", _vector_params(OWN_VECTORS_DIR, f"no vectors under {OWN_VECTORS_DIR}")
        )


# --------------------------------------------------------------------------- hypothesis profiles
# "ci" (the default) keeps the suite fast and deterministic: hypothesis' usual 100 examples for
# tests that do not choose their own count, no deadline (a 2-core CI machine has noisy timings)
# and derandomised generation, so every run draws the same examples. "long" is for soak runs:
#     HYPOTHESIS_PROFILE=long python -m pytest tests/properties tests/fuzz
# The reliability suites take their counts from ``reliability_examples(n)``: n under "ci", the
# profile's 5,000 under "long".

from hypothesis import HealthCheck, settings  # noqa: E402

HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=(HealthCheck.too_slow,),
)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large),
)
settings.load_profile(HYPOTHESIS_PROFILE)


def reliability_examples(ci_examples: int) -> int:
    """Examples per property: ``ci_examples`` by default, the profile's count otherwise."""
    if HYPOTHESIS_PROFILE == "ci":
        return ci_examples
    return max(ci_examples, settings.default.max_examples)


# --------------------------------------------------------------------------- Redis

REDIS_URL_ENV = "PYCUPEL_REDIS_URL"
"""A Redis server for the session-store tests (``.ci/run`` starts one and sets it)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis server's URL: ``$PYCUPEL_REDIS_URL``, else a ``redis-server`` started on a free
    loopback port for the test session (no persistence) and stopped after it; the tests
    that need it are skipped, with the reason, when neither is available."""
    pytest.importorskip("redis", reason="the redis package is not installed (pycupel[redis])")
    url = os.environ.get(REDIS_URL_ENV)
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(f"no Redis server: set {REDIS_URL_ENV} or install redis-server")
    import redis

    folder = tmp_path_factory.mktemp("redis")
    port = _free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url, socket_timeout=1)
        deadline = time.monotonic() + 15
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"redis-server did not start on port {port}")
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
