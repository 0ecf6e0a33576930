"""JSON, tables and prose for ``agent_large_a``.

* JSON: a listing from an internal API (service registry, error catalogue, feature flags,
  data catalogue), pretty-printed, one object per subject with nested members; every object
  carries the topic's member, so the fact object sits among hundreds of the same shape.
* Tables: the same records as a query result (psql, MySQL or markdown), the topic's column
  next to the subject's; large service tables are key/value configuration rows.
* Prose: a markdown design doc, runbook or README with headings, paragraphs, lists and
  code fences; some sentences are the world's mentions, the fact one sentence of one paragraph.

GitHub workflow runs are a further JSON shape that never holds the fact.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from random import Random
from typing import Any

from agent_large_a_facts import (
    CONDITIONS,
    FEATURES,
    NOUNS,
    REGIONS,
    ROLES,
    SYSTEMS,
    TOPICS,
    VERBS,
    Condition,
    Lines,
    Mention,
    Output,
    Subject,
    World,
    pick,
    rand,
)

Record = dict[str, Any]

# Records.


def _date(rng: Random) -> str:
    """A moment of 2024, ISO 8601 in UTC."""
    return time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_704_067_200 + rand(rng, 0, 31_535_999))
    )


_DAYS = [time.strftime("%Y-%m-%d", time.gmtime(1_704_067_200 + 86_400 * day)) for day in range(366)]


def dumps(value: Any, indent: str = "") -> str:
    """``json.dumps(value, indent=2)`` for the records here (dicts, lists, scalars), with
    ``indent`` before every line but the first; several times faster than the encoder's
    pure-Python indenting path."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = indent + "  "
        members = ",\n".join(f"{inner}{_string(k)}: {dumps(v, inner)}" for k, v in value.items())
        return f"{{\n{members}\n{indent}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        inner = indent + "  "
        items = ",\n".join(f"{inner}{dumps(v, inner)}" for v in value)
        return f"[\n{items}\n{indent}]"
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


_string = json.encoder.encode_basestring_ascii


def _value(world: World, name: str, subject: Subject, fact: Mention | None) -> Any:
    topic = TOPICS[name]
    if fact is not None and fact.topic is topic:
        return fact.value
    return world.value(topic, subject)


def service_record(world: World, subject: Subject, fact: Mention | None = None) -> Record:
    rng = world.rng
    version = _value(world, "version", subject, fact)
    return {
        "name": subject.slug,
        "owner": _value(world, "owner", subject, fact),
        "tier": pick(rng, ("critical", "standard", "best-effort")),
        "port": _value(world, "port", subject, fact),
        "version": version,
        "base_url": _value(world, "base_url", subject, fact),
        "limits": {
            "timeout_ms": _value(world, "timeout", subject, fact),
            "rate_limit_rps": _value(world, "rate_limit", subject, fact),
            "max_connections": _value(world, "max_connections", subject, fact),
            "burst": rand(rng, 1, 50),
        },
        "deploy": {
            "region": pick(rng, REGIONS),
            "replicas": rand(rng, 1, 24),
            "image": f"registry.acme.internal/{subject.slug}:{version}",
            "strategy": pick(rng, ("rolling", "blue-green", "canary")),
        },
        "dependencies": sorted({world.slug() for _ in range(rand(rng, 0, 3))} - {subject.slug}),
        "labels": {
            "language": pick(rng, ("python", "go", "typescript", "rust")),
            "oncall": f"#{subject.first}-oncall",
        },
        "health": pick(rng, ("passing", "passing", "passing", "warning")),
        "updated_at": _date(rng),
    }


def error_record(
    world: World, subject: Subject, condition: Condition, fact: Mention | None = None
) -> Record:
    rng = world.rng
    code = fact.value if fact is not None else world.value(TOPICS["error_code"], subject, condition)
    return {
        "code": code,
        "service": subject.slug,
        "condition": condition.noun,
        "http_status": pick(rng, (400, 409, 422, 429, 500, 502, 503, 504)),
        "retryable": rng.random() < 0.4,
        "message": f"Rejected because {condition.clause}.",
        "first_seen": _date(rng),
        "count_24h": rand(rng, 0, 90_000),
    }


def flag_record(world: World, subject: Subject, fact: Mention | None = None) -> Record:
    rng = world.rng
    words = subject.second.replace("-", " ")
    return {
        "key": subject.slug,
        "description": f"Turns on {words} for {subject.first}.",
        "enabled": rng.random() < 0.8,
        "rollout_percentage": _value(world, "rollout", subject, fact),
        "owner": _value(world, "owner", subject, fact),
        "variants": ["off", "on"] if rng.random() < 0.7 else ["off", "shadow", "on"],
        "rules": [
            {
                "attribute": pick(rng, ("account.plan", "account.region", "user.beta")),
                "op": "in",
                "values": rng.sample(("enterprise", "pro", "free", "eu", "us"), 2),
            }
            for _ in range(rand(rng, 0, 2))
        ],
        "updated_at": _date(rng),
    }


_COLUMN_TYPES = ("bigint", "text", "timestamptz", "numeric(18,4)", "jsonb", "uuid", "boolean")


def dataset_record(world: World, subject: Subject, fact: Mention | None = None) -> Record:
    rng = world.rng
    return {
        "dataset": subject.slug,
        "table": _value(world, "table", subject, fact),
        "writer": f"{subject.first}-{pick(rng, ROLES)}",
        "owner": _value(world, "owner", subject, fact),
        "rows": rand(rng, 1000, 900_000_000),
        "size_gb": round(rng.random() * 900, 1),
        "retention_days": pick(rng, (30, 90, 365, 730, 2555)),
        "partitioned_by": pick(rng, ("created_at", "account_id", None)),
        "columns": [
            {"name": name, "type": pick(rng, _COLUMN_TYPES)}
            for name in ["id", *rng.sample(_COLUMN_NAMES, rand(rng, 3, 7))]
        ],
    }


_COLUMN_NAMES = (
    "account_id", "amount", "currency", "status", "created_at", "updated_at", "settled_at",
    "external_ref", "metadata", "attempts", "region", "source",
)  # fmt: skip


class Listing:
    """Records of one entity kind, one per subject (per subject and condition for error
    codes), the fact's subject only in the fact's record."""

    def __init__(self, world: World, entity: str) -> None:
        self.world = world
        self.entity = entity
        self.seconds = {"service": ROLES, "error": ROLES, "flag": FEATURES, "dataset": NOUNS}[
            entity
        ]
        fact = world.fact
        self.seen: set[tuple[Subject, Condition | None]] = {(fact.subject, fact.condition)}
        self.excluded = fact.subject if entity != "error" else None

    def _pair(self) -> tuple[Subject, Condition | None] | None:
        world, rng = self.world, self.world.rng
        kind = "service" if self.entity == "error" else self.entity
        for _ in range(100):
            first = pick(rng, world.systems) if rng.random() < 0.5 else pick(rng, SYSTEMS)
            subject = Subject(kind, first, pick(rng, self.seconds))
            condition = pick(rng, CONDITIONS) if self.entity == "error" else None
            if (subject, condition) in self.seen or subject == self.excluded:
                continue
            self.seen.add((subject, condition))
            return subject, condition
        return None

    def record(self, fact: Mention | None = None) -> Record | None:
        """The next subject's record (``None`` when they run out), or the fact's."""
        world = self.world
        if fact is not None:
            subject, condition = fact.subject, fact.condition
        else:
            pair = self._pair()
            if pair is None:
                return None
            subject, condition = pair
        if self.entity == "error":
            assert condition is not None
            return error_record(world, subject, condition, fact)
        builder: Callable[..., Record] = {
            "service": service_record,
            "flag": flag_record,
            "dataset": dataset_record,
        }[self.entity]
        return builder(world, subject, fact)


_APIS = {
    "service": ("services", "https://registry.acme.internal/v1/services?limit=1000"),
    "error": ("errors", "https://errors.acme.internal/api/v2/codes?include=counts"),
    "flag": ("flags", "https://flags.acme.internal/api/flags?env=prod"),
    "dataset": ("datasets", "https://catalog.acme.internal/v1/datasets?expand=columns"),
}


def _needle(fact: Mention) -> str:
    """The fact's member as it is printed; an integer keeps its comma (no member ends an
    object), so that ``"port": 6543,`` is not found inside ``"port": 65432,``."""
    member = f'"{fact.topic.key}": {fact.literal}'
    return member + "," if isinstance(fact.value, int) else member


def json_output(world: World, chars: int, fact_at: float | None) -> Output:
    rng = world.rng
    if fact_at is None and rng.random() < 0.2:
        return _workflow_runs(world, chars)
    entity = world.fact.topic.entity if fact_at is not None else pick(rng, list(_APIS))
    listing = Listing(world, entity)
    name, url = _APIS[entity]
    items: list[str] = []
    size = len(name) + 60
    while size < chars:
        record = listing.record()
        if record is None:
            break
        items.append("    " + dumps(record, "    "))
        size += len(items[-1]) + 2
    needle = None
    if fact_at is not None:
        fact_record = listing.record(world.fact)
        assert fact_record is not None
        items.insert(round(fact_at * len(items)), "    " + dumps(fact_record, "    "))
        needle = _needle(world.fact)
    text = (
        f'{{\n  "{name}": [\n' + ",\n".join(items) + f'\n  ],\n  "total": {len(items)},\n'
        '  "next_cursor": null\n}'
    )
    return Output(
        text, "json", "http_request", {"method": "GET", "url": url}, f"the {name} listing", needle
    )


def _workflow_runs(world: World, chars: int) -> Output:
    rng = world.rng
    repo = f"acme/{world.home}-platform"
    runs: list[str] = []
    size = 60
    while size < chars:
        run_id = rand(rng, 8_000_000_000, 9_999_999_999)
        run = {
            "id": run_id,
            "name": pick(rng, ("CI", "Integration", "Deploy", "Nightly")),
            "head_branch": pick(rng, ("main", f"fix/{world.func_name().replace('_', '-')}")),
            "head_sha": f"{rng.getrandbits(160):040x}",
            "run_number": rand(rng, 1000, 30_000),
            "event": pick(rng, ("push", "pull_request", "schedule")),
            "status": "completed",
            "conclusion": pick(rng, ("success", "success", "failure", "cancelled")),
            "created_at": _date(rng),
            "actor": {"login": pick(rng, ("mkowalski", "jdoe", "ana-r", "dependabot[bot]"))},
            "html_url": f"https://github.com/{repo}/actions/runs/{run_id}",
        }
        runs.append("    " + dumps(run, "    "))
        size += len(runs[-1]) + 2
    text = f'{{\n  "total_count": {len(runs)},\n  "workflow_runs": [\n' + ",\n".join(runs)
    text += "\n  ]\n}"
    endpoint = f"/repos/{repo}/actions/runs?per_page=100"
    return Output(text, "json", "github_api", {"endpoint": endpoint}, "the workflow runs", None)


# Tables.

_CONFIG_KEYS = (
    "log_level", "replicas", "cpu_limit", "memory_limit", "pool_mode", "retry_backoff_ms",
    "circuit_breaker", "tls", "gc_percent", "max_body_kb",
)  # fmt: skip
_SERVICE_TOPICS = tuple(t for t in TOPICS.values() if t.entity == "service")


def _service_columns(key: str) -> list[str]:
    rest = [c for c in ("owner", "version", "port", "replicas", "region") if c != key]
    return ["name", key, *rest[:4]]


def _cells(record: Record, columns: list[str]) -> list[str]:
    flat = dict(record)
    for nested in ("limits", "deploy"):
        flat.update(record.get(nested, {}))
    return [
        ""
        if flat.get(c) is None
        else str(flat[c]).lower()
        if isinstance(flat[c], bool)
        else str(flat[c])
        for c in columns
    ]


class _ConfigRows:
    """``service | key | value | source | updated_at`` rows, one per (service, key): the
    topics' values (near the fact's subject when the table holds the fact) and other keys."""

    def __init__(self, world: World, fact: Mention | None) -> None:
        self.world = world
        self.fact = fact
        self.seen: set[tuple[str, str]] = set()
        if fact is not None:
            self.seen.add((fact.subject.slug, fact.topic.key))

    def draw(self) -> list[str] | None:
        world, rng = self.world, self.world.rng
        for _ in range(50):
            mention = world.distractor() if self.fact is not None and rng.random() < 0.3 else None
            if mention is None or mention.topic.entity != "service":
                subject = world.subject("service", pick(rng, SYSTEMS))
                if rng.random() < 0.5:
                    mention = world.mention(pick(rng, _SERVICE_TOPICS), subject)
            if mention is not None:
                slug, key, value = mention.subject.slug, mention.topic.key, str(mention.value)
            else:
                slug, key = f"{pick(rng, SYSTEMS)}-{pick(rng, ROLES)}", pick(rng, _CONFIG_KEYS)
                value = str(rand(rng, 1, 64)) if rng.random() < 0.6 else pick(rng, ("on", "off"))
            if (slug, key) not in self.seen:
                self.seen.add((slug, key))
                return [slug, key, value, pick(rng, ("helm", "consul", "env")), pick(rng, _DAYS)]
        return None


def _render_table(
    style: str, columns: list[str], rows: list[list[str]], mark: int | None, span: tuple[int, int]
) -> tuple[list[str], str | None]:
    """The table's lines and, for row ``mark``, the text from cell ``span[0]`` to the end of
    cell ``span[1]`` as printed."""
    count = len(columns)
    numeric = [all(r[i].isdigit() for r in rows[:50]) for i in range(count)]
    widths = [max(len(columns[i]), *(len(r[i]) for r in rows)) for i in range(count)]
    if style == "markdown":
        cells = ["{}"] * count
    else:  # psql and MySQL pad every cell to its column, numbers to the right
        cells = [f"{{:{'>' if numeric[i] else '<'}{widths[i]}}}" for i in range(count)]
    template = (" " if style == "psql" else "| ") + " | ".join(cells)
    template += "" if style == "psql" else " |"
    header = template.format(*columns)
    if style == "psql":
        header = " " + " | ".join(c.center(w) for c, w in zip(columns, widths, strict=True))
    out: list[str] = []
    if style == "mysql":
        rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        out.extend([rule, header, rule])
    elif style == "psql":
        out.extend([header, "+".join("-" * (w + 2) for w in widths)])
    else:
        out.extend([header, "|" + "|".join("---" for _ in widths) + "|"])
    out.extend(template.format(*cells) for cells in rows)
    needle = None
    if mark is not None:  # from the first cell's text to the end of the last one's, as printed
        printed = template.format(*rows[mark])
        padded = printed.removeprefix(" " if style == "psql" else "| ").removesuffix(" |")
        needle = " | ".join(padded.split(" | ")[span[0] : span[1] + 1]).strip()
    if style == "mysql":
        out.extend([rule, f"{len(rows)} rows in set ({rand_seconds(len(rows))} sec)"])
    elif style == "psql":
        out.append(f"({len(rows)} rows)")
    return out, needle


def rand_seconds(rows: int) -> str:
    return f"{0.01 + rows / 40_000:.2f}"


def _fill_rows(
    style: str, chars: int, columns: list[str], draw: Callable[[], list[str] | None]
) -> list[list[str]]:
    """Rows from ``draw`` until the table, as ``style`` prints it, reaches ``chars``."""
    widths = [len(c) for c in columns]
    plain = 0  # a markdown row's length is its cells' plus the separators
    rows: list[list[str]] = []
    while True:
        if style == "markdown":
            size = plain + len(rows) * (3 * len(columns) + 2)
        else:
            size = len(rows) * (sum(widths) + 3 * len(columns) + 2)
        if size >= chars:
            return rows
        cells = draw()
        if cells is None:
            return rows
        rows.append(cells)
        plain += sum(map(len, cells))
        widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]


def table_output(world: World, chars: int, fact_at: float | None) -> Output:
    rng = world.rng
    fact = world.fact if fact_at is not None else None
    if fact is not None:
        entity = fact.topic.entity
    else:  # flags run out at a few thousand rows
        entity = pick(rng, ("service", "error", "flag") if chars < 40_000 else ("service", "error"))
    style = pick(rng, ("psql", "psql", "mysql", "markdown"))
    fact_row = None
    if entity == "service" and (chars > 60_000 or rng.random() < 0.4):
        columns = ["service", "key", "value", "source", "updated_at"]
        rows = _fill_rows(style, chars, columns, _ConfigRows(world, fact).draw)
        span = (0, 2)
        if fact is not None:
            fact_row = [fact.subject.slug, fact.topic.key, str(fact.value), "helm", "2024-06-03"]
        sql = "SELECT service, key, value, source, updated_at FROM service_config ORDER BY updated_at DESC;"  # noqa: E501
    else:
        listing = Listing(world, entity)
        key = (fact.topic if fact else pick(rng, _SERVICE_TOPICS)).key
        columns = {
            "service": _service_columns(key),
            "error": ["code", "service", "condition", "http_status", "retryable", "count_24h"],
            "flag": ["key", "rollout_percentage", "enabled", "owner", "updated_at"],
            "dataset": ["dataset", "table", "writer", "owner", "rows", "retention_days"],
        }[entity]
        span = (0, 0) if entity == "error" else (0, 1)

        def draw() -> list[str] | None:
            record = listing.record()
            return None if record is None else _cells(record, columns)

        rows = _fill_rows(style, chars, columns, draw)
        if fact is not None:
            record = listing.record(fact)
            assert record is not None
            fact_row = _cells(record, columns)
        table = {
            "service": "services",
            "error": "error_codes",
            "flag": "flags",
            "dataset": "datasets",
        }[entity]
        sql = f"SELECT {', '.join(columns)} FROM {table} ORDER BY updated_at DESC;"
    mark = None
    if fact_row is not None and fact_at is not None:
        mark = round(fact_at * len(rows))
        rows.insert(mark, fact_row)
    lines, needle = _render_table(style, columns, rows, mark, span)
    source = f"the {sql.split(' FROM ')[1].split()[0]} query"
    return Output("\n".join(lines), "table", "query_db", {"sql": sql}, source, needle)


# Prose.

_SENTENCES = (
    "The {svc} reads {noun} from {table} and publishes a summary every {n} minutes.",
    "During the {month} incident the {svc} fell behind by {n} minutes because the lag alarm "
    "was muted.",
    "We decided against a shared cache between the {svc} and the {svc2} to keep their failure "
    "modes apart.",
    "Backfills run from the admin console and are throttled so the primary keeps some headroom.",
    "If the {svc} stops consuming, check the dead-letter queue first; most stalls come from a "
    "single poisoned message.",
    "All writes go through the outbox, so a crash between the commit and the publish never "
    "loses an event.",
    "The nightly job compacts {noun} older than {n} days into monthly partitions.",
    "Dashboards for the {svc} live in the {sys} folder in Grafana.",
    "Alerts fire when the error rate of the {svc} stays above {pct}% for five minutes.",
    "Schema changes ship in two steps: add the column and backfill, then switch the reads.",
    "The {svc} is stateless, so scaling it out only needs more replicas.",
    "Credentials rotate automatically, but the {svc} caches its token for up to an hour.",
    "Retries use exponential backoff with jitter and give up after {k} attempts.",
    "The {sys} on-call reviews every change to the public contract of the {svc}.",
    "Load tests run against staging every Monday and the results go to #{sys}-perf.",
    "Reads that can tolerate a few seconds of staleness should go to a replica.",
    "The {svc} emits one event per {noun} change; consumers must be idempotent.",
    "Nobody should write to {table} by hand; use the admin endpoints instead.",
    "We keep the old code path behind a flag until the {svc} has run a full billing cycle.",
    "Each {noun} batch is capped so that a single tenant cannot starve the others.",
)
_HEADINGS = (
    "Overview", "Architecture", "Data flow", "Configuration", "Failure modes", "Alerts",
    "Rollout plan", "Open questions", "Dependencies", "Operations", "Capacity", "Migration",
    "Testing", "Security", "Background", "Alternatives considered",
)  # fmt: skip
_MONTHS = ("January", "March", "April", "June", "August", "October", "November")


class _Prose:
    def __init__(self, world: World, held: bool) -> None:
        self.world = world
        self.rng = world.rng
        self.held = held

    def sentence(self) -> str:
        world, rng = self.world, self.rng
        if rng.random() < (0.25 if self.held else 0.12):
            mention = world.distractor() if self.held else world.background()
            return mention.sentence(rng)[0]
        return pick(rng, _SENTENCES).format(
            svc=world.slug(), svc2=world.slug(), noun=pick(rng, NOUNS).replace("-", " "),
            table=world.table_name(), n=rand(rng, 2, 90), month=pick(rng, _MONTHS),
            sys=world.system(), pct=rand(rng, 1, 9), k=rand(rng, 3, 8),
        )  # fmt: skip

    def paragraph(self, fact: Mention | None = None) -> tuple[str, str | None, str | None]:
        sentences = list(dict.fromkeys(self.sentence() for _ in range(rand(self.rng, 2, 6))))
        needle = line = None
        if fact is not None:
            line, needle = fact.sentence(self.rng)
            sentences.insert(rand(self.rng, 0, len(sentences)), line)
        return " ".join(sentences), needle, line

    def bullets(self) -> list[str]:
        return [f"- {self.sentence()}" for _ in range(rand(self.rng, 2, 5))]

    def fence(self) -> list[str]:
        world, rng = self.world, self.rng
        slug = world.slug()
        command = pick(
            rng,
            (
                f"kubectl -n {world.home} rollout restart deploy/{slug}",
                f"make backfill TABLE={world.table_name()} SINCE=2024-01-01",
                f"psql -c 'SELECT count(*) FROM {world.table_name()}'",
                f"./scripts/{pick(rng, VERBS)}.sh --service {slug} --dry-run",
            ),
        )
        return ["```bash", command, "```"]


def prose_output(world: World, chars: int, fact_at: float | None) -> Output:
    rng = world.rng
    prose = _Prose(world, fact_at is not None)
    out = Lines(chars, fact_at)
    kind = pick(rng, ("design", "runbook", "readme", "postmortem"))
    subject = world.slug()
    title = {
        "design": f"Design: {pick(rng, VERBS)} {pick(rng, NOUNS)} in the {subject}",
        "runbook": f"Runbook: {subject}",
        "readme": f"{world.home}-platform",
        "postmortem": f"Postmortem: {subject} degradation",
    }[kind]
    out.extend([f"# {title}", "", prose.paragraph()[0], ""])
    fact_line = None
    while out.room() or out.pending():
        roll = rng.random()
        heading = out.lines[-2].startswith("#")  # a heading is followed by text
        if roll < 0.15 and not heading:
            out.extend([f"## {pick(rng, _HEADINGS)}", ""])
        elif roll < 0.25 and not heading:
            out.extend([f"### {world.slug().replace('-', ' ').capitalize()}", ""])
        elif roll < 0.37 and not out.due():
            out.extend([*prose.bullets(), ""])
        elif roll < 0.42 and not out.due():
            out.extend([*prose.fence(), ""])
        else:
            text, needle, line = prose.paragraph(world.fact if out.due() else None)
            if needle is not None:
                out.needle, fact_line = needle, line
            out.extend([text, ""])
    folder = {
        "design": "docs/design",
        "runbook": "docs/runbooks",
        "readme": "",
        "postmortem": "docs/postmortems",
    }[kind]
    path = f"{folder}/{subject}.md".lstrip("/") if folder else "README.md"
    if rng.random() < 0.3:
        url = f"https://wiki.acme.internal/{kind}/{subject}"
        return Output(
            out.text(),
            "prose",
            "fetch_doc",
            {"url": url},
            f"the {kind} page",
            out.needle,
            fact_line,
        )
    return Output(out.text(), "prose", "read_file", {"path": path}, path, out.needle, fact_line)
