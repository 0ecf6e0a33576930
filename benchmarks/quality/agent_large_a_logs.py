"""Log outputs for ``agent_large_a``: pytest, jest, cargo test, GitHub Actions, service logs.

Each style writes its own syntax around the same stream of log messages: mostly background
messages (requests, batches, cache and pool activity, retries), a few warnings and errors
with stack traces, and mentions from the world (the fact's topic for other subjects, other
topics for the fact's subject). The fact, when the output holds it, is the first log message
written after its character offset is reached.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from random import Random

from agent_large_a_facts import NOUNS, VERBS, Lines, Mention, Output, World, pick, rand

_INFO = (
    "GET /v1/{res}/{id} 200 {ms}ms",
    "POST /v2/{res} 201 {ms}ms request_id={rid}",
    "processed batch {batch} ({n} events) in {ms}ms",
    "cache hit ratio {pct}% over {n} lookups",
    "scheduled job {job} next_run=+{s}s",
    "acquired lock {lock} after {ms}ms",
    "worker {w} heartbeat ok lag={ms}ms",
    "flushed {n} metrics to statsd",
    "migrating {table}: {n} rows copied",
    "committed offset {id} on partition {p} of {stream}",
    "consumer group {svc} rebalanced: {p} partitions assigned",
    "rendered {n} {res} in {ms}ms",
    "token refreshed for {svc} (expires in {s}s)",
    "evicted {n} keys from the {svc} cache",
    "queue depth {n} for {svc}",
    "validated {n} {res} payloads, {k} rejected",
    "{op} finished for account {id} in {ms}ms",
    "loaded {n} {res} from {table} (page {k})",
)
_DEBUG = (
    "SELECT id, status FROM {table} WHERE account_id = ${k} -- {ms}ms",
    "span {rid} {op} duration={ms}ms",
    "cache miss {res}:{id}",
    "retry budget for {svc}: {k} left",
    "payload size {n} bytes for {res}/{id}",
    "gc pause {ms}ms heap={n}MB",
    "pool stats {svc}: in_use={k} idle={p} waiting=0",
)
_WARN = (
    "slow query on {table} took {big}ms",
    "retrying {op} (attempt {k}/5) after connection reset",
    "deprecated setting '{res}_mode' still read by {svc}",
    "circuit breaker half-open for {svc}",
    "clock skew of {ms}ms detected on {svc}",
)
_ERROR = (
    "failed to publish event {rid} to {stream}: broker not available",
    "unhandled exception in {op}",
    "{svc} responded 503 for /v1/{res}/{id}",
    "giving up on {op} after 5 attempts",
)


class Messages:
    """Background log messages and the world's mentions, in one stream."""

    def __init__(self, world: World, lines: Lines, rate: float) -> None:
        self.world = world
        self.rng = world.rng
        self.lines = lines
        self.rate = rate  # share of messages that are mentions
        rng = self.rng
        fields: dict[str, Callable[[], str]] = {
            "res": lambda: pick(rng, NOUNS),
            "id": lambda: str(rand(rng, 1000, 9_999_999)),
            "ms": lambda: str(rand(rng, 1, 900)),
            "big": lambda: str(rand(rng, 1000, 30_000)),
            "n": lambda: str(rand(rng, 1, 5000)),
            "k": lambda: str(rand(rng, 1, 9)),
            "p": lambda: str(rand(rng, 0, 31)),
            "s": lambda: str(rand(rng, 5, 3600)),
            "pct": lambda: str(rand(rng, 40, 99)),
            "rid": lambda: f"{rng.getrandbits(40):010x}",
            "batch": lambda: f"b-{rng.getrandbits(24):06x}",
            "job": lambda: f"{world.system()}.{pick(rng, VERBS)}",
            "lock": lambda: f"{world.table_name()}:{rand(rng, 1, 999)}",
            "w": lambda: str(rand(rng, 0, 15)),
            "table": world.table_name,
            "stream": lambda: f"{world.system()}.{pick(rng, NOUNS)}.v{rand(rng, 1, 3)}",
            "svc": world.slug,
            "op": world.func_name,
        }
        self.fields = fields
        self.compiled: dict[str, list[str]] = {}

    def fill(self, template: str) -> str:
        parts = self.compiled.get(template)
        if parts is None:
            parts = self.compiled[template] = re.split(r"\{(\w+)\}", template)
        out = []
        for index, part in enumerate(parts):
            out.append(self.fields[part]() if index % 2 else part)
        return "".join(out)

    def next(self) -> tuple[str, str]:
        """(level, message): the fact when due, else a mention or a background message."""
        rng = self.rng
        if self.lines.due():
            message, needle = self.world.fact.log_message(rng)
            self.lines.needle = needle
            return _level(self.world.fact), message
        roll = rng.random()
        if roll < self.rate:
            held = self.lines.fact_at is not None
            mention = self.world.distractor() if held else self.world.background()
            return _level(mention), mention.log_message(rng)[0]
        if roll < 0.25:
            return "DEBUG", self.fill(pick(rng, _DEBUG))
        if roll < 0.93:
            return "INFO", self.fill(pick(rng, _INFO))
        if roll < 0.98:
            return "WARNING", self.fill(pick(rng, _WARN))
        return "ERROR", self.fill(pick(rng, _ERROR))


def _level(mention: Mention) -> str:
    return "ERROR" if mention.topic.name == "error_code" else "INFO"


class Clock:
    """Timestamps moving forward by a few milliseconds a line."""

    def __init__(self, rng: Random) -> None:
        self.rng = rng
        self.ms = (1_704_067_200 + rand(rng, 0, 300 * 86_400)) * 1000  # a day of 2024
        self._second = -1
        self._prefix = ""

    def tick(self, most: int = 40) -> None:
        self.ms += rand(self.rng, 0, most)

    def _base(self, sep: str) -> str:
        second = self.ms // 1000
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return self._prefix if sep == "T" else self._prefix.replace("T", sep)

    def iso(self, digits: int = 3, sep: str = "T") -> str:
        fraction = f"{self.ms % 1000:03d}" + "0" * (digits - 3) if digits >= 3 else ""
        return f"{self._base(sep)}.{fraction}Z" if digits else f"{self._base(sep)}Z"


# Stack traces: never the fact, always in the same syntax as the runner around them.

_PY_ERRORS = (
    ("ConnectionResetError", "[Errno 104] Connection reset by peer"),
    ("TimeoutError", "timed out waiting for a connection from the pool"),
    ("KeyError", "'account_id'"),
    ("sqlalchemy.exc.OperationalError", "(psycopg.OperationalError) server closed the connection"),
    ("ValueError", "invalid literal for int() with base 10: 'null'"),
    ("httpx.ReadTimeout", "timed out"),
    ("json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)"),
)
_PY_STATEMENTS = (
    "return await self._client.send(request, timeout=self._timeout)",
    "rows = await session.execute(query)",
    "payload = json.loads(body)",
    "account = self._accounts[event['account_id']]",
    "result = handler(message)",
    "conn = await self._pool.acquire()",
    "return self._call(method, url, **kwargs)",
    "batch = next(iterator)",
)
_LIBS = (
    ("httpx/_client.py", "send"),
    ("sqlalchemy/engine/base.py", "_execute_context"),
    ("asyncpg/pool.py", "acquire"),
    ("anyio/_backends/_asyncio.py", "run"),
    ("celery/app/trace.py", "trace_task"),
)


def python_traceback(world: World) -> list[str]:
    rng = world.rng
    lines = ["Traceback (most recent call last):"]
    for _ in range(rand(rng, 2, 5)):
        if rng.random() < 0.65:
            system, module = world.module().split(".")
            path = f"/app/src/{system}/{module}.py"
            where = world.func_name()
        else:
            lib, where = pick(rng, _LIBS)
            path = f"/app/.venv/lib/python3.11/site-packages/{lib}"
        lines.append(f'  File "{path}", line {rand(rng, 12, 900)}, in {where}')
        lines.append(f"    {pick(rng, _PY_STATEMENTS)}")
    name, text = pick(rng, _PY_ERRORS)
    lines.append(f"{name}: {text}")
    return lines


def js_stack(world: World) -> list[str]:
    rng = world.rng
    head = pick(
        rng,
        (
            "Error: connect ECONNREFUSED 127.0.0.1:5432",
            "TypeError: Cannot read properties of undefined (reading 'amount')",
            "Error: Request failed with status code 503",
            "AbortError: The operation was aborted.",
        ),
    )
    lines = [head]
    for _ in range(rand(rng, 3, 7)):
        func = world.func_name().title().replace("_", "")
        func = func[0].lower() + func[1:]
        path = f"src/{world.system()}/{pick(rng, ('client', 'service', 'handlers', 'db'))}.ts"
        lines.append(f"    at {func} ({path}:{rand(rng, 5, 400)}:{rand(rng, 3, 40)})")
    lines.append("    at processTicksAndRejections (node:internal/process/task_queues:95:5)")
    return lines


def rust_panic(world: World, test: str) -> list[str]:
    rng = world.rng
    crate = world.system()
    return [
        f"thread '{test}' panicked at src/{pick(rng, ('cursor', 'pool', 'ledger', 'batch'))}"
        f".rs:{rand(rng, 20, 700)}:{rand(rng, 5, 30)}:",
        "assertion `left == right` failed",
        f"  left: {pick(rng, ('503', 'None', '0', 'Err(Timeout)'))}",
        f" right: {pick(rng, ('202', 'Some(1)', '3', 'Ok(())'))}",
        "stack backtrace:",
        "   0: rust_begin_unwind",
        "   1: core::panicking::panic_fmt",
        "   2: core::panicking::assert_failed_inner",
        f"   3: {crate}::tests::{test.rsplit('::', 1)[-1]}",
        "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
    ]


# Runners.


def pytest_log(world: World, chars: int, fact_at: float | None) -> Output:
    """``pytest -v`` with live logging: one line per test, log records between them, the
    failures' tracebacks and captured logs, the short summary."""
    rng = world.rng
    out = Lines(chars, fact_at)
    messages = Messages(world, out, 0.08 if fact_at is not None else 0.03)
    home = world.home
    target = f"tests/{home}" if rng.random() < 0.6 else "tests"
    out.extend(
        [
            "=" * 29 + " test session starts " + "=" * 30,
            "platform linux -- Python 3.11.9, pytest-8.2.1, pluggy-1.5.0",
            f"rootdir: /home/ci/{home}-platform",
            "configfile: pyproject.toml",
            "plugins: asyncio-0.23.7, cov-5.0.0, xdist-3.6.1, timeout-2.3.1",
            f"collected {max(12, chars // 70)} items",
            "",
        ]
    )
    total = max(12, chars // 70)
    done = skipped = 0
    failed: list[str] = []

    def record() -> str:
        level, message = messages.next()
        logger = world.module()
        where = f"{logger.split('.')[1]}.py:{rand(rng, 10, 800)}"
        return f"{level:<8} {logger}:{where} {message}"

    tail = 900
    while out.room(tail) or out.pending():
        module = f"tests/{world.system()}/test_{pick(rng, NOUNS).replace('-', '_')}.py"
        for _ in range(rand(rng, 3, 12)):
            done += 1
            test = f"{module}::{world.test_name()}"
            status = "PASSED" if rng.random() < 0.96 else pick(rng, ("SKIPPED", "FAILED"))
            if status == "FAILED":
                failed.append(test)
            skipped += status == "SKIPPED"
            percent = f"[{min(99, done * 100 // total):3d}%]"
            if rng.random() < 0.3 or out.due():
                out.add(test)
                out.add("-" * 32 + " live log call " + "-" * 33)
                out.extend([record() for _ in range(rand(rng, 1, 5))])
                out.add(f"{status:<73}{percent}")
            else:
                out.add(f"{test} {status:<{max(8, 80 - len(test))}}{percent}")
    out.add("")
    out.add("=" * 35 + " FAILURES " + "=" * 35)
    for test in failed[: 3 if chars > 20_000 else 1] or [
        f"tests/{home}/test_{home}.py::{world.test_name()}"
    ]:
        name = test.split("::")[1]
        out.add(f"{'_' * 20} {name} {'_' * 20}")
        out.extend(python_traceback(world))
        out.add("-" * 30 + " Captured log call " + "-" * 31)
        out.extend([record() for _ in range(rand(rng, 2, 4))])
    out.add("=" * 26 + " short test summary info " + "=" * 27)
    for test in failed[:8]:
        out.add(f"FAILED {test} - AssertionError")
    out.lines[5] = f"collected {done} items"  # known once the run is written
    seconds = rand(rng, 30, 900) + rng.random()
    passed = done - len(failed) - skipped
    out.add(
        f"{'=' * 10} {len(failed)} failed, {passed} passed, {skipped} skipped "
        f"in {seconds:.2f}s {'=' * 10}"
    )
    command = f"python -m pytest -v -o log_cli=true {target}"
    return Output(
        out.text(), "log", "run_command", {"command": command}, "the test run", out.needle
    )


def jest_log(world: World, chars: int, fact_at: float | None) -> Output:
    """``jest --verbose``: suites, one line per test, console blocks with their call site,
    failure reports with a code frame and a stack, the totals."""
    rng = world.rng
    out = Lines(chars, fact_at)
    messages = Messages(world, out, 0.08 if fact_at is not None else 0.03)
    suites = tests = failed = failed_suites = 0
    out.add(f"> {world.home}-web@{world.version()} test")
    out.add("> jest --ci --verbose")
    out.add("")
    tail = 600
    while out.room(tail) or out.pending():
        suites += 1
        path = f"src/{world.system()}/{world.func_name().replace('_', '-')}.test.ts"
        bad = rng.random() < 0.08
        failed_suites += bad
        out.add(f"{'FAIL' if bad else 'PASS'} {path} ({rand(rng, 1, 30)}.{rand(rng, 100, 999)} s)")
        out.add(f"  {world.func_name().title().replace('_', '')}")
        for position in range(rand(rng, 3, 14)):
            tests += 1
            title = world.test_name()[5:].replace("_", " ")
            mark = "✓"
            if bad and (position == 0 or rng.random() < 0.3):
                mark, failed = "✕", failed + 1
            out.add(f"    {mark} {title} ({rand(rng, 1, 400)} ms)")
        for _ in range(rand(rng, 0, 4) if not out.due() else 1):
            level, message = messages.next()
            method = {"ERROR": "error", "WARNING": "warn", "DEBUG": "debug"}.get(level, "log")
            out.add("")
            out.add(f"  console.{method}")
            out.add(f"    [{world.slug()}] {message}")
            out.add("")
            out.add(f"      at {method} (src/{world.system()}/logger.ts:{rand(rng, 10, 90)}:11)")
        if bad:
            out.add("")
            title = world.test_name()[5:].replace("_", " ")
            out.add(f"  ● {world.func_name().title().replace('_', '')} › {title}")
            out.add("")
            out.add("    expect(received).toBe(expected) // Object.is equality")
            out.add("")
            out.add(f"    Expected: {rand(rng, 200, 204)}")
            out.add(f"    Received: {pick(rng, (500, 503, 404, 409))}")
            out.add("")
            out.extend("    " + line for line in js_stack(world))
        out.add("")
    out.add(f"Test Suites: {failed_suites} failed, {suites - failed_suites} passed, {suites} total")
    out.add(f"Tests:       {failed} failed, {tests - failed} passed, {tests} total")
    out.add("Snapshots:   0 total")
    out.add(f"Time:        {rand(rng, 20, 400)}.{rand(rng, 100, 999)} s")
    out.add("Ran all test suites.")
    return Output(
        out.text(), "log", "run_command", {"command": "npx jest --ci --verbose"}, "the jest run",
        out.needle,
    )  # fmt: skip


def cargo_log(world: World, chars: int, fact_at: float | None) -> Output:
    """``cargo test -- --nocapture``: compile lines, test binaries, ``tracing`` output between
    the test lines, a panic with its backtrace, the results."""
    rng = world.rng
    out = Lines(chars, fact_at)
    messages = Messages(world, out, 0.08 if fact_at is not None else 0.03)
    clock = Clock(rng)
    crate = f"{world.home}-core"
    for dep in rng.sample(
        ("tokio", "serde", "sqlx", "tracing", "hyper", "reqwest", "axum", "prost", "uuid"), 5
    ):
        out.add(f"   Compiling {dep} v{rand(rng, 0, 2)}.{rand(rng, 1, 40)}.{rand(rng, 0, 20)}")
    out.add(f"   Compiling {crate} v{world.version()} (/build/{crate})")
    out.add(
        f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {rand(rng, 20, 240)}"
        f".{rand(rng, 10, 99)}s"
    )
    passed = failed = 0
    tail = 500
    while out.room(tail) or out.pending():
        module = f"{world.system()}::{pick(rng, ('cursor', 'pool', 'ledger', 'batch', 'api'))}"
        out.add(
            f"     Running unittests src/lib.rs (target/debug/deps/{crate.replace('-', '_')}"
            f"-{rng.getrandbits(64):016x})"
        )
        count = rand(rng, 8, 40)
        out.add(f"\nrunning {count} tests")
        for _ in range(count):
            test = f"{module}::tests::{world.test_name()[5:]}"
            for _ in range(rand(rng, 0, 3) if not out.due() else 1):
                level, message = messages.next()
                clock.tick(200)
                target = f"{crate.replace('-', '_')}::{module.split('::')[1]}"
                out.add(f"{clock.iso(6)} {level.replace('WARNING', 'WARN'):>5} {target}: {message}")
            ok = rng.random() < 0.985
            passed, failed = passed + ok, failed + (not ok)
            out.add(f"test {test} ... {'ok' if ok else 'FAILED'}")
            if not ok:
                out.extend(rust_panic(world, test))
    out.add("")
    out.add(
        f"test result: {'FAILED' if failed else 'ok'}. {passed} passed; {failed} failed; "
        "0 ignored; 0 measured; 0 filtered out; "
        f"finished in {rand(rng, 2, 90)}.{rand(rng, 10, 99)}s"
    )
    out.add("")
    if failed:
        out.add(f"error: test failed, to rerun pass `-p {crate} --lib`")
    return Output(
        out.text(), "log", "run_command", {"command": "cargo test --workspace -- --nocapture"},
        "the cargo test output", out.needle,
    )  # fmt: skip


def actions_log(world: World, chars: int, fact_at: float | None) -> Output:
    """A GitHub Actions job log: every line stamped, steps in groups, the services' container
    logs during the integration tests, warnings and the failing step's error."""
    rng = world.rng
    out = Lines(chars, fact_at)
    messages = Messages(world, out, 0.08 if fact_at is not None else 0.03)
    clock = Clock(rng)

    def stamp(text: str) -> None:
        clock.tick(120)
        out.add(f"{clock.iso(7)} {text}")

    stamp("Requested labels: ubuntu-latest")
    stamp(f"Job defined at: acme/{world.home}-platform/.github/workflows/ci.yml@refs/heads/main")
    for step in ("actions/checkout@v4", "actions/setup-python@v5", "docker/setup-buildx-action@v3"):
        stamp(f"##[group]Run {step}")
        stamp("with:")
        stamp(f"  fetch-depth: {rand(rng, 0, 1)}")
        stamp("##[endgroup]")
    stamp("##[group]Run docker compose up -d && make integration")
    services = sorted({world.slug() for _ in range(6)})
    tail = 400
    while out.room(tail) or out.pending():
        roll = rng.random()
        if roll < 0.8 or out.due():
            level, message = messages.next()
            service = pick(rng, services)
            stamp(f"{service}-1  | {clock.iso(3, ' ')} {level:<7} [{world.module()}] {message}")
        elif roll < 0.95:
            done = rand(rng, 1, 99)
            stamp(
                f"tests/{world.system()}/test_{pick(rng, NOUNS).replace('-', '_')}.py "
                f"{'.' * rand(rng, 5, 40)}{'F' if rng.random() < 0.1 else ''} [{done:3d}%]"
            )
        elif roll < 0.98:
            stamp(f"##[warning]{pick(rng, _WARN_ACTIONS)}")
        else:
            service = pick(rng, services)
            for line in python_traceback(world):
                stamp(f"{service}-1  | {line}")
    stamp("##[error]Process completed with exit code 1.")
    stamp("##[endgroup]")
    stamp("Post job cleanup.")
    run_id = rand(rng, 8_000_000_000, 9_999_999_999)
    job = pick(rng, ("integration (3.11)", "test", "e2e", "integration"))
    return Output(
        out.text(), "log", "get_ci_job_log", {"run_id": run_id, "job": job}, "the CI job log",
        out.needle,
    )  # fmt: skip


_WARN_ACTIONS = (
    "Node.js 16 actions are deprecated. Please update the following actions to use Node.js 20.",
    "The `set-output` command is deprecated and will be disabled soon.",
    "Cache save failed: the cache already exists for this key.",
    "Retrying request after a 502 from the artifact service.",
)


def service_log(world: World, chars: int, fact_at: float | None) -> Output:
    """``kubectl logs`` of one deployment: plain ``level [logger] message`` lines or JSON
    lines, with Python tracebacks under the errors."""
    rng = world.rng
    out = Lines(chars, fact_at)
    messages = Messages(world, out, 0.06 if fact_at is not None else 0.03)
    clock = Clock(rng)
    json_lines = rng.random() < 0.4
    deployment = world.slug()
    while out.room() or out.pending():
        level, message = messages.next()
        clock.tick(900)
        logger = world.module()
        if json_lines:
            text = message.replace("\\", "\\\\").replace('"', '\\"')
            out.add(
                f'{{"ts":"{clock.iso(3)}","level":"{level.lower()}","logger":"{logger}",'
                f'"pod":"{deployment}-{rand(rng, 1, 4)}","msg":"{text}"}}'
            )
        else:
            out.add(f"{clock.iso(3)} {level:<7} [{logger}] {message}")
            if level == "ERROR" and rng.random() < 0.5:
                out.extend(python_traceback(world))
    command = f"kubectl logs deploy/{deployment} --since=6h -n {world.home}"
    return Output(
        out.text(), "log", "run_command", {"command": command}, f"the {deployment} logs", out.needle
    )


LOG_STYLES = (pytest_log, jest_log, cargo_log, actions_log, service_log)


def log_output(world: World, chars: int, fact_at: float | None) -> Output:
    return pick(world.rng, LOG_STYLES)(world, chars, fact_at)
