"""Tests of harness.results.sprt: pentanomial/trinomial statistics and the generalised SPRT."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from harness.errors import ConfigError
from harness.results.elo import expected_score
from harness.results.sprt import (
    Pentanomial,
    Sprt,
    SprtDecision,
    SprtStatus,
    Trinomial,
    sprt_llr,
)

ELO_PER_LOGIT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


def golden_max(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Maximum value of a unimodal f on (lo, hi): a dense grid, then golden-section search
    around the best grid point."""
    n = 4000
    xs = [lo + (hi - lo) * (i + 0.5) / n for i in range(n)]
    best = max(range(n), key=lambda i: f(xs[i]))
    a = xs[max(best - 1, 0)]
    b = xs[min(best + 1, n - 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(200):
        c = b - ratio * (b - a)
        d = a + ratio * (b - a)
        if f(c) > f(d):
            b = d
        else:
            a = c
    return f((a + b) / 2.0)


# --- pentanomial and trinomial statistics --------------------------------------------------


def test_all_drawn_pairs_are_zero_elo_with_zero_width() -> None:
    p = Pentanomial([0, 0, 10, 0, 0])  # ten pairs, each 1-1: exactly even
    assert p.n == 10 and p.games == 20
    assert p.score() == 0.5
    assert p.elo() == 0.0
    assert p.variance() == 0.0
    assert p.elo_ci95() == 0.0
    assert p.los() == 0.5


def test_pentanomial_score_elo_and_interval_by_hand() -> None:
    p = Pentanomial([0, 2, 4, 3, 1])
    # 10 pairs; per-game pair scores 0.25 (x2), 0.5 (x4), 0.75 (x3), 1 (x1):
    # mean = (0.5 + 2 + 2.25 + 1) / 10 = 0.575.
    assert p.score() == pytest.approx(0.575, abs=1e-12)
    # Elo = 400 log10(0.575 / 0.425) = 52.5116...
    assert p.elo() == pytest.approx(400.0 * math.log10(0.575 / 0.425), abs=1e-9)
    assert p.elo() == pytest.approx(52.5116, abs=1e-3)
    # deviations -0.325, -0.075, 0.175, 0.425 with frequencies .2, .4, .3, .1:
    # var = .2*.105625 + .4*.005625 + .3*.030625 + .1*.180625 = 0.050625 per pair-game.
    assert p.variance() == pytest.approx(0.050625, abs=1e-12)
    # se = sqrt(0.050625 / 10) = 0.0711512; d elo / d score = 400 / (ln 10 * .575 * .425)
    # = 710.87; half-width = 1.96 * 0.0711512 * 710.87 = 99.13.
    se = math.sqrt(0.050625 / 10)
    assert p.elo_ci95() == pytest.approx(Z95 * se * ELO_PER_LOGIT / (0.575 * 0.425), rel=1e-12)
    assert p.elo_ci95() == pytest.approx(99.13, abs=0.01)
    lo, hi = p.elo_interval()
    assert hi - lo == pytest.approx(2 * p.elo_ci95())
    # LOS = Phi(0.075 / 0.0711512) = Phi(1.05409) = 0.8541.
    assert p.los() == pytest.approx(0.8541, abs=1e-4)


def test_pair_variance_is_half_the_pair_score_variance_per_game() -> None:
    # Pair sums 2, 0, 2, 0 (all 2-0 or 0-2): the pair sum has variance 1, so the per-game
    # variance of a pair is 1/4 (the pair score divided by 2), and the standard error of the
    # mean score is sqrt(0.25 / 4 pairs) = 0.25 -- larger than treating the 8 games as
    # independent (sqrt(0.25 / 8)) because the games of a pair are correlated.
    p = Pentanomial.from_pair_scores([2, 0, 2, 0])
    assert p.counts == (2.0, 0.0, 0.0, 0.0, 2.0)
    assert p.variance() == pytest.approx(0.25)
    assert p.stderr() == pytest.approx(0.25)
    assert p.elo_ci95() == pytest.approx(Z95 * 0.25 * ELO_PER_LOGIT / 0.25)


def test_trinomial_score_elo_and_interval_by_hand() -> None:
    t = Trinomial([2, 3, 5])  # 2 losses, 3 draws, 5 wins
    # score = (1.5 + 5) / 10 = 0.65; var = (2*.65^2 + 3*.15^2 + 5*.35^2) / 10 = 0.1525
    assert t.n == 10 and t.games == 10
    assert t.score() == pytest.approx(0.65)
    assert t.variance() == pytest.approx(0.1525)
    assert t.elo() == pytest.approx(400.0 * math.log10(0.65 / 0.35))
    expected_ci = Z95 * math.sqrt(0.01525) * ELO_PER_LOGIT / (0.65 * 0.35)
    assert t.elo_ci95() == pytest.approx(expected_ci, rel=1e-12)
    assert Trinomial.from_scores([1, 1, 0.5, 0, 1]) == Trinomial([1, 1, 3])


def test_degenerate_and_empty_counts() -> None:
    empty = Pentanomial([0, 0, 0, 0, 0])
    assert empty.score() == 0.5 and empty.los() == 0.5 and empty.elo_ci95() == math.inf
    sweep = Pentanomial([0, 0, 0, 0, 3])
    assert sweep.elo() == math.inf and sweep.elo_ci95() == math.inf and sweep.los() == 1.0


def test_counts_add_and_compare() -> None:
    total = Pentanomial([1, 0, 2, 0, 1]) + Pentanomial([0, 1, 0, 1, 0])
    assert total == Pentanomial([1, 1, 2, 1, 1])
    assert total != Trinomial([1, 1, 1])
    assert hash(total) == hash(Pentanomial([1.0, 1.0, 2.0, 1.0, 1.0]))


def test_bad_counts_raise_naming_the_option() -> None:
    with pytest.raises(ConfigError) as info:
        Pentanomial([1, 2, 3])
    assert info.value.option == "pentanomial"
    with pytest.raises(ConfigError) as info:
        Trinomial([1, -1, 3])
    assert info.value.option == "trinomial"
    with pytest.raises(ConfigError) as info:
        Pentanomial.from_pair_scores([0.5, 0.7])
    assert info.value.option == "pair_score"


# --- the log-likelihood ratio --------------------------------------------------------------


def trinomial_primal_llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """Maximise sum n_i log p_i over trinomials with mean score s directly: with the draw
    rate d free, the win rate is s - d/2 and the loss rate 1 - s - d/2."""
    lose, draw, win = counts

    def best(s: float) -> float:
        def ll(d: float) -> float:
            return lose * math.log(1 - s - d / 2) + draw * math.log(d) + win * math.log(s - d / 2)

        return golden_max(ll, 0.0, 2 * min(s, 1 - s))

    return best(expected_score(elo1)) - best(expected_score(elo0))


def pentanomial_dual_llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The constrained maximum is sum n_i log(phat_i) - N max_lam h(lam) with
    h(lam) = sum phat_i log(1 + lam (x_i - s)) (the empirical-likelihood dual), so
    LLR = N (max h_s0 - max h_s1). Maximise h over lam on a grid + golden section."""
    xs = (0.0, 0.25, 0.5, 0.75, 1.0)
    n = sum(counts)
    phat = [c / n for c in counts]

    def max_h(s: float) -> float:
        lo, hi = -1.0 / (1.0 - s), 1.0 / s  # where every 1 + lam (x - s) > 0

        def h(lam: float) -> float:
            return sum(q * math.log(1.0 + lam * (x - s)) for q, x in zip(phat, xs, strict=True))

        return golden_max(h, lo, hi)

    return n * (max_h(expected_score(elo0)) - max_h(expected_score(elo1)))


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1"),
    [([30, 40, 50], 0.0, 5.0), ([12, 3, 9], -10.0, 40.0), ([100, 250, 130], 0.0, 10.0)],
)
def test_trinomial_llr_matches_direct_constrained_maximisation(
    counts: list[float], elo0: float, elo1: float
) -> None:
    expected = trinomial_primal_llr(counts, elo0, elo1)
    assert sprt_llr(Trinomial(counts), elo0, elo1) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1"),
    [
        ([3, 10, 40, 15, 5], 0.0, 5.0),
        ([1, 4, 6, 2, 1], -5.0, 25.0),
        ([20, 60, 90, 70, 10], 0.0, 2.0),
    ],
)
def test_pentanomial_llr_matches_dual_grid_maximisation(
    counts: list[float], elo0: float, elo1: float
) -> None:
    expected = pentanomial_dual_llr(counts, elo0, elo1)
    assert sprt_llr(Pentanomial(counts), elo0, elo1) == pytest.approx(expected, abs=1e-7)


def test_llr_is_close_to_the_normal_approximation_for_many_games() -> None:
    # For large N: LLR ~ N (s1 - s0) (2 mu - s0 - s1) / (2 var).
    p = Pentanomial([300, 2000, 5000, 2400, 300])
    s0, s1 = expected_score(0.0), expected_score(5.0)
    approx = p.n * (s1 - s0) * (2 * p.score() - s0 - s1) / (2 * p.variance())
    assert sprt_llr(p, 0.0, 5.0) == pytest.approx(approx, rel=0.02)


def test_llr_sign_antisymmetry_and_no_data() -> None:
    assert sprt_llr(Pentanomial([0, 0, 0, 0, 0]), 0.0, 5.0) == 0.0
    assert sprt_llr(Trinomial([0, 0, 0]), 0.0, 5.0) == 0.0
    good = Pentanomial([5, 30, 100, 45, 10])  # score 0.5375: above both hypotheses
    assert sprt_llr(good, 0.0, 5.0) > 0.0
    assert sprt_llr(good, 5.0, 0.0) == pytest.approx(-sprt_llr(good, 0.0, 5.0))
    bad = Pentanomial([10, 45, 100, 30, 5])
    assert sprt_llr(bad, 0.0, 5.0) < 0.0
    assert sprt_llr(good, 3.0, 3.0) == 0.0


def test_one_bucket_counts_give_a_finite_llr_of_the_right_sign() -> None:
    # Empty buckets are regularised, so the constrained maximum exists.
    wins = sprt_llr(Pentanomial([0, 0, 0, 0, 50]), 0.0, 5.0)
    losses = sprt_llr(Pentanomial([50, 0, 0, 0, 0]), 0.0, 5.0)
    assert math.isfinite(wins) and wins > 0.0
    assert math.isfinite(losses) and losses < 0.0
    assert math.isfinite(sprt_llr(Trinomial([0, 7, 0]), 0.0, 5.0))


# --- the test itself -----------------------------------------------------------------------


def test_bounds_for_five_percent_errors_are_log_19() -> None:
    sprt = Sprt(0.0, 5.0)
    assert sprt.upper == pytest.approx(math.log(19.0))
    assert sprt.upper == pytest.approx(2.944, abs=1e-3)
    assert sprt.lower == pytest.approx(-math.log(19.0))
    skewed = Sprt(0.0, 5.0, alpha=0.01, beta=0.2)
    assert skewed.upper == pytest.approx(math.log(0.8 / 0.01))
    assert skewed.lower == pytest.approx(math.log(0.2 / 0.99))


def test_decisions_past_each_bound() -> None:
    sprt = Sprt(0.0, 10.0)
    strong = sprt.status(Pentanomial([20, 150, 500, 250, 40]))  # score ~0.54, ~+28 Elo
    assert strong.llr > strong.upper and strong.decision is SprtDecision.ACCEPT_H1
    weak = sprt.status(Pentanomial([40, 250, 500, 150, 20]))
    assert weak.llr < weak.lower and weak.decision is SprtDecision.ACCEPT_H0
    early = sprt.status(Pentanomial([1, 3, 5, 4, 1]))
    assert early.lower < early.llr < early.upper and early.decision is SprtDecision.CONTINUE
    unpaired = sprt.status(Trinomial([300, 200, 500]))
    assert unpaired.decision is SprtDecision.ACCEPT_H1
    assert unpaired == SprtStatus(
        llr=sprt_llr(Trinomial([300, 200, 500]), 0.0, 10.0),
        lower=sprt.lower,
        upper=sprt.upper,
        decision=SprtDecision.ACCEPT_H1,
    )


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"elo0": 5.0, "elo1": 0.0}, "elo1"),
        ({"elo0": 5.0, "elo1": 5.0}, "elo1"),
        ({"elo0": math.nan, "elo1": 5.0}, "elo0"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.0}, "alpha"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.5}, "alpha"),
        ({"elo0": 0.0, "elo1": 5.0, "beta": -0.1}, "beta"),
        ({"elo0": 0.0, "elo1": 5.0, "beta": 0.7}, "beta"),
    ],
)
def test_invalid_sprt_parameters_raise_naming_the_option(
    kwargs: dict[str, float], option: str
) -> None:
    with pytest.raises(ConfigError) as info:
        Sprt(**kwargs)
    assert info.value.option == option
