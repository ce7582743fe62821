"""Which game the ladder plays next: pure, no I/O, no clock, no randomness.

The unit of play is a *deal set*: one deal seed played at one table per team, with the
seats rotated by one position from table to table (as in tournaments, see
:mod:`harness.competition.seatings`), so every side holds every hand once. A set is
complete once every table is played; a set cut short (a bot left, or was benched, or
the ladder stopped) is recorded as such. Every finished table counts either way, and a
table a bot could not play because it left is its forfeit (so leaving never pays).

Choosing a set (:meth:`Matchmaker.next_sets`), given every *connected* bot as a
:class:`Candidate` (busy ones too, with no free seats) and the number of sets that may
start now:

1. **Focus.** The bot to serve first is the available one that most needs games:
   provisional bots (fewer than ``Policy.provisional_sets`` sets) first, fewest sets
   first; then the widest 95% interval; then fewest sets; then name. The caller may
   restrict the focus to some bots (``focus=``), so that every set seats one of them:
   the ladder's referee does so on a cluster, where house-only sets go to the workers.
2. **Opponents.** Every other available bot gets a cost
   ``((R_a - R_b) / closeness_elo)² + repeat_weight * n_ab / share_ab``, where ``n_ab``
   is how many sets the two have played together and ``share_ab`` the focal bot's
   sets spread evenly over the connected bots it could meet. Close ratings are cheap,
   pairings played more than their share are dear. A pairing played more than
   ``repeat_cap * (share + 1)`` times is not chosen at all while others are available.
   The cheapest opponent wins (ties by name). Cutthroat and mixed partnerships add the
   cheapest remaining bot, counting its cost against every bot already chosen, until
   the table is full; mixed partnerships then split the four into the two partnerships
   of closest total rating (ties: the split whose partners played together least).
3. **Seats.** Same-bot partnerships seat two copies of each bot (``a b a b``), which
   needs two free seats of each; every other form needs one seat per bot.

Each set started updates the pairing counts at once, so sets chosen in one call (and
sets still running) spread over different pairings.

Between calls the matchmaker keeps its index of the bots: the last candidate given for
each, those with seats enough sorted by rating, and a queue in order of need. A call
compares each candidate with the one kept and moves only those that changed, so on a
large ladder, where one call changes a handful of bots, a call costs one cheap pass
over the candidates plus a few logarithmic steps, not a sort and a queue rebuilt.
"""

from __future__ import annotations

import bisect
import enum
import functools
import heapq
import itertools
import math
from collections import Counter
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from harness.competition.deals import deal_seed
from harness.competition.policies import Policy
from harness.competition.seatings import ScheduledGame, check_partnerships, duplicate_group
from harness.errors import ConfigError
from harness.rules.config import Form

__all__ = [
    "Candidate",
    "DealSet",
    "Matchmaker",
    "Policy",
    "SetProgress",
    "SetStatus",
    "pair_key",
]

Pair = tuple[str, str]


def pair_key(a: str, b: str) -> Pair:
    """The unordered pair ``{a, b}`` as a sorted tuple."""
    return (a, b) if a <= b else (b, a)


def set_pairs(base: Sequence[str]) -> list[Pair]:
    """The pairings a deal set with the base arrangement ``base`` counts for: every
    unordered pair of its distinct bots, once, however the set ended (every finished
    table counts). The matchmaker counts a set this way when it starts it, and the
    restart (:meth:`harness.ladder.sets.SetLog.pair_counts`) from the stored sets."""
    bots = list(dict.fromkeys(base))
    return [pair_key(a, b) for a, b in itertools.combinations(bots, 2)]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A connected bot as the matchmaker sees it. ``free_seats`` is how many more seats
    it may take now (its concurrency minus the seats it holds; 0 when busy or benched),
    ``sets`` how many deal sets it has played, ``rating`` and ``ci95`` its current Elo
    and half-width of its 95% interval (give a wide interval to an unrated bot)."""

    name: str
    rating: float = 0.0
    ci95: float = math.inf
    sets: int = 0
    free_seats: int = 1


@dataclass(frozen=True)
class DealSet:
    """One deal set to play: its games (one per table, same seed, seats rotated) and
    the seats each bot holds during one of its games."""

    index: int
    key: str
    seed: int
    base: tuple[str, ...]
    games: tuple[ScheduledGame, ...]

    @property
    def bots(self) -> tuple[str, ...]:
        """The distinct bots of the set, in seat order of the base arrangement."""
        return tuple(dict.fromkeys(self.base))

    @property
    def seats(self) -> dict[str, int]:
        """Seats per bot in one game of the set."""
        return dict(Counter(self.base))


class SetStatus(enum.Enum):
    IN_PROGRESS = "in_progress"
    COMPLETE = "complete"
    CUT_SHORT = "cut_short"


@dataclass
class SetProgress:
    """How far a deal set got. :meth:`finish` each table as it ends (``forfeit`` when a
    fault decided it); :meth:`cut_short` when the set cannot go on as a whole: a bot
    left (its missing tables are then finished as its forfeits), was benched, or the
    ladder stopped. A set is complete when every table finished and nothing cut it."""

    deal_set: DealSet
    finished: dict[int, bool] = field(default_factory=dict)  # table -> forfeited
    reason: str | None = None

    def finish(self, table: int, *, forfeit: bool = False) -> None:
        if not 0 <= table < len(self.deal_set.games):
            raise ValueError(f"{self.deal_set.key}: no table {table}")
        if table in self.finished:
            raise ValueError(f"{self.deal_set.key}: table {table} already finished")
        self.finished[table] = forfeit

    def cut_short(self, reason: str) -> None:
        """Record why the set is not a complete duplicate set (the first reason stays)."""
        if self.status is SetStatus.COMPLETE:
            raise ValueError(f"{self.deal_set.key}: already complete")
        if self.reason is None:
            self.reason = reason

    @property
    def status(self) -> SetStatus:
        if self.reason is not None:
            return SetStatus.CUT_SHORT
        if len(self.finished) == len(self.deal_set.games):
            return SetStatus.COMPLETE
        return SetStatus.IN_PROGRESS

    def next_table(self) -> int | None:
        """The lowest table not yet finished, or None when every table is."""
        return min((t for t in range(len(self.deal_set.games)) if t not in self.finished),
                   default=None)


class Matchmaker:
    """Chooses deal sets (see the module docstring). ``pair_counts`` restores the sets
    played per unordered pair of bots and ``next_index`` the next set number, after a
    restart; ``duplicate=False`` plays one table per set."""

    def __init__(self, form: Form | str, *, partnerships: str = "same", seed: int = 0,
                 duplicate: bool = True, policy: Policy | None = None,
                 pair_counts: Mapping[Pair, int] | None = None, next_index: int = 0) -> None:
        self.form = Form.parse(form)
        self.mixed = check_partnerships(self.form, partnerships)
        self.seed = seed
        self.duplicate = duplicate
        self.policy = policy or Policy()
        self.pair_counts: Counter[Pair] = Counter()  # read-only outside: see add_played
        self._appearances: Counter[str] = Counter()
        self.add_played(pair_counts or {})
        self.next_index = next_index
        self._kept: dict[str, Candidate] = {}  # the last candidate of each bot
        self._pool = _ByRating(())  # those of them with seats enough, by rating
        self._queue: list[tuple[tuple[int, float, int, str], str]] = []  # by need, lazily
        self.generation = 0  # moves each time a whole list replaces the index

    def add_played(self, pair_counts: Mapping[Pair, int]) -> None:
        """Count sets already played (``{(a, b): sets}``), e.g. from the store."""
        for (a, b), sets in pair_counts.items():
            self.pair_counts[pair_key(a, b)] += sets
            self._appearances[a] += sets
            self._appearances[b] += sets

    # ------------------------------------------------------------------ shape

    @functools.cached_property
    def bots_per_set(self) -> int:
        """Distinct bots in one set."""
        if self.form is Form.FOUR_HANDED and not self.mixed:
            return 2
        return self.form.players

    @functools.cached_property
    def seats_per_bot(self) -> int:
        """Seats each bot holds in one game."""
        return self.form.players // self.bots_per_set

    def appearances(self, name: str) -> int:
        """Sets ``name`` has played, counted once per other bot at the table."""
        return self._appearances[name]

    def sets_played(self, name: str) -> int:
        """Deal sets ``name`` has played (each set meets ``bots_per_set - 1`` others, so
        in cutthroat and mixed partnerships a set is more than one appearance)."""
        return self._appearances[name] // (self.bots_per_set - 1)

    # ------------------------------------------------------------------ choice

    def _cost(self, a: Candidate, b: Candidate, share: float) -> float:
        close = ((a.rating - b.rating) / self.policy.closeness_elo) ** 2
        count = self.pair_counts[pair_key(a.name, b.name)]
        return close + self.policy.repeat_weight * count / max(share, 1.0)

    def _need(self, c: Candidate) -> tuple[int, float, int, str]:
        provisional = c.sets < self.policy.provisional_sets
        return (0 if provisional else 1, c.sets if provisional else -c.ci95, c.sets, c.name)

    def _opponents(self, focal: Candidate, pool: _ByRating,
                   others: int) -> list[Candidate] | None:
        """The focal bot and the cheapest opponents it may meet (module docstring, step
        2), or None when too few are left under the repeat cap."""
        share = self.appearances(focal.name) / others
        cap = self.policy.repeat_cap * (share + 1.0)
        counts = self.pair_counts
        chosen = [focal]
        taken = {focal.name}
        while len(chosen) < self.bots_per_set:
            best = pool.cheapest(
                chosen, self.policy.closeness_elo,
                lambda c: (c.name not in taken
                           and counts[pair_key(focal.name, c.name)] < cap),
                lambda c: sum(self._cost(m, c, share) for m in chosen))
            if best is None:
                return None
            chosen.append(best)
            taken.add(best.name)
        return chosen

    def _arrange(self, chosen: list[Candidate]) -> tuple[str, ...]:
        names = [c.name for c in chosen]
        if self.form is Form.FOUR_HANDED and not self.mixed:
            return (names[0], names[1], names[0], names[1])
        if not self.mixed:
            return tuple(names)
        rating = {c.name: c.rating for c in chosen}
        a, rest = names[0], names[1:]
        splits = []
        for partner in rest:
            p = (a, partner)
            q = tuple(n for n in rest if n != partner)
            gap = abs(sum(rating[n] for n in p) - sum(rating[n] for n in q))
            together = self.pair_counts[pair_key(*p)] + self.pair_counts[pair_key(*q)]
            splits.append((gap, together, p, q))
        _, _, p, q = min(splits)
        return (p[0], q[0], p[1], q[1])

    def _deal_set(self, base: tuple[str, ...]) -> DealSet:
        index = self.next_index
        self.next_index += 1
        key = f"ladder/{index:09d}"
        seed = deal_seed(self.seed, index)
        # without duplicate deals, the first table alone (its key keeps the /t0 part)
        games = duplicate_group(key, base, seed, self.form, mixed=self.mixed,
                                duplicate=True)[:None if self.duplicate else 1]
        return DealSet(index=index, key=key, seed=seed, base=base, games=games)

    def candidate(self, name: str, rating: float = 0.0, ci95: float = math.inf,
                  free_seats: int = 1) -> Candidate:
        """``name``'s candidate with its sets played: the one kept from the last call
        when nothing changed, so that the next call passes over it at once."""
        sets = self.sets_played(name)
        kept = self._kept.get(name)
        if kept is not None and kept.free_seats == free_seats and kept.sets == sets \
                and kept.rating == rating and kept.ci95 == ci95:
            return kept
        return Candidate(name, rating, ci95, sets, free_seats)

    def _keep(self, c: Candidate) -> None:
        """Put ``c`` in the index in place of its bot's last candidate."""
        old = self._kept.get(c.name)
        if old is not None:
            self._pool.discard(old)
        self._kept[c.name] = c
        if c.free_seats >= self.seats_per_bot:
            self._pool.add(c)
            heapq.heappush(self._queue, (self._need(c), c.name))

    def _sync(self, bots: Mapping[str, Candidate]) -> None:
        """Bring the index to ``bots``, moving only the bots whose candidate changed."""
        kept = self._kept
        changed = [c for name, c in bots.items() if (old := kept.get(name)) is not c and (
                   old is None or old.free_seats != c.free_seats or old.sets != c.sets
                   or old.rating != c.rating or old.ci95 != c.ci95)]
        self._move(changed, kept.keys() - bots.keys())
        self.generation += 1

    def _move(self, changed: Sequence[Candidate], gone: Collection[str]) -> None:
        """Put ``changed`` in the index in place of their bots' candidates and take the
        ``gone`` bots out, or build the index again when many moved (new ratings move
        every bot)."""
        kept = self._kept
        if len(changed) + len(gone) > len(kept) // 8 + 8:
            for name in gone:
                kept.pop(name, None)
            kept.update((c.name, c) for c in changed)
            self._pool = _ByRating(c for c in kept.values()
                                   if c.free_seats >= self.seats_per_bot)
            self._queue = []
        else:
            for c in changed:
                self._keep(c)
            for name in gone:
                if (old := kept.pop(name, None)) is not None:
                    self._pool.discard(old)
        if not self._queue or len(self._queue) > 2 * len(self._pool) + 64:  # outdated
            self._queue = [(self._need(c), c.name) for c in self._pool]
            heapq.heapify(self._queue)

    def update(self, changed: Iterable[Candidate], gone: Iterable[str] = ()) -> None:
        """Move bots in the index kept since the last call: ``changed`` replace their
        bots' candidates (a new bot joins), the ``gone`` bots leave. For a caller that
        keeps its candidates and knows which of them moved (then :meth:`choose`); it
        must have given the whole list to :meth:`next_sets` first, and again whenever
        :attr:`generation` moved since (someone else gave a list of their own)."""
        moved = {c.name: c for c in changed}
        self._move(list(moved.values()), set(gone) - moved.keys())

    def next_sets(self, connected: Iterable[Candidate], slots: int, *,
                  focus: Container[str] | None = None) -> list[DealSet]:
        """Up to ``slots`` deal sets to start now among the ``connected`` bots (names
        must be distinct). Each set chosen is counted at once and takes its seats from
        the bots' free seats for the rest of this call. With ``focus``, only those bots
        may be the focal bot, so every set seats at least one of them.

        The cost grows with the bots that changed since the last call, not with the
        pairings: the focal bots come from a queue in order of need, and each one's
        opponents from a scan outwards in rating that stops once closeness alone costs
        more than the best opponent found (the repeat term is never negative)."""
        given = list(connected)
        bots = {c.name: c for c in given}
        if len(bots) != len(given):
            raise ConfigError("connected", "bot names must be distinct")
        self._sync(bots)
        return self.choose(slots, focus=focus)

    def choose(self, slots: int, *, focus: Container[str] | None = None) -> list[DealSet]:
        """:meth:`next_sets` among the bots as the index holds them: the last call's
        candidates, as the sets it started and :meth:`update` moved them since."""
        started: list[DealSet] = []
        pool, queue, kept = self._pool, self._queue, self._kept
        if slots <= 0 or len(pool) < self.bots_per_set:
            return started
        others = max(len(kept) - 1, 1)
        tried: set[str] = set()  # focal bots tried in this call
        again: list[tuple[tuple[int, float, int, str], str]] = []  # for the next call
        while len(started) < slots and len(pool) >= self.bots_per_set:
            chosen = None
            while queue and chosen is None:
                key, name = heapq.heappop(queue)
                focal = kept.get(name)
                if focal is None or name not in pool or key != self._need(focal) \
                        or name in tried:
                    continue  # gone, queued again with its new need, or a copy
                tried.add(name)
                again.append((key, name))  # dropped as outdated if it is chosen below
                if focus is not None and name not in focus:
                    continue
                # A focal bot that finds no opponents finds none later in this call
                # either: its counts do not change and the pool only shrinks.
                chosen = self._opponents(focal, pool, others)
            if chosen is None:
                break
            base = self._arrange(chosen)
            deal_set = self._deal_set(base)
            self.add_played(dict.fromkeys(set_pairs(deal_set.base), 1))
            for name, seats in deal_set.seats.items():
                c = kept[name]
                tried.discard(name)
                self._keep(replace(c, sets=c.sets + 1, free_seats=c.free_seats - seats))
            started.append(deal_set)
        for entry in again:
            heapq.heappush(queue, entry)
        return started


class _ByRating:
    """Bots sorted by (rating, name), for the matchmaker's outward scans."""

    def __init__(self, bots: Iterable[Candidate]) -> None:
        # Names are distinct, so comparing these tuples never reaches the candidate.
        self._items = sorted([(c.rating, c.name, c) for c in bots])
        self._names = {name for _, name, _ in self._items}

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[Candidate]:
        return (c for _, _, c in self._items)

    def _position(self, c: Candidate) -> int:
        return bisect.bisect_left(self._items, (c.rating, c.name))

    def add(self, c: Candidate) -> None:
        self._items.insert(self._position(c), (c.rating, c.name, c))
        self._names.add(c.name)

    def discard(self, c: Candidate) -> None:
        if c.name in self._names:
            del self._items[self._position(c)]
            self._names.discard(c.name)

    def cheapest(self, chosen: Sequence[Candidate], closeness: float,
                 allowed: Callable[[Candidate], bool],
                 cost: Callable[[Candidate], float]) -> Candidate | None:
        """The allowed bot of least ``(cost, name)``. ``cost`` is at least the sum over
        ``chosen`` of ``((R_m - R_c) / closeness)²``, which is at least
        ``len(chosen) * ((mean - R_c) / closeness)²``: the scan walks outwards from the
        chosen bots' mean rating and stops where that bound passes the best cost."""
        items = self._items
        mean = sum(m.rating for m in chosen) / len(chosen)
        n = len(chosen)
        right = bisect.bisect_left(items, (mean,))
        left = right - 1
        best: Candidate | None = None
        best_key = (math.inf, "")
        while left >= 0 or right < len(items):
            go_left = right >= len(items) or (
                left >= 0 and mean - items[left][0] <= items[right][0] - mean)
            i = left if go_left else right
            bound = n * ((mean - items[i][0]) / closeness) ** 2
            if bound > best_key[0] * (1.0 + 1e-9) + 1e-12:
                break
            if go_left:
                left -= 1
            else:
                right += 1
            c = items[i][2]
            if allowed(c):
                key = (cost(c), c.name)
                if key < best_key:
                    best, best_key = c, key
        return best
