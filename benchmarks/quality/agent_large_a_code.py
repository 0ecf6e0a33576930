"""Source files for ``agent_large_a``: Python, TypeScript and Go, read with ``read_file``.

A file is a header (docstring or comment, imports), then blocks until its size: classes
with methods, functions with docstrings and bodies, groups of constants and maps of values
per service. Constants and map entries are the world's mentions, so a file that holds the
fact also holds many constants of the same topic for other services; the fact is one
constant or one map entry, in the first such block written after its offset.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from random import Random

from agent_large_a_facts import NOUNS, VERBS, Mention, Output, World, pick, rand

_MAP_NAMES = {
    "port": "PORTS",
    "timeout": "TIMEOUTS_MS",
    "owner": "OWNERS",
    "version": "PINNED_VERSIONS",
    "base_url": "BASE_URLS",
    "rate_limit": "RATE_LIMITS_RPS",
    "max_connections": "MAX_CONNECTIONS",
    "error_code": "ERROR_CODES",
    "rollout": "ROLLOUT_PERCENTAGES",
    "table": "TABLES",
}
_VARS = ("rows", "batch", "cursor", "entries", "payload", "result", "account", "events", "page")
_ATTRS = ("client", "pool", "cache", "store", "queue", "repo", "limiter", "session")
_ERRORS = ("NotFoundError", "ConflictError", "StaleCursorError", "RetryableError")


class Language:
    """How one language writes the shared blocks."""

    ext = ""
    folder = ""

    def __init__(self, world: World) -> None:
        self.world = world
        self.rng: Random = world.rng

    # The pieces every language fills in.
    def header(self) -> list[str]:
        raise NotImplementedError

    def assign(self, mention: Mention) -> tuple[str, str]:
        raise NotImplementedError

    def entry(self, mention: Mention, width: int) -> tuple[str, str]:
        raise NotImplementedError

    def map_open(self, mention: Mention) -> str:
        raise NotImplementedError

    def constants(self, lines: list[str]) -> list[str]:
        raise NotImplementedError

    def function(self, indent: str = "") -> list[str]:
        raise NotImplementedError

    def klass(self) -> list[str]:
        raise NotImplementedError

    map_close = "}"
    needle: str | None = None  # the fact's, once written

    # Shared helpers.
    def names(self) -> dict[str, str]:
        rng = self.rng
        noun = pick(rng, NOUNS).replace("-", "_")
        return {
            "var": pick(rng, _VARS),
            "var2": pick(rng, ("out", "kept", "pending", "merged")),
            "attr": pick(rng, _ATTRS),
            "verb": pick(rng, VERBS),
            "noun": noun,
            "n": str(rand(rng, 1, 500)),
            "k": str(rand(rng, 1, 3)),
            "err": pick(rng, _ERRORS),
            "func": f"{pick(rng, VERBS)}_{noun}",
        }

    def body(
        self,
        templates: tuple[str, ...],
        indent: str,
        last: str,
        names: dict[str, str],
        method: bool = True,
    ) -> list[str]:
        """A few statements about one function's variables (``names``), then ``last``."""
        rng = self.rng
        out: list[str] = []
        for _ in range(rand(rng, 2, 6)):
            fresh = self.names()
            fresh.update(var=names["var"], var2=names["var2"], attr=self.attrs_in_scope())
            text = pick(rng, templates).format(**fresh)
            if not method:  # a module-level function: module-level state, no self
                text = text.replace("self._", "_").replace("this.", "")
            out.extend(indent + line for line in text.split("\n"))
        out.append(indent + last.format(**names))
        return out

    def attrs_in_scope(self) -> str:
        return pick(self.rng, self.attrs)

    attrs: tuple[str, ...] = _ATTRS


class Python(Language):
    ext = "py"
    folder = "src"

    def header(self) -> list[str]:
        world, rng = self.world, self.rng
        noun = pick(rng, NOUNS).replace("-", " ")
        return [
            f'"""{world.home.capitalize()} {noun}: loading, validation and the calls to the '
            "services behind them.",
            "",
            "Everything here is safe to call from several workers; state lives in the store.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "import asyncio",
            "import logging",
            "from dataclasses import dataclass, field",
            "from typing import Any",
            "",
            f"from {world.home}.errors import {', '.join(sorted(rng.sample(_ERRORS, 2)))}",
            f"from {world.module()} import {pick(rng, VERBS)}_{pick(rng, _VARS)}",
            "",
            "log = logging.getLogger(__name__)",
            "",
        ]

    def assign(self, mention: Mention) -> tuple[str, str]:
        line = f"{mention.ident} = {mention.literal}"
        return line, line

    def entry(self, mention: Mention, width: int) -> tuple[str, str]:
        needle = f'"{mention.record_key}": {mention.literal}'
        return f"    {needle},", needle

    def map_open(self, mention: Mention) -> str:
        kind = "int" if isinstance(mention.value, int) else "str"
        return f"{_MAP_NAMES[mention.topic.name]}: dict[str, {kind}] = {{"

    def constants(self, lines: list[str]) -> list[str]:
        return [f"# {self.world.system().capitalize()} settings.", *lines, "", ""]

    _STATEMENTS = (
        "{var} = self._{attr}.get({var2})",
        'if {var} is None:\n    raise {err}(f"{noun} {{key}} not found")',
        "for item in {var}:\n    if item.attempts > {n}:\n        continue\n"
        "    {var2}.append(item)",
        'log.info("{verb} %d {noun}", len({var}))',
        '{var} = await self._{attr}.post("/v{k}/{noun}", json={{"limit": {n}}})',
        "async with self._lock:\n    self._{attr}[{var}.id] = {var}",
        'try:\n    {var} = {func}({var2})\nexcept {err} as exc:\n    log.warning("{verb} '
        'failed: %s", exc)\n    raise',
        "{var2} = [row for row in {var} if row.status != 'archived']",
        "await asyncio.sleep(min(2 ** attempt, {n}) / 100)",
    )

    def function(self, indent: str = "") -> list[str]:
        names = self.names()
        self_arg = "self, " if indent else ""
        body = self.body(self._STATEMENTS, indent + "    ", "return {var2}", names, bool(indent))
        head = "async def" if any("await " in line or "async " in line for line in body) else "def"
        return [
            *([] if indent else [""]),
            f"{indent}{head} {names['func']}({self_arg}{names['var']}: list[Any], *, "
            f"limit: int = {names['n']}) -> list[Any]:",
            f'{indent}    """{names["verb"].capitalize()} the {names["noun"].replace("_", " ")} '
            f'of one {names["var"]}, at most ``limit`` of them."""',
            f"{indent}    {names['var2']}: list[Any] = []",
            *body,
            "",
        ]

    def klass(self) -> list[str]:
        rng = self.rng
        name = f"{self.world.system().capitalize()}{pick(rng, NOUNS).title().replace('-', '')}"
        name += pick(rng, ("Service", "Repository", "Client", "Worker"))
        attrs = self.attrs = tuple(rng.sample(_ATTRS, 3))
        out = [
            "",
            f"class {name}:",
            f'    """{name} keeps its own connection and retries transient failures."""',
            "",
            f"    def __init__(self, {', '.join(f'{a}: Any' for a in attrs)}, *, retries: int = 3)"
            " -> None:",
            *(f"        self._{attr} = {attr}" for attr in attrs),
            "        self._retries = retries",
            "        self._lock = asyncio.Lock()",
            "",
        ]
        for _ in range(rand(rng, 2, 5)):
            out.extend(self.function("    "))
        return out


class TypeScript(Language):
    ext = "ts"
    folder = "web/src"

    def header(self) -> list[str]:
        world, rng = self.world, self.rng
        return [
            f"// {world.home} {pick(rng, NOUNS)}: client calls and their settings.",
            "import { z } from 'zod';",
            f"import {{ logger }} from '../{world.system()}/logger';",
            f"import {{ {pick(rng, _ERRORS)} }} from '../errors';",
            "",
        ]

    def assign(self, mention: Mention) -> tuple[str, str]:
        needle = f"{mention.ident} = {mention.literal}"
        return f"export const {needle};", needle

    def entry(self, mention: Mention, width: int) -> tuple[str, str]:
        needle = f'"{mention.record_key}": {mention.literal}'
        return f"  {needle},", needle

    def map_open(self, mention: Mention) -> str:
        kind = "number" if isinstance(mention.value, int) else "string"
        return f"export const {_MAP_NAMES[mention.topic.name]}: Record<string, {kind}> = {{"

    map_close = "};"

    def constants(self, lines: list[str]) -> list[str]:
        return [f"// {self.world.system()} settings", *lines, ""]

    _STATEMENTS = (
        "const {var} = await this.{attr}.get({var2});",
        "if (!{var}) {{\n  throw new {err}(`{noun} ${{key}} not found`);\n}}",
        "for (const item of {var}) {{\n  if (item.attempts > {n}) continue;\n  {var2}.push(item);"
        "\n}}",
        "logger.info(`{verb} ${{{var}.length}} {noun}`);",
        "const res = await fetch(`/v{k}/{noun}?limit={n}`, {{ signal }});",
        "{var2}.sort((a, b) => a.createdAt.localeCompare(b.createdAt));",
    )

    def function(self, indent: str = "") -> list[str]:
        names = self.names()
        camel = _camel(names["func"])
        head = f"{indent}async {camel}(" if indent else f"export async function {camel}("
        return [
            f"{indent}/** {names['verb'].capitalize()} the {names['noun'].replace('_', ' ')}"
            f" of one {names['var']}. */",
            f"{head}{names['var']}: Item[], signal?: AbortSignal): Promise<Item[]> {{",
            f"{indent}  const {names['var2']}: Item[] = [];",
            *self.body(self._STATEMENTS, indent + "  ", "return {var2};", names, bool(indent)),
            f"{indent}}}",
            "",
        ]

    def klass(self) -> list[str]:
        rng = self.rng
        name = f"{self.world.system().capitalize()}{pick(rng, ('Service', 'Client', 'Store'))}"
        attrs = self.attrs = tuple(rng.sample(_ATTRS, 2))
        out = [
            f"export class {name} {{",
            *(f"  private readonly {attr}: Store;" for attr in attrs),
            "",
        ]
        for _ in range(rand(rng, 2, 5)):
            out.extend(self.function("  "))
        out.extend(["}", ""])
        return out


class Go(Language):
    ext = "go"
    folder = "internal"

    def header(self) -> list[str]:
        world = self.world
        return [
            f"// Package {world.home} serves and stores {pick(self.rng, NOUNS)}.",
            f"package {world.home}",
            "",
            "import (",
            '\t"context"',
            '\t"fmt"',
            '\t"log/slog"',
            '\t"time"',
            "",
            f'\t"github.com/acme/{world.home}-platform/internal/{world.system()}"',
            ")",
            "",
        ]

    def assign(self, mention: Mention) -> tuple[str, str]:
        needle = f"{mention.go_ident} = {mention.literal}"
        return f"\t{needle}", needle

    def entry(self, mention: Mention, width: int) -> tuple[str, str]:
        key = f'"{mention.record_key}":'
        needle = f"{key:<{width + 3}} {mention.literal}"
        return f"\t{needle},", needle

    def map_open(self, mention: Mention) -> str:
        kind = "int" if isinstance(mention.value, int) else "string"
        name = "".join(part.capitalize() for part in _MAP_NAMES[mention.topic.name].split("_"))
        return f"var {name} = map[string]{kind}{{"

    def constants(self, lines: list[str]) -> list[str]:
        return ["const (", *lines, ")", ""]

    _STATEMENTS = (
        "{var}, err := s.{attr}.Get(ctx, {var2})\nif err != nil {{\n\treturn nil, "
        'fmt.Errorf("{verb} {noun}: %w", err)\n}}',
        "for _, item := range {var} {{\n\tif item.Attempts > {n} {{\n\t\tcontinue\n\t}}\n\t"
        "{var2} = append({var2}, item)\n}}",
        's.log.Info("{verb} {noun}", "count", len({var}))',
        "ctx, cancel := context.WithTimeout(ctx, {n}*time.Millisecond)\ndefer cancel()",
    )

    def function(self, indent: str = "") -> list[str]:
        names = self.names()
        camel = _camel(names["func"])
        camel = camel[0].upper() + camel[1:]
        return [
            f"// {camel} {_third_person(names['verb'])} the "
            f"{names['noun'].replace('_', ' ')} of one {names['var']}.",
            f"func (s *Service) {camel}(ctx context.Context, {names['var']} []Item) ([]Item, "
            "error) {",
            f"\tvar {names['var2']} []Item",
            *self.body(self._STATEMENTS, "\t", "return {var2}, nil", names),
            "}",
            "",
        ]

    def klass(self) -> list[str]:
        rng = self.rng
        fields = rng.sample(_ATTRS, 3)
        width = max(map(len, fields))
        name = pick(rng, NOUNS).title().replace("-", "")
        return [
            f"// {name} is one row of the {name.lower()} table.",
            f"type {name} struct {{",
            *(f'\t{f.capitalize():<{width}} string `json:"{f}"`' for f in fields),
            "}",
            "",
            *self.function(),
        ]


def _third_person(verb: str) -> str:
    return verb + ("es" if verb.endswith(("ch", "sh", "s", "x")) else "s")


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _mentions(world: World, held: bool, count: int) -> list[Mention]:
    pick: Callable[[], Mention] = world.distractor if held else world.background
    return [pick() for _ in range(count)]


def _constant_block(
    lang: Language, mentions: list[Mention], fact: Mention | None
) -> tuple[list[str], str | None]:
    """A group of constants; the fact (when given) at a random place among them."""
    if fact is not None:
        mentions = [m for m in mentions if m.ident != fact.ident]
        mentions.insert(rand(lang.rng, 0, len(mentions)), fact)
    unique = list({m.ident: m for m in mentions}.values())
    rows = [lang.assign(m) for m in unique]
    needle = None
    if isinstance(lang, Go):
        # gofmt aligns the = signs and the trailing comments (which name the service) of a block
        width = max(len(line.split(" = ")[0]) for line, _ in rows)
        aligned = [
            f"{line.split(' = ')[0]:<{width}} = {line.split(' = ', 1)[1]}" for line, _ in rows
        ]
        room = max(map(len, aligned))
        rows = [
            (f"{line:<{room}} // {_go_comment(m)}", line.strip())
            for line, m in zip(aligned, unique, strict=True)
        ]
    for (_, row_needle), mention in zip(rows, unique, strict=True):
        if mention is fact:
            needle = row_needle
    return lang.constants([line for line, _ in rows]), needle


def _go_comment(mention: Mention) -> str:
    if mention.condition is not None:
        return f"{mention.subject.slug}: {mention.condition.noun}"
    return f"{mention.subject.slug} {mention.topic.key.replace('_', ' ')}"


def _map_block(
    lang: Language, mentions: list[Mention], fact: Mention | None
) -> tuple[list[str], str | None]:
    """A map from service to one topic's value (the first mention's); the fact (when given)
    one of its entries."""
    topic = fact.topic if fact is not None else mentions[0].topic
    world = lang.world
    mentions = [m for m in mentions if m.topic is topic]
    while len(mentions) < 3:
        mentions.append(world.mention(topic))
    mentions = list({m.record_key: m for m in mentions}.values())
    if fact is not None:
        mentions.insert(rand(lang.rng, 0, len(mentions)), fact)
    width = max(len(m.record_key) for m in mentions)
    out = [lang.map_open(mentions[0])]
    needle = None
    for mention in mentions:
        line, row_needle = lang.entry(mention, width)
        out.append(line)
        if mention is fact:
            needle = row_needle
    return [*out, lang.map_close, ""], needle


def _settings(lang: Language, held: bool, fact: Mention | None = None) -> list[str]:
    """A group of constants or a map of the world's mentions (with the fact, when given)."""
    world, rng = lang.world, lang.rng
    mentions = _mentions(world, held, rand(rng, 3, 10))
    block = _map_block if rng.random() < 0.35 else _constant_block
    lines, needle = block(lang, mentions, fact)
    if fact is not None:
        lang.needle = needle
    return lines


def code_output(world: World, chars: int, fact_at: float | None) -> Output:
    """A source file of about ``chars`` characters; the fact's block goes in at the block
    boundary nearest the fraction ``fact_at`` of the file."""
    rng = world.rng
    lang: Language = pick(rng, (Python, Python, TypeScript, Go))(world)
    held = fact_at is not None
    blocks = [lang.header()]
    size = sum(len(line) + 1 for line in blocks[0])
    while size < chars:
        roll = rng.random()
        if roll < (0.2 if held else 0.1):
            lines = _settings(lang, held)
        elif roll < 0.55:
            lines = lang.function()
        else:
            lines = lang.klass()
        grown = size + sum(len(line) + 1 for line in lines)
        if grown > chars + 200 and len(blocks) > 1:
            break
        blocks.append(lines)
        size = grown
    if fact_at is not None:
        ends = list(itertools.accumulate(sum(len(x) + 1 for x in block) for block in blocks))
        where = min(range(len(ends)), key=lambda i: abs(ends[i] - fact_at * size))
        blocks.insert(where + 1, _settings(lang, held, world.fact))
    text = "\n".join(line for block in blocks for line in block).rstrip() + "\n"
    path = f"{lang.folder}/{world.home}/{pick(world.rng, ('config', 'settings', 'clients'))}"
    path += f"_{pick(rng, NOUNS).replace('-', '_')}.{lang.ext}"
    return Output(text, "code", "read_file", {"path": path}, path, lang.needle)
