"""What the output shapes of ``agent_large_b`` share: the vocabulary, the entities of one
history (:class:`World`), the planted fact (:class:`Plant`), what a distractor must not
contain (:class:`Avoid`) and :func:`fill`, which lays records out up to a size with the
fact's record at a uniformly random index among them."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

T = TypeVar("T")

SERVICES = (
    "checkout-api", "payments-gateway", "ledger-writer", "ledger-reader", "orders-service",
    "inventory-sync", "search-indexer", "notification-dispatcher", "auth-proxy",
    "billing-worker", "fraud-scorer", "catalog-api", "recommendation-svc", "shipping-quotes",
    "tax-engine", "session-store", "image-resizer", "report-builder", "email-relay",
    "webhook-fanout", "feature-flags", "pricing-engine", "cart-service", "refund-processor",
    "kyc-verifier", "geo-lookup", "audit-exporter", "metrics-gateway", "event-router",
    "media-transcoder", "loyalty-points", "invoice-renderer", "currency-rates",
    "address-validator", "support-portal", "partner-api", "sms-gateway", "warehouse-sync",
    "returns-service", "settlement-batch",
)  # fmt: skip
REGIONS = (
    "eu-west-1", "eu-central-1", "eu-north-1", "us-east-1", "us-east-2", "us-west-2",
    "ap-south-1", "ap-southeast-1", "ap-northeast-1", "sa-east-1", "ca-central-1",
    "me-central-1",
)  # fmt: skip
ENVS = ("prod", "staging", "canary", "perf", "sandbox", "dr")
TEAMS = (
    "team-payments", "team-ledger", "platform-core", "data-eng", "search-relevance",
    "growth-infra", "identity", "storage-sre", "observability", "checkout-squad", "risk-ml",
    "fulfilment", "edge-networking", "billing-ops", "partner-integrations", "mobile-backend",
    "comms", "catalog-data", "finance-systems", "security-eng", "developer-productivity",
    "sre-emea", "sre-amer", "sre-apac",
)  # fmt: skip
DATABASES = (
    "ledger", "orders", "payments", "catalog", "sessions", "audit", "inventory", "billing",
    "events", "identity", "refunds", "pricing",
)  # fmt: skip
_TENANT_A = (
    "acme", "globex", "initech", "umbrella", "stark", "wayne", "hooli", "vandelay", "tyrell",
    "cyberdyne", "wonka", "oscorp", "aperture", "nakatomi", "sterling", "dunder", "soylent",
    "monarch", "bluth", "wernham", "prestige", "kwik", "duff", "planet", "octan", "virtucon",
    "massive", "zorg", "gekko", "tessier",
)  # fmt: skip
_TENANT_B = (
    "retail", "logistics", "health", "media", "foods", "labs", "bank", "travel", "energy",
    "games", "apparel", "motors", "pharma", "telecom", "insurance", "studios", "grocers",
    "airlines", "realty", "mining",
)  # fmt: skip
TASKS = (
    "compaction", "backup", "vacuum", "report", "export", "reindex", "cleanup", "rotate-keys",
    "sync", "snapshot", "reconcile", "archive", "warmup", "purge",
)  # fmt: skip


class RedrawError(Exception):
    """A draw that cannot meet the case's constraints: the case is drawn again."""


@dataclass(frozen=True)
class Plant:
    """The planted fact: ``needle`` is in ``fact_line``, which is in the output's text, and
    ``ident`` are the strings that together name the fact's record (the question's subject):
    no other record of the history holds all of them."""

    needle: str
    fact_line: str
    question: str
    ident: tuple[str, ...]


@dataclass(frozen=True)
class Output:
    tool: str
    args: dict[str, Any]
    text: str
    kind: str
    plant: Plant | None = None


class Avoid:
    """What a distractor record must not contain: the needle, or all the fact's ident
    strings at once (another record about the same subject would make the question
    ambiguous)."""

    def __init__(self, needle: str = "", ident: tuple[str, ...] = ()) -> None:
        self.needle = needle
        self.ident = ident

    def ok(self, text: str) -> bool:
        if self.needle and self.needle in text:
            return False
        return not (self.ident and all(part in text for part in self.ident))


@dataclass(frozen=True)
class Spec:
    """One output to draw: its target size and hard cap in characters, whether the fact is
    planted in it, and what its records must avoid."""

    chars: int
    cap: int
    plant: bool
    avoid: Avoid


def loguniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def unambiguous(values: tuple[int, ...]) -> tuple[int, ...]:
    """The values whose digits do not begin another value's: a fact's value drawn from these
    leaves its distractors the whole range (``replicas: 4`` would rule out 40-48)."""
    texts = {str(v) for v in values}
    return tuple(v for v in values if not any(t != str(v) and t.startswith(str(v)) for t in texts))


def hexid(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(4 * digits):0{digits}x}"


def version(rng: random.Random) -> str:
    return f"{rng.randint(1, 4)}.{rng.randint(0, 42)}.{rng.randint(0, 19)}"


def cron(rng: random.Random) -> str:
    minute, hour = rng.randint(0, 59), rng.randint(0, 23)
    return rng.choice(
        (
            f"{minute} {hour} * * *",
            f"*/{rng.choice((5, 10, 15, 20, 30))} * * * *",
            f"{minute} {hour} * * {rng.randint(0, 6)}",
            f"{minute} */{rng.choice((2, 3, 4, 6, 8, 12))} * * *",
            f"{minute} {hour} {rng.randint(1, 28)} * *",
            f"{minute} {hour} * * 1-5",
        )
    )


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def group_of(service: str) -> str:
    return service.split("-", maxsplit=1)[0]


def line_of(text: str, needle: str) -> str:
    """The line of ``text`` holding ``needle``."""
    at = text.index(needle)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)]


def plant(
    record: str, needle: str, question: str, ident: tuple[str, ...], fact_line: str = ""
) -> Plant:
    """The plant of a fact record (its line by default), checked for consistency."""
    if record.count(needle) != 1:
        raise RedrawError("the needle occurs twice in its own record")
    line = fact_line or line_of(record, needle)
    assert needle in line, (needle, line)
    assert line in record, (line, record)
    assert all(part in record for part in ident), (ident, record)
    assert needle not in question, (needle, question)
    return Plant(needle, line, question, ident)


class World:
    """The entities one history talks about, drawn once per history."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.services = rng.sample(SERVICES, rng.randint(14, 24))
        self.regions = rng.sample(REGIONS, rng.randint(4, 8))
        self.teams = rng.sample(TEAMS, rng.randint(8, 16))
        self.databases = rng.sample(DATABASES, rng.randint(4, 9))
        names = [f"{a}-{b}" for a in _TENANT_A for b in _TENANT_B]
        self.tenants = rng.sample(names, rng.randint(80, 200))
        self.hosts = [
            f"ip-10-{rng.randint(0, 63)}-{rng.randint(0, 255)}-{rng.randint(1, 254)}"
            for _ in range(rng.randint(12, 40))
        ]
        self.now = datetime(2025, 1, 6, tzinfo=UTC) + timedelta(
            days=rng.randint(0, 330), seconds=rng.randint(0, 86_399)
        )
        self.focus_service = rng.choice(self.services)
        self.focus_region = rng.choice(self.regions)

    def service(self) -> str:
        return self.rng.choice(self.services)

    def region(self) -> str:
        return self.rng.choice(self.regions)

    def team(self) -> str:
        return self.rng.choice(self.teams)

    def database(self) -> str:
        return self.rng.choice(self.databases)

    def tenant(self) -> str:
        return self.rng.choice(self.tenants)

    def host(self) -> str:
        return self.rng.choice(self.hosts)

    def namespace(self, service: str) -> str:
        return f"{group_of(service)}-{self.rng.choice(ENVS)}"

    def shard(self) -> str:
        return f"{self.database()}-{self.rng.randint(1, 32):02d}"

    def ago(self, max_seconds: float) -> datetime:
        return self.now - timedelta(seconds=self.rng.uniform(0, max_seconds))


def planted(spec: Spec, fact: Plant) -> Spec:
    """``spec`` for the distractors of the output holding ``fact``."""
    return Spec(spec.chars, spec.cap, False, Avoid(fact.needle, fact.ident))


STAMP = "@@TS@@"
KLOG = "@@KLOG@@"  # the same time, as klog prints it inside a syslog line


def stamp(
    rng: random.Random,
    records: list[str],
    span: float,
    end: datetime,
    render: Callable[[datetime], str],
) -> list[str]:
    """``records`` with their ``STAMP`` placeholders replaced by increasing times over the
    ``span`` seconds before ``end``."""
    offsets = sorted(rng.uniform(0, span) for _ in records)
    stamped = []
    for record, offset in zip(records, offsets, strict=True):
        moment = end - timedelta(seconds=span - offset)
        text = record.replace(STAMP, render(moment), 1)
        if KLOG in text:
            text = text.replace(KLOG, moment.strftime("%m%d %H:%M:%S.%f"))
        stamped.append(text)
    return stamped


def fresh(make: Callable[[], T], seen: set[T]) -> T:
    """A draw of ``make`` not in ``seen`` (added to it); after 6 tries, the last one (large
    outputs may exhaust the subjects of small worlds)."""
    for _ in range(6):
        value = make()
        if value not in seen:
            break
    seen.add(value)
    return value


def _draw(make: Callable[[], str], avoid: Avoid) -> str:
    for _ in range(60):
        record = make()
        if avoid.ok(record):
            return record
    raise RedrawError("no distractor avoids the fact")


def layout(
    rng: random.Random,
    spec: Spec,
    make: Callable[[], str],
    *,
    fixed: int = 0,
    fact: str | None = None,
    sep: str = "\n",
) -> list[str]:
    """Records drawn from ``make``, about ``spec.chars`` characters in all once joined by
    ``sep`` (``fixed`` counts the output's header and footer) and never beyond ``spec.cap``;
    the ``fact`` record, when given, at a uniformly random index among them."""
    used = fixed + (len(fact) + len(sep) if fact is not None else 0)
    target, cap = spec.chars - used, spec.cap - used
    records: list[str] = []
    size = misses = 0
    while size < target:
        record = _draw(make, spec.avoid)
        if size + len(record) + len(sep) > cap:
            misses += 1
            if misses > 8:
                break
            continue
        records.append(record)
        size += len(record) + len(sep)
    if fact is not None:
        records.insert(rng.randint(0, len(records)), fact)
    return records


def fill(
    rng: random.Random,
    spec: Spec,
    make: Callable[[], str],
    *,
    fixed: int = 0,
    fact: str | None = None,
    sep: str = "\n",
) -> str:
    """The records of :func:`layout` joined by ``sep``."""
    return sep.join(layout(rng, spec, make, fixed=fixed, fact=fact, sep=sep))
