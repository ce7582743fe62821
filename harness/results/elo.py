"""Elo ratings by maximum likelihood: the Bradley-Terry model that BayesElo and Ordo fit.

Model. Each player ``p`` has a rating ``R_p`` in Elo points. A *side* is one or more
players and its strength is the **sum** of its members' ratings, so mixed partnerships
rate bots individually. Side A scores against side B, in expectation::

    E[score_a] = 1 / (1 + 10 ** (-(R_A - R_B) / 400))

A result's ``score_a`` may be fractional (0.5 for a draw); the likelihood of a result is
``p ** score_a * (1 - p) ** (1 - score_a)``, raised to its ``weight``. Both sides of one
result must have the same number of members (duplicates count: ``("x", "x")`` is two
seats held by copies of ``x`` and has strength ``2 * R_x``). Then the model only sees
rating *differences*, and the level is fixed afterwards by the anchor (or a mean of 0).

Scale. Ratings are per member. A team's Elo is the sum of its members', so in a pool
where every side is two members, per-player differences are half the team-vs-team Elo
differences. To rate whole entries on the usual scale, give each side as one member.
Do not mix one- and two-member sides for the same entrants in one pool.

Prior. As in BayesElo, every player gets ``prior_games`` virtual draws (default 2)
against a virtual opponent rated at the mean of all players' ratings. That keeps a player
who won or lost everything finite and pulls thinly-sampled players a little towards the
mean; it does not change ``games`` or ``score``. With ``prior_games=0`` the fit is the
plain maximum-likelihood estimate, which does not exist when a player (or a group of
players) won or lost every game against the rest: :func:`fit` then raises ConfigError.

Fit. Identical ``(side_a, side_b)`` pairings are aggregated first (member order and the
orientation of the pairing do not matter), then the concave log-likelihood is maximised
by Newton-Raphson with a backtracking line search, in the subspace of mean-zero ratings.
The data are kept sparse (:class:`Design`: one row per pairing, its nonzero entries only),
so only the ``k x k`` information is dense; with many players and a prior, a Newton step
is one linear solve. :func:`maximise_sparse` takes the same steps matrix-free (conjugate
gradients), for refreshing a large pool from its last fit.

Uncertainty. The covariance is the inverse of the observed Fisher information (minus the
Hessian of the log-likelihood, prior included) restricted to the constraint that fixes the
level: with no anchor it is the Moore-Penrose pseudo-inverse (the mean-zero projection);
with an anchor it is the covariance of ``R - R_anchor``, in which the anchor's row and
column are 0. Differences ``R_a - R_b`` have the same variance either way, so
:meth:`Ratings.los` does not depend on the anchor.

Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import numpy.typing as npt

from harness.errors import ConfigError

__all__ = [
    "DEFAULT_PRIOR_GAMES",
    "ELO_SCALE",
    "NAT",
    "Z95",
    "Design",
    "Ratings",
    "Result",
    "elo_from_score",
    "expected_score",
    "fit",
    "maximise_sparse",
]

FloatArray = npt.NDArray[np.float64]

ELO_SCALE = 400.0
"""Elo points per factor of 10 in the odds."""

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""

DEFAULT_PRIOR_GAMES = 2.0
"""Virtual draws per player against the mean (BayesElo's default prior strength)."""

NAT = math.log(10.0) / ELO_SCALE
"""Natural log-odds per Elo point."""
_NAT = NAT

_MAX_ITERATIONS = 200
_STEP_TOLERANCE = 1e-12  # natural log-odds units (about 2e-10 Elo)
_FULL_STEP_BELOW = 1e-3  # take the plain Newton step once steps are this small
_MAX_SPREAD = 40.0  # natural units, about 7000 Elo: beyond it the estimate is diverging
_SINGULAR = 1e-12  # relative eigenvalue below which the information is singular


def expected_score(elo_diff: float) -> float:
    """Expected score of a side that is ``elo_diff`` Elo stronger: ``1/(1+10**(-d/400))``."""
    x = _NAT * elo_diff
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def elo_from_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (``±inf`` at 0 and 1)."""
    if not 0.0 <= score <= 1.0:
        raise ConfigError("score", f"must be in [0, 1], got {score!r}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return ELO_SCALE * math.log10(score / (1.0 - score))


@dataclass(frozen=True, slots=True)
class Result:
    """One game (or ``weight`` identical games) between two sides.

    ``score_a`` is side A's score in [0, 1] (1 win, 0.5 draw, 0 loss); ``weight`` >= 0
    multiplies the game's likelihood (use it to pass aggregated counts). Invalid values
    raise ConfigError naming the field.
    """

    side_a: tuple[str, ...]
    side_b: tuple[str, ...]
    score_a: float
    weight: float = 1.0

    def __post_init__(self) -> None:
        for option in ("side_a", "side_b"):
            side = getattr(self, option)
            if isinstance(side, str):
                raise ConfigError(option, f"must be a tuple of player names, not {side!r}")
            side = tuple(side)
            if not side:
                raise ConfigError(option, "a side needs at least one player")
            if not all(isinstance(name, str) for name in side):
                raise ConfigError(option, f"player names must be strings, got {side!r}")
            object.__setattr__(self, option, side)
        if not 0.0 <= self.score_a <= 1.0:
            raise ConfigError("score_a", f"must be in [0, 1], got {self.score_a!r}")
        if not (math.isfinite(self.weight) and self.weight >= 0.0):
            raise ConfigError("weight", f"must be finite and >= 0, got {self.weight!r}")


@dataclass(frozen=True, eq=False)
class Ratings:
    """A fitted rating list.

    ``players`` is sorted best first (ties by name). ``elo`` and ``ci95`` (half-width of
    the 95% interval) are in Elo. ``covariance`` is a read-only ``k x k`` numpy array in
    Elo², rows and columns in the order of ``players``. ``games`` is the total weight of
    the results each player took part in (a result counts once per side the player is
    on) and ``score`` the fraction of those points the player's sides scored (0 for a
    player with no weight). ``anchor`` is the anchored player, or None for mean zero.
    ``opponents`` gives, per player, the players it met one against one (results whose
    sides are one member each).
    """

    players: tuple[str, ...]
    elo: dict[str, float]
    ci95: dict[str, float]
    covariance: FloatArray
    games: dict[str, float]
    score: dict[str, float]
    anchor: str | None
    prior_games: float
    opponents: dict[str, frozenset[str]] = field(default_factory=dict)

    def _index(self, name: str) -> int:
        try:
            return self.players.index(name)
        except ValueError:
            raise KeyError(name) from None

    def cov(self, a: str, b: str) -> float:
        """Covariance of the ratings of ``a`` and ``b`` (Elo²)."""
        return float(self.covariance[self._index(a), self._index(b)])

    def diff_stddev(self, a: str, b: str) -> float:
        """Standard error of ``R_a - R_b`` (Elo); independent of the anchor."""
        var = self.cov(a, a) + self.cov(b, b) - 2.0 * self.cov(a, b)
        return math.sqrt(max(var, 0.0))

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority ``P(R_a > R_b) = Phi((R_a - R_b) / sd(R_a - R_b))``.

        0.5 for a player against itself; 1 or 0 if the difference has no variance.
        """
        diff = self.elo[a] - self.elo[b]
        sd = self.diff_stddev(a, b)
        if a == b or diff == 0.0:
            return 0.5
        if sd == 0.0:
            return 1.0 if diff > 0.0 else 0.0
        return 0.5 * (1.0 + math.erf(diff / (sd * math.sqrt(2.0))))

    def los_matrix(self) -> dict[str, dict[str, float]]:
        """``m[a][b] == self.los(a, b)`` for every pair, diagonal 0.5, in ``players`` order."""
        return {a: {b: self.los(a, b) for b in self.players} for a in self.players}

    def interval(self, name: str) -> tuple[float, float]:
        """The 95% interval ``(elo - ci95, elo + ci95)`` of a player's rating."""
        centre, half = self.elo[name], self.ci95[name]
        return (centre - half, centre + half)


def fit(
    results: Iterable[Result],
    *,
    anchor: str | None = None,
    anchor_rating: float = 0.0,
    prior_games: float = DEFAULT_PRIOR_GAMES,
    start: Mapping[str, float] | None = None,
) -> Ratings:
    """Fit ratings to ``results`` by maximum likelihood (see the module docstring).

    ``anchor`` names a player fixed at ``anchor_rating``; without one the ratings have
    mean 0. ``start`` (Elo per player, e.g. the previous fit) only sets where the
    search begins: the maximum is the same, found in fewer steps. Raises ConfigError
    for no results, an unknown anchor, sides of different sizes, a negative
    ``prior_games``, or data whose estimate is infinite or not unique (only possible
    with ``prior_games=0``).
    """
    if not (math.isfinite(prior_games) and prior_games >= 0.0):
        raise ConfigError("prior_games", f"must be finite and >= 0, got {prior_games!r}")
    if not math.isfinite(anchor_rating):
        raise ConfigError("anchor_rating", f"must be finite, got {anchor_rating!r}")

    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[float]] = {}
    games: dict[str, float] = {}
    points: dict[str, float] = {}
    met: dict[str, set[str]] = {}
    count = 0
    for result in results:
        count += 1
        side_a, side_b = tuple(sorted(result.side_a)), tuple(sorted(result.side_b))
        if len(side_a) != len(side_b):
            raise ConfigError(
                "side_b",
                f"sides must have the same number of members: {side_a} vs {side_b}",
            )
        s, w = result.score_a, result.weight
        for name in set(side_a):
            games[name] = games.get(name, 0.0) + w
            points[name] = points.get(name, 0.0) + w * s
        for name in set(side_b):
            games[name] = games.get(name, 0.0) + w
            points[name] = points.get(name, 0.0) + w * (1.0 - s)
        if side_b < side_a:
            side_a, side_b, s = side_b, side_a, 1.0 - s
        if len(side_a) == 1 and side_a != side_b and w > 0.0:
            met.setdefault(side_a[0], set()).add(side_b[0])
            met.setdefault(side_b[0], set()).add(side_a[0])
        group = groups.setdefault((side_a, side_b), [0.0, 0.0])
        group[0] += w
        group[1] += w * s
    if count == 0:
        raise ConfigError("results", "there are no results to rate")
    names = sorted(games)
    if anchor is not None and anchor not in games:
        raise ConfigError("anchor", f"unknown player {anchor!r}")

    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    design = Design.of(groups, index, prior_games)
    theta0 = None
    if start is not None:
        theta0 = np.array([_NAT * start.get(name, 0.0) for name in names])
        theta0 -= theta0.mean()
    theta, info = _maximise(design, theta0)

    # Covariance of the mean-zero solution: the pseudo-inverse of the information, whose
    # null space is exactly the constant vector (checked in _maximise).
    proj = np.full((k, k), 1.0 / k)
    scale = _projection_scale(info)
    cov = np.linalg.inv(info + scale * proj) - proj / scale
    elo = theta / _NAT
    cov = cov / (_NAT * _NAT)
    if anchor is None:
        elo = elo - elo.mean()
    else:
        j = index[anchor]
        elo = elo - elo[j] + anchor_rating
        shift = np.eye(k)
        shift[:, j] -= 1.0  # R - R_j, as a linear map of R
        cov = shift @ cov @ shift.T
    cov = (cov + cov.T) / 2.0

    order = sorted(range(k), key=lambda i: (-elo[i], names[i]))
    players = tuple(names[i] for i in order)
    cov = cov[np.ix_(order, order)]
    cov.setflags(write=False)
    variances = np.clip(np.diag(cov), 0.0, None)
    return Ratings(
        players=players,
        elo={names[i]: float(elo[i]) for i in order},
        ci95={name: Z95 * math.sqrt(float(v)) for name, v in zip(players, variances, strict=True)},
        covariance=cov,
        games={name: games[name] for name in players},
        score={
            name: (points[name] / games[name] if games[name] > 0.0 else 0.0) for name in players
        },
        anchor=anchor,
        prior_games=float(prior_games),
        opponents={name: frozenset(met.get(name, ())) for name in players},
    )


def _log_sigmoid(x: FloatArray) -> FloatArray:
    return -np.logaddexp(0.0, -x)


def _sigmoid(x: FloatArray) -> FloatArray:
    return np.exp(_log_sigmoid(x))


IntArray = npt.NDArray[np.intp]


class Design:
    """The fit's data in sparse form: one row per aggregated pairing of sides, stored as
    its nonzero entries (player, coefficient: +members on side a, -members on side b),
    with the prior's virtual draws against the mean kept implicit (the row
    ``e_i - 1/k`` for every player). Everything costs the number of entries plus the
    number of players, never rows x players."""

    def __init__(self, k: int, rows: IntArray, cols: IntArray, coef: FloatArray,
                 weight: FloatArray, scored: FloatArray, prior_games: float) -> None:
        self.k, self.rows, self.cols, self.coef = k, rows, cols, coef
        self.weight, self.scored, self.prior = weight, scored, prior_games
        self.m = len(weight)
        self._blocks: list[tuple[IntArray | None, IntArray, FloatArray]] | None = None

    def blocks(self) -> list[tuple[IntArray | None, IntArray, FloatArray]]:
        """The rows grouped by their number of entries ``s``: per group, the rows (None
        when the group is every row, in order), and the columns and coefficients as
        ``s x rows`` arrays. A product then costs a few whole-array steps per entry of
        a row (one against one: two) instead of a scatter over every entry."""
        if self._blocks is None:
            rows, cols, coef = self.rows, self.cols, self.coef
            if len(rows) > 1 and bool(np.any(rows[1:] < rows[:-1])):
                order = np.argsort(rows, kind="stable")
                rows, cols, coef = rows[order], cols[order], coef[order]
            starts = np.searchsorted(rows, np.arange(self.m + 1))
            sizes = np.diff(starts)
            blocks: list[tuple[IntArray | None, IntArray, FloatArray]] = []
            for size in np.unique(sizes):
                if size == 0:
                    continue
                which = np.flatnonzero(sizes == size)
                at = starts[which][:, None] + np.arange(size)
                blocks.append((None if len(which) == self.m else which,
                               np.ascontiguousarray(cols[at].T),
                               np.ascontiguousarray(coef[at].T)))
            self._blocks = blocks
        return self._blocks

    @classmethod
    def of(cls, groups: Mapping[tuple[tuple[str, ...], tuple[str, ...]], Sequence[float]],
           index: Mapping[str, int], prior_games: float) -> Design:
        """From ``{(side_a, side_b): (weight, points of side a)}``."""
        rows: list[int] = []
        cols: list[int] = []
        coef: list[float] = []
        for row, (side_a, side_b) in enumerate(groups):
            entry: dict[int, float] = {}
            for name in side_a:
                entry[index[name]] = entry.get(index[name], 0.0) + 1.0
            for name in side_b:
                entry[index[name]] = entry.get(index[name], 0.0) - 1.0
            for col, value in entry.items():
                if value != 0.0:
                    rows.append(row)
                    cols.append(col)
                    coef.append(value)
        totals = np.array(list(groups.values()), dtype=float).reshape(-1, 2)
        return cls(len(index), np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp),
                   np.array(coef), totals[:, 0].copy(), totals[:, 1].copy(), prior_games)

    def _eta(self, theta: FloatArray) -> FloatArray:
        """Each row's linear predictor: the design times ``theta``."""
        eta: FloatArray | None = None
        for which, cols, coef in self.blocks():
            part: FloatArray = coef[0] * theta[cols[0]]
            for j in range(1, len(cols)):
                part += coef[j] * theta[cols[j]]
            if which is None:
                return part
            if eta is None:
                eta = np.zeros(self.m)
            eta[which] = part
        return eta if eta is not None else np.zeros(self.m)

    def _back(self, per_row: FloatArray) -> FloatArray:
        """The design's transpose times ``per_row``."""
        out = np.zeros(self.k)
        for which, cols, coef in self.blocks():
            values = per_row if which is None else per_row[which]
            for j in range(len(cols)):
                out += np.bincount(cols[j], coef[j] * values, minlength=self.k)
        return out

    def log_likelihood(self, theta: FloatArray) -> float:
        eta = self._eta(theta)
        ll = float(self.scored @ _log_sigmoid(eta) + (self.weight - self.scored)
                   @ _log_sigmoid(-eta))
        if self.prior > 0.0:
            d = theta - theta.mean()
            ll += 0.5 * self.prior * float(np.sum(_log_sigmoid(d) + _log_sigmoid(-d)))
        return ll

    def curvature(self, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The gradient at ``theta`` and the curvature weights of the results and of
        the prior's rows (``w p (1 - p)``), which :meth:`information`,
        :meth:`information_times` and :meth:`information_diagonal` take."""
        p = _sigmoid(self._eta(theta))
        grad = self._back(self.scored - self.weight * p)
        h = self.weight * p * (1.0 - p)
        hp = np.zeros(self.k)
        if self.prior > 0.0:
            q = _sigmoid(theta - theta.mean())
            g = self.prior * (0.5 - q)
            grad += g - g.mean()
            hp = self.prior * q * (1.0 - q)
        return grad, h, hp

    def information(self, h: FloatArray, hp: FloatArray) -> FloatArray:
        """The observed information (minus the Hessian) as a dense ``k x k`` array."""
        k = self.k
        order = np.argsort(self.rows, kind="stable")
        rows, cols, coef = self.rows[order], self.cols[order], self.coef[order]
        starts = np.searchsorted(rows, np.arange(self.m + 1))
        info = np.zeros((k, k))
        sizes = np.diff(starts)
        for size in np.unique(sizes):  # rows with the same number of entries at once
            if size == 0:
                continue
            first = starts[:-1][sizes == size]
            at = first[:, None] + np.arange(size)
            c, v = cols[at], coef[at]
            w = h[rows[first]]
            pairs = (c[:, :, None] * k + c[:, None, :]).ravel()
            values = (w[:, None, None] * v[:, :, None] * v[:, None, :]).ravel()
            info += np.bincount(pairs, values, minlength=k * k).reshape(k, k)
        if self.prior > 0.0:
            # (I - J/k) diag(hp) (I - J/k), written out
            info += np.diag(hp) - (hp[:, None] + hp[None, :]) / k + hp.sum() / (k * k)
        return info

    def information_times(self, h: FloatArray, hp: FloatArray, x: FloatArray) -> FloatArray:
        """The information times ``x``, without forming the matrix."""
        y = self._back(h * self._eta(x))
        if self.prior > 0.0:
            t = hp * (x - x.mean())
            y += t - t.mean()
        return y

    def information_diagonal(self, h: FloatArray, hp: FloatArray) -> FloatArray:
        """The diagonal of the information."""
        d = np.bincount(self.cols, self.coef * self.coef * h[self.rows],
                        minlength=self.k).astype(float)
        if self.prior > 0.0:
            k = self.k
            d += hp * (1.0 - 2.0 / k) + hp.sum() / (k * k)
        return d


def _projection_scale(info: FloatArray) -> float:
    """A multiple of the projector onto the constants, of the size of the information."""
    scale = float(np.trace(info)) / info.shape[0]
    return scale if scale > 0.0 else 1.0


_EIGEN_BELOW = 300  # players; above, a Newton step is a linear solve (prior > 0 only)


def _newton_step(info: FloatArray, grad: FloatArray, prior: float) -> FloatArray:
    k = info.shape[0]
    # Every row of the design sums to 0, so the information has the constants in its
    # null space and the gradient is orthogonal to them. Adding a multiple of the
    # projector onto the constants makes it invertible when the ratings are otherwise
    # identified, and the step it gives has mean 0.
    system = info + _projection_scale(info) * np.full((k, k), 1.0 / k)
    if prior > 0.0 and k > _EIGEN_BELOW:
        # The prior makes the system positive definite: no eigenvalues needed.
        return np.asarray(np.linalg.solve(system, grad))
    values, vectors = np.linalg.eigh(system)
    if values[0] <= _SINGULAR * values[-1]:
        raise ConfigError(
            "prior_games",
            "the ratings are not determined by these results (a player or group of "
            "players won or lost everything, or never met the others); use prior_games > 0",
        )
    return np.asarray(vectors @ ((vectors.T @ grad) / values))


def _maximise(design: Design, theta0: FloatArray | None = None,
              ) -> tuple[FloatArray, FloatArray]:
    """Newton-Raphson on the mean-zero ratings (natural units) from ``theta0`` (0 by
    default); returns them and the observed information at the maximum."""
    theta = np.zeros(design.k) if theta0 is None else theta0
    ll = design.log_likelihood(theta)
    for _ in range(_MAX_ITERATIONS):
        grad, h, hp = design.curvature(theta)
        info = design.information(h, hp)
        step = _newton_step(info, grad, design.prior)
        largest = float(np.max(np.abs(step)))
        if largest < _STEP_TOLERANCE:
            return theta + step, info
        theta, ll = _line_search(design, theta, ll, grad, step)
        if float(np.ptp(theta)) > _MAX_SPREAD:
            raise ConfigError(
                "prior_games",
                "the maximum-likelihood ratings are infinite (a player or group of players "
                "won or lost every game against the rest); use prior_games > 0",
            )
    raise ConfigError("prior_games", "the rating fit did not converge; use prior_games > 0")


def _line_search(design: Design, theta: FloatArray, ll: float, grad: FloatArray,
                 step: FloatArray) -> tuple[FloatArray, float]:
    """The plain step once steps are small; else backtracking (Armijo) along ``step``."""
    if float(np.max(np.abs(step))) < _FULL_STEP_BELOW:
        theta = theta + step
        return theta, design.log_likelihood(theta)
    slope = float(grad @ step)
    t = 1.0
    while True:
        candidate = theta + t * step
        candidate_ll = design.log_likelihood(candidate)
        if candidate_ll >= ll + 1e-4 * t * slope or t < 1e-12:
            return candidate, candidate_ll
        t /= 2.0


def maximise_sparse(design: Design, theta0: FloatArray, *, tolerance: float = 1e-10,
                    ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Newton-Raphson like :func:`fit`'s, for many players: each step solves the Newton
    system by conjugate gradients with the information applied as a product (sparse,
    never formed), preconditioned by its diagonal. Start from ``theta0`` (the last fit,
    natural units): after a few new games one or two steps reach the maximum. Needs
    ``prior_games > 0`` (the system is then definite on the mean-zero ratings).
    Returns the ratings and the curvature weights at them (see
    :meth:`Design.curvature`)."""
    if design.prior <= 0.0:
        raise ConfigError("prior_games", "the sparse fit needs prior_games > 0")
    theta = theta0 - theta0.mean()
    ll: float | None = None  # the likelihood, computed only for a line search
    for _ in range(_MAX_ITERATIONS):
        grad, h, hp = design.curvature(theta)
        # On the mean-zero ratings the information is at least diag(hp) (the prior's
        # part; the results' part is positive semi-definite), so the Newton step is at
        # most this long: below the tolerance, the maximum is reached without solving.
        bound = float(np.linalg.norm(grad - grad.mean())) / float(np.min(hp))
        if bound < tolerance:
            return theta, h, hp
        diag = design.information_diagonal(h, hp)
        # Far from the maximum a rough Newton step does as well as an exact one: the
        # solve's relative accuracy follows the step's length (inexact Newton, still
        # quadratic near the maximum; about half the products of an exact solve).
        # And never beyond what the tolerance needs: the step's error is at most
        # sqrt(relative) x bound (the same bound on the information), so a relative
        # squared residual of (tolerance / 10 / bound)^2 leaves it under tolerance / 10.
        step = _conjugate_gradients(partial(design.information_times, h, hp), grad, diag,
                                    relative=max(min(1e-6, 1e-6 * bound * bound),
                                                 (0.1 * tolerance / bound) ** 2, 1e-24))
        largest = float(np.max(np.abs(step)))
        if largest < tolerance:
            return theta + step, h, hp  # the weights move by far less than the step
        if largest < _FULL_STEP_BELOW:  # from a warm start, usually every step
            theta, ll = theta + step, None
            continue
        if ll is None:
            ll = design.log_likelihood(theta)
        theta, ll = _line_search(design, theta, ll, grad, step)
    raise ConfigError("prior_games", "the rating fit did not converge")


def _conjugate_gradients(apply: Callable[[FloatArray], FloatArray], b: FloatArray,
                         diag: FloatArray, *, relative: float = 1e-12,
                         limit: int = 1000) -> FloatArray:
    """Solve ``A x = b`` on the mean-zero vectors (``b`` has mean 0 and ``A`` maps
    them to themselves), preconditioned by ``diag``."""
    x = np.zeros_like(b)
    r = b - b.mean()  # round-off must not leave a part along the constants
    z = r / diag
    z -= z.mean()
    p = z.copy()
    rz = float(r @ z)
    stop = relative * float(r @ r)
    for _ in range(limit):
        if float(r @ r) <= stop:
            break
        ap = apply(p)
        curvature = float(p @ ap)
        if not curvature > 0.0:  # only round-off is left
            break
        alpha = rz / curvature
        x += alpha * p
        r -= alpha * ap
        z = r / diag
        z -= z.mean()
        rz, previous = float(r @ z), rz
        p = z + (rz / previous) * p
    return x
