"""Excerpts: texts cut where a reader would, the valuable segments kept, every gap marked."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import openai
from pycupel.conversation import variant_name
from pycupel.conversation.excerpts.answers import answer_patterns
from pycupel.conversation.excerpts.excerpt import render
from pycupel.conversation.excerpts.plan import ExcerptPlan, UnitOffer, allocate
from pycupel.conversation.excerpts.relevance import segment_values
from pycupel.conversation.excerpts.segments import PROSE_LINE, segment
from pycupel.conversation.versions import Shrink

MARKER = re.compile(r"\[\.\.\. ([\d,]+) (?:lines?|items?|members?) \(([\d,]+) tokens\) elided")

LISTING = json.dumps(
    {
        "services": [
            {
                "name": f"svc-{n}",
                "owner": f"team-{n % 7}",
                "version": f"{n}.{n % 5}.0",
                "port": 9000 + n,
                "notes": "steady and boring " * 12,  # records long enough to be cut
            }
            for n in range(40)
        ],
        "total": 40,
    },
    indent=2,
)


def tool_history(output: str, question: str, calls: int = 1) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an ops agent."}]
    for n in range(calls):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}
        messages.append({"role": "user", "content": f"step {n}: look it up"})
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        body = output if n == 0 else f"nothing of note in run {n}\n" * 30
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": body})
    messages.append({"role": "user", "content": question})
    return messages


# --------------------------------------------------------------------------- segments


def test_a_json_document_is_cut_into_its_records_and_their_members() -> None:
    segments = segment(LISTING)
    assert segments.shape == "json"
    texts = segments.texts()
    # Every record is cut into its members, each anchored to the record's first (its name).
    name = texts.index('"name": "svc-7"')
    version = texts.index('"version": "7.2.0"')
    assert segments.anchors[version] == name
    assert segments.groups[version] == segments.groups[name]


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("\n".join(f"2026-11-21T10:{n:02d}:00Z INFO worker {n} ok" for n in range(60)), "log"),
        (
            "\n".join(["| name | port |", "|---|---|"] + [f"| s{n} | {n} |" for n in range(30)]),
            "table",
        ),
        (
            "def main():\n    x = 1\n    return x\n\nclass A:\n    def f(self):\n        pass\n",
            "code",
        ),
        ("server:\n  port: 80\n  hosts:\n    - a\n    - b\nlimits:\n  rps: 5\n", "config"),
        ("# Title\n\nA paragraph of several plain words that goes on and on here.\n", "prose"),
    ],
)
def test_line_shapes(text: str, shape: str) -> None:
    segments = segment(text)
    assert segments.shape == shape
    # The segments cover the text, in order, byte for byte.
    assert "".join(segments.texts()) == text


def test_an_empty_text_has_no_segments() -> None:
    cut = segment("")
    assert (len(cut), cut.texts()) == (0, [])


def test_a_config_line_is_anchored_to_its_parents() -> None:
    text = "db:\n  primary:\n    port: 5432\n  replica:\n    port: 6543\n"
    segments = segment(text)
    texts = segments.texts()
    replica_port = texts.index("    port: 6543\n")
    assert texts[segments.anchors[replica_port]] == "  replica:\n"


def test_a_very_long_line_is_cut_into_sentences() -> None:
    text = " ".join(f"Sentence number {n} says something rather plain." for n in range(80))
    segments = segment(text)
    assert len(segments) > 10
    assert "".join(segments.texts()) == text


def test_a_long_prose_paragraph_is_cut_into_its_sentences() -> None:
    paragraph = (
        "The gateway is stateless, so scaling it out only needs more replicas. "
        "Since the split, tax lines are written to tax_lines_2024q3 only. "
        "Reads that can tolerate a few seconds of staleness should go to a replica. "
        "Nobody should write to the accounts table by hand; use the admin endpoints. "
        "Deploys of the gateway need a review by the on-call team before they roll out. "
        "The replicas are rebuilt every night from the latest snapshot of the primary."
    )
    assert len(paragraph) > PROSE_LINE
    text = "# Design\n\n" + paragraph + "\n\nShort closing line.\n"
    segments = segment(text)
    assert segments.shape == "prose"
    texts = segments.texts()
    assert "".join(texts) == text
    assert "Since the split, tax lines are written to tax_lines_2024q3 only. " in texts
    # Every piece of the paragraph stays under its section's heading.
    assert all(texts[segments.anchors[n]] == "# Design\n" for n in range(2, len(texts) - 2))


# --------------------------------------------------------------------------- rendering


def test_a_json_excerpt_stays_valid_json_and_marks_its_gaps() -> None:
    segments = segment(LISTING)
    texts = segments.texts()
    keep = {texts.index('"version": "7.2.0"')}
    excerpt = render(segments, keep, [5] * len(segments))
    document = json.loads(excerpt.text)  # valid JSON
    record = next(item for item in document["services"] if isinstance(item, dict))
    assert record["name"] == "svc-7"  # the anchor came with the kept member
    assert record["version"] == "7.2.0"
    assert any(isinstance(item, str) and "items" in item for item in document["services"])
    assert excerpt.elided
    assert all(gap.tokens > 0 for gap in excerpt.elided)


def test_gaps_name_their_lines_tokens_and_ref() -> None:
    text = "".join(f"line {n}\n" for n in range(100))
    segments = segment(text)
    refs: dict[str, str] = {}

    def remember(elided: str) -> str:
        ref = f"{len(refs):016x}"
        refs[ref] = elided
        return ref

    excerpt = render(segments, {50}, [2] * len(segments), remember)
    assert "line 50\n" in excerpt.text
    markers = MARKER.findall(excerpt.text)
    assert [int(lines) for lines, _ in markers] == [50, 49]
    assert [int(tokens.replace(",", "")) for _, tokens in markers] == [100, 98]
    # Each gap's text is remembered under the ref its marker names.
    for gap in excerpt.elided:
        assert gap.ref is not None
        assert f"ref {gap.ref}" in excerpt.text
    assert refs[excerpt.elided[0].ref] == "".join(f"line {n}\n" for n in range(50))


_RENDERED_TEXTS = st.sampled_from(
    [
        LISTING,
        json.dumps([{"id": n, "tags": ["a", "b"] * (n % 4), "note": "x" * 300} for n in range(30)]),
        "".join(
            f"2026-11-21T10:00:{n:02d}Z INFO step {n}\n" + ("" if n % 3 else "  at frame\n")
            for n in range(60)
        ),
        "# Notes\n\n" + "".join(f"Paragraph {n} says a thing.\n\n" for n in range(40)),
        "".join(f"| {n} | svc-{n} | {n * 3} |\n" for n in range(50)),
    ]
)


@settings(max_examples=60, deadline=None)
@given(_RENDERED_TEXTS, st.data(), st.sampled_from([0, 4, 30]))
def test_an_excerpt_holds_its_runs_and_gaps_as_a_walk_over_the_segments_finds_them(
    text: str, data: st.DataObject, marker: int
) -> None:
    from pycupel.conversation.excerpts.excerpt import _cheap_gaps

    segments = segment(text)
    count = len(segments)
    keep = data.draw(st.sets(st.integers(min_value=0, max_value=count - 1), max_size=count))
    tokens = data.draw(st.lists(st.integers(0, 20), min_size=count, max_size=count))
    excerpt = render(segments, keep, tokens, lambda elided: f"{len(elided):016x}", marker=marker)
    # The plain statement: the chosen segments with their anchors and the gaps too cheap
    # to mark, then each run of kept or elided segments in order, found one by one.
    chosen = set(keep)
    for position in keep:
        anchor = segments.anchors[position]
        while anchor >= 0:
            chosen.add(anchor)
            anchor = segments.anchors[anchor]
    chosen |= _cheap_gaps(segments, chosen, tokens, marker)
    walked: list[tuple[bool, int, int]] = []
    for position in range(count):
        if walked and walked[-1][0] == (position in chosen):
            walked[-1] = (walked[-1][0], walked[-1][1], position + 1)
        else:
            walked.append((position in chosen, position, position + 1))
    if segments.shape != "json":
        runs = [
            (segments.lines[a], segments.lines[b - 1], sum(tokens[a:b])) for k, a, b in walked if k
        ]
        gaps = [
            (segments.lines[a], segments.lines[b - 1], sum(tokens[a:b]))
            for k, a, b in walked
            if not k
        ]
        assert [(r.first_line, r.last_line, r.tokens) for r in excerpt.kept] == runs
        assert [(g.first_line, g.last_line, g.tokens) for g in excerpt.elided] == gaps
        assert [g.segments for g in excerpt.elided] == [b - a for k, a, b in walked if not k]
    else:
        json.loads(excerpt.text)
    assert sum(r.tokens for r in excerpt.kept) + sum(g.tokens for g in excerpt.elided) == sum(
        tokens
    )
    for position in keep:
        start, end = segments.spans[position]
        assert text[start:end] in excerpt.text


@given(
    st.integers(min_value=1, max_value=60).flatmap(
        lambda count: st.tuples(
            st.just(count), st.sets(st.integers(min_value=0, max_value=count - 1))
        )
    )
)
def test_the_segments_an_excerpt_records_are_its_chosen_ones_as_ranges(
    drawn: tuple[int, set[int]],
) -> None:
    from pycupel.conversation.excerpts.plan import _ranges

    count, chosen = drawn
    ranges = _ranges(count, chosen)
    assert [n for start, stop in ranges for n in range(start, stop)] == sorted(chosen)
    assert all(stop < start for (_, stop), (start, _) in pairwise(ranges))


@given(st.text())
def test_a_json_markers_words_are_quoted_as_json_quotes_them(words: str) -> None:
    from pycupel.conversation.excerpts.excerpt import _quoted

    assert _quoted(words) == json.dumps(words, ensure_ascii=False)
    assert _quoted(f"[... {words} ...]") == json.dumps(f"[... {words} ...]", ensure_ascii=False)


# --------------------------------------------------------------------------- values


def test_the_line_the_question_asks_about_is_worth_most() -> None:
    log = [f"2026-11-21 10:{n % 60:02d} INFO request {n} served in {n % 9} ms" for n in range(300)]
    log.insert(157, "2026-11-21 10:37 INFO connected to billing replica at db-7.internal:6543")
    segments = segment("\n".join(log))
    values = segment_values([segments], "which port does the billing replica listen on?")[0]
    best = max(range(len(values)), key=values.__getitem__)
    assert "db-7.internal:6543" in segments.texts()[best]


def test_a_line_counts_the_words_of_its_blank_separated_record() -> None:
    # kubectl describe of many pods: the node names the pod whose container restarted, a
    # blank line away from the restart count (no anchor links them).
    pods = [
        f"Name:         worker-{n}\nNode:         ip-10-0-{n}-{100 + n}\nContainers:\n"
        f"  worker:\n    Restart Count:  {3 * n + 1}\n"
        for n in range(12)
    ]
    segments = segment("\n".join(pods))
    assert segments.shape == "config"
    question = "How often did the worker restart on ip-10-0-7-107?"
    values = segment_values([segments], question)[0]
    texts = segments.texts()
    counts = [n for n, text in enumerate(texts) if "Restart Count" in text]
    best = max(counts, key=values.__getitem__)
    assert texts[best].strip() == "Restart Count:  22"


def _best(lines: list[str], query: str, labels: list[str] | None = None) -> int:
    values = segment_values([segment("\n".join(lines))], query, labels)[0]
    return max(range(len(values)), key=values.__getitem__)


def test_a_camel_case_name_matches_its_words() -> None:
    lines = [f"service{n}.timeoutMs = {100 + n}" for n in range(40)]
    lines[23] = "auditIndexer.listenPort = 7421"
    lines[31] = "audit log kept for a port review next week"
    assert _best(lines, "Which listen port does the audit indexer use?") == 23


def test_a_name_of_several_words_counts_where_it_stands_whole() -> None:
    # Shorter lines hold both words apart; BM25 alone prefers them.
    lines = [f"node {n}: consumer idle, search idle" for n in range(40)]
    lines[17] = "node 17: the search consumer is 4,210 messages behind its queue head"
    assert _best(lines, "state of the search consumer") == 17


def java_log(failing: str) -> str:
    """Error records of several services, each a timestamped line, its exception and a stack
    trace; the record of ``failing`` alone has a cause naming a unique constraint."""
    records = []
    services = ["billing-api", "audit-exporter", "cart-service", "geo-lookup"] * 6
    for n, service in enumerate(services):
        cause = (
            "Caused by: org.postgresql.util.PSQLException: ERROR: duplicate key value "
            'violates unique constraint "uq_refunds_period_key"\n'
            if service == failing and n > 12
            else "Caused by: java.net.ConnectException: Connection refused\n"
        )
        records.append(
            f"2025-02-07 14:{n:02d}:33.655 ERROR [{service},57eb5091] 1 --- [exec-{n}] "
            f"c.a.a.LedgerClient : invoice render failed\n"
            "java.lang.IllegalStateException: invoice render failed\n"
            f"\tat com.acme.jobs.Worker.run(Worker.java:{100 + n})\n"
            f"\tat java.base/java.lang.Thread.run(Thread.java:1583)\n{cause}\t... 8 more\n"
        )
    return "".join(records)


def test_a_stack_trace_is_anchored_to_its_error_line() -> None:
    segments = segment(java_log("audit-exporter"))
    texts = segments.texts()
    assert segments.shape == "log"
    for number, text in enumerate(texts):
        if text.startswith("2025-"):
            assert segments.anchors[number] == -1
        else:  # the exception, the frames, the cause: the record's head above them
            head = segments.anchors[number]
            assert texts[head].startswith("2025-")
            assert all(not texts[n].startswith("2025-") for n in range(head + 1, number))
    plain = segment("".join(f"2025-02-07 14:{n:02d} INFO served {n}\n" for n in range(30)))
    assert set(plain.anchors) == {-1}  # every line a head: nothing to anchor
    counts = segment("INFO start\nINFO loading\n3 files found\nINFO next\n12 rows\nINFO done\n")
    assert set(counts.anchors) == {-1}  # a few lines led by a number are no records' heads


def test_the_cause_of_an_error_counts_the_words_of_its_record() -> None:
    # Every record reports "invoice render failed"; the question names the service whose
    # record holds the answer on its cause line, words away from the service's name.
    segments = segment(java_log("audit-exporter"))
    question = (
        "Which unique constraint was violated when the invoice render failed in audit-exporter?"
    )
    values = segment_values([segments], question)[0]
    best = max(range(len(values)), key=values.__getitem__)
    assert "uq_refunds_period_key" in segments.texts()[best]
    # Kept, the cause line brings its record's head line, which names the service.
    excerpt = render(segments, [best], [10] * len(segments)).text
    assert "ERROR [audit-exporter" in excerpt


def test_a_unit_the_question_spells_out_matches_its_initialism() -> None:
    # The same service in two lines: only the rate's column name says what the question asks.
    lines = [f"{name}-proxy  uptime_days  {n}" for n, name in enumerate(["auth", "cart"] * 20)]
    lines[12] = "auth-proxy  rate_limit_rps  2400"
    lines[21] = "auth-proxy  restarts_total  7"
    assert _best(lines, "How many requests per second does the auth proxy allow?") == 12


def test_an_initialism_needs_words_at_both_ends_of_its_run() -> None:
    from pycupel.conversation.excerpts.relevance import _initialisms

    found = _initialisms("What rate limit, in requests per second, does the metrics proxy allow?")
    assert "rps" in found.split()
    assert "tmp" not in found.split()  # "the metrics proxy": a run led by a stop word
    assert "ttl" in _initialisms("the time to live of the cache").split()


def test_a_line_that_names_the_subject_beats_lines_of_the_question_about_others() -> None:
    # Release notes pin many services "to version ..." in the question's own words; the line
    # that answers names the subject ("the disputes cron") and holds a version, no more. A
    # log beside them names "disputes" and "cron" everywhere, so those words weigh little.
    services = ["metrics cron", "pricing cron", "routing cron", "disputes primary"]
    services += ["disputes exporter", "ledger stream", "orders webhook"]
    notes = [
        f"Pin the {name} to version {n}.{n * 3}.1 until the migration is done."
        for n, name in enumerate(services * 3)
    ]
    notes.insert(
        11,
        "Production runs disputes cron 9.4.28; the next release is still in staging. All "
        "writes go through the primary, and the replicas serve reads only. Backfills run "
        "from the admin console and are throttled so the primary keeps some headroom.",
    )
    notes = ["# Release notes", "", *notes]
    log = [
        f"2026-11-21T10:{n % 60:02d}:00Z INFO "
        + ("disputes-api handled request" if n % 2 else "cron scheduler tick")
        + f" {n}"
        for n in range(300)
    ]
    values = segment_values(
        [segment("\n".join(notes)), segment("\n".join(log))],
        "What version is the disputes cron pinned to?",
    )[0]
    assert max(range(len(values)), key=values.__getitem__) == 13


def test_a_name_written_the_other_way_round_is_the_name() -> None:
    from pycupel.scorers._lexical import Bm25Corpus, adjacent_terms

    corpus = Bm25Corpus(
        [
            "GET https://replica.search.svc.acme.net/v3/healthz 200",
            "the search replica serves reads",
            "GET https://search.api.acme.net/v3 200, replica lag 3s",
        ],
        k1=1.2,
        b=0.75,
    )
    names = adjacent_terms("Which URL does the search replica serve its API under?")
    assert names == [("search", "replica"), ("replica", "serv")]
    # replica.search and "search replica" hold the name; "search" and "replica" apart do not.
    assert corpus.holds_pairs(names).tolist() == [True, True, False]
    # Words with a stop word between them in the question are no name ("calls to the").
    assert adjacent_terms("what timeout applies to calls to the accounts exporter?") == [
        ("timeout", "appli"),
        ("account", "export"),
    ]


def test_a_record_that_holds_the_name_names_its_members() -> None:
    from pycupel.conversation.excerpts.relevance import _groups, _nameless, _wordless
    from pycupel.scorers._lexical import Bm25Corpus, adjacent_terms

    # The question names a record (the routing producer) whose member holding the answer
    # does not repeat the name; a prose section that names it elsewhere names none of its
    # other lines.
    records = [
        {
            "name": f"{name}-producer",
            "max_connections": 10 + n,
            "notes": "steady and boring " * 12,  # records long enough to be cut
        }
        for n, name in enumerate(["ledger", "routing"])
    ]
    listing = segment(json.dumps({"producers": records}, indent=2))
    prose = segment("# The routing producer\n\nAt peak it takes 40 connections.\n")
    texts = [listing, prose]
    offsets = [0, len(listing), len(listing) + len(prose)]
    wholes = [_groups(part, _wordless(part, part.texts())) for part in texts]
    corpus = Bm25Corpus([t for part in texts for t in part.texts()], k1=1.2, b=0.75)
    grouped = corpus.of_ranges(
        [
            (offsets[n] + a, offsets[n] + b)
            for n, (spans, _, _) in enumerate(wholes)
            for a, b in spans
        ]
    )
    names = adjacent_terms("How many connections does the routing producer pool allow?")
    nameless = _nameless(corpus, grouped, names, texts=texts, wholes=wholes, offsets=offsets)
    named = {text for text, flag in zip(listing.texts(), nameless, strict=False) if not flag}
    assert named == {
        '"name": "routing-producer"',
        '"max_connections": 11',
        '"notes": ' + json.dumps("steady and boring " * 12),
    }
    assert nameless[offsets[1] :].tolist() == [False, True, True]  # the heading only


def test_a_text_whose_call_names_the_question_counts_more() -> None:
    rows = [f"row {n}: region eu-west value {n * 7}" for n in range(30)]
    texts = [segment("\n".join(rows)), segment("\n".join(rows))]
    labels = ['list_metrics({"service": "billing"})', 'list_metrics({"service": "ledger"})']
    values = segment_values(texts, "ledger value in eu-west", labels)
    assert max(values[1]) > max(values[0])


def test_a_table_row_matches_the_column_names_of_its_header() -> None:
    # The question names the column (timeout_ms) and the row (ledger cache); a prose line
    # in another text names the row and one more of the question's words.
    table = ["| name | timeout_ms | owner |", "|---|---|---|"]
    table += [f"| svc-{n}-api | {1000 + n} | team-{n} |" for n in range(40)]
    table[25] = "| ledger-cache | 50750 | team-checkout |"
    prose = [f"Deploys of service {n} need a review by the on-call team." for n in range(40)]
    prose[12] = "The ledger cache applies to every tenant of the region."
    values = segment_values(
        [segment("\n".join(table)), segment("\n".join(prose))],
        "what timeout in ms applies to the ledger cache?",
    )
    assert max(values[0]) == values[0][25] > max(values[1])


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What version is the routing producer running?", "routing producer runs 6.11.21"),
        ("Which port does the routing producer listen on?", "routing producer on :7443"),
        (
            "What is the base URL of the routing producer?",
            "routing producer at https://r.acme.io/v2",
        ),
        ("What timeout does the routing producer use?", "routing producer times out at 900 ms"),
    ],
)
def test_a_line_holding_the_kind_of_value_asked_for_counts_more(question: str, answer: str) -> None:
    # Every line names the routing producer the same way; one also holds the kind of value
    # the question asks for, and the others hold other kinds (an owner, a count, a flag).
    lines = [f"The routing producer is owned by team-{n} and pages them." for n in range(30)]
    lines += [f"The routing producer handled {n} batches during the drill." for n in range(30)]
    lines[41] = f"Checked again: the {answer}."
    assert _best(lines, question) == 41


def test_a_question_naming_no_kind_of_value_prefers_none() -> None:
    assert answer_patterns("Which rotation does an unacknowledged page escalate to?") == []
    assert len(answer_patterns("Which port and which version?")) == 2


def test_a_kind_named_inside_a_name_of_letters_and_digits_is_not_asked_for() -> None:
    # The node is named ip-10-7-30-138: the question asks for a count, not an address.
    restarts = "How many times has the tax-engine container restarted on node ip-10-7-30-138?"
    assert answer_patterns(restarts) == []
    assert len(answer_patterns("What IP address does node ip-10-7-30-138 have?")) == 1
    assert len(answer_patterns("Which port does api-v2 listen on?")) == 1


def test_a_long_output_whose_call_names_the_question_is_weighed_in_full() -> None:
    # The long output's many other words dilute its call's match ("the services query")
    # when the two are read as one text; the call alone still names it best.
    noise = [f"item {n}: batch {n * 3} processed by worker {n % 7}" for n in range(600)]
    short = [*noise[:20], "ledger-cache | 50750", *(f"services {n} up" for n in range(5))]
    long = [*noise[:300], "ledger-cache | 50750", *noise[300:]]
    labels = ['read_file({"path": "notes.txt"})', 'query_db({"sql": "SELECT * FROM services"})']
    values = segment_values(
        [segment("\n".join(short)), segment("\n".join(long))],
        "the ledger cache, according to the services query",
        labels,
    )
    assert values[1][300] == pytest.approx(1.0)  # its best line, at the full weight


def test_errors_and_the_first_lines_stand_out_without_a_query_match() -> None:
    log = [f"10:{n:02d} INFO worker heartbeat {n}" for n in range(60)]
    log[30] = "10:30 ERROR worker crashed: segfault in codec"
    segments = segment("\n".join(log))
    values = segment_values([segments], "anything new?")[0]
    assert values[30] > values[20]
    assert values[0] > values[20]  # orientation


# --------------------------------------------------------------------------- allocation


def plan_of(text: str, query: str, position: int = 0) -> ExcerptPlan:
    segments = segment(text)
    values = segment_values([segments], query)[0]
    return ExcerptPlan(
        position, [segments], [[10] * len(segments)], [values], fixed=20, markers=[5]
    )


def test_allocate_stays_within_the_room_and_takes_the_best_first() -> None:
    text = "\n".join(f"row {n}: nothing here" for n in range(200)) + "\nrow 200: the secret is 42"
    plan = plan_of(text, "what is the secret?")
    left, whole = allocate([plan], room=200, current={}, density=0.25)
    assert whole == []
    assert 0 <= left <= 200
    chosen = plan.chosen[0]
    assert len(segment(text)) - 1 in chosen  # the secret
    # What was charged never exceeds the room.
    assert plan.spent <= 200


def test_allocate_takes_a_unit_whole_when_the_room_is_plenty() -> None:
    plan = plan_of("\n".join(f"line {n}" for n in range(20)), "line", position=3)
    left, _ = allocate(
        [plan], room=10_000, current={}, density=0.25, units=[UnitOffer(3, 1.0, 300)]
    )
    assert plan.complete()
    assert 10_000 - left <= 300  # never charged more than the whole unit costs


def test_a_plan_shared_out_again_is_ranked_once_and_takes_as_a_fresh_ranking_would() -> None:
    from pycupel.conversation.excerpts import allocation

    text = "\n".join(f"row {n}: {'the secret' if n % 17 == 0 else 'nothing'}" for n in range(300))
    cached, fresh = plan_of(text, "the secret"), plan_of(text, "the secret")
    allocate([cached], room=150, current={}, density=0.25)
    allocate([fresh], room=150, current={}, density=0.25)
    assert cached.ranked is not None
    ranking = cached.ranked[1]
    fresh.ranked = None  # the refill below ranks this one again from scratch
    left = allocate([cached], room=120, current={}, density=0.25)
    assert left == allocate([fresh], room=120, current={}, density=0.25)
    assert cached.ranked[1] is ranking
    assert cached.chosen == fresh.chosen
    # Another density is another ranking.
    assert allocation._ranking(cached, 0.5) is not ranking


# --------------------------------------------------------------------------- in a fit


def text_of(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(message.get("content")) for message in messages)


def test_a_huge_result_keeps_the_line_asked_about_and_fills_the_room() -> None:
    lines = [f"2026-11-21T10:00:{n % 60:02d}Z INFO step {n} ok, {n * 7} rows" for n in range(4000)]
    lines[2711] = "2026-11-21T10:45:11Z WARN cache shard 7 evicted 1,204 keys (ttl 30s)"
    history = tool_history("\n".join(lines), "How many keys did cache shard 7 evict?", calls=3)
    budget = 4_000
    fitted, report = openai.fit_messages(history, budget=budget)
    assert "evicted 1,204 keys" in text_of(fitted)
    assert openai.count_tokens(fitted) <= budget
    assert openai.count_tokens(fitted) >= 0.9 * budget  # sized to the room, not to a constant
    openai.from_messages(fitted)  # valid: every call answered
    excerpts = [e.item for e in report.included if variant_name(e.item) == "excerpt"]
    assert excerpts
    described = excerpts[0].metadata["excerpt"]
    assert described["kept"]
    assert described["elided"]


def rounds_history(rounds: int) -> list[dict[str, Any]]:
    """An agent that tails the logs of many hosts, narrating each call; the first output is
    long and holds the line the last question asks about."""
    lines = [
        f"2026-11-21T10:{n // 60 % 60:02d}:{n % 60:02d}Z INFO worker {n % 13} flushed batch {n}"
        for n in range(3000)
    ]
    lines[1877] = "2026-11-21T10:31:17Z INFO ledger-sync connected to replica db-7 on port 6543"
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an ops agent."}]
    for n in range(rounds):
        function = {"name": "tail", "arguments": json.dumps({"host": f"node-{n}", "lines": 500})}
        call = {"id": f"c{n}", "type": "function", "function": function}
        messages.append(
            {
                "role": "assistant",
                "content": f"Nothing conclusive on node-{n - 1} yet, so I will tail the logs of "
                f"node-{n} next and compare the error rates with the previous hour.",
                "tool_calls": [call],
            }
        )
        body = "\n".join(lines if n == 0 else [f"node-{n} heartbeat {k} ok" for k in range(60)])
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": body})
    messages.append({"role": "user", "content": "Which port does ledger-sync use for the replica?"})
    return messages


@pytest.mark.parametrize("budget", [2_500, 3_000])
def test_the_placeholders_of_many_rounds_shed_their_words_for_the_line_asked_about(
    budget: int,
) -> None:
    # The calls and placeholders of forty rounds alone would fill most of the budget: the
    # strongest match of the long output is kept before them, the oldest shedding the words
    # before their calls; every call stays.
    history = rounds_history(40)
    fitted, _ = openai.fit_messages(history, budget=budget)
    assert "port 6543" in text_of(fitted)
    calls = [call["id"] for message in fitted for call in message.get("tool_calls") or ()]
    assert calls == [f"c{n}" for n in range(40)]
    assert openai.count_tokens(fitted) <= budget
    openai.from_messages(fitted)


def test_a_json_result_excerpt_is_valid_json_in_the_window() -> None:
    history = tool_history(LISTING, "Which version does svc-23 run?", calls=2)
    fitted, _ = openai.fit_messages(history, budget=600)
    result = next(m for m in fitted if m.get("tool_call_id") == "c0")
    document = json.loads(result["content"])
    assert any(
        isinstance(item, dict) and item.get("version") == "23.3.0" for item in document["services"]
    )


def test_excerpts_can_be_switched_off() -> None:
    history = tool_history(LISTING, "Which version does svc-23 run?", calls=2)
    _, report = openai.fit_messages(history, budget=600, shrink=Shrink(excerpts=False))
    assert "excerpt" not in {variant_name(e.item) for e in report.included}


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=600), min_size=1, max_size=6),
    share=st.floats(min_value=0.02, max_value=0.9),
    seed=st.integers(min_value=0, max_value=1_000),
)
def test_every_window_is_valid_and_within_budget(sizes: list[int], share: float, seed: int) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for n, size in enumerate(sizes):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        body = "\n".join(f"{seed} line {k} value {k * seed % 97}" for k in range(size))
        messages += [
            {"role": "user", "content": f"go {n}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": body},
        ]
    messages.append({"role": "user", "content": f"what is value {seed % 97}?"})
    pinned = openai.count_tokens([messages[0], messages[-1]])
    budget = max(int(openai.count_tokens(messages) * share), pinned + 1)
    fitted, _ = openai.fit_messages(messages, budget=budget)
    assert openai.count_tokens(fitted) <= budget
    openai.from_messages(fitted)


def test_an_excerpt_is_rebuilt_from_the_segments_its_metadata_records() -> None:
    from pycupel.conversation.excerpts.plan import ExcerptSource
    from pycupel.tokens import HeuristicCounter

    lines = [f"2026-11-21T10:00:{n % 60:02d}Z INFO step {n} ok, {n * 7} rows" for n in range(900)]
    lines[611] = "2026-11-21T10:45:11Z WARN cache shard 7 evicted 1,204 keys (ttl 30s)"
    history = tool_history("\n".join(lines), "How many keys did cache shard 7 evict?", calls=2)
    fitted, report = openai.fit_messages(history, budget=1_500)
    item = next(e.item for e in report.included if variant_name(e.item) == "excerpt")
    kept = [item.metadata["excerpt"]["segments"]]
    units = openai.from_messages(history)
    position = next(n for n, unit in enumerate(units.units) if unit.message_indices == (2, 3))
    source = ExcerptSource(
        units.units,
        units.messages,
        editor=openai.CODEC.editor(units.overhead),
        counter=HeuristicCounter(),
        shrink=Shrink(),
        query="",
        recall=None,
    )
    again = source.rebuild(position, kept)
    assert again is not None
    assert again.messages[1]["content"] == fitted[3]["content"]
    assert source.rebuild(position, [[[0, 10_000]]]) is None  # segments the text lacks
    assert source.rebuild(position, []) is None


@pytest.mark.parametrize(
    "text",
    [
        '[{"a": 1}, {"b": 2},]',  # a trailing comma
        '{"a": 1 "b": 2}',  # no comma between members
        '{"a" 1, "b": 2}',  # no colon after a key
        '{1: "a", 2: "b"}',  # a key that is not a string
        '[{"a": 1}, {"b": 2}',  # no closing bracket
        '[{"a": 1}, {"b": 2}] [3]',  # two documents
        '{"x": [1, 2,], "y": 3}',  # a trailing comma one level down
        '{"x": {"a" 1}, "y": 3}',  # no colon one level down
    ],
)
def test_a_text_json_does_not_read_is_cut_into_lines(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert segment(text).shape != "json"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=30,
    ),
    st.sampled_from([None, 0, 1, 2]),
)
def test_a_json_document_is_cut_into_verbatim_elements_in_order(value: Any, indent: Any) -> None:
    text = json.dumps(value, indent=indent)
    segments = segment(text)
    if segments.shape != "json":
        return
    for (start, end), line in zip(segments.spans, segments.lines, strict=True):
        assert _element_or_member(text[start:end])
        assert line == text.count("\n", 0, start) + 1
    starts = [start for start, _ in segments.spans]
    assert starts == sorted(starts)


def _element_or_member(text: str) -> bool:
    """Whether ``text`` is a JSON value or an object's ``"key": value`` member."""
    for candidate in (text, "{" + text + "}"):
        try:
            json.loads(candidate)
        except ValueError:
            continue
        return True
    return False


def _elements_read_by_the_decoder(text: str) -> list[tuple[int, int, int, int]]:
    """The elements of the container ``text`` holds, every value read by the decoder."""
    decoder = json.JSONDecoder()

    def skip(position: int) -> int:
        return len(text) - len(text[position:].lstrip(" \t\n\r"))

    position = skip(1)
    elements: list[tuple[int, int, int, int]] = []
    while text[position] not in "]}":
        element_start = key_end = position
        if text[0] == "{":
            _, key_end = decoder.raw_decode(text, position)
            position = skip(skip(key_end) + 1)  # the colon
        _, value_end = decoder.raw_decode(text, position)
        elements.append((element_start, key_end, position, value_end))
        position = skip(value_end)
        if text[position] == ",":
            position = skip(position + 1)
    return elements


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)


@given(
    st.lists(
        st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3), max_leaves=6),
        max_size=6,
    )
    | st.dictionaries(st.text(max_size=4), _SCALARS | st.lists(_SCALARS, max_size=3), max_size=6),
    st.sampled_from([None, 0, 2, "\t"]),
    st.sampled_from([(", ", ": "), (",", ":"), (" ,\r\n", " :  ")]),
)
def test_elements_with_scalar_values_are_read_as_the_decoder_reads_them(
    value: Any, indent: Any, separators: tuple[str, str]
) -> None:
    from pycupel.conversation.excerpts.segments import _elements

    text = json.dumps(value, indent=indent, separators=separators)
    expected = _elements_read_by_the_decoder(text)
    assert _elements(text, 0, len(text), json.JSONDecoder()) == expected


_REPORT_PIECES = [
    "error",
    "Errors",
    "failed",
    "timed out",
    "time out",
    "TIMEOUT",
    "warn",
    "WARNING",
    "retrying",
    "deprecated",
    "errorless",
    "re-try",
    "crashed",
    "é",
    "Fail",
    "_warn",
    "x",
    " ",
    "\n",
    ".",
    ":",
    "1",
]


@given(st.lists(st.sampled_from(_REPORT_PIECES), max_size=40).map("".join))
def test_one_scan_finds_the_trouble_and_the_warnings_two_scans_find(text: str) -> None:
    from pycupel.conversation.excerpts.relevance import (
        _REPORT,
        _REPORT_LOWERED,
        _TROUBLE_WORDS,
        _WARNING_WORDS,
    )

    def scan(words: str) -> list[int]:
        return [m.start() for m in re.finditer(rf"\b(?:{words})\b", text, re.IGNORECASE)]

    expected = {"trouble": scan(_TROUBLE_WORDS), "warning": scan(_WARNING_WORDS)}
    for pattern, read in ((_REPORT, text), (_REPORT_LOWERED, text.lower())):
        if pattern is _REPORT_LOWERED and not text.isascii():
            continue
        found: dict[str, list[int]] = {"trouble": [], "warning": []}
        for match in pattern.finditer(read):
            found[str(match.lastgroup)].append(match.start())
        assert found == expected


@given(st.text(alphabet='ab1 -_\n{}[]",:.', min_size=1, max_size=400))
def test_wordless_segments_are_those_without_a_letter_or_digit(text: str) -> None:
    from pycupel.conversation.excerpts.relevance import _wordless

    segments = segment(text)
    pieces = segments.texts()
    expected = [re.fullmatch(r"[\W_]*", piece) is not None for piece in pieces]
    assert _wordless(segments, pieces).tolist() == expected


@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=12),
        min_size=1,
        max_size=3,
    ),
    st.integers(1, 3),
    st.randoms(use_true_random=False),
)
def test_best_group_is_the_maximum_over_each_segments_wholes(
    texts: list[list[tuple[int, int]]], units: int, rng: Any
) -> None:
    import numpy as np

    from pycupel.conversation.excerpts.relevance import _best_group

    # Per text: (segment, whole) pairs over 7 segments and 4 wholes.
    wholes = [
        (
            [(0, 1)] * 4,
            np.array([member for member, _ in pairs], dtype=np.intp),
            np.array([whole for _, whole in pairs], dtype=np.intp),
        )
        for pairs in texts
    ]
    offsets = [7 * number for number in range(len(texts) + 1)]
    documents = offsets[-1] + 2  # the labels after the segments
    in_groups = (
        np.array(
            [[rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in range(4 * len(texts))]] * units
        )
        * np.arange(1, units + 1)[:, None]
    )
    expected = np.zeros((documents, units))
    for number, (_, members, owners) in enumerate(wholes):
        for member, whole in zip(members.tolist(), owners.tolist(), strict=True):
            row = offsets[number] + member
            expected[row] = np.maximum(expected[row], in_groups[:, 4 * number + whole])
    assert _best_group(in_groups, wholes, offsets, documents).tolist() == expected.T.tolist()


@given(st.text(alphabet="def {};:)]\t\r\n\x0b\x1c\x85\u2028\u3000ab#@(=[-", max_size=60))
def test_a_code_or_config_line_is_the_patterns_match(text: str) -> None:
    from pycupel.conversation.excerpts.segments import (
        _CODE,
        _KEY_VALUE,
        _SECTION,
        _code_line,
        _config_line,
    )

    for line in text.splitlines(keepends=True):
        assert _code_line(line) == bool(_CODE.match(line)), repr(line)
        assert _config_line(line) == bool(_KEY_VALUE.match(line) or _SECTION.match(line))
