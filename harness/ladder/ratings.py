"""Ladder ratings: Bradley-Terry Elo over every counted game of each bot version,
refreshed as games finish, with a history for plots.

The fit is :func:`harness.results.elo.fit`, fed through :func:`harness.results.rating.
rating_results` exactly as tournaments are. What this module adds is the bookkeeping
that keeps a refresh cheap on a ladder with many games: results are kept *aggregated*
by pairing of sides (the sum of weights and of scores per ``(side_a, side_b)``), so a
refresh fits one weighted result per distinct pairing instead of one per game. The
likelihood is a sum over games, so this is the same fit as one over every game
(:func:`harness.results.elo.fit` aggregates the same way before it maximises); its cost
grows with the number of bots and pairings, not with the number of games.

A refresh happens when :meth:`LadderRatings.refresh` is called and at least
``every_games`` games or ``every_seconds`` seconds have passed since the last one
(``force=True`` refreshes anyway). Above ``sparse_above`` bots a refresh due by time
alone also waits until the process has spent ``1 / cpu_share`` times the last refresh's
CPU on other work since it (``cpu_share`` 2% by default): a large ladder playing few
games a second then refreshes every few seconds instead of every second, and its
ratings never take more than about that share of the process's CPU; a refresh due by
games is never held back. Every ``history_every`` games a snapshot of the
standings is written to the ``ladder_rating_history`` table.

Many bots. Above ``sparse_above`` bots (100 by default) a dense fit costs too much to
run after every few games (its information matrix is bots x bots, and the intervals
need its inverse). The refresh then keeps the design of the fit in sparse form, grown as
new pairings appear, and moves the last ratings to the new maximum by Newton steps
solved with conjugate gradients (:func:`harness.results.elo.maximise_sparse`): the same
maximum as a full refit, found from a warm start at a cost that grows with the number of
pairings. The intervals come from the diagonal of the information (the precision of a
bot's rating with its opponents' held fixed), scaled per bot by the ratio of the exact
variance to that at the last *exact refit*: a full :func:`harness.results.elo.fit`, with
its dense covariance, run every ``exact_every`` games (and at the first refresh). At
an exact refit the intervals are exact; in between they follow each bot's new games.
:attr:`LadderRatings.drift` is the largest rating difference (Elo) the last exact
refit found from the incremental fit, a check that should stay near 0.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from harness.ladder.registry import RegisteredBot
from harness.results.elo import (
    DEFAULT_PRIOR_GAMES,
    NAT,
    Z95,
    Design,
    Ratings,
    Result,
    fit,
    maximise_sparse,
)
from harness.results.rating import player_json, rating_results
from harness.results.rows import rated_games
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow

__all__ = ["LadderRatings", "Snapshot"]

Sides = tuple[tuple[str, ...], tuple[str, ...]]
Snapshot = dict[str, Any]


class LadderRatings:
    """The current fit and its history. ``store`` (optional) keeps the history;
    ``clock`` is injectable for tests."""

    def __init__(self, store: LadderStore | None = None, *, every_games: int = 1,
                 every_seconds: float = 0.0, history_every: int = 50,
                 clock: Callable[[], float] = time.monotonic, sparse_above: int = 100,
                 exact_every: int = 5000, cpu_share: float = 0.02,
                 cpu_clock: Callable[[], float] = time.process_time) -> None:
        self._store = store
        self.every_games = max(1, every_games)
        self.every_seconds = every_seconds
        self.history_every = max(1, history_every)
        self.sparse_above = sparse_above
        self.exact_every = max(1, exact_every)
        self._clock = clock
        self.cpu_share = cpu_share
        self._cpu_clock = cpu_clock
        self._refresh_cpu = 0.0  # CPU seconds of the last refresh
        self._cpu_at_refresh = -float("inf")  # the process's CPU time when it ended
        self._groups: dict[Sides, list[float]] = {}  # sides -> [weight, points of side a]
        self.games = 0
        self._fitted_games = 0
        self._last_history = 0
        self._last_refresh = -float("inf")
        self.current: Ratings | None = None
        self.version = 0  # one more at each refit: what the standings were drawn from
        self.drift = 0.0
        self._design = _GrowingDesign()
        self._exact_games = -1  # games at the last exact refit
        self._calibration: dict[str, float] = {}  # exact variance x diagonal information

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
        self._design.add(result, a, b, score)

    def results(self) -> list[Result]:
        """The aggregated results: one per pairing of sides, weighted by its games and
        scored with side a's mean score."""
        return [Result(a, b, min(1.0, points / weight), weight)
                for (a, b), (weight, points) in sorted(self._groups.items()) if weight > 0.0]

    def due(self) -> bool:
        """Whether :meth:`refresh` would fit now."""
        new = self.games - self._fitted_games
        if new <= 0:
            return False
        if new >= self.every_games:
            return True
        if self._clock() - self._last_refresh < self.every_seconds:
            return False
        if len(self._design.players) <= self.sparse_above or self.cpu_share <= 0.0:
            return True
        spent = self._cpu_clock() - self._cpu_at_refresh
        return spent * self.cpu_share >= self._refresh_cpu

    def refresh(self, *, force: bool = False) -> Ratings | None:
        """Refit if due (or forced); returns the current ratings (None before any rated
        game). Writes a history snapshot every ``history_every`` games."""
        if not self._groups or not (force or self.due()):
            return self.current
        start = self.current.elo if self.current is not None else None
        cpu = self._cpu_clock()
        if len(self._design.players) <= self.sparse_above:
            self.current = fit(self.results(), start=start)
        elif self._exact_games < 0 or self.games - self._exact_games >= self.exact_every:
            self.current = self._exact(start)
        else:
            self.current = self._incremental()
        self._fitted_games = self.games
        self.version += 1
        self._last_refresh = self._clock()
        self._cpu_at_refresh = self._cpu_clock()
        self._refresh_cpu = self._cpu_at_refresh - cpu
        if self._store is not None and self.games - self._last_history >= self.history_every:
            self._save_snapshot()
        return self.current

    def _exact(self, start: dict[str, float] | None) -> Ratings:
        """A full refit; it also calibrates the intervals of the incremental ones."""
        exact = fit(self.results(), start=start)
        if self.current is not None and self._exact_games >= 0:
            incremental = self._incremental()
            self.drift = max(abs(incremental.elo.get(n, 0.0) - e) for n, e in exact.elo.items())
        design = self._design
        built = design.build()
        _, h, hp = built.curvature(design.theta_of(exact.elo))
        diagonal = built.information_diagonal(h, hp)
        self._calibration = {
            name: float((exact.ci95[name] / Z95 * NAT) ** 2 * diagonal[i])
            for name, i in design.players.items()}
        design.theta = design.theta_of(exact.elo)
        self._exact_games = self.games
        return exact

    def _incremental(self) -> Ratings:
        design = self._design
        built = design.build()
        theta, h, hp = maximise_sparse(built, design.warm_start())
        design.theta = theta
        diagonal = built.information_diagonal(h, hp)
        typical = statistics.median(self._calibration.values()) if self._calibration else 1.0
        names = list(design.players)
        variance = np.array([self._calibration.get(n, typical) for n in names]) / diagonal
        return design.ratings(theta, variance / (NAT * NAT))

    def _save_snapshot(self) -> None:
        assert self.current is not None and self._store is not None
        players = [player_json(self.current, p) for p in self.current.players]
        self._store.add_snapshot(self.games, datetime.now(UTC).isoformat(timespec="seconds"),
                                 json.dumps(players, separators=(",", ":")))
        self._last_history = self.games

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


class _GrowingDesign:
    """The sparse design of :class:`LadderRatings`' fit, grown in place: a row per
    pairing of sides in order of first appearance, a column per bot in order of first
    appearance, and each bot's games, points and opponents counted as
    :func:`harness.results.elo.fit` counts them. Arrays double in size as they fill, so a
    refresh converts nothing but what is new."""

    def __init__(self) -> None:
        self.players: dict[str, int] = {}
        self._row_of: dict[Sides, int] = {}
        self._entries = np.zeros((3, 1024))  # row, column, coefficient
        self._used = 0
        self._totals = np.zeros((2, 1024))  # weight, points of side a
        self._games: dict[str, float] = {}
        self._points: dict[str, float] = {}
        self._met: dict[str, set[str]] = {}
        self._opponents: dict[str, frozenset[str]] = {}
        self.theta = np.zeros(0)

    @staticmethod
    def _grown(array: np.ndarray, size: int) -> np.ndarray:
        if size <= array.shape[1]:
            return array
        bigger = np.zeros((array.shape[0], max(size, 2 * array.shape[1])))
        bigger[:, :array.shape[1]] = array
        return bigger

    def add(self, result: Result, a: tuple[str, ...], b: tuple[str, ...],
            score: float) -> None:
        """Count ``result``, oriented as ``a`` against ``b`` with ``score`` for ``a``."""
        row = self._row_of.get((a, b))
        if row is None:
            row = self._row_of[(a, b)] = len(self._row_of)
            self._totals = self._grown(self._totals, row + 1)
            entry: dict[int, float] = {}
            for side, sign in ((a, 1.0), (b, -1.0)):
                for name in side:
                    col = self.players.setdefault(name, len(self.players))
                    entry[col] = entry.get(col, 0.0) + sign
            entry = {col: value for col, value in entry.items() if value != 0.0}
            self._entries = self._grown(self._entries, self._used + len(entry))
            for col, value in entry.items():
                self._entries[:, self._used] = (row, col, value)
                self._used += 1
        w = result.weight
        self._totals[:, row] += (w, w * score)
        for side, points in ((result.side_a, result.score_a), (result.side_b,
                                                                1.0 - result.score_a)):
            for name in set(side):
                self._games[name] = self._games.get(name, 0.0) + w
                self._points[name] = self._points.get(name, 0.0) + w * points
        if len(a) == 1 and a != b and w > 0.0:
            for x, y in ((a[0], b[0]), (b[0], a[0])):
                met = self._met.setdefault(x, set())
                if y not in met:
                    met.add(y)
                    self._opponents.pop(x, None)

    def build(self) -> Design:
        used, rows = self._used, len(self._row_of)
        entries = self._entries[:, :used]
        return Design(len(self.players), entries[0].astype(np.intp),
                      entries[1].astype(np.intp), entries[2].copy(),
                      self._totals[0, :rows].copy(), self._totals[1, :rows].copy(),
                      DEFAULT_PRIOR_GAMES)

    def theta_of(self, elo: dict[str, float]) -> np.ndarray:
        theta = np.array([NAT * elo.get(name, 0.0) for name in self.players])
        return np.asarray(theta - theta.mean())

    def warm_start(self) -> np.ndarray:
        theta = np.zeros(len(self.players))
        theta[:len(self.theta)] = self.theta
        return theta

    def ratings(self, theta: np.ndarray, variance: np.ndarray) -> Ratings:
        names = list(self.players)
        elo = theta / NAT
        elo = elo - elo.mean()
        order = sorted(range(len(names)), key=lambda i: (-elo[i], names[i]))
        players = tuple(names[i] for i in order)
        covariance = np.diag(np.clip(variance[order], 0.0, None))
        covariance.setflags(write=False)
        half = Z95 * np.sqrt(np.clip(variance, 0.0, None))
        for name in players:
            if name not in self._opponents:
                self._opponents[name] = frozenset(self._met.get(name, ()))
        return Ratings(
            players=players,
            elo={names[i]: float(elo[i]) for i in order},
            ci95={names[i]: float(half[i]) for i in order},
            covariance=covariance,
            games={n: self._games[n] for n in players},
            score={n: (self._points[n] / self._games[n] if self._games[n] > 0.0 else 0.0)
                   for n in players},
            anchor=None, prior_games=DEFAULT_PRIOR_GAMES,
            opponents={n: self._opponents[n] for n in players})
