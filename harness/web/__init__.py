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

from harness.web.replay import replay_html
from harness.web.report import write_report_html

__all__ = ["replay_html", "write_report_html"]
