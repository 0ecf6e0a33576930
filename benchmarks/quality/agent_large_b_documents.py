"""Documents of ``agent_large_b``: nested JSON from internal APIs and the metrics store
(objects inside arrays inside objects, pretty-printed or on one line), and INI / TOML
configuration files read by ``read_config``. With ``spec.plant`` one array element or
section holds the fact and the others are elements or sections about other subjects."""

from __future__ import annotations

import json
import random
from typing import Any

from agent_large_b_world import (
    Output,
    Spec,
    World,
    fill,
    fresh,
    group_of,
    hexid,
    iso,
    plant,
    planted,
    unambiguous,
    version,
)

_FLAGS = (
    "new-checkout", "async-invoices", "sso-enforced", "beta-reports", "eu-data-residency",
    "legacy-webhooks", "bulk-export", "audit-stream", "granular-roles", "usage-alerts",
)  # fmt: skip
_SLIS = ("availability", "latency", "freshness", "correctness")
_ENTITIES = (
    "order", "refund", "invoice", "session", "payment", "shipment", "tenant", "price",
    "stock", "user", "ledger-entry", "payout",
)  # fmt: skip
_EVENTS = ("created", "updated", "deleted", "settled", "failed", "expired", "requested")
_IDLE = (8, 16, 32, 48, 64, 96, 128, 256, 512)


_DAYS = (1, 3, 7, 14, 30, 45, 60, 90, 180, 365, 400, 730, 2555)


def _days(rng: random.Random) -> int:
    return rng.choice(_DAYS)


def _rps(rng: random.Random) -> int:
    return rng.randint(2, 160) * 25


def _tenant(rng: random.Random, w: World, name: str, days: int, rps: int) -> dict[str, Any]:
    months = rng.randint(3, 12)
    roles = rng.sample(("billing", "technical", "security", "owner"), rng.randint(1, 3))
    return {
        "id": f"t-{rng.randint(10_000, 99_999)}",
        "name": name,
        "region": w.region(),
        "plan": rng.choice(("starter", "growth", "business", "enterprise")),
        "status": rng.choice(("active", "active", "active", "trial", "suspended")),
        "created_at": iso(w.ago(9e7)),
        "policies": {
            "retention": {
                "days": days,
                "tier": rng.choice(("hot", "warm", "cold")),
                "legal_hold": rng.random() < 0.1,
            },
            "quota": {
                "api_rps": rps,
                "storage_gb": rng.randint(1, 400) * 50,
                "seats": rng.randint(3, 2_000),
            },
            "sso": {"enabled": rng.random() < 0.6, "provider": rng.choice(("okta", "azure-ad"))},
        },
        "contacts": [
            {"role": role, "email": f"{role}@{name}.example", "verified": rng.random() < 0.8}
            for role in roles
        ],
        "feature_flags": rng.sample(_FLAGS, rng.randint(0, 5)),
        "usage": [
            {
                "month": f"{w.now.year - (m >= w.now.month)}-{(w.now.month - m - 1) % 12 + 1:02d}",
                "api_calls": rng.randint(10_000, 90_000_000),
                "storage_gb": round(rng.uniform(0.5, 9_000), 1),
            }
            for m in range(months)
        ],
    }


def _slo(rng: random.Random, w: World, key: tuple[str, str, str], left: float) -> dict[str, Any]:
    service, region, sli = key
    start = int(w.now.timestamp()) - 86_400
    step = rng.choice((1_800, 3_600, 7_200))
    points = rng.randint(8, 40)
    objective = rng.choice((99.0, 99.5, 99.9, 99.95))
    return {
        "service": service,
        "region": region,
        "sli": sli,
        "objective": objective,
        "error_budget": {
            "remaining_pct": left,
            "consumed_minutes": rng.randint(0, 400),
            "burn_rate": {w_: round(rng.uniform(0, 6), 2) for w_ in ("1h", "6h", "3d")},
        },
        "alerts": [
            {
                "name": f"{service}-{sli}-burn-{speed}",
                "state": rng.choice(("ok", "ok", "pending", "firing")),
                "since": iso(w.ago(4e5)),
            }
            for speed in rng.sample(("fast", "slow"), rng.randint(0, 2))
        ],
        "samples": [
            [start + i * step, f"{rng.uniform(objective - 0.6, 100):.4f}"] for i in range(points)
        ],
    }


def _kafka(rng: random.Random, w: World, name: str, retention_ms: str) -> dict[str, Any]:
    brokers = list(range(1, rng.randint(4, 9)))
    factor = min(3, len(brokers))
    partitions = []
    for p in range(rng.choice((3, 6, 6, 12, 12, 24, 48))):
        replicas = rng.sample(brokers, factor)
        isr = replicas if rng.random() < 0.9 else replicas[:-1]
        partitions.append({"partition": p, "leader": replicas[0], "replicas": replicas, "isr": isr})
    return {
        "name": name,
        "partitions_count": len(partitions),
        "replication_factor": factor,
        "configs": {
            "cleanup.policy": rng.choice(("delete", "delete", "compact")),
            "retention.ms": retention_ms,
            "min.insync.replicas": str(factor - 1),
            "segment.bytes": "1073741824",
        },
        "partitions": partitions,
    }


def _retention_ms(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return str(rng.choice((6, 12, 24, 36, 48, 72)) * 3_600_000)
    return str(rng.choice((1, 2, 3, 5, 7, 10, 14, 30, 60, 90)) * 86_400_000)


def _split(skeleton: dict[str, Any], pretty: bool) -> tuple[str, str, str]:
    """Head and tail of ``skeleton`` around its ``"@items"`` array entry, and the separator
    of the array's elements."""
    text = json.dumps(skeleton, indent=2 if pretty else None)
    head, tail = text.split('"@items"')
    pad = head[head.rfind("\n") + 1 :] if pretty else ""
    return head, tail, (",\n" + pad if pretty else ", ")


def _json_subject(rng: random.Random, w: World, dataset: str) -> Any:
    if dataset == "tenants":
        return w.tenant()
    if dataset == "slo":
        return w.service(), w.region(), rng.choice(_SLIS)
    topic = (group_of(w.service()), rng.choice(_ENTITIES), rng.choice(_EVENTS))
    return ".".join(topic) + f".v{rng.randint(1, 3)}"


def _element(rng: random.Random, w: World, dataset: str, subject: Any) -> dict[str, Any]:
    if dataset == "tenants":
        return _tenant(rng, w, subject, _days(rng), _rps(rng))
    if dataset == "slo":
        return _slo(rng, w, subject, round(rng.uniform(0, 100), 1))
    return _kafka(rng, w, subject, _retention_ms(rng))


def _endpoint(rng: random.Random, w: World, dataset: str) -> tuple[str, dict[str, Any], Any]:
    """The tool, its arguments and the response's skeleton, ``"@items"`` standing for the
    array's elements."""
    if dataset == "tenants":
        url = "https://tenant-admin.internal/v2/tenants?expand=policies,contacts,usage&limit=500"
        if rng.random() < 0.6:
            url += f"&cursor={hexid(rng, 24)}"
        skeleton = {"data": ["@items"], "page": {"next_cursor": hexid(rng, 24)}}
        return "http_get", {"url": url}, skeleton
    if dataset == "slo":
        args = {
            "query": "slo:error_budget:remaining",
            "window": "28d",
            "group_by": ["service", "region", "sli"],
            "at": iso(w.ago(7 * 86_400)),
        }
        data = {"window": "28d", "generated_at": iso(w.now), "results": ["@items"]}
        return "fetch_metrics", args, {"status": "success", "data": data}
    cluster = hexid(rng, 22)
    url = (
        f"http://kafka-admin.platform-prod:8082/v3/clusters/{cluster}/topics"
        "?include=configs,partitions"
    )
    return "http_get", {"url": url}, {"cluster_id": cluster, "topics": ["@items"]}


def json_api(rng: random.Random, w: World, spec: Spec, kind: str = "json") -> Output:
    dataset = rng.choice(("tenants", "slo", "kafka"))
    pretty = rng.random() < 0.7
    tool, args, skeleton = _endpoint(rng, w, dataset)
    head, tail, sep = _split(skeleton, pretty)
    seen: set[Any] = set()

    def render(element: dict[str, Any]) -> str:
        if pretty:
            return json.dumps(element, indent=2).replace("\n", sep[1:])
        return json.dumps(element)

    def record() -> str:
        subject = fresh(lambda: _json_subject(rng, w, dataset), seen)
        return render(_element(rng, w, dataset, subject))

    fact_record = fact = None
    if spec.plant:
        subject = fresh(lambda: _json_subject(rng, w, dataset), seen)
        element, needle, inner, question, ident = _json_fact(rng, w, dataset, subject)
        fact_record = render(element)
        fact = plant(fact_record, needle, question, ident, "" if pretty else json.dumps(inner))
        spec = planted(spec, fact)
    body = fill(rng, spec, record, fixed=len(head + tail), fact=fact_record, sep=sep)
    return Output(tool, args, head + body + tail, kind, fact)


def _json_fact(
    rng: random.Random, w: World, dataset: str, subject: Any
) -> tuple[dict[str, Any], str, dict[str, Any], str, tuple[str, ...]]:
    """The fact's element, its needle, the object holding it, the question and the strings
    naming the element."""
    if dataset == "tenants":
        days, rps = rng.choice(unambiguous(_DAYS)), _rps(rng)
        element = _tenant(rng, w, subject, days, rps)
        ident: tuple[str, ...] = (f'"name": "{subject}"',)
        if rng.random() < 0.6:
            question = rng.choice(
                (
                    f"How many days of data does the retention policy of tenant {subject} keep?",
                    f"What is the retention period, in days, for the {subject} tenant?",
                )
            )
            retention = element["policies"]["retention"]
            return element, f'"days": {days}', retention, question, ident
        question = f"What API rate limit (requests per second) does tenant {subject} have?"
        return element, f'"api_rps": {rps}', element["policies"]["quota"], question, ident
    if dataset == "slo":
        element = _slo(rng, w, subject, round(rng.uniform(0, 100), 1))
        service, region, sli = subject
        budget = element["error_budget"]
        ident = (f'"service": "{service}"', f'"region": "{region}"', f'"sli": "{sli}"')
        question = rng.choice(
            (
                f"How much of the {sli} error budget is left for {service} in {region}?",
                f"What percentage of its {sli} SLO error budget does {service} have remaining "
                f"in {region}?",
            )
        )
        return element, f'"remaining_pct": {budget["remaining_pct"]}', budget, question, ident
    element = _kafka(rng, w, subject, _retention_ms(rng))
    configs = element["configs"]
    question = rng.choice(
        (
            f"What retention.ms is configured on the {subject} topic?",
            f"How long does Kafka keep messages on the {subject} topic?",
        )
    )
    needle = f'"retention.ms": "{configs["retention.ms"]}"'
    return element, needle, configs, question, (f'"name": "{subject}"',)


# --- read_config: INI and TOML --------------------------------------------------------------


def _pool(rng: random.Random, w: World, name: str, pinned: dict[str, int]) -> str:
    values = {
        "port": rng.randint(5432, 5499) if rng.random() < 0.5 else rng.randint(6432, 6499),
        "pool_size": rng.randint(4, 120),
        "max_connections": rng.randint(2, 80) * 10,
    } | pinned
    db = name.split("-", maxsplit=1)[0]
    return "\n".join(
        [
            f"[{name}]",
            f"host = {db}-{name.split('-')[1]}.{w.region()}.db.internal",
            f"port = {values['port']}",
            f"dbname = {db}",
            f"pool_mode = {rng.choice(('transaction', 'transaction', 'session'))}",
            f"pool_size = {values['pool_size']}",
            f"max_connections = {values['max_connections']}",
            f"reserve_pool = {rng.randint(0, 10)}",
            f"server_idle_timeout = {rng.choice((60, 300, 600))}",
            f"server_lifetime = {rng.choice((1800, 3600, 7200))}",
            f"; owner: {w.team()}",
            "",
        ]
    )


def _upstream(rng: random.Random, w: World, key: str, pinned: dict[str, int]) -> str:
    service = key.split(".", maxsplit=1)[0]
    values = {
        "request_timeout_ms": rng.randint(2, 120) * 250,
        "max_idle_conns": rng.choice(_IDLE),
    } | pinned
    return "\n".join(
        [
            f'[upstreams."{key}"]',
            f'url = "http://{service}.{w.namespace(service)}.svc.cluster.local:8080"',
            f"request_timeout_ms = {values['request_timeout_ms']}",
            f"dial_timeout_ms = {rng.choice((100, 200, 250, 500, 1000))}",
            f"retries = {rng.randint(0, 4)}",
            f"max_idle_conns = {values['max_idle_conns']}",
            f"circuit_breaker = {{ failure_ratio = {rng.choice((0.25, 0.5, 0.75))}, "
            f"min_requests = {rng.choice((10, 20, 50))}, "
            f"open_seconds = {rng.choice((10, 30, 60))} }}",
            f'owner = "{w.team()}"',
            "",
        ]
    )


def _config_subject(rng: random.Random, w: World, kind: str) -> str:
    if kind == "ini":
        return f"{w.shard()}-{rng.choice(('ro', 'rw'))}"
    suffix = rng.choice(("", "", "-grpc", "-admin", "-internal", "-v2"))
    return f"{w.service()}{suffix}.{w.region()}"


def _section(rng: random.Random, w: World, kind: str, name: str, pinned: dict[str, int]) -> str:
    return (_pool if kind == "ini" else _upstream)(rng, w, name, pinned)


def _config_fact(rng: random.Random, kind: str, name: str) -> tuple[str, int, str, tuple[str]]:
    """The fact's key and value, the question and the string naming its section."""
    if kind == "ini":
        shard, mode = name.rsplit("-", 1)
        access = "read-only" if mode == "ro" else "read-write"
        key = rng.choice(("port", "max_connections", "pool_size"))
        if key == "port":
            value = rng.randint(5432, 6499)
            question = f"Which port does the {access} pool of {shard} use in the dbproxy config?"
        elif key == "max_connections":
            value = rng.randint(2, 80) * 10
            question = f"What is max_connections for the {name} pool?"
        else:
            value = rng.randint(4, 120)
            question = f"What pool size is configured for the {access} pool of {shard}?"
        return key, value, question, (f"[{name}]\n",)
    service, region = name.split(".")
    if rng.random() < 0.5:
        key, value = "request_timeout_ms", rng.randint(2, 120) * 250
        question = (
            f"What request timeout does the gateway use for the {service} upstream in {region}?"
        )
    else:
        key, value = "max_idle_conns", rng.choice(_IDLE)
        question = f"How many idle connections may the gateway keep to {service} in {region}?"
    return key, value, question, (f'[upstreams."{name}"]\n',)


def read_config(rng: random.Random, w: World, spec: Spec, kind: str = "") -> Output:
    kind = kind or rng.choice(("ini", "toml"))
    if kind == "ini":
        path = "/etc/dbproxy/pools.ini"
        header = (
            f";; rendered by pool-sync {version(rng)} at {iso(w.now)}\n"
            ";; do not edit by hand: the next sync overwrites changes\n\n"
            "[dbproxy]\nlisten = 0.0.0.0:6432\nauth_type = scram-sha-256\n"
            "auth_file = /etc/dbproxy/userlist.txt\nstats_period = 60\n\n"
        )
    else:
        path = "/srv/api-gateway/upstreams.toml"
        header = (
            f"# api-gateway upstreams, generated from gitops@{hexid(rng, 12)} on {iso(w.now)}\n\n"
            '[server]\nlisten = "0.0.0.0:8443"\naccess_log = "/var/log/gateway/access.log"\n\n'
        )
    seen: set[str] = set()

    def subject() -> str:
        return fresh(lambda: _config_subject(rng, w, kind), seen)

    fact_record = fact = None
    if spec.plant:
        name = subject()
        key, value, question, ident = _config_fact(rng, kind, name)
        fact_record = _section(rng, w, kind, name, {key: value})
        fact = plant(fact_record, f"{key} = {value}", question, ident)
        spec = planted(spec, fact)

    def record() -> str:
        return _section(rng, w, kind, subject(), {})

    body = fill(rng, spec, record, fixed=len(header), fact=fact_record)
    args = {"path": path, "host": w.host()}
    return Output("read_config", args, header + body, kind, fact)
