"""Small tool results for ``agent_large_a``: git status, diffs and logs, directory listings,
code search hits, pods, patch receipts. They never hold the fact; code search hits are the
world's mentions as constants, so they are distractors of the fact's topic."""

from __future__ import annotations

from collections.abc import Callable

from agent_large_a_facts import MODULES, NOUNS, VERBS, Output, World, pick, rand

_HOW = (
    "before retrying",
    "in one transaction",
    "per tenant",
    "on the replica",
    "without the legacy client",
    "behind a flag",
)
_AUTHORS = ("Maria Kowalski", "Jon Doe", "Ana Ribeiro", "Wei Chen", "Priya Nair", "Tom Berg")


def _path(world: World) -> str:
    rng = world.rng
    system = world.system()
    if rng.random() < 0.3:
        return f"tests/{system}/test_{pick(rng, NOUNS).replace('-', '_')}.py"
    return f"src/{system}/{pick(rng, MODULES)}.py"


def _fit(lines: list[str], chars: int) -> list[str]:
    """The first lines that reach ``chars`` characters (at least three)."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if size >= chars and len(kept) >= 3:
            break
        kept.append(line)
        size += len(line) + 1
    return kept


def git_status(world: World, chars: int) -> Output:
    branch = f"fix/{world.func_name().replace('_', '-')}"
    lines = [
        f"On branch {branch}",
        "Changes not staged for commit:",
        '  (use "git add <file>..." to update what will be committed)',
        "",
    ]
    lines += [f"\tmodified:   {_path(world)}" for _ in range(max(1, chars // 50))]
    lines = _fit(lines, chars - 60)
    lines += ["", 'no changes added to commit (use "git add" and/or "git commit -a")']
    return Output(
        "\n".join(lines), "status", "run_command", {"command": "git status"}, "git status", None
    )


def git_diff(world: World, chars: int) -> Output:
    rng = world.rng
    lines: list[str] = []
    while not lines or sum(len(x) + 1 for x in lines) < chars - 200:
        path = _path(world)
        start = rand(rng, 10, 400)
        lines += [
            f"diff --git a/{path} b/{path}",
            f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644",
            f"--- a/{path}",
            f"+++ b/{path}",
            f"@@ -{start},7 +{start},8 @@ def {world.func_name()}(",
        ]
        var = pick(rng, ("rows", "batch", "entries"))
        lines += [
            f"     {var} = self._store.load({var}_id)",
            f"-    if not {var}:",
            f"+    if {var} is None or not {var}.items:",
            f'+        log.debug("empty {var} %s", {var}_id)',
            "         return []",
            f"     return [{world.func_name()}(item) for item in {var}]",
        ]
    lines = _fit(lines, chars)
    return Output(
        "\n".join(lines), "diff", "run_command", {"command": "git diff"}, "the diff", None
    )


def git_log(world: World, chars: int) -> Output:
    rng = world.rng
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < chars:
        how = pick(rng, _HOW)
        subject = f"{world.system()}: {pick(rng, VERBS)} {pick(rng, NOUNS)} {how}"
        lines += [
            f"commit {rng.getrandbits(160):040x}",
            f"Author: {pick(rng, _AUTHORS)} <dev@acme.io>",
            f"Date:   2024-{rand(rng, 1, 12):02d}-{rand(rng, 1, 28):02d} {rand(rng, 8, 19)}:"
            f"{rand(rng, 10, 59)}:{rand(rng, 10, 59)} +0000",
            "",
            f"    {subject}",
            "",
        ]
    lines = _fit(lines, chars)
    return Output(
        "\n".join(lines),
        "gitlog",
        "run_command",
        {"command": "git log -n 20 --date=iso"},
        "git log",
        None,
    )


def list_dir(world: World, chars: int) -> Output:
    rng = world.rng
    folder = f"src/{world.system()}"
    names = sorted({f"{pick(rng, MODULES)}.py" for _ in range(max(3, chars // 30))})
    lines = [f"{'-rw-r--r--'} 1 dev dev {rand(rng, 200, 40_000):>6} {name}" for name in names]
    lines = _fit(["__init__.py", *lines], chars)
    return Output("\n".join(lines), "listing", "list_dir", {"path": folder}, folder, None)


def search_code(world: World, chars: int) -> Output:
    """Code search for the fact's topic: constants of other services (distractors)."""
    rng = world.rng
    topic = world.fact.topic
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < chars:
        mention = world.mention(topic) if rng.random() < 0.7 else world.background()
        lines.append(f"{_path(world)}:{rand(rng, 3, 300)}:{mention.ident} = {mention.literal}")
    lines = _fit(lines, chars)
    args = {"pattern": f"_{topic.const}\\b", "path": "src/"}
    return Output("\n".join(lines), "grep", "search_code", args, "the search results", None)


def pods(world: World, chars: int) -> Output:
    rng = world.rng
    names = sorted(
        f"{world.slug()}-{rng.getrandbits(36):09x}"[:40] for _ in range(max(2, chars // 70))
    )
    width = max(map(len, names)) + 3
    lines = [f"{'NAME':<{width}}READY   STATUS             RESTARTS   AGE"]
    for name in names:
        status = pick(rng, ("Running",) * 8 + ("CrashLoopBackOff", "Pending"))
        lines.append(
            f"{name:<{width}}1/1     {status:<19}{rand(rng, 0, 12):<11}{rand(rng, 1, 40)}d"
        )
    lines = _fit(lines, chars)
    return Output(
        "\n".join(lines),
        "listing",
        "run_command",
        {"command": f"kubectl get pods -n {world.home}"},
        "the pods",
        None,
    )


def patch_receipt(world: World, chars: int) -> Output:
    """The patch tool's receipt: the files it touched and the diff it left."""
    diff = git_diff(world, max(120, chars - 100)).text
    paths = sorted(
        {line.split(" b/")[-1] for line in diff.splitlines() if line.startswith("diff ")}
    )
    text = "Success. Updated the following files:\n" + "\n".join(f"M {p}" for p in paths)
    hunk = f"*** Begin Patch\n*** Update File: {paths[0]}\n@@\n-    return None\n+    return []\n"
    return Output(
        f"{text}\n\n{diff}",
        "receipt",
        "apply_patch",
        {"patch": hunk + "*** End Patch"},
        "the patch",
        None,
    )


Small = Callable[[World, int], Output]
SMALL: tuple[Small, ...] = (
    git_status, git_diff, git_log, list_dir, search_code, pods, patch_receipt
)  # fmt: skip
# The ones that also grow to a few thousand tokens (a directory listing does not).
GROWING: tuple[Small, ...] = (git_diff, git_log, search_code, pods, patch_receipt)
