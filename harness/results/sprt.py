"""Head-to-head statistics of a candidate against a baseline, and the SPRT that stops a
match once the evidence is conclusive.

Euchre games are played in duplicate pairs: the same deals twice, seats swapped. The unit
of evidence is the pair, whose score for the candidate is 0, 0.5, 1, 1.5 or 2 (the sum of
its two game scores). :class:`Pentanomial` counts pairs by that score. When duplicate is
off, :class:`Trinomial` counts single games as losses, draws and wins.

Everything is expressed per game: a pentanomial outcome is worth ``x = pair score / 2``
(0, .25, .5, .75 or 1), a trinomial one 0, .5 or 1. For ``n`` units (pairs or games)
with outcome frequencies ``p_i``:

* ``score()`` is ``mu = sum p_i x_i``, the candidate's mean score per game;
* ``elo()`` is the logistic Elo difference of that score, ``400 log10(mu / (1 - mu))``;
* ``elo_ci95()`` is ``1.96 * sqrt(var / n) * d elo / d mu`` with
  ``var = sum p_i (x_i - mu)**2`` (the delta method through the logistic). For pairs
  this is the variance of the pair score divided by 2 per game, as fishtest and fastchess
  compute it, which keeps the correlation between the two games of a pair;
* ``los()`` is ``Phi((mu - 0.5) / sqrt(var / n))``.

:func:`sprt_llr` is the generalised log-likelihood ratio used by fishtest for logistic
Elo bounds: under each hypothesis the outcome distribution is the maximum-likelihood
multinomial whose mean per-game score is the hypothesis's expected score. Empty outcome
buckets are given a count of :data:`REGULARISATION` (1e-3) first, so that this maximum
exists for every score strictly between 0 and 1; so a match in which every pair had the
same result still gives a finite, sensible LLR. With no data at all the LLR is 0.

Pure computation, no I/O.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Self

from harness.errors import ConfigError
from harness.results.elo import Z95, elo_from_score, expected_score

__all__ = [
    "REGULARISATION",
    "Pentanomial",
    "Sprt",
    "SprtDecision",
    "SprtStatus",
    "Trinomial",
    "sprt_llr",
]

REGULARISATION = 1e-3
"""The count given to empty outcome buckets before the constrained fit in :func:`sprt_llr`."""

_ELO_PER_LOGIT = 400.0 / math.log(10.0)


class _Outcomes:
    """Counts of outcomes, each worth ``SCORES[i]`` points per game. Immutable."""

    SCORES: ClassVar[tuple[float, ...]] = ()
    _OPTION: ClassVar[str] = "counts"
    __slots__ = ("_counts",)

    _counts: tuple[float, ...]

    def __init__(self, counts: Sequence[float]) -> None:
        values = tuple(float(c) for c in counts)
        if len(values) != len(self.SCORES):
            raise ConfigError(self._OPTION, f"needs {len(self.SCORES)} counts, got {len(values)}")
        if not all(math.isfinite(c) and c >= 0.0 for c in values):
            raise ConfigError(self._OPTION, f"counts must be finite and >= 0, got {values}")
        object.__setattr__(self, "_counts", values)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def counts(self) -> tuple[float, ...]:
        """The counts, in order of increasing score."""
        return self._counts

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._counts)!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Outcomes)
        return self._counts == other._counts

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._counts))

    def __add__(self, other: Self) -> Self:
        if type(other) is not type(self):
            return NotImplemented
        return type(self)([a + b for a, b in zip(self._counts, other._counts, strict=True)])

    @property
    def n(self) -> float:
        """The number of units counted (pairs for a pentanomial, games for a trinomial)."""
        return math.fsum(self._counts)

    def score(self) -> float:
        """Mean score per game, in [0, 1]; 0.5 when nothing has been counted."""
        n = self.n
        if n <= 0.0:
            return 0.5
        return math.fsum(c * x for c, x in zip(self._counts, self.SCORES, strict=True)) / n

    def variance(self) -> float:
        """Variance of the per-game score of one unit (population form), 0 if empty."""
        n = self.n
        if n <= 0.0:
            return 0.0
        mu = self.score()
        return (
            math.fsum(c * (x - mu) ** 2 for c, x in zip(self._counts, self.SCORES, strict=True)) / n
        )

    def stderr(self) -> float:
        """Standard error of :meth:`score`: ``sqrt(variance / n)`` (inf if empty)."""
        n = self.n
        return math.sqrt(self.variance() / n) if n > 0.0 else math.inf

    def elo(self) -> float:
        """Logistic Elo difference of :meth:`score` (``±inf`` at a score of 0 or 1)."""
        return elo_from_score(self.score())

    def elo_ci95(self) -> float:
        """Half-width of the 95% interval of :meth:`elo` by the delta method.

        ``inf`` when empty or when the score is 0 or 1 (the logistic is flat there).
        """
        mu = self.score()
        if self.n <= 0.0 or mu <= 0.0 or mu >= 1.0:
            return math.inf
        return Z95 * self.stderr() * _ELO_PER_LOGIT / (mu * (1.0 - mu))

    def elo_interval(self) -> tuple[float, float]:
        """``(elo - elo_ci95, elo + elo_ci95)``."""
        centre, half = self.elo(), self.elo_ci95()
        return (centre - half, centre + half)

    def los(self) -> float:
        """Likelihood of superiority ``Phi((score - 0.5) / stderr)``; 0.5 if empty."""
        if self.n <= 0.0:
            return 0.5
        diff = self.score() - 0.5
        se = self.stderr()
        if se == 0.0:
            return 0.5 if diff == 0.0 else (1.0 if diff > 0.0 else 0.0)
        return 0.5 * (1.0 + math.erf(diff / (se * math.sqrt(2.0))))


class Pentanomial(_Outcomes):
    """Duplicate pairs counted by the candidate's pair score:
    ``[n0, n1, n2, n3, n4]`` for pair scores 0, 0.5, 1, 1.5, 2."""

    SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
    _OPTION = "pentanomial"
    __slots__ = ()

    @classmethod
    def from_pair_scores(cls, scores: Iterable[float]) -> Pentanomial:
        """Count pair scores (each 0, 0.5, 1, 1.5 or 2)."""
        counts = [0.0] * 5
        for s in scores:
            bucket = round(s * 2.0)
            if not 0 <= bucket <= 4 or bucket != s * 2.0:
                raise ConfigError("pair_score", f"must be 0, 0.5, 1, 1.5 or 2, got {s!r}")
            counts[bucket] += 1.0
        return cls(counts)

    @property
    def games(self) -> float:
        """The number of games: two per pair."""
        return 2.0 * self.n


class Trinomial(_Outcomes):
    """Single games counted as ``[losses, draws, wins]`` of the candidate."""

    SCORES = (0.0, 0.5, 1.0)
    _OPTION = "trinomial"
    __slots__ = ()

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Trinomial:
        """Count game scores (each 0, 0.5 or 1)."""
        counts = [0.0] * 3
        for s in scores:
            bucket = round(s * 2.0)
            if not 0 <= bucket <= 2 or bucket != s * 2.0:
                raise ConfigError("game_score", f"must be 0, 0.5 or 1, got {s!r}")
            counts[bucket] += 1.0
        return cls(counts)

    @property
    def games(self) -> float:
        """The number of games."""
        return self.n


def _constrained_mle(freq: Sequence[float], xs: Sequence[float], s: float) -> list[float]:
    """The distribution ``p`` maximising ``sum freq_i log p_i`` subject to
    ``sum p_i = 1`` and ``sum p_i x_i = s``; every ``freq_i`` must be > 0 and
    ``min(xs) < s < max(xs)``.

    Stationarity gives ``p_i = freq_i / (1 + lam (x_i - s))`` where ``lam`` is the root of
    the strictly decreasing ``f(lam) = sum freq_i (x_i - s) / (1 + lam (x_i - s))`` on the
    interval that keeps every denominator positive; it is found by bisection.
    """
    d = [x - s for x in xs]
    lo, hi = -1.0 / max(d), -1.0 / min(d)
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        f = math.fsum(q * di / (1.0 + mid * di) for q, di in zip(freq, d, strict=True))
        if f > 0.0:
            lo = mid
        else:
            hi = mid
    lam = 0.5 * (lo + hi)
    p = [q / (1.0 + lam * di) for q, di in zip(freq, d, strict=True)]
    total = math.fsum(p)
    return [pi / total for pi in p]


def sprt_llr(counts: Pentanomial | Trinomial, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (logistic Elo ``elo1``) against H0 (``elo0``).

    For each hypothesis the outcome distribution is the maximum-likelihood one whose mean
    per-game score is ``expected_score(elo)``; the LLR is ``sum n_i log(p1_i / p0_i)``
    over the counts after empty buckets get :data:`REGULARISATION`. 0 with no data.
    """
    if counts.n <= 0.0:
        return 0.0
    s0, s1 = expected_score(elo0), expected_score(elo1)
    for option, s in (("elo0", s0), ("elo1", s1)):
        if not 0.0 < s < 1.0:
            raise ConfigError(option, "the expected score must be strictly between 0 and 1")
    n = [c if c > 0.0 else REGULARISATION for c in counts.counts]
    total = math.fsum(n)
    freq = [c / total for c in n]
    p0 = _constrained_mle(freq, counts.SCORES, s0)
    p1 = _constrained_mle(freq, counts.SCORES, s1)
    return math.fsum(c * math.log(b / a) for c, a, b in zip(n, p0, p1, strict=True))


class SprtDecision(enum.Enum):
    CONTINUE = "continue"
    ACCEPT_H0 = "accept_h0"
    ACCEPT_H1 = "accept_h1"


@dataclass(frozen=True)
class SprtStatus:
    """The LLR of the data so far, the bounds, and what they decide."""

    llr: float
    lower: float
    upper: float
    decision: SprtDecision


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test of H0: Elo = ``elo0`` against H1: Elo = ``elo1``
    (logistic Elo), with false-positive rate ``alpha`` and false-negative rate ``beta``.

    Stop and accept H1 once the LLR reaches ``upper = log((1 - beta) / alpha)``; accept
    H0 once it falls to ``lower = log(beta / (1 - alpha))``.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for option in ("elo0", "elo1"):
            if not math.isfinite(getattr(self, option)):
                raise ConfigError(option, f"must be finite, got {getattr(self, option)!r}")
        if not self.elo0 < self.elo1:
            raise ConfigError("elo1", f"must be greater than elo0 ({self.elo0}), got {self.elo1}")
        for option in ("alpha", "beta"):
            value = getattr(self, option)
            if not 0.0 < value < 0.5:
                raise ConfigError(option, f"must be in (0, 0.5), got {value!r}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: Pentanomial | Trinomial) -> float:
        return sprt_llr(counts, self.elo0, self.elo1)

    def status(self, counts: Pentanomial | Trinomial) -> SprtStatus:
        llr = self.llr(counts)
        lower, upper = self.lower, self.upper
        if llr >= upper:
            decision = SprtDecision.ACCEPT_H1
        elif llr <= lower:
            decision = SprtDecision.ACCEPT_H0
        else:
            decision = SprtDecision.CONTINUE
        return SprtStatus(llr=llr, lower=lower, upper=upper, decision=decision)
