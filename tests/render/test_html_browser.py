"""The HTML report in a real browser: headless Chromium renders every row; a screenshot is
left in ``build/`` for people to look at.

Skipped, with the reason, when no Chromium binary is found (Debian:
``apt-get install -y chromium``; or set ``PYCUPEL_CHROMIUM`` to the binary): see
``tests/browser_support.py``, shared with the documentation site's browser test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from html_checks import body_rows, parse_page
from render_helpers import HOSTILE

from browser_support import CHROMIUM_FLAGS, chromium
from pycupel.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "support-chat.json"
BUILD = REPO / "build"

pytestmark = pytest.mark.browser


def headless(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    items = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    # One hostile item: the browser must show it as text, never run it.
    items.append({"content": HOSTILE, "tokens": 15, "kind": "Document"})
    source = folder / "items.json"
    source.write_text(json.dumps(items), encoding="utf-8")
    page = folder / "report.html"
    result = CliRunner().invoke(
        main,
        [
            "explain",
            str(source),
            "--budget",
            "1500",
            "--target",
            "1200",
            "--output-reserve",
            "200",
            "--html",
            str(page),
            "--json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return page


def test_browser_renders_every_included_and_excluded_row(report_page: Path, tmp_path: Path) -> None:
    binary = chromium()
    result = headless(binary, tmp_path / "profile", "--dump-dom", report_page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = parse_page(result.stdout)
    rows = body_rows(dom, "items")
    expected = json.loads(
        CliRunner()
        .invoke(
            main,
            [
                "explain",
                str(report_page.parent / "items.json"),
                "--budget",
                "1500",
                "--target",
                "1200",
                "--output-reserve",
                "200",
                "--json",
            ],
        )
        .stdout
    )["report"]
    included = [row for row in rows if row.classes == ["included"]]
    excluded = [row for row in rows if row.classes == ["excluded"]]
    assert len(included) == len(expected["included"])
    assert len(excluded) == len(expected["excluded"])
    assert [row.cells[0] for row in included] == [str(n) for n in range(1, len(included) + 1)]
    # Rows keep their order and their reasons with data.
    assert [row.cells[5].split()[0] for row in excluded] == [
        entry["reason"]["reason"] for entry in expected["excluded"]
    ]
    # The hostile content is text in a cell; the browser built no element from it.
    assert any(HOSTILE in row.cells[-1] for row in rows)
    assert not any(tag == "img" for tag, _ in dom.tags)
    # The script ran: it revealed the text filter.
    search = next(attrs for tag, attrs in dom.tags if attrs.get("id") == "item-search")
    assert "hidden" not in search


@pytest.mark.parametrize(("name", "height"), [("report.png", 2000), ("report-full.png", 3600)])
def test_browser_screenshot_for_people(
    report_page: Path, tmp_path: Path, name: str, height: int
) -> None:
    """``report.png`` is the first screen; ``report-full.png`` also shows the excluded rows."""
    binary = chromium()
    BUILD.mkdir(exist_ok=True)
    shot = BUILD / name
    shot.unlink(missing_ok=True)
    result = headless(
        binary,
        tmp_path / "profile",
        f"--screenshot={shot}",
        f"--window-size=1280,{height}",
        "--hide-scrollbars",
        report_page.as_uri(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.exists()
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(header[16:20], "big") == 1280
    assert int.from_bytes(header[20:24], "big") == height
