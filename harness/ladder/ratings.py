"""Ladder ratings: Bradley-Terry Elo over every counted game of each bot version,
refreshed as games finish, with a history for plots.

The fit is :func:`harness.ratings.fit`, fed through :func:`harness.results.rating.
rating_results` exactly as tournaments are. What this module adds is the bookkeeping
that keeps a refresh cheap on a ladder with many games: results are kept *aggregated*
by pairing of sides (the sum of weights and of scores per ``(side_a, side_b)``), so a
refresh fits one weighted result per distinct pairing instead of one per game. The
likelihood is a sum over games, so this is the same fit as one over every game
(:func:`harness.ratings.fit` aggregates the same way before it maximises); its cost
grows with the number of bots and pairings, not with the number of games.

A refresh happens when :meth:`LadderRatings.refresh` is called and at least
``every_games`` games or ``every_seconds`` seconds have passed since the last one
(``force=True`` refreshes anyway). Every ``history_every`` games a snapshot of the
standings is written to the ``ladder_rating_history`` table.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from harness.ladder.registry import Entrant
from harness.ladder.store import LadderStore
from harness.ratings import Ratings, Result, fit
from harness.results.rating import player_json, rating_results
from harness.results.rows import rated_games
from harness.store import GameRow

__all__ = ["LadderRatings", "Snapshot"]

Sides = tuple[tuple[str, ...], tuple[str, ...]]
Snapshot = dict[str, Any]


class LadderRatings:
    """The current fit and its history. ``store`` (optional) keeps the history;
    ``clock`` is injectable for tests."""

    def __init__(self, store: LadderStore | None = None, *, every_games: int = 1,
                 every_seconds: float = 0.0, history_every: int = 50,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self.every_games = max(1, every_games)
        self.every_seconds = every_seconds
        self.history_every = max(1, history_every)
        self._clock = clock
        self._groups: dict[Sides, list[float]] = {}  # sides -> [weight, points of side a]
        self.games = 0
        self._fitted_games = 0
        self._last_history = 0
        self._last_refresh = -float("inf")
        self.current: Ratings | None = None

    def add_games(self, rows: Iterable[GameRow]) -> int:
        """Count finished games (unrated ones, e.g. interrupted, are skipped); returns
        how many were rated."""
        added = 0
        for game, places in rated_games(rows):
            for result in rating_results([(game, places)]):
                self._add(result)
            added += 1
        self.games += added
        return added

    def _add(self, result: Result) -> None:
        a, b = tuple(sorted(result.side_a)), tuple(sorted(result.side_b))
        score = result.score_a
        if b < a:
            a, b, score = b, a, 1.0 - score
        group = self._groups.setdefault((a, b), [0.0, 0.0])
        group[0] += result.weight
        group[1] += result.weight * score

    def results(self) -> list[Result]:
        """The aggregated results: one per pairing of sides, weighted by its games and
        scored with side a's mean score."""
        return [Result(a, b, min(1.0, points / weight), weight)
                for (a, b), (weight, points) in sorted(self._groups.items()) if weight > 0.0]

    def due(self) -> bool:
        """Whether :meth:`refresh` would fit now."""
        new = self.games - self._fitted_games
        waited = self._clock() - self._last_refresh >= self.every_seconds
        return new > 0 and (new >= self.every_games or waited)

    def refresh(self, *, force: bool = False) -> Ratings | None:
        """Refit if due (or forced); returns the current ratings (None before any rated
        game). Writes a history snapshot every ``history_every`` games."""
        if not self._groups or not (force or self.due()):
            return self.current
        self.current = fit(self.results())
        self._fitted_games = self.games
        self._last_refresh = self._clock()
        if self._store is not None and self.games - self._last_history >= self.history_every:
            self._save_snapshot()
        return self.current

    def _save_snapshot(self) -> None:
        assert self.current is not None and self._store is not None
        players = [player_json(self.current, p) for p in self.current.players]
        with self._store.writing() as conn:
            conn.execute("INSERT INTO ladder_rating_history (games, at, players_json) "
                         "VALUES (?, ?, ?)",
                         (self.games, datetime.now(UTC).isoformat(timespec="seconds"),
                          json.dumps(players, separators=(",", ":"))))
        self._last_history = self.games

    def history(self) -> list[Snapshot]:
        """The stored snapshots, oldest first: ``{"games", "at", "players"}`` (players
        as in :func:`harness.results.rating.player_json`)."""
        if self._store is None:
            return []
        with self._store.reading() as conn:
            rows = conn.execute("SELECT games, at, players_json FROM ladder_rating_history "
                                "ORDER BY id").fetchall()
        return [{"games": g, "at": at, "players": json.loads(p)} for g, at, p in rows]

    def standings(self, entrants: Sequence[Entrant], *,
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
            source: Entrant | None = entrant
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
