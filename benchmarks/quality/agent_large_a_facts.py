"""Facts for ``agent_large_a``: subjects, topics, values, and each fact's renderings.

A *mention* states one topic's value for one subject: the port of ``billing-replica``, the
error code ``billing-worker`` returns when a row lock times out, the rollout of the
``checkout.async_refunds`` flag, the table holding the ``billing.invoices`` dataset. The
planted fact is one mention; the distractors are mentions of the same topic for other
subjects (many of them sharing a word with the fact's subject) and mentions of other topics
for the fact's subject. A mention renders as a line of code, a log message, a record (JSON
object or table row) or a sentence of prose; each rendering marks its *needle*, the short
substring that identifies the value (``⟦...⟧`` in the templates below).

:class:`World` holds one history's vocabulary and guarantees the rules the generator checks:
no value of the fact's topic other than the fact's own equals the fact's value, and no
mention other than the fact pairs the fact's subject with the fact's topic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any, TypeVar

T = TypeVar("T")

SYSTEMS = (
    "billing", "ledger", "payments", "checkout", "invoicing", "refunds", "search", "catalog",
    "inventory", "pricing", "orders", "shipping", "fulfillment", "identity", "auth", "sessions",
    "notifications", "email", "webhooks", "analytics", "reporting", "metrics", "audit", "fraud",
    "risk", "tax", "subscriptions", "accounts", "profiles", "recommendations", "media",
    "uploads", "exports", "gateway", "routing", "geo", "support", "onboarding", "payouts",
    "disputes",
)  # fmt: skip
ROLES = (
    "api", "worker", "replica", "primary", "cache", "queue", "scheduler", "gateway", "exporter",
    "ingest", "consumer", "producer", "proxy", "indexer", "sync", "webhook", "cron", "admin",
    "grpc", "stream",
)  # fmt: skip
TEAMS = (
    "team-payments", "team-ledger", "team-core-infra", "team-growth", "team-search",
    "team-identity", "team-platform", "team-data-eng", "team-risk", "team-fulfillment",
    "team-mobile", "team-sre", "team-observability", "team-pricing", "team-catalog",
    "team-notifications", "team-checkout", "team-storage", "team-api-platform",
    "team-billing-ops", "team-trust-safety", "team-reporting", "team-integrations",
    "team-devex",
)  # fmt: skip
FEATURES = (
    "async-refunds", "new-pricing-engine", "batch-exports", "smart-retries", "digest-emails",
    "v2-checkout", "ledger-sharding", "instant-payouts", "fuzzy-search", "tax-autofill",
    "multi-currency", "bulk-invoices", "webhook-v3", "session-pinning", "lazy-images",
    "streaming-exports", "partial-captures", "fraud-model-v4", "cached-quotes", "grpc-transport",
)  # fmt: skip
NOUNS = (
    "invoices", "refunds", "ledger-entries", "payouts", "events", "sessions", "line-items",
    "disputes", "balances", "snapshots", "audit-records", "exports", "subscriptions", "accounts",
    "deliveries", "price-points", "shipments", "tax-lines", "chargebacks", "cursors",
)  # fmt: skip
REGIONS = ("eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-2", "sa-east-1")
ENVS = ("prod", "staging", "canary", "dev")


@dataclass(frozen=True)
class Condition:
    """A failure an error code names: identifier, clause ("a row lock times out"), noun."""

    ident: str
    clause: str
    noun: str


CONDITIONS = tuple(
    Condition(*row)
    for row in (
        ("LOCK_TIMEOUT", "a row lock times out", "lock timeout"),
        ("ISSUER_DECLINED", "the card issuer declines", "issuer decline"),
        ("DUPLICATE_REQUEST", "an idempotency key is reused", "duplicate request"),
        ("STALE_CURSOR", "the sync cursor is stale", "stale cursor"),
        ("UPSTREAM_THROTTLED", "the upstream answers 429", "upstream throttling"),
        ("SCHEMA_MISMATCH", "the payload schema does not match", "schema mismatch"),
        ("QUOTA_EXCEEDED", "the account quota is exceeded", "quota exceeded"),
        ("TOKEN_EXPIRED", "the service token has expired", "expired token"),
        ("CURRENCY_UNSUPPORTED", "the currency is not supported", "unsupported currency"),
        ("PARTITION_MISSING", "the target partition is missing", "missing partition"),
        ("SIGNATURE_INVALID", "a webhook signature does not verify", "invalid signature"),
        ("DEADLINE_EXCEEDED", "the downstream deadline is exceeded", "deadline exceeded"),
        ("REPLICA_LAG", "replica lag is above the limit", "replica lag"),
        ("CONFLICTING_UPDATE", "two updates race on the same record", "conflicting update"),
        ("PAYLOAD_TOO_LARGE", "the payload is over the size limit", "oversized payload"),
    )
)


@dataclass(frozen=True)
class Subject:
    """What a mention is about: a service, a feature flag or a dataset, named by two words."""

    kind: str  # "service", "flag" or "dataset"
    first: str
    second: str

    @property
    def slug(self) -> str:
        if self.kind == "service":
            return f"{self.first}-{self.second}"
        return f"{self.first}.{self.second.replace('-', '_')}"

    @property
    def words(self) -> str:
        return f"{self.first} {self.second.replace('-', ' ')}"

    @property
    def const(self) -> str:
        return f"{self.first}_{self.second}".replace("-", "_").upper()

    @property
    def camel(self) -> str:
        return "".join(part.capitalize() for part in re.split(r"[-_]", self.const.lower()))


@dataclass(frozen=True)
class Topic:
    """What a mention states. ``key`` names it in records, ``const`` in identifiers; the
    templates use ``{words}``, ``{slug}``, ``{v}`` (the value as text) and a few fillers."""

    name: str
    entity: str  # the subject kind: "service", "error" (a service and a condition), "flag", ...
    key: str
    const: str
    questions: tuple[str, ...]
    log: tuple[str, ...]
    prose: tuple[str, ...]


TOPICS: dict[str, Topic] = {
    topic.name: topic
    for topic in (
        Topic(
            "port",
            "service",
            "port",
            "PORT",
            (
                "which port does the {words} listen on?",
                "what port is the {words} served on?",
                "which port should clients use to reach the {words}?",
            ),
            (
                "pool ready for {slug}: connected to ⟦{host}:{v}⟧ (size={n})",
                "⟦{slug} listening on 0.0.0.0:{v}⟧",
                "dialing {slug} at ⟦{host}:{v}⟧ (attempt 1 of 3)",
            ),
            (
                "The {words} listens on ⟦port {v}⟧ and accepts only TLS connections from the mesh.",
                "Clients reach the {words} on ⟦port {v}⟧; the old default port is closed.",
                "To debug the {words} locally, forward ⟦port {v}⟧ with `kubectl port-forward`.",
            ),
        ),
        Topic(
            "timeout",
            "service",
            "timeout_ms",
            "TIMEOUT_MS",
            (
                "what is the request timeout for the {words}?",
                "what timeout, in milliseconds, applies to calls to the {words}?",
                "how long is the {words} timeout?",
            ),
            (
                "http client configured: ⟦{slug} timeout={v}ms⟧ retries={r}",
                "request cancelled: ⟦{slug} timeout of {v}ms⟧ exceeded (attempt {r})",
            ),
            (
                "Calls to the {words} ⟦time out after {v} ms⟧; slower calls are retried once.",
                "The {words} applies ⟦a {v} ms timeout⟧ to every outbound request.",
                "We raised the {words} ⟦timeout to {v} ms⟧ after the batch jobs started to fail.",
            ),
        ),
        Topic(
            "owner",
            "service",
            "owner",
            "OWNER",
            (
                "which team owns the {words}?",
                "who is the owning team of the {words}?",
                "which team should I page about the {words}?",
            ),
            (
                "codeowners resolved: ⟦{slug} -> {v}⟧",
                "alert routed for {slug}: ⟦owner={v}⟧ severity={sev}",
            ),
            (
                "The {words} is owned by ⟦{v}⟧; page them through the on-call rotation.",
                "Ownership of the {words} moved to ⟦{v}⟧ last quarter.",
                "Changes to the {words} need a review from ⟦{v}⟧, its owners.",
            ),
        ),
        Topic(
            "version",
            "service",
            "version",
            "VERSION",
            (
                "which version of the {words} is deployed?",
                "what version is the {words} running?",
                "what version is the {words} pinned to?",
            ),
            (
                "rolled out ⟦{slug}:{v}⟧ to {env} ({n}/{n} pods ready)",
                "image resolved: registry.acme.internal/⟦{slug}:{v}⟧",
            ),
            (
                "Production runs ⟦{words} {v}⟧; the next release is still in staging.",
                "Pin the {words} to ⟦version {v}⟧ until the migration is done.",
                "The {words} was ⟦upgraded to {v}⟧ during the last maintenance window.",
            ),
        ),
        Topic(
            "base_url",
            "service",
            "base_url",
            "BASE_URL",
            (
                "what is the base URL of the {words}?",
                "which URL does the {words} serve its API under?",
            ),
            ("registered upstream {slug} at ⟦{v}⟧", "GET ⟦{v}⟧/healthz 200 {ms}ms"),
            (
                "The {words} is reachable at ⟦{v}⟧ from every cluster.",
                "Point the client of the {words} at ⟦{v}⟧; the old hostname redirects.",
            ),
        ),
        Topic(
            "rate_limit",
            "service",
            "rate_limit_rps",
            "RATE_LIMIT_RPS",
            (
                "what is the rate limit of the {words}?",
                "what rate limit, in requests per second, does the {words} allow?",
            ),
            (
                "rate limiter installed: ⟦{slug} limit={v} req/s⟧ burst={r}",
                "throttling {slug}: ⟦{slug} limit {v} req/s⟧ reached",
            ),
            (
                "The {words} is ⟦capped at {v} requests per second⟧ per tenant.",
                "⟦Above {v} requests per second⟧ the {words} answers 429.",
            ),
        ),
        Topic(
            "max_connections",
            "service",
            "max_connections",
            "MAX_CONNECTIONS",
            (
                "how many connections does the {words} pool allow at most?",
                "what is the maximum number of connections for the {words}?",
            ),
            (
                "⟦pool {slug} max_connections={v}⟧ idle_timeout={r}s",
                "connection limit reached: ⟦{slug} max_connections={v}⟧",
            ),
            (
                "The {words} accepts ⟦at most {v} concurrent connections⟧; the pooler queues the "
                "rest.",
                "Keep the {words} pool ⟦at {v} connections⟧ or the database runs out of slots.",
            ),
        ),
        Topic(
            "error_code",
            "error",
            "code",
            "CODE",
            (
                "which error code does the {words} return when {clause}?",
                "what error code does the {words} raise on {noun}?",
            ),
            (
                "request failed with ⟦{v}⟧: {noun} in {slug} (request_id={rid})",
                "{slug} rejected batch {n}: ⟦{v}⟧ ({noun})",
            ),
            (
                "When {clause}, the {words} fails the request with ⟦{v}⟧ and does not retry.",
                "A ⟦{v}⟧ from the {words} means {clause}.",
            ),
        ),
        Topic(
            "rollout",
            "flag",
            "rollout_percentage",
            "ROLLOUT_PCT",
            (
                "what rollout percentage is the {words} flag at?",
                "what is the current rollout of the {words} flag?",
            ),
            (
                "flag evaluated: ⟦{slug} rollout={v}%⟧ env={env}",
                "flags synced: ⟦{slug} at {v}%⟧ (rev {n})",
            ),
            (
                "The {words} flag is rolled out ⟦to {v}% of traffic⟧ for now.",
                "We hold the {words} flag ⟦at {v}% of traffic⟧ until the error budget recovers.",
            ),
        ),
        Topic(
            "table",
            "dataset",
            "table",
            "TABLE",
            ("which table stores the {words}?", "what is the name of the table holding {words}?"),
            (
                "INSERT INTO ⟦{v}⟧ (id, account_id, created_at) -- {n} rows",
                "copying {slug} into ⟦{v}⟧ ({n} rows)",
            ),
            (
                "The {words} live in ⟦{v}⟧; the older tables are read-only.",
                "Since the split, {words} are written to ⟦{v}⟧ only.",
            ),
        ),
    )
}


@dataclass(frozen=True)
class Mention:
    """One topic's value for one subject (and, for error codes, one condition)."""

    topic: Topic
    subject: Subject
    value: int | str
    condition: Condition | None = None

    @property
    def ident(self) -> str:
        """The constant's name in code: ``BILLING_REPLICA_PORT``."""
        if self.condition is not None:
            return f"{self.subject.const}_{self.condition.ident}"
        return f"{self.subject.const}_{self.topic.const}"

    @property
    def go_ident(self) -> str:
        return "".join(part.capitalize() for part in self.ident.lower().split("_"))

    @property
    def literal(self) -> str:
        return json.dumps(self.value)

    @property
    def record_key(self) -> str:
        """The key a map of code keeps it under: the subject's slug, plus the condition."""
        if self.condition is not None:
            return f"{self.subject.slug}/{self.condition.ident.lower()}"
        return self.subject.slug

    def fill(self, template: str, rng: Random) -> tuple[str, str]:
        """(text, needle) of a marked template filled for this mention."""
        condition = self.condition
        text = template.format(
            words=self.subject.words,
            slug=self.subject.slug,
            v=self.value,
            host=f"{self.subject.slug}-{rng.randint(1, 9)}.internal",
            n=rng.randint(2, 48),
            r=rng.randint(2, 9),
            ms=rng.randint(2, 90),
            rid=f"{rng.getrandbits(48):012x}",
            env=pick(rng, ENVS),
            sev=pick(rng, ("page", "ticket", "warn")),
            clause=condition.clause if condition else "",
            noun=condition.noun if condition else "",
        )
        return _unmark(text)

    def log_message(self, rng: Random) -> tuple[str, str]:
        return self.fill(pick(rng, self.topic.log), rng)

    def sentence(self, rng: Random) -> tuple[str, str]:
        return self.fill(pick(rng, self.topic.prose), rng)

    def question(self, rng: Random) -> str:
        condition = self.condition
        return pick(rng, self.topic.questions).format(
            words=self.subject.words,
            clause=condition.clause if condition else "",
            noun=condition.noun if condition else "",
        )


def _unmark(text: str) -> tuple[str, str]:
    start = text.index("⟦")
    end = text.index("⟧")
    needle = text[start + 1 : end]
    return text.replace("⟦", "").replace("⟧", ""), needle


def make_value(topic: Topic, subject: Subject, rng: Random) -> int | str:
    """A value of ``topic`` for ``subject``, drawn from the range a real system would use."""
    name = topic.name
    if name == "port":
        return rng.randint(1025, 64999)
    if name == "timeout":
        return 250 * rng.randint(2, 480)
    if name == "owner":
        return pick(rng, TEAMS)
    if name == "version":
        return f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 30)}"
    if name == "base_url":
        host = pick(
            rng,
            (
                f"{subject.slug}.{pick(rng, REGIONS)}.acme.internal",
                f"{subject.second}.{subject.first}.svc.acme.net",
                f"api.acme.internal/{subject.first}/{subject.second}",
            ),
        )
        return f"https://{host}/v{rng.randint(1, 5)}"
    if name == "rate_limit":
        return rng.randint(5, 5000)
    if name == "max_connections":
        return rng.randint(8, 400)
    if name == "error_code":
        prefix = subject.first[:4].upper()
        return pick(
            rng, (f"{prefix}-{rng.randint(1000, 9999)}", f"E_{prefix}_{rng.randint(100, 999)}")
        )
    if name == "rollout":
        return rng.randint(1, 99)
    if name == "table":
        base = f"{subject.first}_{subject.second.replace('-', '_')}"
        return pick(
            rng,
            (
                f"{base}_v{rng.randint(2, 9)}",
                f"{base}_{rng.randint(2019, 2025)}q{rng.randint(1, 4)}",
            ),
        )
    raise ValueError(name)


class World:
    """One history's vocabulary, its fact, and every random draw that could meet the fact."""

    def __init__(self, rng: Random, topic: Topic) -> None:
        self.rng = rng
        self.systems = rng.sample(SYSTEMS, rng.randint(10, 16))
        self.home = self.systems[0]  # the repository's own system
        self.roles = rng.sample(ROLES, rng.randint(10, 16))
        subject = self.subject(topic.entity)
        condition = pick(rng, CONDITIONS) if topic.entity == "error" else None
        self.fact = Mention(topic, subject, make_value(topic, subject, rng), condition)
        self.known: dict[tuple[str, Subject, Condition | None], int | str] = {}

    def subject(self, entity: str, first: str | None = None) -> Subject:
        rng = self.rng
        first = first or (self.home if rng.random() < 0.25 else pick(rng, self.systems))
        if entity == "flag":
            return Subject("flag", first, pick(rng, FEATURES))
        if entity == "dataset":
            return Subject("dataset", first, pick(rng, NOUNS))
        return Subject("service", first, pick(rng, self.roles))

    def value(
        self, topic: Topic, subject: Subject, condition: Condition | None = None
    ) -> int | str:
        """The value of ``topic`` for ``subject`` (the same every time it is asked, as in a
        real system), never the fact's value when ``topic`` is the fact's topic."""
        key = (topic.name, subject, condition)
        known = self.known.get(key)
        if known is None:
            known = self.known[key] = self.fresh(topic, subject)
        return known

    def fresh(self, topic: Topic, subject: Subject) -> int | str:
        """A new value of ``topic``, never the fact's value when ``topic`` is the fact's."""
        while True:
            value = make_value(topic, subject, self.rng)
            if topic is not self.fact.topic or value != self.fact.value:
                return value

    def version(self) -> str:
        return str(self.fresh(TOPICS["version"], self.fact.subject))

    def mention(self, topic: Topic, subject: Subject | None = None) -> Mention:
        """A mention of ``topic`` that is not the fact (another subject or condition)."""
        rng = self.rng
        entity = "service" if topic.entity == "error" else topic.entity
        while True:
            about = subject or self.subject(entity)
            condition = pick(rng, CONDITIONS) if topic.entity == "error" else None
            if (
                topic is self.fact.topic
                and about == self.fact.subject
                and condition == self.fact.condition
            ):
                subject = None
                continue
            return Mention(topic, about, self.value(topic, about, condition), condition)

    def distractor(self) -> Mention:
        """A mention close to the fact: its topic for a subject sharing a word with the fact's
        (or the same service with another condition), or another topic of the fact's subject."""
        rng = self.rng
        fact = self.fact
        roll = rng.random()
        if roll < 0.15 and fact.topic.entity == "service":
            others = [t for t in TOPICS.values() if t.entity == "service" and t is not fact.topic]
            return self.mention(pick(rng, others), fact.subject)
        if roll < 0.45:
            subject = self.subject(fact.subject.kind, fact.subject.first)
        elif roll < 0.7:
            first = pick(rng, self.systems)
            subject = Subject(fact.subject.kind, first, fact.subject.second)
        else:
            subject = None
        return self.mention(fact.topic, subject)

    def background(self) -> Mention:
        """Any topic's mention, for outputs that do not hold the fact."""
        if self.rng.random() < 0.4:
            return self.distractor()
        return self.mention(pick(self.rng, list(TOPICS.values())))

    # Names for the rest of the history: modules, paths, tests, tables, services.

    def slug(self) -> str:
        rng = self.rng
        return f"{pick(rng, self.systems)}-{pick(rng, self.roles)}"

    def system(self) -> str:
        return self.home if self.rng.random() < 0.4 else pick(self.rng, self.systems)

    def module(self) -> str:
        return f"{self.system()}.{pick(self.rng, MODULES)}"

    def table_name(self) -> str:
        return f"{self.system()}_{pick(self.rng, NOUNS).replace('-', '_')}"

    def test_name(self) -> str:
        rng = self.rng
        noun = pick(rng, NOUNS).replace("-", "_")
        return f"test_{pick(rng, VERBS)}_{noun}_{pick(rng, QUALIFIERS)}"

    def func_name(self) -> str:
        rng = self.rng
        return f"{pick(rng, VERBS)}_{pick(rng, NOUNS).replace('-', '_')}"


MODULES = (
    "pool", "client", "retry", "models", "handlers", "views", "tasks", "cursor", "export",
    "settings", "schema", "metrics", "auth", "serializers", "repository", "service", "events",
    "locks", "batching", "webhooks", "pagination", "limits", "config", "routes", "jobs",
)  # fmt: skip
VERBS = (
    "create", "update", "apply", "reconcile", "refund", "retry", "cancel", "settle", "export",
    "import", "validate", "render", "sync", "merge", "split", "schedule", "expire", "rotate",
    "paginate", "sign", "verify", "parse", "serialize", "lock", "release", "aggregate", "dedupe",
    "fetch", "load", "flush", "resolve", "normalize", "enqueue", "replay", "archive",
)  # fmt: skip
QUALIFIERS = (
    "after_timeout", "with_empty_batch", "when_cursor_is_stale", "on_duplicate_key",
    "for_multi_currency", "under_load", "with_partial_capture", "returns_404", "is_idempotent",
    "preserves_order", "handles_unicode", "rejects_negative_amount", "across_pages",
    "without_permissions", "with_expired_token", "in_dry_run", "after_restart", "concurrently",
    "with_legacy_schema", "on_replica", "skips_archived", "uses_cache", "respects_limit",
    "with_null_fields", "at_month_end", "logs_warning",
)  # fmt: skip


def rand(rng: Random, low: int, high: int) -> int:
    """``rng.randint(low, high)`` at a fraction of its cost (the hot loops draw millions)."""
    return low + int(rng.random() * (high - low + 1))


@dataclass
class Output:
    """One tool result: its text and the call that produced it, and the fact when planted."""

    text: str
    kind: str  # the shape: "log", "json", "code", "prose", "table", "diff", "listing", ...
    tool: str
    arguments: dict[str, Any]
    source: str  # how a user would name it: "the CI log", "src/billing/pool.py", ...
    needle: str | None = None
    fact_line: str | None = None  # when not the whole line holding the needle (prose)


class Lines:
    """A text built line by line to about ``chars`` characters, with the fact due at the
    fraction ``fact_at`` of it (``None``: no fact)."""

    def __init__(self, chars: int, fact_at: float | None) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.chars = chars
        self.fact_at = None if fact_at is None else fact_at * chars
        self.needle: str | None = None

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line) + 1

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.add(line)

    def due(self) -> bool:
        """Whether the fact should come next (it has not been planted and its place is here)."""
        return self.fact_at is not None and self.needle is None and self.size >= self.fact_at

    def pending(self) -> bool:
        return self.fact_at is not None and self.needle is None

    def room(self, reserve: int = 0) -> bool:
        return self.size < self.chars - reserve

    def text(self) -> str:
        return "\n".join(self.lines)


def pick(rng: Random, items: Sequence[T]) -> T:
    """``rng.choice(items)`` at a fraction of its cost."""
    return items[int(rng.random() * len(items))]
