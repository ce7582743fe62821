"""What the operator's calls see of a running ladder (:class:`RunningLadder`): its pieces
and the two things a call may ask of it. :class:`~harness.ladder.runtime.LadderRuntime`
is one, and installs the services that take one, so the services never import the
runtime that imports them."""

from __future__ import annotations

from typing import Protocol

from harness.ladder.events import LadderEvents
from harness.ladder.hosting import Hosting
from harness.ladder.memo import Memo
from harness.ladder.quarantine import Quarantine
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.settings import LadderSettings
from harness.ladder.uploads import Uploads
from harness.storage.results import ResultsStore

__all__ = ["RunningLadder"]


class RunningLadder(Protocol):
    """A running ladder as the operator's calls see it."""

    settings: LadderSettings
    registry: Registry
    uploads: Uploads
    hosting: Hosting
    quarantine: Quarantine
    ratings: LadderRatings
    results: ResultsStore
    memo: Memo
    events: LadderEvents

    def wake(self) -> None:
        """Look for games to start now."""

    async def refresh_ratings(self, *, force: bool = False) -> None:
        """Refit the ratings if due (or ``force``)."""
