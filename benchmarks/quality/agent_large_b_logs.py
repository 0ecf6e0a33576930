"""Logs of ``agent_large_b`` read by ``tail_logs``: syslog, nginx access logs, JSON lines and
Java service logs with stack traces. Records get increasing timestamps once laid out. With
``spec.plant`` one line (or one stack trace) holds the fact; the other records are lines of
the same log, some about the same service, route or class with other values."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent_large_b_world import (
    KLOG,
    STAMP,
    TASKS,
    Avoid,
    Output,
    Spec,
    World,
    group_of,
    hexid,
    layout,
    plant,
    stamp,
)

_OPS = (
    "ledger sync", "token refresh", "webhook delivery", "invoice render", "stock reservation",
    "payout batch", "search reindex", "cache warmup", "tax lookup", "fraud scoring",
    "image upload", "refund capture", "session flush", "price import",
)  # fmt: skip
_REASONS = (
    "upstream timeout after 30s", "connection reset by peer", "context deadline exceeded",
    "503 from upstream", "too many open files", "deadlock detected", "no healthy upstream",
    "TLS handshake timeout", "quota exceeded",
)  # fmt: skip
_USERS = ("deploy", "ubuntu", "ops-bot", "ansible", "backup", "jenkins")
_UNITS = ("node-exporter", "containerd", "kubelet", "logrotate", "fluent-bit", "chronyd")


def _ip(rng: random.Random) -> str:
    first = rng.choice((10, 172, 192))
    return f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def _syslog_time(moment: datetime) -> str:
    return f"{moment:%b} {moment.day:>2} {moment:%H:%M:%S}"


def _app_error(svc: str, pid: int, code: str, op: str, reason: str) -> str:
    return f"{svc}[{pid}]: ERROR {code} {op} failed: {reason}"


def _syslog_line(rng: random.Random, w: World) -> str:
    host = w.host()
    svc, pid = w.service(), rng.randint(300, 65_000)
    user, ip = rng.choice(_USERS), _ip(rng)
    roll = rng.random()
    if roll < 0.32:
        resource = rng.choice(("items", "status", "batch", "search"))
        status = rng.choice((200, 200, 200, 201, 204, 404, 500))
        message = (
            f"{svc}[{pid}]: INFO request completed route=/{group_of(svc)}/v{rng.randint(1, 3)}/"
            f"{resource} status={status} dur_ms={rng.randint(1, 4_000)}"
        )
    elif roll < 0.42:
        message = (
            f"{svc}[{pid}]: WARN retrying {rng.choice(_OPS)} "
            f"(attempt {rng.randint(1, 5)}/5) after {rng.choice(_REASONS)}"
        )
    elif roll < 0.52:
        code = f"E-{rng.randint(10_000, 49_999)}"
        message = _app_error(svc, pid, code, rng.choice(_OPS), rng.choice(_REASONS))
    elif roll < 0.62:
        unit = rng.choice(_UNITS)
        message = rng.choice(
            (
                f"systemd[1]: Started {unit}.service.",
                f"systemd[1]: {unit}.service: Deactivated successfully.",
                f"systemd[1]: {unit}.service: Consumed {rng.uniform(0.1, 90):.3f}s CPU time.",
            )
        )
    elif roll < 0.72:
        port = rng.randint(40_000, 65_000)
        message = rng.choice(
            (
                f"sshd[{pid}]: Accepted publickey for {user} from {ip} port {port} ssh2",
                f"sshd[{pid}]: Disconnected from user {user} {ip} port {port}",
                f"sshd[{pid}]: pam_unix(sshd:session): session opened for user {user}(uid="
                f"{rng.randint(1_000, 1_100)}) by (uid=0)",
            )
        )
    elif roll < 0.8:
        message = (
            f"CRON[{pid}]: ({user}) CMD (/usr/local/bin/{rng.choice(TASKS)}.sh >/dev/null 2>&1)"
        )
    elif roll < 0.9:
        up = f"{rng.uniform(1e3, 9e6):.6f}"
        message = rng.choice(
            (
                f"kernel: [{up}] Out of memory: Killed process {rng.randint(300, 65_000)} ({svc}) "
                f"total-vm:{rng.randint(10**5, 10**7)}kB, anon-rss:{rng.randint(10**5, 10**7)}kB, "
                f"file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:{rng.randint(100, 9_000)}kB "
                f"oom_score_adj:{rng.choice((-997, 0, 999))}",
                f"kernel: [{up}] TCP: request_sock_TCP: Possible SYN flooding on port "
                f"{rng.randint(1_024, 32_000)}. Sending cookies.",
                f"kernel: [{up}] ena 0000:00:0{rng.randint(5, 8)}.0 eth{rng.randint(0, 1)}: "
                "Found a Tx that wasn't completed on time",
            )
        )
    else:
        message = (
            f'kubelet[{pid}]: I{KLOG} {pid} prober.go:107] "Probe failed" probeType="Readiness" '
            f'pod="{w.namespace(svc)}/{svc}-{hexid(rng, 9)}" containerName="{svc}"'
        )
    return f"{STAMP} {host} {message}"


def _syslog_fact(rng: random.Random, w: World) -> tuple[str, str, str, tuple[str, ...]]:
    host, svc, pid = w.host(), w.service(), rng.randint(300, 65_000)
    topic = rng.random()
    if topic < 0.55:
        code, op = f"E-{rng.randint(10_000, 49_999)}", rng.choice(_OPS)
        line = _app_error(svc, pid, code, op, rng.choice(_REASONS))
        question = rng.choice(
            (
                f"Which error code did {svc} log when the {op} failed?",
                f"What was the error code of the failed {op} in {svc}'s logs?",
            )
        )
        return f"{STAMP} {host} {line}", code, question, (f" {svc}[", f" {op} failed:")
    if topic < 0.8:
        victim = rng.randint(300, 65_000)
        line = (
            f"kernel: [{rng.uniform(1e3, 9e6):.6f}] Out of memory: Killed process {victim} ({svc}) "
            f"total-vm:{rng.randint(10**5, 10**7)}kB, anon-rss:{rng.randint(10**5, 10**7)}kB, "
            "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:"
            f"{rng.randint(100, 9_000)}kB oom_score_adj:0"
        )
        question = f"What was the PID of the {svc} process the OOM killer killed on {host}?"
        ident = (f" {host} kernel:", f"({svc})", "Out of memory")
        return f"{STAMP} {host} {line}", f"Killed process {victim} ({svc})", question, ident
    user, ip, port = rng.choice(_USERS), _ip(rng), rng.randint(40_000, 65_000)
    line = f"sshd[{pid}]: Accepted publickey for {user} from {ip} port {port} ssh2"
    question = f"From which IP address did {user} log in to {host} over SSH?"
    return (
        f"{STAMP} {host} {line}",
        f"from {ip} port",
        question,
        (f" {host} sshd", f"for {user} from"),
    )


_ROUTES = (
    ("GET", "/v2/catalog/items"), ("GET", "/v2/catalog/search"), ("POST", "/v2/checkout/sessions"),
    ("POST", "/v1/payments/authorize"), ("POST", "/v1/payments/capture"), ("GET", "/v1/orders"),
    ("PUT", "/v1/media/uploads"), ("POST", "/v1/refunds"), ("GET", "/v1/tenants/usage"),
    ("POST", "/v2/webhooks/deliveries"), ("GET", "/healthz"), ("GET", "/v1/prices/quote"),
    ("DELETE", "/v1/sessions/current"), ("PATCH", "/v1/accounts/profile"),
    ("POST", "/v1/auth/token"), ("GET", "/v3/shipping/rates"), ("POST", "/v1/invoices/render"),
)  # fmt: skip
_AGENTS = (
    "okhttp/4.12.0", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/122.0",
    "python-requests/2.31.0", "Go-http-client/2.0", "kube-probe/1.29", "curl/8.5.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
)  # fmt: skip
_RARE = (401, 409, 413, 422, 429, 499, 502, 503, 504)


def _access_line(rng: random.Random, route: tuple[str, str], status: int, rid: str, rt: str) -> str:
    method, path = route
    size = 0 if status in (204, 304) else rng.randint(40, 90_000)
    upstream = f"10.{rng.randint(64, 127)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}:8080"
    return (
        f'{_ip(rng)} - - [{STAMP}] "{method} {path} HTTP/1.1" {status} {size} "-" '
        f'"{rng.choice(_AGENTS)}" rt={rt} uct={rng.uniform(0, 0.01):.3f} upstream={upstream} '
        f"req_id={rid}"
    )


def _status(rng: random.Random) -> int:
    return rng.choice((200,) * 12 + (201, 204, 304, 301, 404, 404) + _RARE)


def _rt(rng: random.Random) -> str:
    return f"{rng.expovariate(1 / 0.25):.3f}"


def _event(rng: random.Random, w: World) -> dict[str, Any]:
    base: dict[str, Any] = {"ts": STAMP, "service": w.service(), "region": w.region()}
    roll = rng.random()
    if roll < 0.45:
        base |= {"level": "info", "msg": "request served",
                 "route": rng.choice(_ROUTES)[1], "status": _status(rng),
                 "duration_ms": int(rng.expovariate(1 / 120)) + 1}  # fmt: skip
    elif roll < 0.6:
        shard = w.shard()
        base |= {"level": "warn", "msg": "slow query", "db": shard.rsplit("-", 1)[0],
                 "shard": shard, "duration_ms": rng.randint(1_000, 60_000),
                 "query_id": f"q-{hexid(rng, 10)}", "rows": rng.randint(0, 10**6)}  # fmt: skip
    elif roll < 0.72:
        base |= {"level": "info", "msg": "job finished",
                 "job": f"{group_of(w.service())}-{rng.choice(TASKS)}",
                 "rows_processed": rng.randint(0, 5 * 10**6),
                 "duration_s": rng.randint(1, 9_000), "run_id": hexid(rng, 12)}  # fmt: skip
    elif roll < 0.86:
        base |= {"level": "error", "msg": "upstream error", "upstream": w.service(),
                 "status": rng.choice(_RARE), "attempt": rng.randint(1, 5)}  # fmt: skip
    else:
        base |= {"level": "debug", "msg": "cache stats", "hit_ratio": round(rng.random(), 3),
                 "evictions": rng.randint(0, 90_000)}  # fmt: skip
    base["trace_id"] = hexid(rng, 32)
    return base


def _jsonl_fact(rng: random.Random, w: World) -> tuple[str, str, str, tuple[str, ...]]:
    event = _event(rng, w)
    while event["msg"] not in ("slow query", "job finished"):
        event = _event(rng, w)
    line = json.dumps(event)
    if event["msg"] == "slow query":
        shard = event["shard"]
        needle = f'"duration_ms": {event["duration_ms"]}'
        question = rng.choice(
            (
                f"How long did the slow query on shard {shard} take?",
                f"What duration was logged for the slow query against {shard}?",
            )
        )
        return line, needle, question, (f'"shard": "{shard}"', '"msg": "slow query"')
    job, region = event["job"], event["region"]
    needle = f'"rows_processed": {event["rows_processed"]}'
    question = f"How many rows did the {job} job process in {region}?"
    ident = (f'"job": "{job}"', f'"region": "{region}"', '"msg": "job finished"')
    return line, needle, question, ident


# --- Java service logs ---------------------------------------------------------------------

_ENTITIES = ("Ledger", "Order", "Refund", "Invoice", "Payout", "Session", "Tenant", "Price",
             "Stock", "Shipment", "Webhook", "Token")  # fmt: skip
_ROLES = ("Service", "Controller", "Repository", "Client", "Reconciler", "Processor",
          "Handler", "Scheduler", "Mapper", "Validator")  # fmt: skip
_METHODS = ("process", "reconcile", "handle", "apply", "fetch", "save", "validate", "publish",
            "refresh", "render", "lookup", "capture")  # fmt: skip
_EXCEPTIONS = (
    "java.lang.IllegalStateException", "java.lang.NullPointerException",
    "java.util.concurrent.TimeoutException", "java.lang.IllegalArgumentException",
    "org.springframework.dao.DataIntegrityViolationException", "java.io.UncheckedIOException",
    "com.acme.common.errors.UpstreamUnavailableException",
)  # fmt: skip
_FRAMEWORK = (
    "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:184)",
    "org.springframework.transaction.interceptor.TransactionInterceptor.invoke(TransactionInterceptor.java:119)",
    "org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept(CglibAopProxy.java:765)",
    "org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885)",
    "org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)",
    "org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:166)",
    "org.apache.tomcat.util.net.NioEndpoint$SocketProcessor.doRun(NioEndpoint.java:1744)",
    "com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)",
    "org.hibernate.engine.jdbc.spi.SqlExceptionHelper.convert(SqlExceptionHelper.java:113)",
    "io.netty.channel.AbstractChannelHandlerContext.invokeChannelRead(AbstractChannelHandlerContext.java:444)",
    "reactor.core.publisher.MonoFlatMap$FlatMapMain.onNext(MonoFlatMap.java:132)",
    "java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1144)",
    "java.base/java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:642)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
)  # fmt: skip
_CAUSES = (
    "java.net.SocketTimeoutException: Read timed out",
    "org.postgresql.util.PSQLException: ERROR: deadlock detected",
    "java.net.ConnectException: Connection refused",
    "org.postgresql.util.PSQLException: FATAL: remaining connection slots are reserved",
    "io.lettuce.core.RedisCommandTimeoutException: Command timed out after 2 second(s)",
)  # fmt: skip
_TABLES = ("refunds", "payouts", "ledger_entries", "invoices", "sessions", "webhooks", "orders")
_COLUMNS = ("external_ref", "idempotency_key", "tenant_id_number", "batch_id", "period_key")


def _frame(rng: random.Random, group: str) -> tuple[str, str, str]:
    name = rng.choice(_ENTITIES) + rng.choice(_ROLES)
    layer = rng.choice(("service", "api", "repository", "client", "jobs"))
    return f"com.acme.{group}.{layer}.{name}", name, rng.choice(_METHODS)


def _trace(
    rng: random.Random, svc: str, exc: str, top: tuple[str, str, str, int], *, op: str, cause: str
) -> str:
    """An ERROR line and its stack trace: ``exc`` thrown at ``top`` (class, simple name,
    method, line) while ``op`` failed, caused by ``cause``."""
    message = f"{op} failed"
    group = group_of(svc).replace("-", "")
    cls, name, method, line = top
    frames = [f"\tat {cls}.{method}({name}.java:{line})"]
    for _ in range(rng.randint(1, 5)):
        c, n, m = _frame(rng, group)
        frames.append(f"\tat {c}.{m}({n}.java:{rng.randint(20, 900)})")
    frames += [f"\tat {f}" for f in rng.sample(_FRAMEWORK, rng.randint(4, 12))]
    pool = rng.choice(("http-nio-8080-exec", "pool-3-thread", "kafka-consumer"))
    thread = f"{pool}-{rng.randint(1, 64)}"
    head = (
        f"{STAMP} ERROR [{svc},{hexid(rng, 16)},{hexid(rng, 16)}] 1 --- [{thread}] "
        f"c.a.{group[:1]}.{name} : {message}"
    )
    tail = [
        f"Caused by: {cause}",
        f"\tat {rng.choice(_FRAMEWORK)}",
        f"\t... {len(frames) - 1} more",
    ]
    return "\n".join([head, f"{exc}: {message}", *frames, *tail])


def _java_record(rng: random.Random, w: World) -> str:
    svc = w.service()
    group = group_of(svc).replace("-", "")
    if rng.random() < 0.75:
        level = rng.choice(("INFO", "INFO", "INFO", "WARN", "DEBUG"))
        _, name, method = _frame(rng, group)
        total = rng.randint(10, 50)
        text = rng.choice(
            (
                f"{method} completed in {rng.randint(1, 3_000)} ms",
                f"HikariPool-1 - Pool stats (total={total}, active={rng.randint(0, total)}, "
                f"idle={rng.randint(0, 20)}, waiting={rng.randint(0, 90)})",
                f"Committed offsets for partition {rng.randint(0, 47)} at "
                f"{rng.randint(10**5, 10**8)}",
                f"Retrying {rng.choice(_OPS)} after {rng.choice(_REASONS)}",
            )
        )
        trace = f"{svc},{hexid(rng, 16)},{hexid(rng, 16)}"
        return f"{STAMP} {level:>5} [{trace}] 1 --- [main] c.a.{group[:1]}.{name} : {text}"
    cls, name, method = _frame(rng, group)
    op = rng.choice(_OPS)
    cause = rng.choice(_CAUSES)
    if rng.random() < 0.2:
        cause = (
            "org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique "
            f'constraint "uq_{rng.choice(_TABLES)}_{rng.choice(_COLUMNS)}"'
        )
    top = (cls, name, method, rng.randint(20, 900))
    return _trace(rng, svc, rng.choice(_EXCEPTIONS), top, op=op, cause=cause)


def _java_fact(rng: random.Random, w: World) -> tuple[str, str, str, tuple[str, ...]]:
    svc = w.service()
    cls, name, method = _frame(rng, group_of(svc).replace("-", ""))
    exc, op, line = rng.choice(_EXCEPTIONS), rng.choice(_OPS), rng.randint(20, 900)
    short = exc.rsplit(".", 1)[1]
    if rng.random() < 0.6:
        record = _trace(rng, svc, exc, (cls, name, method, line), op=op, cause=rng.choice(_CAUSES))
        question = f"At which line of {name}.{method} was the {short} thrown in {svc}?"
        return record, f"({name}.java:{line})", question, (f"{exc}:", f".{name}.{method}(")
    constraint = f"uq_{rng.choice(_TABLES)}_{rng.choice(_COLUMNS)}"
    cause = (
        "org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique "
        f'constraint "{constraint}"'
    )
    record = _trace(rng, svc, exc, (cls, name, method, line), op=op, cause=cause)
    question = f"Which unique constraint was violated when the {op} failed in {svc}?"
    ident = (f"[{svc},", f"{op} failed", "duplicate key value")
    return record, f'"{constraint}"', question, ident


# --- the shape -----------------------------------------------------------------------------

Fact = tuple[str, str, str, tuple[str, ...]]  # record, needle, question, ident


def _access_fact(rng: random.Random) -> Fact:
    route, status = rng.choice(_ROUTES[:10]), rng.choice(_RARE)
    rid, rt = hexid(rng, 16), _rt(rng)
    record = _access_line(rng, route, status, rid, rt)
    request = f"{route[0]} {route[1]}"
    ident = (f'"{request} HTTP', f'" {status} ')
    if rng.random() < 0.5:
        question = f"What was the request id of the {status} response to {request}?"
        return record, f"req_id={rid}", question, ident
    question = f"How long did the {status} response to {request} take?"
    return record, f"rt={rt}", question, ident


def _millis(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S}.{moment.microsecond // 1000:03d}"


def _log(rng: random.Random, w: World, kind: str) -> tuple[Callable[[], str], Callable[..., str]]:
    """A record maker and a timestamp renderer for logs of ``kind``."""
    if kind == "syslog":
        return lambda: _syslog_line(rng, w), _syslog_time
    if kind == "access_log":
        return (
            lambda: _access_line(rng, rng.choice(_ROUTES), _status(rng), hexid(rng, 16), _rt(rng)),
            lambda t: f"{t:%d/%b/%Y:%H:%M:%S} +0000",
        )
    if kind == "jsonl":
        return lambda: json.dumps(_event(rng, w)), lambda t: _millis(t).replace(" ", "T") + "Z"
    return lambda: _java_record(rng, w), _millis


_SOURCES: dict[str, dict[str, Any]] = {
    "syslog": {"source": "syslog", "hosts": "*", "facility": "*"},
    "access_log": {"source": "nginx", "path": "/var/log/nginx/access.log"},
    "jsonl": {"source": "loki", "query": '{namespace=~".+-prod"} | json', "limit": 20_000},
    "stacktrace": {"source": "kubernetes", "selector": "runtime=jvm", "level": ">=INFO"},
}


def tail_logs(rng: random.Random, w: World, spec: Spec, kind: str = "") -> Output:
    kind = kind or rng.choice(tuple(_SOURCES))
    make, render = _log(rng, w, kind)
    fact_record = needle = question = ""
    ident: tuple[str, ...] = ()
    if spec.plant:
        planter = {"syslog": _syslog_fact, "jsonl": _jsonl_fact, "stacktrace": _java_fact}
        if kind == "access_log":
            fact_record, needle, question, ident = _access_fact(rng)
        else:
            fact_record, needle, question, ident = planter[kind](rng, w)
        spec = Spec(spec.chars, spec.cap, False, Avoid(needle, ident))
    records = layout(rng, spec, make, fact=fact_record or None)
    since = rng.choice(("30m", "1h", "2h", "6h", "12h", "24h"))
    span = int(since[:-1]) * (60 if since.endswith("m") else 3_600) * rng.uniform(0.6, 1)
    records = stamp(rng, records, span, w.now, render)
    size = sum(len(r) + 1 for r in records)
    while size > spec.cap:  # the timestamps are longer than their placeholder
        last = len(records) - 1 - (needle != "" and needle in records[-1])
        size -= len(records.pop(last)) + 1
    fact = None
    if fact_record:
        fact = plant(next(r for r in records if needle in r), needle, question, ident)
    args = _SOURCES[kind] | {"since": since, "lines": rng.choice((2_000, 5_000, 20_000))}
    return Output("tail_logs", args, "\n".join(records) + "\n", kind, fact)
