"""Ladder ratings: Bradley-Terry Elo over every counted game of each bot version,
refreshed as games finish, with a history for plots.

The fit is :class:`harness.ladder.fitting.RatingFit` over results made by
:func:`harness.results.rating.rating_results` exactly as tournaments make them (the
module says how a large ladder's fit stays cheap). This module decides when to fit and
where, keeps the history, and draws the standings.

A refresh happens when :meth:`LadderRatings.refresh` is called and at least
``every_games`` games or ``every_seconds`` seconds have passed since the last one
(``force=True`` refreshes anyway). Above ``sparse_above`` bots a refresh due by time
alone also waits until the process has spent ``1 / cpu_share`` times the last refresh's
CPU on other work since it (``cpu_share`` 2% by default): a large ladder playing few
games a second then refreshes every few seconds instead of every second, and its
ratings never take more than about that share of the process's CPU; a refresh due by
games is never held back. Every ``history_every`` games a snapshot of the
standings is written to the ``ladder_rating_history`` table.

With ``separate_process`` (the running ladder's choice), a ladder of more than
``sparse_above`` bots fits in a process of its own (:mod:`harness.ladder.fit_process`),
started at the first such refresh from a copy of this object's fit, which goes on
counting every result too. If that process dies, the next refresh starts another from
that copy (its first fit is exact); if a new one cannot start either, the fits run
here.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from harness.errors import RatingsProcessLost
from harness.ladder.fit_process import FitProcess
from harness.ladder.fitting import RatingFit
from harness.ladder.registry import RegisteredBot
from harness.results.elo import Ratings, Result
from harness.results.rating import player_json, rating_results
from harness.results.rows import rated_games
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow

__all__ = ["LadderRatings", "Snapshot"]

Snapshot = dict[str, Any]

log = logging.getLogger(__name__)


class LadderRatings:
    """The current fit and its history. ``store`` (optional) keeps the history;
    ``clock`` is injectable for tests. :meth:`close` stops the fit's process, if any."""

    def __init__(self, store: LadderStore | None = None, *, every_games: int = 1,
                 every_seconds: float = 0.0, history_every: int = 50,
                 clock: Callable[[], float] = time.monotonic, sparse_above: int = 100,
                 exact_every: int = 5000, cpu_share: float = 0.02,
                 cpu_clock: Callable[[], float] = time.process_time,
                 separate_process: bool = False) -> None:
        self._store = store
        self.every_games = max(1, every_games)
        self.every_seconds = every_seconds
        self.history_every = max(1, history_every)
        self._clock = clock
        self.cpu_share = cpu_share
        self._cpu_clock = cpu_clock
        self.last_fit_cpu = 0.0  # CPU seconds of the last fit, wherever it ran
        self._cpu_at_refresh = -float("inf")  # this process's CPU time when it ended
        self._fit = RatingFit(sparse_above=sparse_above, exact_every=exact_every)
        self.separate_process = separate_process
        self._process: FitProcess | None = None
        self._unsent: list[Result] = []  # counted here, not yet by the fit's process
        self.games = 0
        self._fitted_games = 0
        self._last_history = 0
        self._last_refresh = -float("inf")
        self.current: Ratings | None = None
        self.version = 0  # one more at each refit: what the standings were drawn from
        self.drift = 0.0  # see RatingFit.drift
        self.exact_games = -1  # games at the last exact refit

    @property
    def fit_pid(self) -> int | None:
        """The process id of the fit's own process, if it has one now."""
        return self._process.pid if self._process is not None else None

    def add_games(self, rows: Iterable[GameRow]) -> int:
        """Count finished games (unrated ones, e.g. interrupted, are skipped); returns
        how many were rated."""
        added = 0
        for game, places in rated_games(rows):
            for result in rating_results([(game, places)]):
                self._fit.add(result)
                if self._process is not None:
                    self._unsent.append(result)
            added += 1
        self.games += added
        return added

    def results(self) -> list[Result]:
        """The aggregated results (see :meth:`RatingFit.results`)."""
        return self._fit.results()

    def due(self) -> bool:
        """Whether :meth:`refresh` would fit now."""
        new = self.games - self._fitted_games
        if new <= 0:
            return False
        if new >= self.every_games:
            return True
        if self._clock() - self._last_refresh < self.every_seconds:
            return False
        if not self._fit.sparse or self.cpu_share <= 0.0:
            return True
        spent = self._cpu_clock() - self._cpu_at_refresh
        return spent * self.cpu_share >= self.last_fit_cpu

    def refresh(self, *, force: bool = False, history: bool = True) -> Ratings | None:
        """Refit if due (or forced); returns the current ratings (None before any rated
        game). Then, with ``history``, :meth:`save_history` (the running ladder calls
        it on its own, after the new ratings are out)."""
        if not self._fit.players or not (force or self.due()):
            return self.current
        if self.separate_process and self._fit.sparse:
            self.current = self._fit_elsewhere()
        else:
            self.current = self._fit_here()
        self._fitted_games = self.games
        self.version += 1
        self._last_refresh = self._clock()
        self._cpu_at_refresh = self._cpu_clock()
        if history:
            self.save_history()
        return self.current

    def save_history(self) -> None:
        """Write a snapshot of the standings if ``history_every`` games have been fitted
        since the last one (and there is a store)."""
        if (self._store is not None and self.current is not None
                and self._fitted_games - self._last_history >= self.history_every):
            self._save_snapshot()

    def _fit_elsewhere(self) -> Ratings:
        """Fit in the fit's own process, starting one if there is none; a lost process
        is replaced once, and if that fails too the fits run here from now on."""
        for attempt in (1, 2):
            try:
                if self._process is None:
                    self._process = FitProcess(self._fit)  # a copy of every result
                    self._unsent = []
                answer = self._process.fit(self._unsent, self.games, self._fit)
            except RatingsProcessLost as error:
                self._close_process()
                if attempt == 1:
                    log.warning("%s; starting another", error)
                    continue
                log.error("%s; the ratings are fitted in the ladder's process from now "
                          "on", error)
                self.separate_process = False
                break
            self._unsent = []
            self._fit.current = answer.ratings  # where a new process would start from
            self.drift, self.exact_games = answer.drift, answer.exact_games
            self.last_fit_cpu = answer.cpu
            return answer.ratings
        return self._fit_here()

    def _fit_here(self) -> Ratings:
        """Fit in this process, timing it."""
        cpu = self._cpu_clock()
        ratings = self._fit.fit(self.games)
        self.last_fit_cpu = self._cpu_clock() - cpu
        self.drift, self.exact_games = self._fit.drift, self._fit.exact_games
        return ratings

    def _close_process(self) -> None:
        if self._process is not None:
            self._process.close()
            self._process = None
        self._unsent = []

    def close(self) -> None:
        """Stop the fit's process, if there is one. Idempotent; a later refresh starts
        another."""
        self._close_process()

    def _save_snapshot(self) -> None:
        assert self.current is not None and self._store is not None
        players = [player_json(self.current, p) for p in self.current.players]
        self._store.add_snapshot(self._fitted_games,
                                 datetime.now(UTC).isoformat(timespec="seconds"),
                                 json.dumps(players, separators=(",", ":")))
        self._last_history = self._fitted_games

    def history(self) -> list[Snapshot]:
        """The stored snapshots, oldest first: ``{"games", "at", "players"}`` (players
        as in :func:`harness.results.rating.player_json`)."""
        if self._store is None:
            return []
        return [{"games": g, "at": at, "players": json.loads(p)}
                for g, at, p in self._store.snapshots()]

    def estimates(self, entrants: Sequence[RegisteredBot]) -> dict[str, tuple[float, float]]:
        """Each entrant's rating and interval for pairing: its own, else (a new version)
        the newest rated older version's rating with an unknown interval, else 0 with
        an unknown one. One pass over ``entrants`` (which must hold every version)."""
        ratings = self.current
        if ratings is None:
            return {e.name: (0.0, math.inf) for e in entrants}
        by_name = {e.name: e for e in entrants}
        out: dict[str, tuple[float, float]] = {}
        for entrant in entrants:
            if entrant.name in ratings.elo:
                out[entrant.name] = (ratings.elo[entrant.name], ratings.ci95[entrant.name])
                continue
            older = by_name.get(entrant.previous) if entrant.previous else None
            while older is not None and older.name not in ratings.elo:
                older = by_name.get(older.previous) if older.previous else None
            out[entrant.name] = (0.0 if older is None else ratings.elo[older.name], math.inf)
        return out

    def standings(self, entrants: Sequence[RegisteredBot], *,
                  latest_only: bool = False) -> list[dict[str, Any]]:
        """One row per entrant, best first, unrated last: ``player_json`` fields (or
        only ``name`` and ``games`` 0 when unrated) plus ``owner``, ``retired`` and
        ``inherited_from``: for an unrated version, the newest rated older version
        whose rating it shows until it has games of its own. With ``latest_only``,
        only the newest version of each bot."""
        ratings = self.current
        by_name = {e.name: e for e in entrants}
        if latest_only:
            newest = {e.base: e.version for e in entrants}
            entrants = [e for e in entrants if e.version == newest[e.base]]
        rows: list[dict[str, Any]] = []
        for entrant in entrants:
            row: dict[str, Any] = {"name": entrant.name, "games": 0, "elo": None}
            source: RegisteredBot | None = entrant
            while source is not None and not (ratings and source.name in ratings.elo):
                source = by_name.get(source.previous) if source.previous else None
            if ratings is not None and source is not None:
                row = player_json(ratings, source.name) | {"name": entrant.name}
                if source is not entrant:
                    row["games"] = 0
            row.update(owner=entrant.owner, retired=entrant.retired,
                       inherited_from=None if source in (None, entrant) else source.name)
            rows.append(row)
        rows.sort(key=lambda r: (r["elo"] is None, -(r["elo"] or 0.0), r["name"]))
        return rows
