"""Tests of harness.results.elo: the Bradley-Terry maximum-likelihood Elo fit."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from harness.errors import ConfigError
from harness.results.elo import Result, elo_from_score, expected_score, fit

LOG10_3_ELO = 400.0 * math.log10(3.0)  # the Elo difference of a 75% score, ~190.85


def games(a: str, b: str, wins: float, draws: float, losses: float) -> list[Result]:
    """``a`` vs ``b`` as aggregated one-member results, from a's point of view."""
    return [
        Result((a,), (b,), 1.0, wins),
        Result((a,), (b,), 0.5, draws),
        Result((a,), (b,), 0.0, losses),
    ]


def log_likelihood(results: Sequence[Result], rating: dict[str, float], prior: float) -> float:
    """The model's log-likelihood written out directly from its definition."""
    total = 0.0
    for r in results:
        diff = sum(rating[p] for p in r.side_a) - sum(rating[p] for p in r.side_b)
        p = 1.0 / (1.0 + 10.0 ** (-diff / 400.0))
        total += r.weight * (r.score_a * math.log(p) + (1.0 - r.score_a) * math.log(1.0 - p))
    mean = sum(rating.values()) / len(rating)
    for value in rating.values():
        p = 1.0 / (1.0 + 10.0 ** (-(value - mean) / 400.0))
        total += prior * (0.5 * math.log(p) + 0.5 * math.log(1.0 - p))
    return total


def zoom_grid_maximum(f: Callable[[float, float], float], half_width: float) -> tuple[float, float]:
    """Maximise a concave f(x, y) by evaluating it on a 21x21 grid and repeatedly zooming
    in on the best point (a brute-force method, independent of Newton-Raphson)."""
    cx, cy = 0.0, 0.0
    while half_width > 1e-4:
        steps = [i / 10.0 - 1.0 for i in range(21)]
        best = max(
            ((cx + dx * half_width, cy + dy * half_width) for dx in steps for dy in steps),
            key=lambda xy: f(*xy),
        )
        cx, cy = best
        half_width /= 4.0
    return cx, cy


# --- helpers -----------------------------------------------------------------------------


def test_expected_score_and_elo_from_score_are_inverse() -> None:
    assert expected_score(0.0) == 0.5
    assert expected_score(LOG10_3_ELO) == pytest.approx(0.75, abs=1e-12)
    assert expected_score(-400.0) == pytest.approx(1.0 / 11.0, abs=1e-12)
    assert expected_score(1e6) == 1.0 and expected_score(-1e6) == 0.0
    for d in (-700.0, -35.5, 0.0, 12.0, 400.0):
        assert elo_from_score(expected_score(d)) == pytest.approx(d, abs=1e-9)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_elo_from_score_outside_unit_interval_raises() -> None:
    with pytest.raises(ConfigError):
        elo_from_score(1.01)


# --- point estimates ---------------------------------------------------------------------


def test_two_players_with_equal_records_get_equal_ratings() -> None:
    r = fit(games("a", "b", 37, 6, 37))
    assert r.elo["a"] == pytest.approx(0.0, abs=1e-6)
    assert r.elo["b"] == pytest.approx(0.0, abs=1e-6)


def test_round_robin_cycle_with_equal_records_gives_equal_ratings() -> None:
    # a beats b, b beats c, c beats a, each by 7-3: every record is 10-10.
    results = games("a", "b", 7, 0, 3) + games("b", "c", 7, 0, 3) + games("c", "a", 7, 0, 3)
    for prior in (0.0, 2.0):
        r = fit(results, prior_games=prior)
        for name in "abc":
            assert r.elo[name] == pytest.approx(0.0, abs=1e-6)
        assert r.ci95["a"] == pytest.approx(r.ci95["c"], rel=1e-9)


def test_75_percent_score_gives_400_log10_3_and_anchor_is_exact() -> None:
    results = games("a", "b", 700, 100, 200)  # 750 / 1000 points for a
    r = fit(results, prior_games=0.0)
    assert r.elo["a"] - r.elo["b"] == pytest.approx(LOG10_3_ELO, abs=1e-6)
    assert r.elo["a"] + r.elo["b"] == pytest.approx(0.0, abs=1e-9)  # mean zero

    anchored = fit(results, prior_games=0.0, anchor="b", anchor_rating=1500.0)
    assert anchored.elo["b"] == 1500.0
    assert anchored.elo["a"] == pytest.approx(1500.0 + LOG10_3_ELO, abs=1e-6)
    assert anchored.ci95["b"] == 0.0
    assert anchored.anchor == "b"


def test_prior_shrinks_towards_the_mean() -> None:
    results = games("a", "b", 75, 0, 25)
    plain = fit(results, prior_games=0.0)
    shrunk = fit(results)  # default: 2 virtual draws each
    assert 0.0 < shrunk.elo["a"] - shrunk.elo["b"] < plain.elo["a"] - plain.elo["b"]


def brute_force_three(results: list[Result], prior: float) -> tuple[float, float]:
    """(R_a - R_c, R_b - R_c) maximising the written-out likelihood."""
    return zoom_grid_maximum(
        lambda x, y: log_likelihood(results, {"a": x, "b": y, "c": 0.0}, prior), 1000.0
    )


THREE_PLAYER_RESULTS = (
    games("a", "b", 14, 2, 6) + games("a", "c", 9, 5, 10) + games("b", "c", 5, 1, 16)
)


@pytest.mark.parametrize("prior", [0.0, 2.0, 10.0])
def test_three_player_fit_matches_brute_force_maximum(prior: float) -> None:
    expect_ac, expect_bc = brute_force_three(THREE_PLAYER_RESULTS, prior)
    r = fit(THREE_PLAYER_RESULTS, prior_games=prior, anchor="c")
    assert r.elo["c"] == 0.0
    assert r.elo["a"] == pytest.approx(expect_ac, abs=0.1)
    assert r.elo["b"] == pytest.approx(expect_bc, abs=0.1)


def test_players_are_sorted_best_first_and_records_are_counted() -> None:
    r = fit(THREE_PLAYER_RESULTS)
    assert r.players == ("c", "a", "b")  # c scored 29/46, a 26.5/46, b 12.5/44
    assert [r.elo[p] for p in r.players] == sorted(r.elo.values(), reverse=True)
    assert r.games == {"a": 46.0, "b": 44.0, "c": 46.0}
    # a: 14 + 1 + 9 + 2.5 points of 46; c: 10 + 2.5 + 16 + 0.5 of 46.
    assert r.score["a"] == pytest.approx(26.5 / 46.0)
    assert r.score["c"] == pytest.approx(29.0 / 46.0)


def test_aggregation_member_order_and_orientation_do_not_change_the_fit() -> None:
    rng = random.Random(7)
    singles = []
    for _ in range(300):
        a, b, c, d = rng.sample("pqrst", 4)
        singles.append(Result((a, b), (c, d), rng.choice([0.0, 0.5, 1.0, 1.0])))
    flipped = [
        Result(tuple(reversed(r.side_b)), r.side_a, 1.0 - r.score_a) if i % 2 else r
        for i, r in enumerate(singles)
    ]
    one, two = fit(singles), fit(flipped)
    for name in "pqrst":
        assert one.elo[name] == pytest.approx(two.elo[name], abs=1e-9)
        assert one.ci95[name] == pytest.approx(two.ci95[name], abs=1e-9)


# --- partnerships ------------------------------------------------------------------------


def test_team_sides_satisfy_the_likelihood_equations() -> None:
    # With no prior, at the maximum every player's actual points equal their expected
    # points, where a side's expected score comes from the sum of its members' ratings.
    rng = random.Random(3)
    names = "abcdef"
    results = []
    for _ in range(400):
        a, b, c, d = rng.sample(names, 4)
        results.append(Result((a, b), (c, d), rng.choice([0.0, 1.0, 1.0, 0.5]), rng.choice([1, 2])))
    r = fit(results, prior_games=0.0)
    for player in names:
        actual = expected = 0.0
        for res in results:
            p = expected_score(
                sum(r.elo[x] for x in res.side_a) - sum(r.elo[x] for x in res.side_b)
            )
            if player in res.side_a:
                actual += res.weight * res.score_a
                expected += res.weight * p
            elif player in res.side_b:
                actual += res.weight * (1.0 - res.score_a)
                expected += res.weight * (1.0 - p)
        assert actual == pytest.approx(expected, abs=1e-6)
        assert r.score[player] == pytest.approx(actual / r.games[player])


def test_side_strength_is_the_sum_of_members() -> None:
    # Two copies of a against two copies of b: the team difference 2(R_a - R_b) is
    # the Elo of a 75% score.
    results = [Result(("a", "a"), ("b", "b"), 1.0, 75), Result(("a", "a"), ("b", "b"), 0.0, 25)]
    r = fit(results, prior_games=0.0)
    assert 2.0 * (r.elo["a"] - r.elo["b"]) == pytest.approx(LOG10_3_ELO, abs=1e-6)


def test_fixed_partnerships_split_evenly_with_prior_and_are_unidentified_without() -> None:
    results = [Result(("a", "b"), ("c", "d"), 1.0, 60), Result(("a", "b"), ("c", "d"), 0.0, 20)]
    r = fit(results)
    assert r.elo["a"] == pytest.approx(r.elo["b"], abs=1e-9)
    assert r.elo["c"] == pytest.approx(r.elo["d"], abs=1e-9)
    assert r.elo["a"] > r.elo["c"]
    with pytest.raises(ConfigError) as info:
        fit(results, prior_games=0.0)
    assert info.value.option == "prior_games"


# --- uncertainty -------------------------------------------------------------------------


def test_interval_halves_when_games_quadruple() -> None:
    small = fit(games("a", "b", 30, 10, 20) + games("b", "c", 25, 5, 30), prior_games=0.0)
    big = fit(games("a", "b", 120, 40, 80) + games("b", "c", 100, 20, 120), prior_games=0.0)
    for name in "abc":
        assert big.ci95[name] / small.ci95[name] == pytest.approx(0.5, rel=1e-6)
    small = fit(games("a", "b", 30, 10, 20))
    big = fit(games("a", "b", 120, 40, 80))
    assert big.ci95["a"] / small.ci95["a"] == pytest.approx(0.5, rel=0.05)


def test_two_player_variance_is_inverse_fisher_information() -> None:
    # Var(R_a - R_b) = 1 / (N p (1 - p) c^2) with c = ln(10)/400 for N decisive games.
    r = fit(games("a", "b", 75, 0, 25), prior_games=0.0, anchor="b")
    c = math.log(10.0) / 400.0
    assert r.covariance[0, 0] == pytest.approx(1.0 / (100 * 0.75 * 0.25 * c * c), rel=1e-9)
    assert r.ci95["a"] == pytest.approx(1.959964 * math.sqrt(r.covariance[0, 0]), rel=1e-6)
    lo, hi = r.interval("a")
    assert (lo + hi) / 2.0 == pytest.approx(r.elo["a"]) and hi - lo == pytest.approx(
        2 * r.ci95["a"]
    )


def test_covariance_is_projected_for_mean_zero_and_anchor_has_no_width() -> None:
    mean_zero = fit(THREE_PLAYER_RESULTS)
    cov = mean_zero.covariance
    assert cov.shape == (3, 3)
    assert np.allclose(cov, cov.T)
    assert np.allclose(cov.sum(axis=1), 0.0, atol=1e-9)  # Var(mean) = 0
    assert np.all(np.linalg.eigvalsh(cov) > -1e-9)
    anchored = fit(THREE_PLAYER_RESULTS, anchor="b")
    assert anchored.ci95["b"] == 0.0 and anchored.cov("b", "b") == 0.0
    # Differences have the same variance whichever way the level is fixed.
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        assert mean_zero.diff_stddev(x, y) == pytest.approx(anchored.diff_stddev(x, y), rel=1e-9)
        assert mean_zero.los(x, y) == pytest.approx(anchored.los(x, y), abs=1e-12)


def test_interval_coverage_by_simulation() -> None:
    rng = np.random.default_rng(20240607)
    true_diff = 100.0
    p = expected_score(true_diff)
    covered = 0
    runs = 200
    for _ in range(runs):
        wins = float(rng.binomial(400, p))
        r = fit(
            [Result(("a",), ("b",), 1.0, wins), Result(("a",), ("b",), 0.0, 400.0 - wins)],
            prior_games=0.0,
            anchor="b",
        )
        lo, hi = r.interval("a")
        covered += lo <= true_diff <= hi
    assert 0.90 <= covered / runs <= 0.99


def test_recovers_true_ratings_of_a_partnership_pool() -> None:
    rng = random.Random(11)
    names = [f"bot{i}" for i in range(10)]
    true = {n: rng.gauss(0.0, 120.0) for n in names}
    mean = sum(true.values()) / len(true)
    results = []
    for _ in range(20000):
        a, b, c, d = rng.sample(names, 4)
        p = expected_score(true[a] + true[b] - true[c] - true[d])
        results.append(Result((a, b), (c, d), 1.0 if rng.random() < p else 0.0))
    r = fit(results, prior_games=0.0)
    misses = sum(not r.interval(n)[0] <= true[n] - mean <= r.interval(n)[1] for n in names)
    assert misses <= 2
    assert max(abs(r.elo[n] - (true[n] - mean)) for n in names) < 30.0


# --- LOS ---------------------------------------------------------------------------------


def test_los_is_half_for_equal_ratings_and_near_one_for_a_clear_gap() -> None:
    equal = fit(games("a", "b", 40, 20, 40))
    assert equal.los("a", "b") == pytest.approx(0.5, abs=1e-9)
    clear = fit(games("a", "b", 80, 0, 20))
    assert clear.los("a", "b") > 0.99
    assert clear.los("b", "a") < 0.01
    assert clear.los("a", "b") + clear.los("b", "a") == pytest.approx(1.0)
    matrix = clear.los_matrix()
    assert matrix["a"]["a"] == 0.5 and matrix["a"]["b"] == clear.los("a", "b")


def test_los_matches_normal_formula() -> None:
    r = fit(THREE_PLAYER_RESULTS)
    z = (r.elo["a"] - r.elo["b"]) / r.diff_stddev("a", "b")
    assert r.los("a", "b") == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2.0)), abs=1e-12)


# --- errors ------------------------------------------------------------------------------


def test_empty_input_raises() -> None:
    with pytest.raises(ConfigError) as info:
        fit([])
    assert info.value.option == "results"


def test_unknown_anchor_raises() -> None:
    with pytest.raises(ConfigError) as info:
        fit(games("a", "b", 1, 1, 1), anchor="zed")
    assert info.value.option == "anchor"


@pytest.mark.parametrize("score", [-0.1, 1.5, math.nan])
def test_score_outside_unit_interval_raises(score: float) -> None:
    with pytest.raises(ConfigError) as info:
        fit([Result(("a",), ("b",), score)])
    assert info.value.option == "score_a"


def test_bad_weight_sides_and_prior_raise() -> None:
    with pytest.raises(ConfigError, match="weight"):
        Result(("a",), ("b",), 1.0, -1.0)
    with pytest.raises(ConfigError, match="side_a"):
        Result((), ("b",), 1.0)
    with pytest.raises(ConfigError, match="side_b"):
        Result(("a",), "b", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="side_b"):
        fit([Result(("a", "b"), ("c",), 1.0)])
    with pytest.raises(ConfigError, match="prior_games"):
        fit(games("a", "b", 1, 1, 1), prior_games=-1.0)


def test_perfect_record_diverges_without_prior_and_is_finite_with_it() -> None:
    results = games("a", "b", 10, 0, 0) + games("b", "c", 5, 5, 5)
    with pytest.raises(ConfigError) as info:
        fit(results, prior_games=0.0)
    assert info.value.option == "prior_games"
    r = fit(results)
    assert all(math.isfinite(v) for v in r.elo.values())
    assert r.players[0] == "a"
