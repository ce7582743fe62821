"""Python bots played in this process: the same engine, seating, messages and records
as over gRPC, without the wire. For fast experiments, never for competitions.

An :class:`InProcessSession` stands where a bot's ``Connect`` stream would: the
:class:`~harness.referee.match.GameRunner` posts it the very messages it would send over
gRPC (built by the same conversion in :mod:`harness.protocol`), and it hands them to the
bot through the SDK's own :class:`~harness.sdk.MessageHandler`, as ``run`` does on the
other end of a stream. A bot that decides from the Observation
(:func:`~harness.sdk.takes_observations`: all the sample bots) is handed the engine's
Observation itself at each decision, the one the ``DecisionRequest`` would carry and the
SDK would rebuild from it, and no event messages unless it reads them
(:func:`~harness.sdk.listens_to_events`): the conversions both ways are skipped, not
what the bot learns. Either way, for the same seed a bot makes identical decisions; the
game record is the runner's, so it is stored, reported and rated like any other.

What is *not* the same, and why it is no substitute for the referee: the bot's code runs
in the harness's own process and is trusted (it could read anything in memory), there is
no clock (a slow bot is never timed out; decision times are still recorded), and a bot
that raises an exception forfeits the game as a crash.

:class:`InProcessArena` plays games like :class:`~harness.referee.arena.Arena` (the
tournament runner uses either). Bots come from factories (``name -> callable returning a
Bot``), or from a bot's command ``python -m MODULE ARGS...`` when ``MODULE`` allows
in-process play by defining ``in_process_bot(argv, env) -> Bot`` (the sample bots do).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence

from harness.errors import BotTerminatedError, ConfigError
from harness.protocol import DecisionReply, messages
from harness.protocol.messages import Outgoing
from harness.referee.match import GameRunner
from harness.referee.outcome import FaultPolicy, GameResult, TimeControl
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.rules.observation import Observation
from harness.sdk import Bot, MessageHandler, listens_to_events, takes_observations

log = logging.getLogger("euchre.inprocess")

BotFactory = Callable[[], Bot]
FACTORY_NAME = "in_process_bot"


YIELD_S = 0.05
"""How often, at most, in-process play lets the event loop run (signals, other tasks)."""


class InProcessSession:
    """One seat's bot in this process, with the interface the game runner uses."""

    bundles = True  # queued messages are delivered with the next decision, as in a Bundle

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.handler = MessageHandler(bot, None)
        # A bot that decides from the Observation (most do) is handed the engine's own,
        # the one its DecisionRequest would carry, and no event messages unless it
        # reads them: the wire's conversions both ways are skipped, not what it sees.
        self.observes = takes_observations(bot)
        self.wants_events = listens_to_events(bot)
        self.violated = False
        self.crashed = False
        self._outbox: list[Outgoing] = []
        self._request_id = 0
        self._yielded = -math.inf  # when the loop last had a turn: the first decision gives it one

    def new_request_id(self) -> int:
        self._request_id += 1
        return self._request_id

    def post(self, message: Outgoing) -> None:
        self._outbox.append(message)

    async def flush(self, last: Outgoing | None = None, *,
                    timeout: float = 0.0) -> None:  # delivered at once: no timeout
        queued, self._outbox = self._outbox, []
        if last is not None:
            queued.append(last)
        for message in queued:
            self._deliver(message)

    def _deliver(self, message: Outgoing) -> DecisionReply | None:
        if self.crashed:
            raise BotTerminatedError(f"{self.bot.name}: crashed earlier")
        try:
            reply = self.handler.handle(messages.decode(message))
        except Exception as e:
            raise self._crash(e) from e
        return reply.decision_reply if reply is not None else None

    def _crash(self, error: Exception) -> BotTerminatedError:
        """The bot's own code failed: a crash, charged to it."""
        self.crashed = True
        log.warning("%s raised %r", self.bot.name, error)
        return BotTerminatedError(f"{self.bot.name} raised {error!r}")

    async def _turn(self) -> None:
        """Give the loop a turn every :data:`YIELD_S`: the bot's decisions run on it, and
        without a turn a signal (a Ctrl-C) would wait for the whole run."""
        now = time.monotonic()
        if now - self._yielded >= YIELD_S:
            self._yielded = now
            await asyncio.sleep(0)

    async def decide(self, request_id: int, request: Outgoing,
                     timeout: float) -> DecisionReply:
        """Deliver what is queued, then the request; the bot's reply. No clock."""
        await self._turn()
        await self.flush()
        reply = self._deliver(request)
        assert reply is not None
        return reply

    async def act(self, obs: Observation) -> Action:
        """Deliver what is queued, then hand the bot ``obs`` (:meth:`Bot.act`); its action.
        No clock. Anything but an Action back is a crash, as it is over the wire (where
        the SDK cannot encode it)."""
        await self._turn()
        await self.flush()
        if self.crashed:
            raise BotTerminatedError(f"{self.bot.name}: crashed earlier")
        try:
            action = self.bot.act(obs)
            if not isinstance(action, Action):
                raise TypeError(f"the bot chose {action!r}, not an Action")
        except Exception as e:
            raise self._crash(e) from e
        return action


def command_factory(command: Sequence[str], env: Mapping[str, str] | None = None,
                    *, name: str = "bot") -> BotFactory:
    """The factory for a bot run as ``python -m MODULE ARGS...`` whose module defines
    ``in_process_bot(argv, env)``. Raises ConfigError for any other command."""
    argv = list(command)
    if "-m" not in argv[:2] or argv.index("-m") + 1 >= len(argv):
        raise ConfigError(f"{name}.command", "in-process play needs a Python bot started "
                                             "as 'python -m MODULE'")
    at = argv.index("-m")
    module_name, args = argv[at + 1], argv[at + 2:]
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"{name}.command", f"cannot import {module_name}: {e}") from e
    make = getattr(module, FACTORY_NAME, None)
    if not callable(make):
        raise ConfigError(f"{name}.command", f"{module_name} does not allow in-process "
                                             f"play (it defines no {FACTORY_NAME}())")
    environment = dict(env or {})
    return lambda: make(args, environment)


class InProcessArena:
    """Plays games between in-process bots; the same ``play`` as the gRPC arena."""

    def __init__(self, factories: Mapping[str, BotFactory] | None = None) -> None:
        self.factories: dict[str, BotFactory] = dict(factories or {})
        self._idle: dict[str, list[Bot]] = {}
        self.stop_games = asyncio.Event()

    def add(self, name: str, factory: BotFactory) -> None:
        self.factories[name] = factory

    def log_head(self, name: str, lines: int = 3) -> tuple[None, str]:
        return None, ""  # no bot processes, so no logs

    def _acquire(self, name: str) -> Bot:
        idle = self._idle.setdefault(name, [])
        if idle:
            return idle.pop()
        try:
            factory = self.factories[name]
        except KeyError:
            raise ConfigError("bot", f"no in-process bot named {name!r}") from None
        return factory()

    async def play(self, game_id: str, config: RulesConfig, seed: int, seats: Sequence[str],
                   *, time_control: TimeControl | None = None,
                   policy: FaultPolicy | None = None) -> GameResult:
        """One game, its record built by the same runner as over gRPC."""
        bots = [self._acquire(name) for name in seats]
        sessions = [InProcessSession(bot) for bot in bots]

        async def crashed(seat: int) -> str | None:
            return "" if sessions[seat].crashed else None  # "": the exception's own detail

        runner = GameRunner(game_id, config, seed, sessions, seats,
                            time_control=time_control, policy=policy, stop=self.stop_games,
                            crashed=crashed)
        try:
            return await runner.play()
        finally:
            for name, bot, session in zip(seats, bots, sessions, strict=True):
                if not session.crashed:
                    self._idle[name].append(bot)


def play_many(factories: Mapping[str, BotFactory], seats: Sequence[str],
              config: RulesConfig, seeds: Sequence[int], *,
              rotate: bool = True) -> list[GameResult]:
    """Play one game per seed with the named bots in ``seats`` (rotated one seat per
    game when ``rotate``), in this process; the results in order. To store and rate
    them, run a tournament in process instead (``euchre-harness run --in-process``)."""
    arena = InProcessArena(factories)

    async def main() -> list[GameResult]:
        out = []
        for i, seed in enumerate(seeds):
            k = i % len(seats) if rotate else 0
            order = [*seats[k:], *seats[:k]]
            out.append(await arena.play(f"inprocess-{i}", config, seed, order))
        return out

    started = time.perf_counter()
    results = asyncio.run(main())
    log.info("%d games in %.2fs", len(results), time.perf_counter() - started)
    return results
