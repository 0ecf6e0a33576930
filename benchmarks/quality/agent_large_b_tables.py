"""Result sets of ``run_sql`` in ``agent_large_b``: inventories of database endpoints,
certificates, scheduled jobs, deployments and incidents, printed as a psql or MySQL table,
a markdown table or CSV, with a header row. With ``spec.plant`` one row holds the fact in
one cell; the question names that row by other columns, which other rows share one at a
time."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from agent_large_b_world import (
    TASKS,
    Output,
    Spec,
    World,
    cron,
    fill,
    fresh,
    group_of,
    hexid,
    plant,
    planted,
    version,
)

Row = dict[str, str]


@dataclass(frozen=True)
class _Dataset:
    table: str
    columns: tuple[tuple[str, int], ...]  # name, display width
    key: Callable[[random.Random, World], tuple[str, ...]]  # the row's subject
    row: Callable[[random.Random, World, tuple[str, ...]], Row]


def _stamp(w: World, seconds: float) -> str:
    return (w.now + timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S+00")


def _endpoint_row(rng: random.Random, w: World, key: tuple[str, ...]) -> Row:
    shard, region, role = key
    octets = f"10.{rng.randint(0, 63)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return {
        "shard": shard,
        "region": region,
        "role": role,
        "endpoint": f"{octets}:{rng.choice((5432, 6432)) + rng.randint(0, 67)}",
        "pg_version": rng.choice(("14.11", "15.6", "15.7", "16.2", "16.3")),
        "size_gb": str(rng.randint(20, 9_000)),
        "connections": str(rng.randint(3, 480)),
        "replica_lag_ms": "0" if role == "primary" else str(int(rng.expovariate(1 / 300))),
        "owner_team": w.team(),
    }


def _cert_row(rng: random.Random, w: World, key: tuple[str, ...]) -> Row:
    return {
        "domain": key[0],
        "issuer": rng.choice(("letsencrypt", "digicert", "internal-ca", "sectigo")),
        "region": key[0].split(".")[1],
        "not_before": _stamp(w, -rng.uniform(1e6, 3e7)),
        "not_after": _stamp(w, rng.uniform(-2e6, 4e7)),
        "auto_renew": rng.choice(("t", "t", "t", "f")),
        "owner_team": w.team(),
    }


def _job_row(rng: random.Random, w: World, key: tuple[str, ...]) -> Row:
    job, region = key
    return {
        "job": job,
        "env": rng.choice(("prod", "prod", "staging", "dr")),
        "region": region,
        "schedule": cron(rng),
        "last_status": rng.choice(("succeeded", "succeeded", "succeeded", "failed", "running")),
        "last_run": _stamp(w, -rng.uniform(60, 6e5)),
        "duration_s": str(rng.randint(2, 7_200)),
        "owner": w.team(),
    }


def _deploy_row(rng: random.Random, w: World, key: tuple[str, ...]) -> Row:
    service, region, tag = key
    return {
        "service": service,
        "region": region,
        "version": tag,
        "deployed_at": _stamp(w, -rng.uniform(600, 4e6)),
        "deployed_by": rng.choice(("argocd", "argocd", "spinnaker", f"{w.team()}-bot")),
        "change_ticket": f"CHG-{rng.randint(10_000, 99_999)}",
        "status": rng.choice(("complete", "complete", "complete", "rolled_back", "paused")),
    }


_SUMMARIES = (
    "elevated 5xx on {s}",
    "p99 latency above SLO for {s}",
    "{s} pods crash-looping after deploy",
    "queue backlog on {s} consumers",
    "TLS handshake failures towards {s}",
    "partial outage of {s} in one AZ",
    "database connection exhaustion behind {s}",
)


def _incident_row(rng: random.Random, w: World, key: tuple[str, ...]) -> Row:
    service, region = key
    return {
        "incident": f"INC-{rng.randint(1_000, 9_999)}",
        "opened_at": _stamp(w, -rng.uniform(600, 8e6)),
        "service": service,
        "region": region,
        "severity": rng.choice(("sev1", "sev2", "sev2", "sev3", "sev3", "sev3")),
        "error_code": f"E-{rng.randint(10_000, 49_999)}",
        "summary": rng.choice(_SUMMARIES).format(s=service),
    }


def _columns(spec: str) -> tuple[tuple[str, int], ...]:
    """``"name:width ..."`` as (name, width) pairs."""
    return tuple((name, int(width)) for name, width in (c.split(":") for c in spec.split()))


def _endpoint_key(rng: random.Random, w: World) -> tuple[str, ...]:
    return w.shard(), w.region(), rng.choice(("primary", "replica", "standby"))


def _cert_key(rng: random.Random, w: World) -> tuple[str, ...]:
    host = rng.choice(("api", "admin", "grpc", group_of(w.service())))
    return (f"{host}.{w.region()}.{rng.choice(('example.net', 'acme-pay.com', 'shopfront.app'))}",)


_DATASETS = {
    "db_endpoints": _Dataset(
        "ops.db_endpoints",
        _columns(
            "shard:12 region:14 role:7 endpoint:20 pg_version:10 size_gb:7 connections:11 "
            "replica_lag_ms:14 owner_team:22"
        ),
        _endpoint_key,
        _endpoint_row,
    ),
    "certificates": _Dataset(
        "ops.certificates",
        _columns(
            "domain:43 issuer:11 region:14 not_before:22 not_after:22 auto_renew:10 owner_team:22"
        ),
        _cert_key,
        _cert_row,
    ),
    "scheduled_jobs": _Dataset(
        "ops.scheduled_jobs",
        _columns(
            "job:26 env:7 region:14 schedule:14 last_status:11 last_run:22 duration_s:10 owner:22"
        ),
        lambda rng, w: (f"{group_of(w.service())}-{rng.choice(TASKS)}", w.region()),
        _job_row,
    ),
    "deployments": _Dataset(
        "ops.deployments",
        _columns(
            "service:23 region:14 version:8 deployed_at:22 deployed_by:26 change_ticket:13 "
            "status:11"
        ),
        lambda rng, w: (w.service(), w.region(), version(rng)),
        _deploy_row,
    ),
    "incidents": _Dataset(
        "ops.incidents",
        _columns(
            "incident:8 opened_at:22 service:23 region:14 severity:8 error_code:10 summary:62"
        ),
        lambda rng, w: (w.service(), w.region()),
        _incident_row,
    ),
}


def _question(rng: random.Random, dataset: str, row: Row) -> tuple[str, str, tuple[str, ...]]:
    """The fact's column, its question and the cells that name its row."""
    if dataset == "db_endpoints":
        shard, region, role = row["shard"], row["region"], row["role"]
        return (
            "endpoint",
            rng.choice(
                (
                    f"What is the endpoint (host and port) of the {role} of shard {shard} in "
                    f"{region}?",
                    f"Which address does the {shard} {role} in {region} listen on?",
                )
            ),
            (shard, region, role),
        )
    if dataset == "certificates":
        domain = row["domain"]
        return (
            "not_after",
            rng.choice(
                (
                    f"When does the certificate for {domain} expire?",
                    f"What is the not_after date of the {domain} certificate in the inventory?",
                )
            ),
            (domain,),
        )
    if dataset == "scheduled_jobs":
        job, region = row["job"], row["region"]
        return (
            "schedule",
            rng.choice(
                (
                    f"What schedule does the {job} job have in {region}?",
                    f"When does {job} run in {region}, according to the scheduled jobs table?",
                )
            ),
            (job, region),
        )
    if dataset == "deployments":
        service, region, tag = row["service"], row["region"], row["version"]
        return (
            "change_ticket",
            (f"Which change ticket covered the {tag} deployment of {service} in {region}?"),
            (service, region, tag),
        )
    service, region = row["service"], row["region"]
    return (
        "error_code",
        rng.choice(
            (
                f"Which error code was recorded for the {service} incident in {region}?",
                f"What error code does the incidents table show for {service} in {region}?",
            )
        ),
        (service, region),
    )


def _format_row(style: str, cells: list[str], widths: list[int]) -> str:
    if style == "csv":
        return ",".join(f'"{c}"' if "," in c else c for c in cells)
    if style == "markdown":
        return "| " + " | ".join(cells) + " |"
    padded = " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
    return f"| {padded} |" if style == "mysql" else f" {padded}"


def run_sql(rng: random.Random, w: World, spec: Spec, kind: str = "") -> Output:
    name = rng.choice(list(_DATASETS))
    data = _DATASETS[name]
    kind = kind or rng.choice(("table", "table", "csv"))
    style = "csv" if kind == "csv" else rng.choice(("psql", "psql", "mysql", "markdown"))
    columns = [c for c, _ in data.columns]
    widths = [max(width, len(c)) for c, width in data.columns]
    rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"
    header = {
        "psql": f"{_format_row('psql', columns, widths)}\n"
        + "+".join("-" * (width + 2) for width in widths),
        "mysql": f"{rule}\n{_format_row('mysql', columns, widths)}\n{rule}",
        "markdown": f"{_format_row('markdown', columns, widths)}\n|"
        + "|".join("---" for _ in columns)
        + "|",
        "csv": ",".join(columns),
    }[style] + "\n"
    seen: set[tuple[str, ...]] = set()

    def line(row: Row) -> str:
        return _format_row(style, [row[c] for c in columns], widths)

    def record() -> str:
        return line(data.row(rng, w, fresh(lambda: data.key(rng, w), seen)))

    fact_record = fact = None
    if spec.plant:
        row = data.row(rng, w, fresh(lambda: data.key(rng, w), seen))
        column, question, ident = _question(rng, name, row)
        fact_record = line(row)
        fact = plant(fact_record, row[column], question, ident)
        spec = planted(spec, fact)
    footer_size = {"psql": 16, "mysql": len(rule) + 40}.get(style, 1)
    body = fill(rng, spec, record, fixed=len(header) + footer_size, fact=fact_record)
    rows = body.count("\n") + 1
    footer = {
        "psql": f"\n({rows} rows)\n",
        "mysql": f"\n{rule}\n{rows} rows in set ({rng.uniform(0.01, 9):.2f} sec)\n",
        "markdown": "\n",
        "csv": "\n",
    }[style]
    query = f"SELECT {', '.join(columns)} FROM {data.table}"
    if rng.random() < 0.6:
        limit = rng.choice((1_000, 5_000, 10_000))
        query += f" LIMIT {limit} OFFSET {limit * rng.choice((0, 0, 1, 2, 3))}"
    args = {
        "database": rng.choice(("ops_inventory", "ops_inventory", "warehouse")),
        "query": query + ";",
        "format": {"psql": "table", "mysql": "table", "markdown": "markdown", "csv": "csv"}[style],
        "request_id": hexid(rng, 8),
    }
    return Output("run_sql", args, header + body + footer, kind, fact)
