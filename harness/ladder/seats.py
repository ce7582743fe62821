"""The registered bots' seats in the ladder's referee pool.

Tokens. The referee's token registry (:class:`harness.referee.session.SlotRegistry`) knows
only the tokens it issued. The ladder sets its ``resolver`` to :meth:`Seats.resolve`: for
any other token it asks :meth:`harness.ladder.registry.Registry.authenticate` (hash
lookup, constant-time compare) and hands the stream one of the bot's seat instances that
has no live stream, preferring one that is not in a game. A bot with all its instances
connected is refused (``TOKEN_IN_USE``). Each registered bot is a remote entrant of the
arena's pool with one instance per seat of its concurrency; the pool's own tokens for
them are random and never leave the process.

Availability. Only instances with a live stream (house bots: always) and not in a game
count as free seats. An instance whose bot is not connected is *parked* (marked busy in
the pool) so that the pool never lends it to a game; it is unparked once its bot
connects.

Changes, not passes. The seats watch the pool (:meth:`harness.referee.pool.BotPool.watch`):
a stream opened or closed, an instance lent or given back. :meth:`Seats.sync` parks or
unparks the instances of the bots named since the last sync, and looks for newly
registered bots only when the bots table changed; :meth:`Seats.changed` hands the names
whose seats moved to the one who lists the candidates (:mod:`harness.ladder.listing`).
On a ladder of a thousand bots a set then costs work for its own bots and those that
came or went, not a pass over every seat.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable, Collection

from harness.ladder.events import LadderEvents
from harness.ladder.matchmaking import DealSet
from harness.ladder.registry import Registry
from harness.ladder.uploads import Uploads
from harness.protocol import ladder as lp
from harness.referee.arena import Arena
from harness.referee.pool import BotPool, Entrant, Instance
from harness.referee.session import Session, Slot
from harness.rules.config import RulesConfig

__all__ = ["Seats"]


class Seats:
    """The pool's seats of the registered bots of a running ladder (see the module
    docstring). ``house``: the house bots' names (their seats are their processes',
    never a stream's); ``wake`` is called when a bot dials in."""

    def __init__(self, registry: Registry, uploads: Uploads, rules: RulesConfig,
                 house: Collection[str], events: LadderEvents,
                 wake: Callable[[], None]) -> None:
        self.registry = registry
        self.uploads = uploads
        self.rules = rules
        self.house = frozenset(house)
        self.events = events
        self.wake = wake
        self.arena: Arena | None = None  # while the ladder serves
        self._parked: set[Instance] = set()
        self._watched: BotPool | None = None  # the pool whose changes come here
        self._unsynced: set[str] = set()  # bots to park or unpark at the next sync
        self._unlisted: set[str] = set()  # bots whose seats moved since changed()
        self._registered: int | None = None  # the bots table's change count last seen
        # id(slot) -> when the resolver handed it out, and the session it had then
        self._claimed: dict[int, tuple[float, Session | None]] = {}

    def _watch(self, pool: BotPool) -> None:
        """Follow ``pool``'s changes (once per pool; everything in it counts as changed)."""
        if self._watched is not pool:
            self._watched = pool
            pool.watch(self._changed)
            self._unsynced.update(pool.entrants)
            self._unlisted.update(pool.entrants)

    def _changed(self, name: str) -> None:
        self._unsynced.add(name)
        self._unlisted.add(name)

    def changed(self, arena: Arena) -> set[str]:
        """The bots whose seats may have moved (a stream, a game, parking) since the last
        call, every bot of the pool at the first."""
        self._watch(arena.pool)
        names, self._unlisted = self._unlisted, set()
        return names

    def sync(self, arena: Arena, only: Collection[str] | None = None) -> None:
        """Add newly registered bots to the pool; park instances without a stream. With
        ``only``, just park or unpark those bots' instances (a set's, before a table);
        without, those of the bots whose seats changed since the last sync."""
        pool = arena.pool
        self._watch(pool)
        if only is None:
            changes = self.registry.changes()
            if changes != self._registered:  # read before the rows: a later write is seen
                self._add_registered(pool)
                self._registered = changes
            only, self._unsynced = self._unsynced, set()
        for name in only:
            member = pool.entrants.get(name)
            if member is None or not member.remote:
                continue
            for inst in pool.instances(name):
                if inst in self._parked and inst.slot.live:
                    self._parked.discard(inst)
                    inst.busy = False
                    self._unlisted.add(name)
                    self.events.publish(lp.WatchLadderResponse(
                        bot_connected=lp.BotConnected(name=name)))
                elif not inst.busy and not inst.slot.live:
                    self._parked.add(inst)
                    inst.busy = True
                    self._unlisted.add(name)

    def _add_registered(self, pool: BotPool) -> None:
        """Add the registered bots the pool does not hold yet, as remote entrants."""
        hosted = self.uploads.states()  # seated by the hosting once built, never remote
        for entrant in self.registry.entrants():
            if entrant.name not in pool.entrants and entrant.name not in self.house \
                    and entrant.name not in hosted:
                placeholders = tuple("ladder-seat-" + secrets.token_hex(16)
                                     for _ in range(entrant.concurrency))
                pool.add(Entrant(entrant.name, None, placeholders), entrant.concurrency,
                         self.rules)

    def resolve(self, token: str) -> Slot | None:
        """The referee's resolver: a seat instance of the bot this token belongs to."""
        arena = self.arena
        entrant = self.registry.authenticate(token)
        if arena is None or entrant is None or entrant.name in self.house:
            return None  # a house bot's seats are its own processes', never a stream's
        if entrant.name not in arena.pool.entrants:  # registered since the last round
            self.sync(arena)
        member = arena.pool.entrants.get(entrant.name)
        if member is None or not member.remote:
            return None  # so are a hosted bot's (its boxes')
        # A slot handed to a stream stays claimed until that stream's handshake is done
        # (it is live then) or has had its time: two streams dialing at once must not
        # get the same slot.
        now = time.monotonic()
        window = arena.server.handshake_timeout

        def claimed(slot: Slot) -> bool:
            when, session = self._claimed.get(id(slot), (-math.inf, None))
            return slot.session is session and now < when + window

        slots = [inst.slot for inst in arena.pool.instances(entrant.name)]
        free = sorted((s for s in slots if not s.live and not claimed(s)),
                      key=lambda s: bool(s.game_id))
        self.wake()
        if not free:  # every seat is live (TOKEN_IN_USE) or being connected (refused)
            return next((s for s in slots if s.live), None)
        self._claimed[id(free[0])] = (now, free[0].session)
        return free[0]

    @staticmethod
    def count(arena: Arena, name: str) -> tuple[int, int]:
        """``name``'s seats with a stream (every seat of a house or hosted bot, which the
        pool starts on demand) and how many of them are free and ready for a game."""
        remote = arena.pool.entrants[name].remote
        live = ready = 0
        for inst in arena.pool.instances(name):
            if not remote or inst.slot.ready:  # ready: live and welcomed
                live += 1
                ready += not inst.busy
            elif inst.slot.live:
                live += 1
        return live, ready

    @staticmethod
    def left(arena: Arena, deal_set: DealSet) -> list[str]:
        """The bots of ``deal_set`` that dial in without streams enough for its seats:
        they left after the set began (house and hosted bots are started on demand by
        the pool, never gone)."""
        return [b for b, seats in deal_set.seats.items() if arena.pool.entrants[b].remote
                and sum(1 for i in arena.pool.instances(b) if i.slot.live) < seats]
