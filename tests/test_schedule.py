"""Tests of harness.tournament.schedule and the seatings and deals it plays
(harness.competition): pairings, seats, duplicate deals, formats and
SPRT (its statistics helpers are tested in test_results_rating.py)."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Sequence

import pytest

from harness.competition.deals import SEED_LIMIT, deal_seed
from harness.competition.seatings import ScheduledGame
from harness.errors import ConfigError
from harness.results.sprt import Pentanomial, SprtDecision, Trinomial
from harness.rules.config import Form, RulesConfig
from harness.rules.game import Game, seeded_first_dealer
from harness.tournament.schedule import Gauntlet, RoundRobin, SprtMatch, pairings

BOTS4 = ["a", "b", "c", "d"]
BOTS5 = [*BOTS4, "e"]


def pairing_of(game: ScheduledGame) -> str:
    """The pairing part of a round-robin/gauntlet key: 'rr/<round>/<pairing>/t<t>'."""
    return game.key.split("/")[2]


def by_pairing(games: Sequence[ScheduledGame]) -> dict[str, list[ScheduledGame]]:
    out: dict[str, list[ScheduledGame]] = defaultdict(list)
    for g in games:
        out[pairing_of(g)].append(g)
    return out


def by_group(games: Sequence[ScheduledGame]) -> dict[str, list[ScheduledGame]]:
    out: dict[str, list[ScheduledGame]] = defaultdict(list)
    for g in games:
        out[g.group].append(g)
    return out


# --------------------------------------------------------------------------- pairings


@pytest.mark.parametrize(("form", "partnerships", "n", "expected"), [
    (Form.TWO_HANDED, "same", 4, 6),
    (Form.FOUR_HANDED, "same", 4, 6),
    (Form.FOUR_HANDED, "same", 2, 1),
    (Form.CUTTHROAT, "same", 3, 1),
    (Form.CUTTHROAT, "same", 5, 10),
    (Form.FOUR_HANDED, "mixed", 2, 3),
    (Form.FOUR_HANDED, "mixed", 3, 15),
    (Form.FOUR_HANDED, "mixed", 4, 3),
    (Form.FOUR_HANDED, "mixed", 5, 15),
])
def test_pairing_counts(form: Form, partnerships: str, n: int, expected: int) -> None:
    names = [f"bot{i}" for i in range(n)]
    found = pairings(names, form, partnerships=partnerships)
    assert len(found) == expected
    assert len(set(found)) == expected
    assert all(len(p) == form.players for p in found)


@pytest.mark.parametrize(("form", "duplicate", "tables"), [
    (Form.TWO_HANDED, True, 2), (Form.TWO_HANDED, False, 1),
    (Form.FOUR_HANDED, True, 2), (Form.FOUR_HANDED, False, 1),
    (Form.CUTTHROAT, True, 3), (Form.CUTTHROAT, False, 1),
])
def test_every_pairing_gets_its_games(form: Form, duplicate: bool, tables: int) -> None:
    rr = RoundRobin(BOTS4, form, games_per_pairing=3, duplicate=duplicate, seed=5)
    games = list(rr.games())
    n_pairings = len(pairings(BOTS4, form))
    assert rr.total() == len(games) == n_pairings * 3 * tables
    groups = by_pairing(games)
    assert len(groups) == n_pairings
    for lst in groups.values():
        assert len(lst) == 3 * tables
        assert len({frozenset(g.seats) for g in lst}) == 1  # one set of entrants
    for group in by_group(games).values():
        assert sorted(g.table for g in group) == list(range(tables))
        assert len({g.seed for g in group}) == 1
    if not duplicate:
        assert all(g.key == g.group and g.table == 0 for g in games)
        for lst in groups.values():  # each game of a pairing has its own seed
            assert len({g.seed for g in lst}) == len(lst)
    # A second call continues where the first stopped: nothing is left.
    assert list(rr.games()) == []


def test_keys_unique_deterministic_and_sorted() -> None:
    def make() -> list[ScheduledGame]:
        return list(RoundRobin(BOTS4, Form.FOUR_HANDED, games_per_pairing=12,
                               partnerships="mixed", seed=9).games())

    first, second = make(), make()
    assert first == second
    keys = [g.key for g in first]
    assert len(set(keys)) == len(keys)
    assert keys == sorted(keys)
    other = list(RoundRobin(BOTS4, Form.FOUR_HANDED, games_per_pairing=12,
                            partnerships="mixed", seed=10).games())
    assert [g.key for g in other] == keys
    assert [g.seed for g in other] != [g.seed for g in first]
    assert all(0 <= g.seed < SEED_LIMIT for g in first + other)


def test_deal_seed_range_and_determinism() -> None:
    seeds = [deal_seed(s, i) for s in (0, 1, -3, 2**70) for i in range(200)]
    assert all(0 <= x < SEED_LIMIT for x in seeds)
    assert len(set(seeds)) == len(seeds)
    assert deal_seed(1, 7) == deal_seed(1, 7)


def test_pairings_are_interleaved() -> None:
    rr = RoundRobin(BOTS4, Form.TWO_HANDED, games_per_pairing=5, seed=1)
    games = list(rr.games())
    per_round = len(rr.pairings) * 2
    for start in range(0, len(games), per_round):
        chunk = games[start:start + per_round]
        assert Counter(pairing_of(g) for g in chunk) == {p: 2 for p in
                                                         {pairing_of(g) for g in games}}


# --------------------------------------------------------------------------- seats


@pytest.mark.parametrize(("form", "partnerships", "duplicate", "n_games"), [
    (Form.TWO_HANDED, "same", True, 3),
    (Form.TWO_HANDED, "same", False, 4),
    (Form.FOUR_HANDED, "same", True, 3),
    (Form.FOUR_HANDED, "same", False, 4),
    (Form.FOUR_HANDED, "mixed", True, 4),
    (Form.FOUR_HANDED, "mixed", False, 8),
    (Form.CUTTHROAT, "same", True, 2),
    (Form.CUTTHROAT, "same", False, 3),
])
def test_seats_balanced_within_each_pairing(form: Form, partnerships: str, duplicate: bool,
                                            n_games: int) -> None:
    rr = RoundRobin(BOTS5, form, games_per_pairing=n_games, duplicate=duplicate,
                    partnerships=partnerships, seed=3)
    for lst in by_pairing(list(rr.games())).values():
        seat_counts: dict[str, Counter[int]] = defaultdict(Counter)
        for g in lst:
            for seat, name in enumerate(g.seats):
                seat_counts[name][seat] += 1
        for name, counter in seat_counts.items():
            assert set(counter) == set(range(form.players)), (name, counter)
            assert len(set(counter.values())) == 1, (name, counter)


@pytest.mark.parametrize(("form", "partnerships"), [
    (Form.TWO_HANDED, "same"), (Form.FOUR_HANDED, "same"), (Form.FOUR_HANDED, "mixed"),
    (Form.CUTTHROAT, "same"),
])
def test_first_dealer_side_balanced_in_each_group(form: Form, partnerships: str) -> None:
    rules = RulesConfig(form=form)
    rr = RoundRobin(BOTS4, form, games_per_pairing=6, partnerships=partnerships, seed=11)
    for group in by_group(list(rr.games())).values():
        dealer_side: Counter[str] = Counter()
        for g in group:
            dealer = seeded_first_dealer(rules, g.seed)
            team = g.team_of(dealer)
            dealer_side.update({g.seats[s] for s in range(len(g.seats))
                                if g.team_of(s) == team})
        entrants = set(group[0].seats)
        assert set(dealer_side) == entrants
        assert len(set(dealer_side.values())) == 1, dealer_side


@pytest.mark.parametrize(("form", "partnerships"), [
    (Form.TWO_HANDED, "same"), (Form.FOUR_HANDED, "same"), (Form.FOUR_HANDED, "mixed"),
    (Form.CUTTHROAT, "same"),
])
def test_duplicate_tables_share_deals(form: Form, partnerships: str) -> None:
    rules = RulesConfig(form=form)
    rr = RoundRobin(BOTS4, form, games_per_pairing=2, partnerships=partnerships, seed=21)
    for group in by_group(list(rr.games())).values():
        t0 = group[0]
        game0 = Game(rules, t0.seed)
        for other in group[1:]:
            game1 = Game(rules, other.seed)
            assert game1.first_dealer == game0.first_dealer
            assert game1.hand.dealt == game0.hand.dealt
            assert game1.hand.kitty == game0.hand.kitty
            # The seats changed hands: nobody holds its own table-0 cards again...
            assert all(other.seats[s] != t0.seats[s] for s in range(form.players))
            # ...and each seat's cards go to the other side (the opponents of table 0).
            for s in range(form.players):
                assert other.sides[other.team_of(s)] != t0.sides[t0.team_of(s)]
        if form is not Form.CUTTHROAT and partnerships == "same":
            a, b = t0.sides[0][0], t0.sides[1][0]
            t1 = group[1]
            cards_a_t1 = {c for s in range(form.players) if t1.seats[s] == a
                          for c in Game(rules, t1.seed).hand.dealt[s]}
            cards_b_t0 = {c for s in range(form.players) if t0.seats[s] == b
                          for c in game0.hand.dealt[s]}
            assert cards_a_t1 == cards_b_t0


def test_cutthroat_triples_and_rotations() -> None:
    rr = RoundRobin(BOTS4, "cutthroat", games_per_pairing=1, seed=2)
    games = list(rr.games())
    assert {frozenset(g.seats) for g in games} == {frozenset(t) for t in
                                                   itertools.combinations(BOTS4, 3)}
    for group in by_group(games).values():
        x, y, z = group[0].seats
        assert [g.seats for g in group] == [(x, y, z), (y, z, x), (z, x, y)]
        for g in group:
            assert g.sides == tuple((n,) for n in g.seats)
    with pytest.raises(ConfigError) as err:
        RoundRobin(["a", "b"], Form.CUTTHROAT, games_per_pairing=1)
    assert err.value.option == "bots"


def test_two_handed_and_same_partnership_seats() -> None:
    two = list(RoundRobin(["a", "b"], "two-handed", games_per_pairing=1).games())
    assert [g.seats for g in two] == [("a", "b"), ("b", "a")]
    assert [g.sides for g in two] == [(("a",), ("b",)), (("b",), ("a",))]
    four = list(RoundRobin(["a", "b"], "four-handed", games_per_pairing=1).games())
    assert [g.seats for g in four] == [("a", "b", "a", "b"), ("b", "a", "b", "a")]
    assert four[0].sides == (("a",), ("b",))


def test_mixed_partnerships_four_or_more_bots() -> None:
    rr = RoundRobin(BOTS5, Form.FOUR_HANDED, games_per_pairing=1,
                    partnerships="mixed")
    games = list(rr.games())
    partners: Counter[tuple[str, ...]] = Counter()
    for g in games:
        assert len(set(g.seats)) == 4  # four distinct bots, nobody partners itself
        for side in g.sides:
            assert len(side) == 2 and list(side) == sorted(side)
        assert g.sides[0] == tuple(sorted((g.seats[0], g.seats[2])))
        assert g.sides[1] == tuple(sorted((g.seats[1], g.seats[3])))
        if g.table == 0:
            partners.update(g.sides)
    # Every pair of bots partners equally often (each pair: C(3,2) opposing pairs).
    assert set(partners) == {p for p in itertools.combinations(sorted(BOTS5), 2)}
    assert set(partners.values()) == {3}
    assert rr.seats_per_entrant() == dict.fromkeys(BOTS5, 1)


def test_mixed_partnerships_few_bots_allow_repetition() -> None:
    rr = RoundRobin(["a", "b"], Form.FOUR_HANDED, games_per_pairing=1,
                    partnerships="mixed")
    matchups = {frozenset(g.sides) for g in rr.games()}
    assert matchups == {frozenset({("a", "a"), ("a", "b")}),
                        frozenset({("a", "b"), ("b", "b")}),
                        frozenset({("a", "a"), ("b", "b")})}
    assert rr.seats_per_entrant() == {"a": 3, "b": 3}
    three = RoundRobin(["a", "b", "c"], Form.FOUR_HANDED, games_per_pairing=1,
                       partnerships="mixed")
    sides = {frozenset(g.sides) for g in three.games()}
    parts = list(itertools.combinations_with_replacement("abc", 2))
    assert sides == {frozenset(pq) for pq in itertools.combinations(parts, 2)}
    with pytest.raises(ConfigError) as err:
        RoundRobin(["a", "b"], Form.TWO_HANDED, games_per_pairing=1, partnerships="mixed")
    assert err.value.option == "partnerships"


def test_gauntlet_excludes_candidate_vs_candidate() -> None:
    for form in (Form.TWO_HANDED, Form.FOUR_HANDED, Form.CUTTHROAT):
        g = Gauntlet(["x", "y"], ["f1", "f2", "f3"], form, games_per_pairing=2, seed=4)
        games = list(g.games())
        assert games and g.total() == len(games)
        for game in games:
            assert game.key.startswith("gauntlet/")
            assert len({"x", "y"} & set(game.seats)) == 1
        per_candidate = Counter("x" if "x" in game.seats else "y" for game in games)
        assert per_candidate["x"] == per_candidate["y"]
        if form is not Form.CUTTHROAT:  # each candidate meets each field member
            assert {frozenset(game.seats) for game in games} == {
                frozenset({c, f}) for c in "xy" for f in ("f1", "f2", "f3")}
    mixed = Gauntlet(["x"], ["f1", "f2", "f3"], Form.FOUR_HANDED, games_per_pairing=1,
                     partnerships="mixed")
    assert {side for game in mixed.games() for side in game.sides if "x" in side} == {
        ("f1", "x"), ("f2", "x"), ("f3", "x")}
    with pytest.raises(ConfigError) as err:
        Gauntlet(["x"], ["x", "f"], Form.TWO_HANDED, games_per_pairing=1)
    assert err.value.option == "candidates"
    with pytest.raises(ConfigError) as err:
        Gauntlet(["x"], ["f"], Form.CUTTHROAT, games_per_pairing=1)
    assert err.value.option == "bots"


def test_finite_format_record_and_done() -> None:
    rr = RoundRobin(["a", "b"], Form.TWO_HANDED, games_per_pairing=2)
    games = list(rr.games())
    assert not rr.done()
    for g in games[:-1]:
        rr.record(g, (1, 2))
    rr.record(games[0], (1, 2))  # again: a no-op
    assert not rr.done()
    assert "3/4" in rr.status()
    rr.record(games[-1], (2, 1))
    assert rr.done()
    with pytest.raises(ConfigError) as err:
        rr.record(games[0], (1, 2, 3))
    assert err.value.option == "places"


# --------------------------------------------------------------------------- SPRT


def _sprt_places(game: ScheduledGame, candidate_wins: bool, who: str = "cand"
                 ) -> tuple[int, ...]:
    mine = game.team_of(game.seats.index(who))
    return tuple(1 if (game.team_of(s) == mine) == candidate_wins else 2
                 for s in range(len(game.seats)))


def _drive(match: SprtMatch, outcome: bool | None, limit: int = 10_000) -> int:
    """Play until done: the candidate wins (True), loses (False), or the two tables of a
    pair split (None). Returns the number of games() calls that yielded games."""
    calls = 0
    while not match.done() and calls < limit:
        group = list(match.games())
        if not group:
            break
        calls += 1
        for i, g in enumerate(group):
            wins = outcome if outcome is not None else i % 2 == 0
            match.record(g, _sprt_places(g, wins))
    return calls


@pytest.mark.parametrize("form", [Form.TWO_HANDED, Form.FOUR_HANDED])
def test_sprt_yields_one_group_per_call(form: Form) -> None:
    m = SprtMatch("cand", "base", form, elo0=0, elo1=10, max_pairs=100, seed=3)
    assert m.total() is None
    first = list(m.games())
    assert len(first) == 2 and first[0].group == first[1].group
    assert first[0].seed == first[1].seed
    assert first[0].seats[0] == "cand" and first[1].seats[0] == "base"
    second = list(m.games())
    assert len(second) == 2 and second[0].group != first[0].group
    assert m.issued == 2 and m.units == 0
    # Laziness: nothing is handed out until the iterator is pulled.
    pending = m.games()
    assert m.issued == 2
    next(pending)
    assert m.issued == 3
    assert m.seats_per_entrant() == {"cand": form.players // 2, "base": form.players // 2}


def test_sprt_accepts_h1_when_candidate_always_wins() -> None:
    m = SprtMatch("cand", "base", Form.FOUR_HANDED, elo0=0, elo1=10, max_pairs=1000)
    calls = _drive(m, True)
    assert m.done() and m.decision is SprtDecision.ACCEPT_H1
    assert calls < 150  # far below max_pairs: it stopped on the decision
    assert isinstance(m.counts, Pentanomial)
    assert m.counts.counts == (0.0, 0.0, 0.0, 0.0, float(calls))
    assert list(m.games()) == []
    assert "H1 accepted" in m.status() and "LLR" in m.status()


def test_sprt_accepts_h0_when_candidate_always_loses() -> None:
    m = SprtMatch("cand", "base", Form.TWO_HANDED, elo0=0, elo1=10, max_pairs=1000)
    _drive(m, False)
    assert m.done() and m.decision is SprtDecision.ACCEPT_H0
    assert m.counts.counts[0] == m.units
    st = m.sprt_status()
    assert st.llr <= st.lower


def test_sprt_respects_max_pairs() -> None:
    m = SprtMatch("cand", "base", Form.TWO_HANDED, elo0=-5, elo1=5, max_pairs=7)
    calls = _drive(m, None)
    assert calls == 7 and m.units == 7 and m.issued == 7
    assert m.done() and m.decision is SprtDecision.CONTINUE
    assert m.counts.counts == (0.0, 0.0, 7.0, 0.0, 0.0)
    assert list(m.games()) == []
    assert "inconclusive" in m.status()
    # Never more than max_pairs handed out, even while their results are outstanding.
    m2 = SprtMatch("cand", "base", Form.TWO_HANDED, elo0=0, elo1=10, max_pairs=3)
    issued = [list(m2.games()) for _ in range(5)]
    assert [len(x) for x in issued] == [2, 2, 2, 0, 0]
    assert not m2.done()
    for group in issued:
        for g in group:
            m2.record(g, _sprt_places(g, True))
    assert m2.done() and m2.units == 3


def test_sprt_without_duplicate_counts_games() -> None:
    m = SprtMatch("cand", "base", Form.TWO_HANDED, elo0=0, elo1=10, max_pairs=500,
                  duplicate=False)
    group = list(m.games())
    assert len(group) == 1 and group[0].key == group[0].group
    m.record(group[0], _sprt_places(group[0], True))
    assert isinstance(m.counts, Trinomial) and m.counts.counts == (0.0, 0.0, 1.0)
    (nxt,) = list(m.games())
    assert nxt.seats == ("base", "cand")  # seats alternate without duplicate
    _drive(m, True)
    assert m.decision is SprtDecision.ACCEPT_H1


def test_sprt_pair_needs_both_tables_and_ignores_repeats() -> None:
    m = SprtMatch("cand", "base", Form.TWO_HANDED, elo0=0, elo1=10, max_pairs=50)
    t0, t1 = list(m.games())
    m.record(t0, _sprt_places(t0, True))
    m.record(t0, _sprt_places(t0, True))
    assert m.units == 0
    m.record(t1, _sprt_places(t1, False))
    assert m.units == 1 and m.counts.counts == (0.0, 0.0, 1.0, 0.0, 0.0)
    m.record(t1, _sprt_places(t1, False))  # replays (say on resume) are no-ops
    m.record(t0, _sprt_places(t0, True))
    assert m.units == 1
    stranger = ScheduledGame("rr/0000/000/t0", ("cand", "x"), 1, "rr/0000/000", 0,
                             (("cand",), ("x",)))
    with pytest.raises(ConfigError):
        m.record(stranger, (1, 2))


def test_sprt_rejects_cutthroat_and_decision_is_sticky() -> None:
    with pytest.raises(ConfigError) as err:
        SprtMatch("a", "b", Form.CUTTHROAT, elo0=0, elo1=10, max_pairs=10)
    assert err.value.option == "format"
    m = SprtMatch("cand", "base", Form.TWO_HANDED, elo0=0, elo1=10, max_pairs=1000)
    _drive(m, True)
    units = m.units
    # Late results from games still running when it decided do not undo the decision.
    for _ in range(3 * units):
        a, b = m.group_games(m.issued)
        m._issued += 1
        m.record(a, _sprt_places(a, False))
        m.record(b, _sprt_places(b, False))
    assert m.sprt_status().decision is not SprtDecision.ACCEPT_H1
    assert m.decision is SprtDecision.ACCEPT_H1 and m.done()


def test_strangers_bots_get_deals_of_their_own_in_each_pairing() -> None:
    # Round k deals alike in every pairing, so that results across pairings compare;
    # but a stranger's bot that plays several pairings of a round would meet deals it
    # has played, and know every card it saw in them. With shared_deals off (a
    # tournament with remote, boxed or hosted bots), each pairing of a round has a seed
    # of its own; the tables of a duplicate group still share theirs.
    for fmt in (RoundRobin(BOTS4, Form.TWO_HANDED, games_per_pairing=3, seed=5,
                           shared_deals=False),
                Gauntlet(["candidate"], BOTS4, Form.TWO_HANDED, games_per_pairing=3, seed=5,
                         shared_deals=False)):
        games = list(fmt.games())
        seeds = {g.group: {x.seed for x in games if x.group == g.group} for g in games}
        assert all(len(s) == 1 for s in seeds.values())  # one per duplicate group
        assert len({s for group in seeds.values() for s in group}) == len(seeds)
    shared = list(RoundRobin(BOTS4, Form.TWO_HANDED, games_per_pairing=3, seed=5).games())
    rounds = defaultdict(set)
    for g in shared:
        rounds[g.group.split("/")[1]].add(g.seed)
    assert all(len(s) == 1 for s in rounds.values()) and len(rounds) == 3
