"""HTML pages for people: the tournament report (``report.html``) and the replay viewer.

Both are self-contained files (inline SVG, style and script; nothing is fetched), so they
open offline from a results folder. :mod:`harness.web.data` is the one module that reads
the results logic; the others only format what it returns. :mod:`harness.web.live_pages` holds
the shells of ``serve``'s live pages, which draw the JSON that
:mod:`harness.tournament.live_site` streams to them. What every live page shares (the
tournament's and the ladder's) is here too: the read-only HTTP site and replay pages
(:mod:`harness.web.site`), the event streams (:mod:`harness.web.feed`) and the
connection limits (:mod:`harness.web.httpguard`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.web.replay import replay_html
    from harness.web.report import write_report_html

__all__ = ["replay_html", "write_report_html"]

_LAZY = {"replay_html": "harness.web.replay", "write_report_html": "harness.web.report"}


def __getattr__(name: str) -> Any:
    """The page writers, imported when first asked for: a short command that needs only
    a piece of this package (``ctl`` folds its log lines with :mod:`harness.web.logfold`)
    does not load the report's statistics with it."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
