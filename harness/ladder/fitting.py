"""The ladder's rating fit: every counted result aggregated by pairing of sides, and the
fit of those aggregates, dense for a small ladder and incremental for a large one.

:class:`RatingFit` is the state of the fit and nothing else (no clock, no store, no
scheduling: :class:`harness.ladder.ratings.LadderRatings` decides when to fit). It is
plain data, so it can be copied to another process whole
(:mod:`harness.ladder.fit_process`) and go on there.

Results are kept *aggregated* by pairing of sides (the sum of weights and of scores per
``(side_a, side_b)``), so a fit fits one weighted result per distinct pairing instead of
one per game. The likelihood is a sum over games, so this is the same fit as one over
every game (:func:`harness.results.elo.fit` aggregates the same way before it
maximises); its cost grows with the number of bots and pairings, not with the number of
games.

Up to ``sparse_above`` bots a fit is a full :func:`harness.results.elo.fit` from a warm
start. Above it, a dense fit costs too much to run after every few games (its
information matrix is bots x bots, and the intervals need its inverse). The fit then
keeps the design in sparse form, grown as new pairings appear, and moves the last
ratings to the new maximum by Newton steps solved with conjugate gradients
(:func:`harness.results.elo.maximise_sparse`): the same maximum as a full refit, found
from a warm start at a cost that grows with the number of pairings. The intervals come
from the diagonal of the information (the precision of a bot's rating with its
opponents' held fixed), scaled per bot by the ratio of the exact variance to that at the
last *exact refit*: a full fit, with its dense covariance, run every ``exact_every``
games (and at the first fit). At an exact refit the intervals are exact; in between they
follow each bot's new games. :attr:`RatingFit.drift` is the largest rating difference
(Elo) the last exact refit found from the incremental fit, a check that should stay
near 0.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

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

__all__ = ["RatingFit", "Sides", "with_diagonal"]

Sides = tuple[tuple[str, ...], tuple[str, ...]]


class RatingFit:
    """Aggregated results and their fit (see the module docstring)."""

    def __init__(self, *, sparse_above: int = 100, exact_every: int = 5000) -> None:
        self.sparse_above = sparse_above
        self.exact_every = max(1, exact_every)
        self._groups: dict[Sides, list[float]] = {}  # sides -> [weight, points of side a]
        self._design = _GrowingDesign()
        self.current: Ratings | None = None  # the last fit (its ratings start the next)
        self.exact_games = -1  # games at the last exact refit
        self._calibration: dict[str, float] = {}  # exact variance x diagonal information
        self.drift = 0.0

    @property
    def players(self) -> int:
        """How many players the results name."""
        return len(self._design.players)

    @property
    def sparse(self) -> bool:
        """Whether a fit now is the large ladder's (sparse and incremental)."""
        return self.players > self.sparse_above

    def add(self, result: Result) -> None:
        """Count one result."""
        a, b = tuple(sorted(result.side_a)), tuple(sorted(result.side_b))
        score = result.score_a
        if b < a:
            a, b, score = b, a, 1.0 - score
        group = self._groups.setdefault((a, b), [0.0, 0.0])
        group[0] += result.weight
        group[1] += result.weight * score
        self._design.add(result, a, b, score)

    def opponents(self, players: Iterable[str]) -> dict[str, frozenset[str]]:
        """Per player, the players it met one against one (as :attr:`Ratings.opponents`),
        from the results counted here."""
        return self._design.opponents(players)

    def results(self) -> list[Result]:
        """The aggregated results: one per pairing of sides, weighted by its games and
        scored with side a's mean score."""
        return [Result(a, b, min(1.0, points / weight), weight)
                for (a, b), (weight, points) in sorted(self._groups.items()) if weight > 0.0]

    def fit(self, games: int) -> Ratings:
        """Fit the results counted so far, ``games`` games in all (which decides whether
        an exact refit is due). There must be at least one result."""
        return with_diagonal(*self.fit_parts(games))

    def fit_parts(self, games: int) -> tuple[Ratings, np.ndarray | None]:
        """:meth:`fit` in two parts: the ratings, and None when they carry their
        covariance, or else (an incremental fit) their covariance's diagonal in the
        order of the players, the ratings carrying an empty one (the full matrix is 8 MB
        at 1,000 bots: :func:`with_diagonal` makes it where it is needed)."""
        start = self.current.elo if self.current is not None else None
        variances = None
        if not self.sparse:
            self.current = fit(self.results(), start=start)
        elif self.exact_games < 0 or games - self.exact_games >= self.exact_every:
            self.current = self._exact(start, games)
        else:
            self.current, variances = self._incremental()
        return self.current, variances

    def _exact(self, start: dict[str, float] | None, games: int) -> Ratings:
        """A full refit; it also calibrates the intervals of the incremental ones."""
        exact = fit(self.results(), start=start)
        if self.current is not None and self.exact_games >= 0:
            incremental, _ = self._incremental()
            self.drift = max(abs(incremental.elo.get(n, 0.0) - e) for n, e in exact.elo.items())
        design = self._design
        built = design.build()
        _, h, hp = built.curvature(design.theta_of(exact.elo))
        diagonal = built.information_diagonal(h, hp)
        self._calibration = {
            name: float((exact.ci95[name] / Z95 * NAT) ** 2 * diagonal[i])
            for name, i in design.players.items()}
        design.theta = design.theta_of(exact.elo)
        self.exact_games = games
        return exact

    def _incremental(self) -> tuple[Ratings, np.ndarray]:
        design = self._design
        built = design.build()
        theta, h, hp = maximise_sparse(built, design.warm_start())
        design.theta = theta
        diagonal = built.information_diagonal(h, hp)
        typical = statistics.median(self._calibration.values()) if self._calibration else 1.0
        names = list(design.players)
        variance = np.array([self._calibration.get(n, typical) for n in names]) / diagonal
        return design.ratings(theta, variance / (NAT * NAT))


def with_diagonal(ratings: Ratings, variances: np.ndarray | None) -> Ratings:
    """``ratings`` with the diagonal covariance ``variances`` (see
    :meth:`RatingFit.fit_parts`); as they are when ``variances`` is None."""
    if variances is None:
        return ratings
    covariance = np.diag(variances)
    covariance.setflags(write=False)
    return replace(ratings, covariance=covariance)


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
        self._name_rank = np.zeros(0, dtype=np.intp)  # each player's place by name

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

    def ratings(self, theta: np.ndarray, variance: np.ndarray) -> tuple[Ratings, np.ndarray]:
        """The ratings with an empty covariance, and its diagonal, ``variance`` (Elo²)
        in the order of the players (see :meth:`RatingFit.fit_parts`)."""
        names = list(self.players)
        elo = theta / NAT
        elo = elo - elo.mean()
        if len(self._name_rank) != len(names):
            self._name_rank = np.argsort(np.argsort(np.array(names, dtype=object)))
        order = [int(i) for i in np.lexsort((self._name_rank, -elo))]  # best, then name
        players = tuple(names[i] for i in order)
        variance = np.clip(variance, 0.0, None)
        ordered = variance[order]
        half = Z95 * np.sqrt(variance)
        return Ratings(
            players=players,
            elo={names[i]: float(elo[i]) for i in order},
            ci95={names[i]: float(half[i]) for i in order},
            covariance=np.zeros((0, 0)),
            games={n: self._games[n] for n in players},
            score={n: (self._points[n] / self._games[n] if self._games[n] > 0.0 else 0.0)
                   for n in players},
            anchor=None, prior_games=DEFAULT_PRIOR_GAMES,
            opponents=self.opponents(players)), ordered

    def opponents(self, players: Iterable[str]) -> dict[str, frozenset[str]]:
        out = {}
        for name in players:
            met = self._opponents.get(name)
            if met is None:
                met = self._opponents[name] = frozenset(self._met.get(name, ()))
            out[name] = met
        return out
