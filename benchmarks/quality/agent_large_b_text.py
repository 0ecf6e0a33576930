"""Text of ``agent_large_b``: runbook pages from ``search_docs`` (markdown), wiki pages from
``http_get`` (HTML) and result lists from ``web_search`` (titles, URLs and snippets). With
``spec.plant`` one sentence in the middle of a paragraph (or one snippet) holds the fact, and
other paragraphs hold sentences of the same form about other subjects."""

from __future__ import annotations

import html
import random
from collections.abc import Callable

from agent_large_b_world import (
    TASKS,
    Output,
    Spec,
    World,
    fill,
    hexid,
    plant,
    planted,
)

_FILLER = (
    "Check the {svc} dashboard in Grafana before you restart anything.",
    "{team} owns {svc}; page them through PagerDuty for anything customer-facing.",
    "During the last incident the {svc} pods in {region} ran out of memory after a config change.",
    "Do not scale {svc} below two replicas in {region}: the readiness probe needs a warm cache.",
    "Most alerts for {svc} resolve on their own once the upstream {svc2} recovers.",
    "The {db} primary in {region} fails over automatically and replicas catch up within minutes.",
    "Use `kubectl rollout undo deployment/{svc}` to roll back a bad release.",
    "Dashboards for {region} live in the {team} folder.",
    "If the queue depth keeps growing, pause the {task} job first and then drain the consumers.",
    "Capacity reviews happen every quarter; the last one flagged storage growth of {db}.",
    "When {svc} burns more than half of its monthly error budget, feature rollouts stop.",
    "The on-call handbook describes how to hand an incident over between time zones.",
    "Synthetic checks hit {svc} every minute from three regions.",
    "Logs older than two weeks are only in the archive bucket and take a while to query.",
    "Never run the {task} job by hand in production without telling {team} first.",
    "The {svc} client retries idempotent requests up to three times with jittered backoff.",
    "A spike in 499 responses usually means that clients gave up, not that {svc} failed.",
    "Connection pool exhaustion on {db} shows up first as timeouts in {svc}.",
    "Feature flags for {svc} are evaluated per request, so a flip takes effect at once.",
    "Check the cloud provider's status page for {region} before digging into our services.",
    "TLS terminates at the edge in {region} since the move to the new ingress controller.",
    "Watch the replica lag of {db}: above a few seconds, reads start to look stale.",
    "The {task} job of {db} is idempotent and safe to run again.",
    "Runbook owners review this page after every sev1 or sev2 incident.",
    "Traffic from {region} fails over to the nearest healthy region within about five minutes.",
    "{svc2} depends on {svc} for every write, so an outage of {svc} shows up there too.",
    "Ask {team} before changing the resource limits of {svc}.",
    "Disk usage above 85% on the {db} volumes pages the storage on-call.",
)
_TITLES = (
    "Runbook: {svc}", "{db} database operations", "On-call guide for {team}",
    "Incident review: {svc} in {region}", "Backup and restore policy", "Certificate management",
    "Rate limiting at the edge", "Change management and maintenance windows",
    "Escalation policy", "Capacity planning notes: {db}",
)  # fmt: skip
_HEADINGS = (
    "Overview", "Symptoms", "Diagnosis", "Mitigation", "Rollback", "Escalation", "Background",
    "Known issues", "Dashboards", "Policy", "Limits", "Contacts", "FAQ", "History",
)  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ISSUERS = ("vault-pki", "internal-ca", "spiffe")
_TIERS = ("secondary", "managers", "incident-command")


def _slots(rng: random.Random, w: World) -> dict[str, str]:
    return {
        "svc": w.service(),
        "svc2": w.service(),
        "team": w.team(),
        "region": w.region(),
        "db": w.database(),
        "task": rng.choice(TASKS),
    }


def _sentence(rng: random.Random, w: World) -> str:
    return rng.choice(_FILLER).format(**_slots(rng, w))


def _policy(rng: random.Random, w: World) -> tuple[str, str, str, tuple[str, ...]]:
    """A policy sentence, its needle, a question it answers and the strings naming it."""
    svc, db, region = w.service(), w.database(), w.region()
    topic = rng.randrange(5)
    if topic == 0:
        n = rng.choice((7, 14, 21, 30, 35, 45, 60, 90, 120, 400))
        return (
            f"Point-in-time backups of the {db} cluster in {region} are kept for {n} days "
            "before they move to cold storage.",
            f"kept for {n} days",
            f"How many days are point-in-time backups of the {db} cluster in {region} kept?",
            (f"{db} cluster in {region}", "backups"),
        )
    if topic == 1:
        n = rng.choice((3, 7, 10, 14, 30, 45, 60, 90))
        return (
            f"Internal mTLS certificates of {svc} are rotated every {n} days by the "
            f"{rng.choice(_ISSUERS)} issuer.",
            f"rotated every {n} days",
            f"How often are the mTLS certificates of {svc} rotated?",
            (f"certificates of {svc} are",),
        )
    if topic == 2:
        n = rng.randint(2, 120) * 25
        return (
            f"The public {svc} API allows {n} requests per second per tenant before it answers "
            "with 429.",
            f"allows {n} requests per second",
            f"What per-tenant request rate does the public {svc} API allow?",
            (f"public {svc} API",),
        )
    if topic == 3:
        hour = rng.randint(0, 21)
        window = f"{rng.choice(_DAYS)} {hour:02d}:00-{hour + 2:02d}:00 UTC"
        return (
            f"Schema migrations on the {db} database may only run during the {window} "
            "maintenance window.",
            window,
            f"When are schema migrations on the {db} database allowed to run?",
            (f"migrations on the {db} database",),
        )
    rotation = f"{w.team()}-{rng.choice(_TIERS)}"
    minutes = rng.choice((5, 10, 15, 20, 30))
    return (
        f"If a {svc} page is not acknowledged within {minutes} minutes, it escalates to the "
        f"{rotation} rotation.",
        f"{rotation} rotation",
        f"Which rotation does an unacknowledged {svc} page escalate to?",
        (f"If a {svc} page",),
    )


def _paragraph(rng: random.Random, w: World, middle: str = "") -> str:
    count = rng.randint(2, 6)
    sentences = [t.format(**_slots(rng, w)) for t in rng.sample(_FILLER, count)]
    cut = rng.randint(1, count - 1)
    before, after = sentences[:cut], sentences[cut:]
    if not middle and rng.random() < 0.35:
        middle = _policy(rng, w)[0]
    return " ".join([*before, middle, *after]) if middle else " ".join(before + after)


def _code(rng: random.Random, w: World) -> str:
    svc = w.service()
    return rng.choice(
        (
            f"kubectl -n {w.namespace(svc)} rollout status deployment/{svc}",
            f"kubectl -n {w.namespace(svc)} logs deploy/{svc} --since=30m | grep -i error",
            f"psql -h {w.shard()}.{w.region()}.db.internal -c 'select * from pg_stat_activity'",
            f"curl -s https://{svc}.internal/healthz | jq .",
        )
    )


def _block(rng: random.Random, w: World, markup: str, middle: str = "") -> str:
    """One section: a heading, paragraphs, maybe a list or a command; sometimes a new page."""
    parts: list[tuple[str, str]] = []
    if rng.random() < 0.15:
        title = rng.choice(_TITLES).format(**_slots(rng, w))
        parts.append(("h1", title))
    parts.append(("h2", rng.choice(_HEADINGS)))
    paragraphs = [_paragraph(rng, w) for _ in range(rng.randint(1, 3))]
    if middle:
        paragraphs.insert(rng.randint(0, len(paragraphs)), _paragraph(rng, w, middle))
    parts += [("p", p) for p in paragraphs]
    if rng.random() < 0.4:
        parts.append(("ul", "\n".join(_sentence(rng, w) for _ in range(rng.randint(2, 5)))))
    if rng.random() < 0.3:
        parts.append(("pre", _code(rng, w)))
    return "\n\n".join(_markup(tag, text, markup) for tag, text in parts)


def _markup(tag: str, text: str, markup: str) -> str:
    if markup == "markdown":
        if tag == "h1":
            slug = text.lower().replace(" ", "-").replace(":", "")
            return f"---\nsource: https://wiki.internal/ops/{slug}\n---\n# {text}"
        if tag == "h2":
            return f"## {text}"
        if tag == "ul":
            return "\n".join(f"- {item}" for item in text.split("\n"))
        return f"```bash\n{text}\n```" if tag == "pre" else text
    if tag == "ul":
        return (
            "<ul>\n"
            + "\n".join(f"  <li>{html.escape(i)}</li>" for i in text.split("\n"))
            + "\n</ul>"
        )
    if tag == "pre":
        return f"<pre><code>{html.escape(text)}</code></pre>"
    return f"<{tag}>{html.escape(text, quote=False)}</{tag}>"


def docs(rng: random.Random, w: World, spec: Spec, kind: str = "") -> Output:
    kind = kind or ("prose" if rng.random() < 0.65 else "html")
    markup = "markdown" if kind == "prose" else "html"
    fact_record = fact = None
    if spec.plant:
        sentence, needle, question, ident = _policy(rng, w)
        fact_record = _block(rng, w, markup, sentence)
        fact = plant(fact_record, needle, question, ident, sentence)
        spec = planted(spec, fact)
    slots = _slots(rng, w)
    if markup == "markdown":
        query = rng.choice(_TITLES).format(**slots).lower()
        head = f"Found {rng.randint(3, 40)} documents for '{query}'. Full text follows.\n\n"
        tail = "\n"
        tool, args = "search_docs", {"query": query, "full_text": True}
    else:
        title = rng.choice(_TITLES).format(**slots)
        head = (
            f"<!DOCTYPE html>\n<html><head><title>{html.escape(title)} - Ops Wiki</title></head>\n"
            '<body>\n<nav class="breadcrumbs">Ops / Runbooks</nav>\n<main>\n'
        )
        tail = "\n</main>\n<footer>Ops Wiki &middot; internal</footer>\n</body></html>\n"
        page = f"{hexid(rng, 6)}-{title.lower().replace(' ', '-').replace(':', '')}"
        tool, args = "http_get", {"url": f"https://wiki.internal/pages/{page}"}
    make: Callable[[], str] = lambda: _block(rng, w, markup)  # noqa: E731
    body = fill(rng, spec, make, fixed=len(head + tail), fact=fact_record, sep="\n\n")
    return Output(tool, args, head + body + tail, kind, fact)


# --- web_search ---------------------------------------------------------------------------

_PROJECTS = (
    "ingress-nginx", "cert-manager", "Envoy", "PgBouncer", "PostgreSQL", "Kafka", "Redis",
    "containerd", "CoreDNS", "Karpenter", "Argo CD", "Prometheus", "Istio", "Cilium", "etcd",
)  # fmt: skip
_ISSUES = (
    "memory leak under HTTP/2 load", "connection reset on config reload",
    "certificate renewal loop", "deadlock during leader election", "DNS timeouts under high QPS",
    "WAL replay stall after a crash", "slow startup with many CRDs",
    "goroutine leak in the metrics endpoint", "retry of non-idempotent requests",
    "OOM when compacting large partitions",
)  # fmt: skip


def _release(rng: random.Random) -> str:
    return f"v{rng.randint(0, 3)}.{rng.randint(1, 45)}.{rng.randint(0, 15)}"


def _url(rng: random.Random, project: str, issue: str) -> str:
    slug = issue.lower().replace(" ", "-").replace("/", "")
    repo = project.lower().replace(" ", "-")
    number = rng.randint(100, 40_000)
    author = rng.choice(("sre-notes", "infra-weekly", "k8s-tales"))
    return rng.choice(
        (
            f"https://github.com/{repo}/{repo}/issues/{number}",
            f"https://stackoverflow.com/questions/{number * 1_931}/{repo}-{slug}",
            f"https://discuss.kubernetes.io/t/{repo}-{slug}/{number}",
            f"https://serverfault.com/questions/{number * 37}/{slug}",
            f"https://medium.com/@{author}/{slug}-{hexid(rng, 12)}",
            f"https://news.ycombinator.com/item?id={number * 1_009}",
        )
    )


def _result(rng: random.Random, index: int, snippet: str, project: str, issue: str) -> str:
    title = rng.choice(
        (
            f"{project}: {issue}",
            f"Fixing the {issue} in {project}",
            f"[{project}] {issue} #{rng.randint(100, 40_000)}",
        )
    )
    return f"{index}. {title}\n   {_url(rng, project, issue)}\n   {snippet}"


def _snippet(rng: random.Random, project: str, issue: str, release: str) -> str:
    return rng.choice(
        (
            f"The {issue} in {project} was fixed in {release}; upgrade if you see it.",
            f"We hit the {issue} with {project} {release} and had to roll back.",
            f"Workaround for the {issue}: lower the worker count until {project} ships a fix.",
            f"Release notes for {project} {release}: performance work and smaller fixes.",
        )
    )


def web_search(rng: random.Random, w: World, spec: Spec, kind: str = "search") -> Output:
    fact_record = fact = None
    project, issue = rng.choice(_PROJECTS), rng.choice(_ISSUES)
    if spec.plant:
        release = _release(rng)
        sentence = f"The {issue} in {project} was fixed in {release}; upgrade if you see it."
        fact_record = _result(rng, 0, sentence, project, issue)
        question = f"Which {project} release fixed the {issue}?"
        fact = plant(fact_record, f"fixed in {release}", question, (f"The {issue} in {project}",))
        spec = planted(spec, fact)

    def make() -> str:
        p = project if rng.random() < 0.3 else rng.choice(_PROJECTS)
        i = issue if rng.random() < 0.3 else rng.choice(_ISSUES)
        return _result(rng, 0, _snippet(rng, p, i, _release(rng)), p, i)

    body = fill(rng, spec, make, fixed=40, fact=fact_record, sep="\n\n")
    numbered = "\n\n".join(
        f"{n}.{block.split('.', 1)[1]}" for n, block in enumerate(body.split("\n\n"), 1)
    )
    query = f"{project} {issue}"
    return Output(
        "web_search", {"query": query, "num_results": 20}, numbered + "\n", "search", fact
    )
