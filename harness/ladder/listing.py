"""The connected bots as the matchmaker's candidates, kept between calls.

The running ladder asks for its candidates each time it may start a set. A candidate is
a connected, active (registered, not retired) bot with its free seats, its sets played
and its rating (:class:`~harness.ladder.matchmaking.Candidate`). Building all of them
means asking every seat of every bot whether its stream is up; on a ladder of a
thousand bots that pass was most of what a set cost the referee. :class:`Listing`
builds a bot's candidate again only when something it is made of may have moved:

* its seats: a stream opened or closed, an instance lent to a game or given back, an
  instance parked or unparked (:meth:`harness.ladder.seats.Seats.changed`, fed by the
  pool's events);
* its sets played: a set was started with it (:meth:`Listing.touch`);
* the bench: it was benched or its bench ended;
* the registry: it was registered or retired (the bots table's change count moved);
* the ratings: every bot, once per new set of estimates.

The matchmaker keeps an index of the candidates between calls too
(:class:`~harness.ladder.matchmaking.Matchmaker`); :meth:`Listing.next_sets` hands it
only the candidates that moved (:meth:`~harness.ladder.matchmaking.Matchmaker.update`),
so choosing a set costs no pass over the bots either. :meth:`Listing.full` builds every
candidate from scratch, the reference the kept list must always equal.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Mapping

from harness.ladder.matchmaking import Candidate, DealSet, Matchmaker
from harness.ladder.registry import Registry
from harness.ladder.seats import Seats
from harness.referee.arena import Arena

__all__ = ["Listing", "Registered"]

Estimates = Mapping[str, tuple[float, float]]


class Listing:
    """The candidates of the bots connected to a ladder's referee (module docstring)."""

    def __init__(self, registry: Registry, seats: Seats) -> None:
        self.registry = registry
        self.seats = seats
        self._listed: dict[str, Candidate] = {}
        self._touched: set[str] = set()
        self._estimates: Estimates | None = None
        self._benched: frozenset[str] = frozenset()
        self._active: frozenset[str] = frozenset()
        self._registered: int | None = None  # the bots table's change count of _active
        self._unsent: set[str] = set()  # bots built again since the matchmaker was told
        self._told: tuple[Matchmaker, int] | None = None  # it, and its index's generation

    def touch(self, names: Iterable[str]) -> None:
        """Build these bots' candidates again at the next call (a set started with
        them: their sets played moved)."""
        self._touched.update(names)

    def candidates(self, arena: Arena, matchmaker: Matchmaker, estimates: Estimates,
                   benched: Collection[str]) -> list[Candidate]:
        """Every connected active bot's candidate, building again only those that may
        have changed since the last call. ``matchmaker`` counts the sets played (always
        the same one); ``estimates``: every registered bot's rating and interval (a new
        mapping for new ratings); ``benched``: the bots on a bench, which get no free
        seats."""
        changed = self.seats.changed(arena)
        changed |= self._touched
        self._touched = set()
        bench = frozenset(benched)
        changed |= bench ^ self._benched
        self._benched = bench
        registered = self.registry.changes()
        if registered != self._registered:  # read before the rows: a later write is seen
            active = frozenset(e.name for e in self.registry.entrants())
            changed |= active ^ self._active
            self._active, self._registered = active, registered
        if estimates is not self._estimates:
            self._estimates = estimates
            changed |= self._active
            changed |= self._listed.keys()
        for name in changed:
            c = (self._build(arena, matchmaker, name, estimates, bench)
                 if name in self._active else None)
            if c is None:
                self._listed.pop(name, None)
            else:
                self._listed[name] = c
        self._unsent |= changed
        return list(self._listed.values())

    def next_sets(self, arena: Arena, matchmaker: Matchmaker, estimates: Estimates,
                  benched: Collection[str], slots: int, *,
                  focus: Container[str] | None = None) -> list[DealSet]:
        """:meth:`Matchmaker.next_sets` among :meth:`candidates`, telling the matchmaker
        only the candidates that moved since it was last told (the whole list the first
        time, or when someone else gave it a list of their own since). The bots of the
        sets it starts are built again at the next call."""
        self.candidates(arena, matchmaker, estimates, benched)
        if self._told == (matchmaker, matchmaker.generation):
            listed = self._listed
            matchmaker.update((listed[n] for n in self._unsent if n in listed),
                              (n for n in self._unsent if n not in listed))
            started = matchmaker.choose(slots, focus=focus)
        else:
            started = matchmaker.next_sets(self._listed.values(), slots, focus=focus)
            self._told = (matchmaker, matchmaker.generation)
        self._unsent = set()
        for deal_set in started:
            self.touch(deal_set.bots)  # their sets played moved
        return started

    def full(self, arena: Arena, matchmaker: Matchmaker, estimates: Estimates,
             benched: Collection[str], only: Container[str] | None = None) -> list[Candidate]:
        """The same candidates built from scratch: every active bot (of ``only``), every
        seat (what the kept list must equal; it changes nothing kept)."""
        out = []
        for entrant in self.registry.entrants():
            if only is None or entrant.name in only:
                c = self._build(arena, matchmaker, entrant.name, estimates, benched)
                if c is not None:
                    out.append(c)
        return out

    @staticmethod
    def _build(arena: Arena, matchmaker: Matchmaker, name: str, estimates: Estimates,
               benched: Collection[str]) -> Candidate | None:
        """Active bot ``name``'s candidate now, or None when it is not connected."""
        if name not in arena.pool.entrants or name not in estimates:
            return None  # not in the pool yet
        live, ready = Seats.count(arena, name)
        if not live:
            return None  # not connected
        rating, ci95 = estimates[name]
        return matchmaker.candidate(name, rating, ci95, 0 if name in benched else ready)


class Registered(Container[str]):
    """Every bot but the house bots: the focus of a matchmaker whose sets must each seat
    a registered (or hosted) bot."""

    def __init__(self, house: Collection[str]) -> None:
        self.house = house

    def __contains__(self, name: object) -> bool:
        return name not in self.house
