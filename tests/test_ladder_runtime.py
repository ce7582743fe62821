"""The running ladder over real gRPC: a registered bot dials in with its ladder token and
plays duplicate sets against a house bot process; bad and rotated tokens are refused;
a restart rebuilds ratings and cuts short the sets left in progress."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from configs import RANDOM, Bot, toml_config
from waiting import wait_until

from harness.cli.ladder import settings_from
from harness.errors import ConfigError, HandshakeRefused
from harness.ladder.matchmaking import Candidate, Matchmaker, SetStatus
from harness.ladder.quarantine import QuarantinePolicy
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.sets import SetLog, StoredSet
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.session import Slot, SlotRegistry
from harness.results.elo import Ratings
from harness.rules.config import Form, RulesConfig
from harness.sdk import play_session
from harness.storage.ladder import LadderStore
from harness.storage.results import ResultsStore
from harness.tournament.config import load_config
from sample_bots.random_bot import RandomBot

REPO = Path(__file__).resolve().parent.parent
HOUSE = Entrant("house-random", BotCommand((sys.executable, "-m", "sample_bots.random_bot"),
                                           cwd=str(REPO)))


def _settings(tmp_path: Path) -> LadderSettings:
    return LadderSettings(store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
                          rules=RulesConfig(target=3), time_control=TimeControl.parse("5+30"),
                          concurrency=1, house=((HOUSE, 2),), poll_seconds=0.2)


async def _stop(runtime: LadderRuntime, stop: asyncio.Event, ladder: asyncio.Future[None],
                bots: Sequence[asyncio.Future[str]]) -> list[StoredSet]:
    """Stop the ladder, then its bots; the sets it stored."""
    stop.set()
    await asyncio.wait_for(ladder, 60.0)
    for bot in bots:
        bot.cancel()
    await asyncio.gather(*bots, return_exceptions=True)
    sets = runtime.sets.sets()
    runtime.close()
    return sets


def test_a_registered_bot_dials_in_with_its_token_and_gets_rated(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with LadderStore(settings.store) as store:
        registry = Registry(store)
        _, token = registry.register("visitor", "ann", concurrency=2)
        _, retired = registry.register("gone", "bob")
        registry.register("house-random", "house")
        house_token = registry.rotate("house-random")  # never a way into its seats
        registry.retire("gone")

    async def scenario() -> tuple[list[StoredSet], Ratings | None, list[str]]:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: address, "the address")
        refused = []
        for bad in ("eh_0123456789abcdef_" + "x" * 43, retired.reveal(),
                    house_token.reveal()):
            with pytest.raises(HandshakeRefused) as info:
                await play_session(RandomBot(0), address[0], bad)
            refused.append(info.value.reason)
        bots = [asyncio.ensure_future(play_session(RandomBot(i), address[0], token.reveal()))
                for i in range(2)]
        await wait_until(lambda: any(s.status is SetStatus.COMPLETE
                                 for s in runtime.sets.sets()))
        with pytest.raises(HandshakeRefused) as info:  # both seats of the token are live
            await play_session(RandomBot(9), address[0], token.reveal())
        refused.append(info.value.reason)
        with LadderStore(settings.store) as late_store:  # registered while it runs
            _, late = Registry(late_store).register("late", "cat")
        latecomer = asyncio.ensure_future(play_session(RandomBot(5), address[0],
                                                       late.reveal()))
        await wait_until(lambda: runtime.arena is not None and "late" in runtime.arena.pool.entrants
                     and runtime.arena.pool.instances("late")[0].slot.live)
        bots.append(latecomer)
        stop.set()
        await asyncio.wait_for(ladder, 60.0)
        for bot in bots:
            bot.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
        sets, ratings = runtime.sets.sets(), runtime.ratings.current
        runtime.close()
        return sets, ratings, refused

    sets, ratings, refused = asyncio.run(scenario())
    assert refused == ["REFUSAL_REASON_BAD_TOKEN"] * 3 + ["REFUSAL_REASON_TOKEN_IN_USE"]
    complete = [s for s in sets if s.status is SetStatus.COMPLETE]
    assert set(complete[0].base) == {"visitor", "house-random"}
    assert ratings is not None and {"visitor", "house-random"} <= set(ratings.elo)
    assert token.reveal().split("_", 2)[2].encode() not in settings.store.read_bytes()


def test_a_restart_cuts_short_unfinished_sets_and_restores_the_counts(
        tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with LadderStore(settings.store) as store:
        registry = Registry(store)
        registry.register("a", "ann")
        registry.register("b", "bob")
        mm = Matchmaker("four-handed")
        (deal_set,) = mm.next_sets([Candidate("a", free_seats=2),
                                    Candidate("b", free_seats=2)], 1)
        SetLog(store).start(deal_set)
    stop = asyncio.Event()
    stop.set()  # start up, then stop at once
    runtime = LadderRuntime(settings, stop=stop)
    asyncio.run(runtime.run())
    try:
        (stored,) = runtime.sets.sets()
        assert stored.status is SetStatus.CUT_SHORT and "stopped" in (stored.reason or "")
        assert runtime.matchmaker.pair_counts[("a", "b")] == 1
        assert runtime.matchmaker.next_index == 1
        assert runtime.registry.get("house-random").owner == "house"
    finally:
        runtime.close()


def test_a_bot_that_keeps_faulting_is_benched_and_gets_no_more_games(
        tmp_path: Path) -> None:
    faulty = Entrant("faulty", BotCommand((sys.executable, "-m", "sample_bots.faulty_bot",
                                           "--mode", "illegal"), cwd=str(REPO)))
    heuristic = Entrant("heuristic", BotCommand(
        (sys.executable, "-m", "sample_bots.heuristic_bot"), cwd=str(REPO)))
    settings = dataclasses.replace(
        _settings(tmp_path), house=((HOUSE, 2), (heuristic, 2), (faulty, 2)),
        quarantine=QuarantinePolicy(bench_faults=2, bench_window=3, bench_seconds=3600.0))

    async def scenario() -> tuple[list[StoredSet], int, str]:
        stop = asyncio.Event()
        runtime = LadderRuntime(settings, stop=stop)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: runtime.quarantine.benched("faulty") is not None)
        benched_after = len(runtime.sets.sets())
        await wait_until(lambda: len(runtime.sets.sets()) >= benched_after + 3)
        stop.set()
        await asyncio.wait_for(ladder, 60.0)
        bench = runtime.quarantine.benched("faulty")
        assert bench is not None
        sets = runtime.sets.sets()
        runtime.close()
        return sets, benched_after, bench.reason

    sets, benched_after, reason = asyncio.run(scenario())
    assert reason.startswith("2 faulted games in the last") and "illegal_action" in reason
    assert all("faulty" not in s.base for s in sets[benched_after:])
    assert any("faulty" in s.base for s in sets[:benched_after])


def test_the_referee_asks_the_resolver_only_for_tokens_it_did_not_issue() -> None:
    asked: list[str] = []
    tokens = SlotRegistry()
    issued = tokens.add("house", 0, "issued-token")
    spare = tokens.add("spare", 0, "other-token")
    tokens.remove(spare)

    def resolver(token: str) -> Slot | None:
        asked.append(token)
        return spare if token == "ladder-token" else None

    tokens.resolver = resolver
    assert tokens.lookup("issued-token") is issued
    assert tokens.lookup("ladder-token") is spare
    assert tokens.lookup("unknown") is None
    assert asked == ["ladder-token", "unknown"]


def test_a_disconnect_cuts_the_set_short_and_the_bot_is_matched_again_on_return(
        tmp_path: Path) -> None:
    settings = dataclasses.replace(_settings(tmp_path), rules=RulesConfig())  # longer games
    with LadderStore(settings.store) as store:
        _, token = Registry(store).register("visitor", "ann", concurrency=2)

    def in_first_table(runtime: LadderRuntime) -> bool:
        arena = runtime.arena
        return arena is not None and "visitor" in arena.pool.entrants and any(
            i.slot.game_id.endswith("/t0") for i in arena.pool.instances("visitor"))

    async def scenario() -> list[StoredSet]:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: address, "the address")

        def connect() -> list[asyncio.Future[str]]:
            return [asyncio.ensure_future(play_session(RandomBot(i), address[0],
                                                       token.reveal())) for i in range(2)]

        def state() -> str:
            arena = runtime.arena
            seats = [(i.slot.game_id, i.busy, i.slot.live) for name in ("visitor", "house-random")
                     for i in (arena.pool.instances(name) if arena else [])]
            return f"sets {runtime.sets.sets()}, seats {seats}"

        bots = connect()
        await wait_until(lambda: in_first_table(runtime), what="the ladder", detail=state)
        for bot in bots:  # the bot goes away in the middle of the set's first game
            bot.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
        await wait_until(lambda: any(s.status is SetStatus.CUT_SHORT
                                 for s in runtime.sets.sets()), what="the ladder", detail=state)
        cut = len(runtime.sets.sets())
        bots = connect()
        await wait_until(lambda: any(s.status is SetStatus.COMPLETE and "visitor" in s.base
                                 for s in runtime.sets.sets()[cut:]),
                         what="the ladder", detail=state)
        return await _stop(runtime, stop, ladder, bots)

    sets = asyncio.run(scenario())
    cut_short = [s for s in sets if s.status is SetStatus.CUT_SHORT]
    assert "visitor" in cut_short[0].base and cut_short[0].reason == "visitor: disconnect"
    assert all("stopped" in (s.reason or "") for s in cut_short[1:])  # stopping the ladder


def test_a_ladder_without_house_bots_pairs_the_registered_bots_that_dial_in(
        tmp_path: Path) -> None:
    path = tmp_path / "ladder.toml"
    path.write_text(toml_config("open", output=tmp_path / "out", concurrency=1, tc="5+30",
                                rules={"target": 3}, bots=()))
    with pytest.raises(ConfigError, match="at least 2 bots"):
        load_config(path)  # as a tournament: too few bots
    with pytest.raises(ConfigError, match="needs 2 house bots") as err:
        settings_from(load_config(path, {"cluster.workers": "2"}, for_ladder=True),
                      host="127.0.0.1", port=0)
    assert err.value.option == "cluster.workers"
    settings = dataclasses.replace(
        settings_from(load_config(path, for_ladder=True), host="127.0.0.1", port=0),
        poll_seconds=0.2)
    assert settings.house == ()
    with LadderStore(settings.store) as store:
        registry = Registry(store)
        tokens = [registry.register(name, "ann", concurrency=2)[1] for name in ("p", "q")]

    async def scenario() -> list[StoredSet]:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: address, "the address")
        bots = [asyncio.ensure_future(play_session(RandomBot(i), address[0], token.reveal()))
                for i, token in enumerate(t for t in tokens for _ in range(2))]
        await wait_until(lambda: any(s.status is SetStatus.COMPLETE for s in runtime.sets.sets()))
        return await _stop(runtime, stop, ladder, bots)

    complete = [s for s in asyncio.run(scenario()) if s.status is SetStatus.COMPLETE]
    assert complete and all(set(s.base) == {"p", "q"} for s in complete)


def test_with_house_vs_house_off_every_set_seats_a_visitor(tmp_path: Path) -> None:
    """``house_vs_house = false``: the house bots play only the bots that dial in, so a
    ladder nobody has dialed into is idle; a cluster (house-only sets) is refused with it."""
    path = tmp_path / "ladder.toml"
    path.write_text(toml_config("quiet", output=tmp_path / "out", concurrency=2, tc="5+30",
                                extra="[ladder]\nhouse_vs_house = false", rules={"target": 3},
                                bots=(Bot("house-a", RANDOM), Bot("house-b", RANDOM))))
    with pytest.raises(ConfigError, match="nothing to do") as err:
        settings_from(load_config(path, {"cluster.workers": "2"}, for_ladder=True),
                      host="127.0.0.1", port=0)
    assert err.value.option == "ladder.house_vs_house"
    settings = dataclasses.replace(
        settings_from(load_config(path, for_ladder=True), host="127.0.0.1", port=0),
        poll_seconds=0.05)
    assert not settings.house_vs_house and len(settings.house) == 2
    with LadderStore(settings.store) as store:
        _, token = Registry(store).register("visitor", "ann", concurrency=2)

    async def scenario() -> list[StoredSet]:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: address, "the address")
        # The ladder matches at once when it listens and again every poll (0.05 s) while
        # the visitor dials in: house-a and house-b would meet before the visitor could.
        bots = [asyncio.ensure_future(play_session(RandomBot(i), address[0], token.reveal()))
                for i in range(2)]
        await wait_until(lambda: sum(s.status is SetStatus.COMPLETE
                                 for s in runtime.sets.sets()) >= 2)
        return await _stop(runtime, stop, ladder, bots)

    sets = asyncio.run(scenario())
    assert len([s for s in sets if s.status is SetStatus.COMPLETE]) >= 2
    assert all("visitor" in s.base for s in sets), [s.base for s in sets]


def test_the_runtime_counts_a_bots_sets_in_deal_sets_in_cutthroat(tmp_path: Path) -> None:
    """Provisional status ("fewer than provisional_sets deal sets") reads the sets each
    bot played; in cutthroat a set meets two others, and it counts once."""
    house = tuple((Entrant(f"house-{c}", BotCommand(
        (sys.executable, "-m", "sample_bots.random_bot"), cwd=str(REPO))), 1) for c in "abc")
    settings = LadderSettings(store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
                              rules=RulesConfig(form=Form.CUTTHROAT, target=3),
                              time_control=TimeControl.parse("5+30"), concurrency=1,
                              house=house, poll_seconds=0.05)

    async def scenario() -> tuple[list[StoredSet], dict[str, int]]:
        stop = asyncio.Event()
        runtime = LadderRuntime(settings, stop=stop)
        ladder = asyncio.ensure_future(runtime.run())
        await wait_until(lambda: sum(s.status is SetStatus.COMPLETE
                                 for s in runtime.sets.sets()) >= 2)
        assert runtime.arena is not None
        seen = {c.name: c.sets for c in runtime._candidates(runtime.arena)}
        sets = runtime.sets.sets()
        stop.set()
        await asyncio.wait_for(ladder, 60.0)
        runtime.close()
        return sets, seen

    sets, seen = asyncio.run(scenario())
    # A set is counted when it is chosen and stored when its task starts: with one set at
    # a time, the count is the sets stored, or one more. (Counted by appearances, each
    # set would count twice.)
    assert set(seen) == {"house-a", "house-b", "house-c"}
    for name, counted in seen.items():
        stored = sum(1 for s in sets if name in s.base)
        assert stored >= 2 and stored <= counted <= stored + 1, (name, counted, sets)


def test_a_bot_benched_in_the_middle_of_a_set_plays_the_rest_of_it(tmp_path: Path) -> None:
    # A bench keeps a bot out of new sets; the set in play goes on. Were it cut short, a
    # bot could fault on purpose elsewhere, once it has won a set's first table, to be
    # benched before the mirror table that gives its opponent the good cards.
    faulty = Entrant("faulty", BotCommand((sys.executable, "-m", "sample_bots.faulty_bot",
                                           "--mode", "illegal"), cwd=str(REPO)))
    settings = dataclasses.replace(
        _settings(tmp_path), house=((HOUSE, 2), (faulty, 2)),
        quarantine=QuarantinePolicy(bench_faults=1, bench_window=3, bench_seconds=3600.0))

    async def scenario() -> list[StoredSet]:
        stop = asyncio.Event()
        runtime = LadderRuntime(settings, stop=stop)
        ladder = asyncio.ensure_future(runtime.run())

        def first_set_over() -> bool:
            mine = [s for s in runtime.sets.sets() if "faulty" in s.base]
            return bool(mine) and mine[0].status is not SetStatus.IN_PROGRESS

        await wait_until(lambda: runtime.quarantine.benched("faulty") is not None)
        await wait_until(first_set_over)
        stop.set()
        await asyncio.wait_for(ladder, 60.0)
        sets = runtime.sets.sets()
        runtime.close()
        return sets

    sets = asyncio.run(scenario())
    first = next(s for s in sets if "faulty" in s.base)
    assert (first.status, first.reason) == (SetStatus.COMPLETE, None), first
    with ResultsStore(settings.store) as results:
        tables = [g for g in results.games() if g.game_key.startswith(first.key)]
    assert len(tables) == 2  # its first table benched it; it played the second
    assert all(f.bot == "faulty" for g in tables for f in g.faults)
