"""The documentation site in a real browser: headless Chromium opens the built site, served on
localhost, and the home page, a guide and a reference page render, and the site's search finds
a public function and links it to the API reference.

Skipped, with the reason, when Chromium or the ``docs`` extra is missing. Chromium is driven
over its DevTools pipe (``cdp_pipe.py``), so the test needs no port of its own but the
server's, and no dependency beyond the standard library.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cdp_pipe import Page, PipeBrowser
from docs_site import site_dir_fixture  # noqa: F401 (the site_dir fixture)

from browser_support import CHROMIUM_FLAGS, chromium

pytestmark = pytest.mark.browser


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(site_dir: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipeBrowser]:
    binary = chromium()
    with PipeBrowser(binary, CHROMIUM_FLAGS, tmp_path_factory.mktemp("chromium")) as opened:
        yield opened


def _heading(page: Page) -> str:
    return str(page.wait_for("document.querySelector('article h1')?.textContent.trim()"))


@pytest.mark.parametrize(
    ("path", "heading"),
    [
        ("", "pycupel"),
        ("guides/chat-history/", "Fit a chat history"),
        ("reference/pycupel.adapters.openai/", "pycupel.adapters.openai"),
    ],
)
def test_pages_render(browser: PipeBrowser, site_url: str, path: str, heading: str) -> None:
    page = browser.open(site_url + path)
    assert _heading(page).rstrip("¶").strip() == heading
    # The theme's script ran: the navigation and the search box are in place.
    assert page.evaluate("document.querySelector('.md-search__input') !== null")
    assert page.evaluate("document.querySelectorAll('.md-nav__link').length") > 20


def test_the_reference_page_holds_the_function(browser: PipeBrowser, site_url: str) -> None:
    page = browser.open(site_url + "reference/pycupel.adapters.openai/")
    anchor = "pycupel.adapters.openai.fit_messages"
    text = page.wait_for(f"document.getElementById({anchor!r})?.textContent")
    assert "fit_messages" in text
    # Its signature and its docstring's sections are rendered.
    assert page.evaluate("document.querySelectorAll('.doc-signature').length") > 5


def test_search_finds_a_public_function(browser: PipeBrowser, site_url: str) -> None:
    page = browser.open(site_url)
    page.evaluate("document.querySelector('.md-search__input').focus()")
    page.type("fit_messages")
    links = page.wait_for(
        """(() => {
            const links = [...document.querySelectorAll('.md-search-result__item a')]
                .map(a => a.getAttribute('href'));
            return links.some(href => href.includes('reference/')) ? links : null;
        })()""",
        timeout=30,
    )
    # A result links to the function's entry in an adapter's reference page.
    assert any(
        "/reference/pycupel.adapters." in href and href.endswith(".fit_messages") for href in links
    ), links
    assert page.evaluate("document.querySelector('.md-search__input').value") == "fit_messages"
