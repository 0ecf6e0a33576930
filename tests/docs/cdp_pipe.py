"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe``: no port, no
dependency.

With that flag Chromium reads protocol messages from its file descriptor 3 and writes its
answers and events to descriptor 4, each message a JSON object followed by a NUL byte. The
browser is started through ``bash`` so that the two ends of our pipes land on descriptors 3
and 4 of the child (``subprocess`` keeps descriptors but cannot renumber them).

Only what the tests need: open a page, evaluate JavaScript (awaiting promises), type keys.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _above_nine(fd: int) -> int:
    """``fd`` moved to a descriptor number of 10 or more (the original is closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class ProtocolError(RuntimeError):
    """The browser answered a command with an error, or stopped answering."""


class PipeBrowser:
    """One headless Chromium, driven over its debugging pipe."""

    def __init__(self, binary: str, flags: Sequence[str], profile: Path) -> None:
        bash = shutil.which("bash")
        if bash is None:
            raise ProtocolError("bash is needed to hand the debugging pipe to Chromium")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # The child's ends, moved above 9 so that handing them to 3 and 4 overwrites neither.
        to_browser_read = _above_nine(to_browser_read)
        from_browser_write = _above_nine(from_browser_write)
        profile.mkdir(parents=True, exist_ok=True)
        self.log = profile / "chromium.log"
        command = [
            binary,
            *flags,
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        script = (
            f'exec "$0" "$@" 3<&{to_browser_read} 4>&{from_browser_write} '
            f"{to_browser_read}<&- {from_browser_write}>&-"
        )
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                [bash, "-c", script, *command],
                pass_fds=(to_browser_read, from_browser_write),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0

    # ------------------------------------------------------------------ the protocol

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Send one command and return its result (events received meanwhile are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._receive(deadline, method)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise ProtocolError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def _receive(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProtocolError(f"no answer to {waiting_for} in time; see {self.log}")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise ProtocolError(f"Chromium closed the pipe; see {self.log}")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    # ------------------------------------------------------------------ pages

    def open(self, url: str) -> Page:
        """A new tab showing ``url``, once its document has loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        page.go(url)
        return page

    def close(self) -> None:
        with contextlib.suppress(ProtocolError, OSError):
            self.send("Browser.close", timeout=5)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> PipeBrowser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Page:
    """One tab of a :class:`PipeBrowser`."""

    def __init__(self, browser: PipeBrowser, session: str) -> None:
        self._browser = browser
        self._session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._browser.send(method, params, session=self._session)

    def go(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait_for(f"document.readyState === 'complete' && location.href === {url!r}")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise ProtocolError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 20.0) -> Any:
        """Poll a JavaScript condition until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(condition)
            if value:
                return value
            if time.monotonic() > deadline:
                raise ProtocolError(f"still false after {timeout} s: {condition}")
            time.sleep(0.1)

    def type(self, text: str) -> None:
        """Type ``text`` into the focused element, one key at a time."""
        for char in text:
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "text": char})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})
