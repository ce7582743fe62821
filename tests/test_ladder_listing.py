"""The ladder's candidates and parked seats kept by change (harness/ladder/listing.py,
harness/ladder/seats.py) equal what a full pass over every bot and seat finds: after
random sequences of streams opening and closing, games lending and returning seats,
benches, new ratings, registrations and retirements, sets started; and over real gRPC,
with bots dialing in and leaving a running ladder."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import cast

import pytest
from waiting import wait_until

from harness.ladder.events import LadderEvents
from harness.ladder.listing import Estimates, Listing
from harness.ladder.matchmaking import Candidate, Matchmaker
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.seats import Seats
from harness.ladder.settings import LadderSettings
from harness.ladder.uploads import Uploads
from harness.referee.arena import Arena
from harness.referee.outcome import TimeControl
from harness.referee.pool import Instance
from harness.referee.session import Session, Slot
from harness.rules.config import RulesConfig
from harness.sdk import play_session
from harness.storage.ladder import LadderStore
from sample_bots.random_bot import RandomBot


class _Stream:
    """What a slot asks of its session: whether the stream has closed."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()


def _by_name(candidates: list[Candidate]) -> dict[str, Candidate]:
    return {c.name: c for c in candidates}


class _World:
    """A ladder's registry, pool, seats and listing, driven by hand the way the referee
    and the runtime drive them (the referee's events, the loop's syncs)."""

    def __init__(self, tmp_path: Path, rng: random.Random) -> None:
        self.rng = rng
        self.store = LadderStore(tmp_path / "ladder.sqlite")
        self.registry = Registry(self.store)
        self.arena = Arena(log_dir=tmp_path / "logs")
        self.seats = Seats(self.registry, Uploads(self.store), RulesConfig(), (),
                           LadderEvents(), lambda: None)
        self.listing = Listing(self.registry, self.seats)
        self.matchmaker = Matchmaker("four-handed")
        self.whole = Matchmaker("four-handed")  # given every candidate each time
        self.benched: set[str] = set()
        self.lent: list[Instance] = []
        self.handshaking: dict[Slot, _Stream] = {}
        self.estimates: Estimates = {}
        self.bots = 0
        for _ in range(6):
            self.register()

    def register(self) -> None:
        self.registry.register(f"bot{self.bots:02d}", "tests", concurrency=2)
        self.bots += 1
        self.rate()

    def rate(self) -> None:
        """New ratings: a new mapping, as the runtime's estimates per ratings version."""
        names = [e.name for e in self.registry.entrants(include_retired=True)]
        self.estimates = {n: (self.rng.gauss(0, 200), self.rng.choice([30.0, 1e9]))
                          for n in names}

    def slots(self) -> list[Slot]:
        pool = self.arena.pool
        return [i.slot for name in pool.entrants for i in pool.instances(name)]

    def open(self) -> None:
        """A stream claims a free slot; its handshake ends now or in a later step."""
        free = [s for s in self.slots() if not s.live]
        if not free:
            return
        slot = self.rng.choice(free)
        stream = _Stream()
        slot.claim(cast(Session, stream))  # the slot tells its watchers
        self.handshaking[slot] = stream

    def welcome(self) -> None:
        """A handshake in flight ends: welcomed, or the stream is gone first."""
        if not self.handshaking:
            return
        slot = self.rng.choice(sorted(self.handshaking, key=lambda s: (s.name, s.instance)))
        stream = self.handshaking.pop(slot)
        if self.rng.random() < 0.8:
            slot.attach(cast(Session, stream))
        else:  # closed, as Session.close does it
            stream.closed.set()
            slot.changed()

    def close(self) -> None:
        live = [s for s in self.slots() if s.live and s not in self.handshaking]
        if not live:
            return
        slot = self.rng.choice(live)
        session = slot.session
        assert session is not None
        session.closed.set()  # closed, as Session.close does it
        slot.changed()
        slot.detach(session)

    def candidates(self) -> list[Candidate]:
        return self.listing.candidates(self.arena, self.matchmaker, self.estimates,
                                       self.benched)

    async def lend(self) -> None:
        """A game takes both seats of a bot the listing shows with two free ones."""
        able = [c.name for c in self.candidates() if c.free_seats >= 2]
        if able:
            self.lent += await self.arena.pool.acquire([self.rng.choice(able)] * 2)

    async def give_back(self) -> None:
        if self.lent:
            inst = self.lent.pop(self.rng.randrange(len(self.lent)))
            await self.arena.pool.release(inst)

    def bench(self) -> None:
        name = self.rng.choice([e.name for e in self.registry.entrants()])
        self.benched ^= {name}

    def retire(self) -> None:
        active = self.registry.entrants()
        if len(active) > 3:
            self.registry.retire(self.rng.choice(active).name)
            self.rate()  # the runtime's estimates are rebuilt when the bots table moves

    def match(self) -> None:
        """The runtime's match, telling the matchmaker only what moved: the sets it
        starts are those a matchmaker given every bot's candidate starts."""
        every = self.listing.full(self.arena, self.whole, self.estimates, self.benched)
        want = self.whole.next_sets(every, 2)
        got = self.listing.next_sets(self.arena, self.matchmaker, self.estimates,
                                     self.benched, 2)
        assert [s.base for s in got] == [s.base for s in want]

    def elsewhere(self) -> None:
        """Someone else gives the matchmaker a list of their own (the house bots' sets
        on a cluster); the listing must give it the whole list again."""
        self.matchmaker.next_sets(self.candidates()[:1], 0)

    def sync(self) -> None:
        """The loop's sync (every change since the last), or a set's before a table."""
        if self.rng.random() < 0.3 and self.arena.pool.entrants:
            self.seats.sync(self.arena, only=self.rng.sample(sorted(self.arena.pool.entrants), 2))
        else:
            self.seats.sync(self.arena)
            self.check_parked()

    def check(self) -> None:
        kept = _by_name(self.candidates())
        assert kept == _by_name(self.listing.full(self.arena, self.matchmaker, self.estimates,
                                                  self.benched))

    def check_parked(self) -> None:
        """After a full sync, as a pass over every seat leaves them: a seat not in a
        game is held (parked) exactly when it has no stream."""
        pool = self.arena.pool
        assert {e.name for e in self.registry.entrants()} <= set(pool.entrants)
        for name in pool.entrants:
            for inst in pool.instances(name):
                if inst not in self.lent:
                    assert inst.busy == (not inst.slot.live), (name, inst.slot.instance)


@pytest.mark.parametrize("seed", range(8))
def test_the_kept_candidates_equal_a_full_pass_after_random_changes(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    world = _World(tmp_path, rng)

    async def scenario() -> None:
        world.seats.sync(world.arena)
        world.check()
        for _ in range(300):
            step = rng.choices(
                ["open", "welcome", "close", "lend", "give_back", "bench", "rate",
                 "register", "retire", "match", "elsewhere", "sync"],
                weights=[10, 10, 2, 2, 4, 1, 1, 1, 1, 6, 2, 6])[0]
            if step in ("lend", "give_back"):
                await getattr(world, step)()
            else:
                getattr(world, step)()
            world.check()
        world.seats.sync(world.arena)
        world.check_parked()
        world.check()

    asyncio.run(scenario())
    world.store.close()


def test_a_bot_seen_once_is_not_built_again_until_it_changes(tmp_path: Path) -> None:
    """The listing builds again only the bots that changed: a bot whose stream opened is
    a new object; the others are the very objects of the last call."""
    world = _World(tmp_path, random.Random(0))

    async def scenario() -> None:
        world.seats.sync(world.arena)
        for slot in world.slots():
            stream = _Stream()
            slot.claim(cast(Session, stream))
            slot.attach(cast(Session, stream))
        world.seats.sync(world.arena)
        first = _by_name(world.candidates())
        assert len(first) == 6 and all(c.free_seats == 2 for c in first.values())
        await world.arena.pool.acquire(["bot03", "bot03"])
        second = _by_name(world.candidates())
        assert second["bot03"].free_seats == 0
        assert all(second[n] is first[n] for n in first if n != "bot03")
        world.check()

    asyncio.run(scenario())
    world.store.close()


def test_over_grpc_bots_that_come_and_go_are_listed_as_a_full_pass_finds_them(
        tmp_path: Path) -> None:
    """A running ladder of registered bots only, while real bots dial in with their
    tokens (two streams each) and hang up, and it plays sets among them: the kept
    candidates come to equal a full pass, listing the bots with a stream."""
    settings = LadderSettings(store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
                              rules=RulesConfig(target=3), concurrency=1,
                              time_control=TimeControl.parse("5+30"), poll_seconds=0.2)
    with LadderStore(settings.store) as store:
        registry = Registry(store)
        tokens = [registry.register(f"remote{i}", "tests", concurrency=2)[1].reveal()
                  for i in range(3)]

    async def scenario() -> None:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: address, "the address")

        def agree() -> bool:
            arena = runtime.arena
            assert arena is not None
            kept = _by_name(runtime._candidates(arena))
            full = _by_name(runtime.listing.full(arena, runtime.matchmaker,
                                                 runtime._estimates(), set()))
            return kept == full

        def listed() -> set[str]:
            assert runtime.arena is not None
            return {c.name for c in runtime._candidates(runtime.arena)}

        async def settled(names: set[str]) -> None:
            await wait_until(lambda: agree() and listed() == names,
                             f"{names} listed as a full pass lists them",
                             detail=lambda: f"listed: {listed()}")

        await settled(set())
        streams = [asyncio.ensure_future(play_session(RandomBot(i), address[0], token))
                   for i, token in enumerate(tokens[:2] * 2)]
        await settled({"remote0", "remote1"})
        for stream in streams[:3]:  # both of remote0's, one of remote1's
            stream.cancel()
        await asyncio.gather(*streams[:3], return_exceptions=True)
        await settled({"remote1"})
        stop.set()
        await asyncio.wait_for(ladder, 60.0)
        streams[3].cancel()
        await asyncio.gather(streams[3], return_exceptions=True)
        runtime.close()

    asyncio.run(scenario())
