"""What the browser tests share: the system's Chromium (``CHROMIUM`` overrides it) driven
by Playwright, and a skip marker for machines without it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable "
                                    "(apt-get install chromium, or set CHROMIUM)")


@contextmanager
def chromium() -> Iterator[Browser]:
    """A running Chromium, closed on exit."""
    assert CHROMIUM is not None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
