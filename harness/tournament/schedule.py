"""Which games a tournament plays, in which order, on which seats and with which deals.

Pure scheduling: no I/O, no clocks, no randomness beyond the tournament seed.

Vocabulary
==========

Seats and teams, partnerships, rating sides, duplicate groups and game keys are the
competition's (:mod:`harness.competition.seatings`); deal seeds too
(:mod:`harness.competition.deals`). What a tournament adds:

*Pairings.* A pairing is one match-up of entrants, written as its base seat arrangement:

* two-handed: every pair of distinct bots ``(a, b)``;
* four-handed, ``partnerships="same"``: every pair of distinct bots, ``(a, b, a, b)``;
* four-handed, ``partnerships="mixed"``: with ``N >= 4`` bots, every split of every set
  of four distinct bots into two partnerships (three splits per set of four, so
  ``3 * C(N, 4)`` pairings; a bot never partners itself); with ``N`` of 2 or 3, the
  partnerships are the unordered pairs of bots *with* repetition (``aa``, ``ab``, ``bb``,
  ...) and every unordered pair of two *different* partnerships is a pairing (3 pairings
  for two bots, 15 for three). Such games may seat three copies of one bot
  (``aa`` against ``ab``); :meth:`TournamentFormat.seats_per_entrant` says how many
  instances of each bot one game can need;
* cutthroat: every set of three distinct bots (``N >= 3``).

*Seat balance.* Deal set ``k`` of a pairing starts from the base arrangement rotated by
``tables * k``: with duplicate that only matters for mixed partnerships (which alternate
between ``p0 q0 p1 q1`` and ``p1 q1 p0 q0``, so over an even number of deal sets every
entrant holds every seat equally often); without duplicate (one table per group) game
``k`` of a pairing is rotated by ``k``, so entrants still move round the table.

*Keys.* ``"<prefix>/<round>/<pairing>/t<table>"`` (``rr``, ``gauntlet``), and
``"sprt/<pair>/t<table>"``, zero-padded so that sorting keys gives the schedule order.
Without duplicate the key has no ``/t<table>`` part and equals the group.

Driving a format (the runner's loop)
====================================

``games()`` hands out the games the format wants played *now*, each at most once per
format object (every call continues where the last one stopped). ``record()`` takes a
finished game's places. A runner does, in essence::

    while not fmt.done():
        handed_out = False
        for game in fmt.games():             # pull lazily, as workers become free
            handed_out = True
            if game.key in already_stored:   # resuming: feed stored results back
                fmt.record(game, stored_places[game.key])
                continue
            start(game)                      # record() it when it ends
        if not handed_out:
            if nothing_running: break        # finite schedule exhausted, or SPRT at max
            wait_for_a_game_to_end()

Finite formats hand out everything from one ``games()`` call; :class:`SprtMatch` hands
out one duplicate group per call, so only the groups the runner has pulled are ever
outstanding.
"""

from __future__ import annotations

import abc
import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import ClassVar

from harness.competition.deals import deal_seed
from harness.competition.seatings import (
    ScheduledGame,
    check_partnerships,
    duplicate_group,
    rotate,
    sides,
    table_key,
    tables,
)
from harness.errors import ConfigError
from harness.results.counting import check_places
from harness.results.head_to_head import head_to_head_score
from harness.results.sprt import Pentanomial, Sprt, SprtDecision, SprtStatus, Trinomial
from harness.rules.config import Form
from harness.rules.scoring import team_count

__all__ = [
    "Gauntlet",
    "RoundRobin",
    "SprtMatch",
    "TournamentFormat",
    "pairings",
]


# --------------------------------------------------------------------------- helpers


def _form(form: Form | str) -> Form:
    return Form.parse(form)


def _check_bots(option: str, bots: Sequence[str]) -> tuple[str, ...]:
    names = tuple(bots)
    if isinstance(bots, str):
        raise ConfigError(option, f"must be a list of bot names, not {bots!r}")
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigError(option, f"bot names must be non-empty strings; got {name!r}")
    dupes = sorted(n for n, c in Counter(names).items() if c > 1)
    if dupes:
        raise ConfigError(option, f"names must be distinct; repeated: {', '.join(dupes)}")
    return names


def pairings(bots: Sequence[str], form: Form | str, *,
             partnerships: str = "same") -> list[tuple[str, ...]]:
    """Every pairing of ``bots`` as its base seat arrangement (see the module docstring),
    in a deterministic order. Raises ConfigError naming ``bots`` when there are too few."""
    f = _form(form)
    mixed = check_partnerships(f, partnerships)
    names = _check_bots("bots", bots)
    need = team_count(f)  # one bot per team at the least
    if len(names) < need:
        raise ConfigError("bots", f"{f.value} needs at least {need} bots; got {len(names)}")
    if f is Form.TWO_HANDED:
        return [(a, b) for a, b in itertools.combinations(names, 2)]
    if f is Form.CUTTHROAT:
        return [tuple(t) for t in itertools.combinations(names, 3)]
    if not mixed:
        return [(a, b, a, b) for a, b in itertools.combinations(names, 2)]
    result: list[tuple[str, ...]] = []
    if len(names) >= 4:
        for a, b, c, d in itertools.combinations(names, 4):
            for p, q in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
                result.append((p[0], q[0], p[1], q[1]))
    else:
        parts = list(itertools.combinations_with_replacement(names, 2))
        for p, q in itertools.combinations(parts, 2):
            result.append((p[0], q[0], p[1], q[1]))
    return result


# --------------------------------------------------------------------------- formats


class TournamentFormat(abc.ABC):
    """A tournament format: hands out games lazily and takes their results."""

    name: ClassVar[str]
    tables: int = 1
    """Games per duplicate group (one deal played at every table); 1 without duplicate."""

    @abc.abstractmethod
    def games(self) -> Iterator[ScheduledGame]:
        """The next games to play, in order, lazily; continues where the last call
        stopped. A finite format yields all remaining games; SPRT one group per call."""

    @abc.abstractmethod
    def total(self) -> int | None:
        """The number of games in the whole schedule; None if open-ended (SPRT)."""

    @abc.abstractmethod
    def record(self, game: ScheduledGame, places: Sequence[int]) -> None:
        """A finished game's places per seat (1 = first). Recording a key twice is a
        no-op."""

    @abc.abstractmethod
    def done(self) -> bool:
        """No more games are needed."""

    @abc.abstractmethod
    def status(self) -> str:
        """One line for progress displays."""

    @abc.abstractmethod
    def seats_per_entrant(self) -> dict[str, int]:
        """Per entrant, the most seats it holds in any one game of this format (how many
        simultaneous instances of the bot one game needs)."""


class _FixedSchedule(TournamentFormat):
    """A finite schedule: ``games_per_pairing`` deal sets of each pairing, interleaved
    round by round (round ``k`` plays deal set ``k`` of every pairing)."""

    prefix: ClassVar[str]

    def __init__(self, pairing_list: Sequence[tuple[str, ...]], form: Form, *,
                 games_per_pairing: int, duplicate: bool, mixed: bool, seed: int,
                 shared_deals: bool = True) -> None:
        if isinstance(games_per_pairing, bool) or not isinstance(games_per_pairing, int) \
                or games_per_pairing < 1:
            raise ConfigError("games", f"must be a whole number of at least 1; got "
                                       f"{games_per_pairing!r}")
        if not isinstance(duplicate, bool):
            raise ConfigError("duplicate", f"must be true or false; got {duplicate!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError("seed", f"must be a whole number; got {seed!r}")
        self.form = form
        self.pairings: tuple[tuple[str, ...], ...] = tuple(pairing_list)
        self.games_per_pairing = games_per_pairing
        self.duplicate = duplicate
        self.mixed = mixed
        self.seed = seed
        self.shared_deals = shared_deals
        self.tables = tables(form, duplicate)
        self._round_width = max(4, len(str(games_per_pairing - 1)))
        self._pairing_width = max(3, len(str(len(self.pairings) - 1)))
        self._cursor = 0
        self._recorded: set[str] = set()

    @property
    def partnerships(self) -> str:
        return "mixed" if self.mixed else "same"

    def game_at(self, index: int) -> ScheduledGame:
        """The ``index``-th game of the schedule (0-based)."""
        if not 0 <= index < self.total():
            raise IndexError(index)
        per_round = len(self.pairings) * self.tables
        rnd, rest = divmod(index, per_round)
        p, t = divmod(rest, self.tables)
        base = self.pairings[p]
        seats = rotate(base, self.tables * rnd + t)
        group = f"{self.prefix}/{rnd:0{self._round_width}d}/{p:0{self._pairing_width}d}"
        # Round k deals alike in every pairing (results across pairings compare
        # directly), unless strangers' bots play: one that plays several pairings of a
        # round would see the same deals again, and remember them.
        index = rnd if self.shared_deals else rnd * len(self.pairings) + p
        return ScheduledGame(key=table_key(group, t, self.duplicate), seats=seats,
                             seed=deal_seed(self.seed, index), group=group, table=t,
                             sides=sides(self.form, seats, self.mixed))

    def games(self) -> Iterator[ScheduledGame]:
        while self._cursor < self.total():
            game = self.game_at(self._cursor)
            self._cursor += 1
            yield game

    def total(self) -> int:
        return len(self.pairings) * self.games_per_pairing * self.tables

    def record(self, game: ScheduledGame, places: Sequence[int]) -> None:
        check_places(game, places)
        if not game.key.startswith(self.prefix + "/"):
            raise ConfigError("game", f"{game.key!r} is not a game of this {self.name}")
        self._recorded.add(game.key)

    @property
    def recorded(self) -> int:
        return len(self._recorded)

    def done(self) -> bool:
        return len(self._recorded) >= self.total()

    def status(self) -> str:
        return (f"{self.name}: {len(self._recorded)}/{self.total()} games, "
                f"{len(self.pairings)} pairings x {self.games_per_pairing} deal sets"
                f"{' x ' + str(self.tables) + ' tables' if self.duplicate else ''}")

    def seats_per_entrant(self) -> dict[str, int]:
        most: dict[str, int] = {}
        for base in self.pairings:
            for name, n in Counter(base).items():
                most[name] = max(most.get(name, 0), n)
        return most


class RoundRobin(_FixedSchedule):
    """Every pairing of ``bots`` plays ``games_per_pairing`` deal sets (each on every
    table of its duplicate group when ``duplicate``)."""

    name = "round-robin"
    prefix = "rr"

    def __init__(self, bots: Sequence[str], form: Form | str, *, games_per_pairing: int,
                 duplicate: bool = True, partnerships: str = "same", seed: int = 1,
                 shared_deals: bool = True) -> None:
        f = _form(form)
        mixed = check_partnerships(f, partnerships)
        self.bots = _check_bots("bots", bots)
        super().__init__(pairings(self.bots, f, partnerships=partnerships), f,
                         games_per_pairing=games_per_pairing, duplicate=duplicate,
                         mixed=mixed, seed=seed, shared_deals=shared_deals)


class Gauntlet(_FixedSchedule):
    """Each candidate against the field: for every candidate ``c``, the pairings of
    ``[c, *field]`` in which ``c`` takes part (so never candidate against candidate)."""

    name = "gauntlet"
    prefix = "gauntlet"

    def __init__(self, candidates: Sequence[str], field: Sequence[str], form: Form | str, *,
                 games_per_pairing: int, duplicate: bool = True, partnerships: str = "same",
                 seed: int = 1, shared_deals: bool = True) -> None:
        f = _form(form)
        mixed = check_partnerships(f, partnerships)
        self.candidates = _check_bots("candidates", candidates)
        self.field = _check_bots("field", field)
        if not self.candidates:
            raise ConfigError("candidates", "a gauntlet needs at least one candidate")
        both = sorted(set(self.candidates) & set(self.field))
        if both:
            raise ConfigError("candidates", f"candidates cannot also be in the field: "
                                            f"{', '.join(both)}")
        need = team_count(f) - 1
        if len(self.field) < need:
            raise ConfigError("bots", f"a {f.value} gauntlet needs at least {need} "
                                      f"bot(s) in the field besides the candidates; "
                                      f"got {len(self.field)}")
        found: list[tuple[str, ...]] = []
        for c in self.candidates:
            found.extend(p for p in pairings([c, *self.field], f, partnerships=partnerships)
                         if c in p)
        super().__init__(found, f, games_per_pairing=games_per_pairing,
                         duplicate=duplicate, mixed=mixed, seed=seed,
                         shared_deals=shared_deals)


class SprtMatch(TournamentFormat):
    """A head-to-head match of ``candidate`` against ``baseline`` that stops when the
    SPRT of H0: Elo = ``elo0`` against H1: Elo = ``elo1`` decides, or after ``max_pairs``
    units (duplicate pairs; single games when ``duplicate`` is off).

    Two-handed, or four-handed with each side two copies of one bot. With duplicate the
    unit is the pair of tables of one deal set: the candidate's pair score is the sum of
    its two game scores (1 for the better place, 0.5 for equal places, 0 for the worse),
    counted in a :class:`~harness.results.sprt.Pentanomial`; without, every game is a unit of a
    :class:`~harness.results.sprt.Trinomial`. The decision is taken the first time the LLR
    crosses a bound and then kept, whatever still-running games add afterwards.
    """

    name = "sprt"
    prefix = "sprt"

    def __init__(self, candidate: str, baseline: str, form: Form | str, *, elo0: float,
                 elo1: float, alpha: float = Sprt.alpha, beta: float = Sprt.beta,
                 max_pairs: int,
                 duplicate: bool = True, seed: int = 1) -> None:
        f = _form(form)
        if f is Form.CUTTHROAT:
            raise ConfigError("format", "an SPRT match is head-to-head: two-handed or "
                                        "four-handed, not cutthroat")
        for option, value in (("candidate", candidate), ("baseline", baseline)):
            if not isinstance(value, str) or not value:
                raise ConfigError(option, f"must be a bot name; got {value!r}")
        if candidate == baseline:
            raise ConfigError("baseline", "must differ from the candidate")
        if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 1:
            raise ConfigError("max_pairs", f"must be a whole number of at least 1; got "
                                           f"{max_pairs!r}")
        if not isinstance(duplicate, bool):
            raise ConfigError("duplicate", f"must be true or false; got {duplicate!r}")
        self.sprt = Sprt(float(elo0), float(elo1), float(alpha), float(beta))
        self.form = f
        self.candidate = candidate
        self.baseline = baseline
        self.max_pairs = max_pairs
        self.duplicate = duplicate
        self.seed = seed
        self.tables = tables(f, duplicate)
        self._base: tuple[str, ...] = ((candidate, baseline) if f is Form.TWO_HANDED
                                       else (candidate, baseline, candidate, baseline))
        self._width = max(6, len(str(max_pairs - 1)))
        self._issued = 0
        self._counts = [0.0] * (5 if duplicate else 3)
        self._units = 0
        self._pending: dict[str, dict[int, float]] = {}
        self._recorded: set[str] = set()
        self._decision = SprtDecision.CONTINUE

    # -- inspection
    @property
    def decision(self) -> SprtDecision:
        """CONTINUE until the LLR first crossed a bound (stays CONTINUE if the match ends
        at ``max_pairs`` undecided)."""
        return self._decision

    @property
    def counts(self) -> Pentanomial | Trinomial:
        """The counts so far: a Pentanomial of complete pairs, or a Trinomial of games."""
        return Pentanomial(self._counts) if self.duplicate else Trinomial(self._counts)

    @property
    def units(self) -> int:
        """Complete units counted (pairs, or games without duplicate)."""
        return self._units

    @property
    def issued(self) -> int:
        """Units handed out by :meth:`games` so far."""
        return self._issued

    def sprt_status(self) -> SprtStatus:
        return self.sprt.status(self.counts)

    # -- the format hooks
    def group_games(self, index: int) -> tuple[ScheduledGame, ...]:
        """The games of unit ``index`` (0-based), one per table."""
        return duplicate_group(f"{self.prefix}/{index:0{self._width}d}", self._base,
                               deal_seed(self.seed, index), self.form, mixed=False,
                               duplicate=self.duplicate, rotation=self.tables * index)

    def games(self) -> Iterator[ScheduledGame]:
        if self.done() or self._issued >= self.max_pairs:
            return
        index = self._issued
        self._issued += 1
        yield from self.group_games(index)

    def total(self) -> int | None:
        return None

    def record(self, game: ScheduledGame, places: Sequence[int]) -> None:
        if game.key in self._recorded:
            return
        score = head_to_head_score(game, places, self.candidate, self.baseline)
        if score is None or not game.key.startswith(self.prefix + "/"):
            raise ConfigError("game", f"{game.key!r} is not a game of this SPRT match")
        self._recorded.add(game.key)
        if self.duplicate:
            tables = self._pending.setdefault(game.group, {})
            tables[game.table] = score
            if len(tables) < self.tables:
                return
            del self._pending[game.group]
            self._counts[round(2 * sum(tables.values()))] += 1.0
        else:
            self._counts[round(2 * score)] += 1.0
        self._units += 1
        if self._decision is SprtDecision.CONTINUE:
            self._decision = self.sprt.status(self.counts).decision

    def done(self) -> bool:
        return self._decision is not SprtDecision.CONTINUE or self._units >= self.max_pairs

    def status(self) -> str:
        st = self.sprt_status()
        counts = self.counts
        elo, ci = counts.elo(), counts.elo_ci95()
        ci_text = f"{ci:.1f}" if math.isfinite(ci) else "inf"
        unit = "pairs" if self.duplicate else "games"
        shown = " ".join(f"{c:g}" for c in counts.counts)
        verdict = {SprtDecision.CONTINUE: "running" if not self.done() else "inconclusive",
                   SprtDecision.ACCEPT_H0: "H0 accepted",
                   SprtDecision.ACCEPT_H1: "H1 accepted"}[self._decision]
        return (f"SPRT {self.candidate} vs {self.baseline} "
                f"[{self.sprt.elo0:g}, {self.sprt.elo1:g}]: LLR {st.llr:.2f} "
                f"({st.lower:.2f}, {st.upper:.2f}), Elo {elo:+.1f} +/- {ci_text}, "
                f"{self._units}/{self.max_pairs} {unit} [{shown}], {verdict}")

    def seats_per_entrant(self) -> dict[str, int]:
        n = len(self._base) // 2
        return {self.candidate: n, self.baseline: n}
