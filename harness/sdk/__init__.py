"""The Python bot SDK: subclass :class:`Bot`, override what you need, call :func:`run`.

A bot is asked for one action per decision. Override :meth:`Bot.choose` to handle every
decision kind in one place, or the per-kind methods (:meth:`Bot.bid_round_1`,
:meth:`Bot.play`, ...), which fall back to ``choose``. Each receives the seat's
:class:`~harness.rules.observation.Observation` (the engine's own type: cards, trump,
tricks, scores) and the list of legal actions, and returns one of them. The game's
rules, the bot's seat and the seat names are on the bot itself while a game runs
(:attr:`Bot.rules`, :attr:`Bot.seat`, :attr:`Bot.seat_names`), so ``choose`` reaches
them as ``self.rules``::

    from harness.sdk import Bot, run

    class First(Bot):
        name = "first"
        def choose(self, obs, legal):
            return legal[0]

    if __name__ == "__main__":
        run(First())

Underneath, :meth:`Bot.decide` turns the wire's ``DecisionRequest`` into the Observation
and calls :meth:`Bot.act`, which picks the per-kind method. In-process play
(:mod:`harness.referee.inprocess`) calls ``act`` with the engine's own Observation and
skips the message, unless the bot overrides ``decide`` and not ``act``
(:func:`takes_observations`).

:func:`run` reads the referee's address and the bot's token from the environment
(``EUCHRE_REFEREE_ADDRESS``, ``EUCHRE_BOT_TOKEN``) or from ``--address``/``--token``
(``HOST:PORT``, or ``unix:PATH`` for a Unix socket, as a boxed bot dials its referee),
dials (with TLS when given the CA certificate that signed the referee's certificate:
``--tls-ca FILE`` or ``EUCHRE_TLS_CA``), completes the handshake and plays until the
referee closes the stream or says it shuts down (status 0). It reconnects (with backoff,
for up to 30 s without a Welcome: ``--give-up-after SECONDS`` or
``EUCHRE_GIVE_UP_AFTER``) when the connection drops, when the referee's
``Shutdown`` says it is restarting (a standing ladder), and when a handshake is refused
with ``SHUTTING_DOWN``; it exits with status 2 when the referee refuses the handshake
for any other reason, and with status 1 when it gives up reconnecting. SIGINT (Ctrl-C)
and SIGTERM end it quietly: the stream is closed, and it exits with status 130 or 143
(128 + the signal's number). It takes only ``--address``, ``--token``, ``--name``,
``--tls-ca`` and ``--give-up-after`` from the command line and leaves every other
argument alone, so a bot may have flags of its own (parse them with
``parse_known_args``, or pass ``run`` an explicit ``argv``).

What a decision shows, in three cases that surprise authors:

* ``DEALER_DISCARD``: ``obs.hand`` is the five cards the dealer was dealt, *without* the
  upcard (``obs.upcard``), and the legal actions discard one of those five. The upcard
  joins the hand after the discard; it can never be discarded itself.
* Under ``dealer_must_take`` (and when the dealer orders up the upcard itself) there is
  no ``DEALER_PICKUP`` decision: the dealer takes the upcard without being asked and is
  asked only for its discard. A pickup event (``took`` true) still says so.
* ``obs.public_actions`` holds every bid, pickup, going-alone decision and play that all
  players see, and never a discard, not even the bot's own: those are in
  ``obs.discards``.

The package is the bot's end of the wire: beside this SDK, :mod:`harness.sdk.human` is a
human seat in the terminal (``euchre-harness play``) and :mod:`harness.sdk.search` holds
helpers for search bots (sampled hidden worlds, rollouts, determinized search).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import grpc

from harness.errors import HandshakeRefused, RefereeRestarting
from harness.protocol import (
    ConnectRequest,
    ConnectResponse,
    DecisionRequest,
    GameEvent,
    GameOver,
    RefereeServiceStub,
    convert,
    messages,
    rpb,
)
from harness.protocol.tls import TLS_CA_ENV, ca_file, dial
from harness.rules.actions import Action
from harness.rules.cards import DeckKind
from harness.rules.config import Form, RulesConfig
from harness.rules.hand import Phase
from harness.rules.observation import Observation

log = logging.getLogger("euchre.sdk")


class Bot:
    """Base class for Python bots. Only :meth:`choose` must be overridden."""

    name: str = "bot"
    version: str = "0.1"
    forms: Sequence[Form] = ()  # supported forms; empty = all
    decks: Sequence[DeckKind] = ()  # supported decks; empty = all
    # Set by the SDK when a game starts, before on_game_start is called; they hold until
    # the next game starts (None / -1 / () before the first one).
    rules: RulesConfig | None = None
    seat: int = -1
    seat_names: Sequence[str] = ()

    # ------------------------------------------------------------------ life cycle
    def on_game_start(self, rules: RulesConfig, seat: int, names: Sequence[str]) -> None:
        """A game begins: the rules, this bot's seat and every seat's entrant name."""

    def on_event(self, event: GameEvent) -> None:
        """A public event (or a private one for this seat) as it happens."""

    def on_game_over(self, message: GameOver) -> None:
        """The game ended (``message.your_place``, ``message.termination``...)."""

    # ------------------------------------------------------------------ decisions
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        raise NotImplementedError

    def name_trump(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def bid_round_1(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def dealer_pickup(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def dealer_discard(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def bid_round_2(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def go_alone(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def dummy_discard(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def play(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.choose(obs, legal)

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        """The action for a request off the wire: its Observation, given to :meth:`act`.
        A bot may override this to work on the message itself (a bot that needs no
        observation can skip decoding it); if it also overrides :meth:`act` to the same
        effect, in-process play still hands it the engine's Observation directly (see
        :func:`takes_observations`)."""
        return self.act(convert.observation_from_pb(request.observation,
                                                    request.legal_actions))

    def act(self, obs: Observation) -> Action:
        """The action for one decision, from the seat's Observation (its legal actions
        included): the per-kind method of its phase, which falls back to :meth:`choose`."""
        handler: Callable[[Observation, Sequence[Action]], Action] = getattr(
            self, _HANDLERS[obs.phase])
        return handler(obs, list(obs.legal_actions))


# The Bot method that takes each decision kind.
_HANDLERS: dict[Phase, str] = {
    Phase.NAME_TRUMP: "name_trump",
    Phase.BID_ROUND_1: "bid_round_1",
    Phase.DEALER_PICKUP: "dealer_pickup",
    Phase.DEALER_DISCARD: "dealer_discard",
    Phase.BID_ROUND_2: "bid_round_2",
    Phase.GO_ALONE: "go_alone",
    Phase.DUMMY_DISCARD: "dummy_discard",
    Phase.PLAY: "play",
}


def takes_observations(bot: Bot) -> bool:
    """Whether ``bot`` decides from the Observation alone (:meth:`Bot.act`): true unless it
    overrides :meth:`Bot.decide` and not :meth:`Bot.act`. In-process play then gives it
    the engine's Observation, the very one the wire message would have carried, without
    building and decoding the message."""
    cls = type(bot)
    return cls.decide is Bot.decide or cls.act is not Bot.act


def listens_to_events(bot: Bot) -> bool:
    """Whether ``bot`` overrides :meth:`Bot.on_event` (in-process play builds no event
    messages for a bot that ignores them)."""
    return type(bot).on_event is not Bot.on_event


async def play_session(bot: Bot, address: str, token: str,
                       welcomed: list[bool] | None = None, *, tls_ca: Path | None = None) -> str:
    """One connection (TLS trusting ``tls_ca`` if given): handshake, then play until the
    stream ends. Returns why it ended. Raises HandshakeRefused, RefereeRestarting (the
    referee stops and will start again), or grpc.aio.AioRpcError if the connection
    fails."""
    async with dial(address, tls_ca) as channel:
        call = RefereeServiceStub(channel).Connect()
        await call.write(messages.hello(bot.name, bot.version, token, forms=bot.forms,
                                        decks=bot.decks, bundles=True))
        handler = MessageHandler(bot, welcomed)
        while True:
            raw = await call.read()
            if raw is grpc.aio.EOF:
                return "the referee closed the stream"
            msg: ConnectResponse = raw  # type: ignore[assignment]
            if msg.WhichOneof("payload") == "bundle":
                replies = [handler.handle(m) for m in msg.bundle.messages]
            else:
                replies = [handler.handle(msg)]
            for reply in replies:
                if reply is not None:
                    await call.write(reply)
            if handler.ended is not None:
                return handler.ended


class MessageHandler:
    """Dispatches one referee message to the bot; returns the reply to send, if any."""

    def __init__(self, bot: Bot, welcomed: list[bool] | None) -> None:
        self.bot = bot
        self.welcomed = welcomed
        self.rules: RulesConfig | None = None
        self.ended: str | None = None

    def handle(self, msg: ConnectResponse) -> ConnectRequest | None:
        bot = self.bot
        which = msg.WhichOneof("payload")
        if which == "decision_request":
            req = msg.decision_request
            action = bot.decide(req, self.rules)
            return messages.decision_reply(req.request_id, action)
        if which == "game_event":
            bot.on_event(msg.game_event)
        elif which == "game_start":
            gs = msg.game_start
            self.rules = convert.rules_from_pb(gs.rules)
            bot.rules, bot.seat, bot.seat_names = self.rules, gs.seat, tuple(gs.seat_names)
            bot.on_game_start(self.rules, gs.seat, list(gs.seat_names))
        elif which == "game_over":
            bot.on_game_over(msg.game_over)
        elif which == "welcome" and self.welcomed is not None:
            self.welcomed.append(True)
        elif which == "refusal":
            raise HandshakeRefused(messages.refusal_reason_name(msg.refusal.reason),
                                   msg.refusal.detail)
        elif which == "shutdown":
            if msg.shutdown.restarting:
                raise RefereeRestarting(msg.shutdown.reason)
            self.ended = f"shutdown: {msg.shutdown.reason}"
        elif which == "fault":
            log.warning("fault: %s", msg.fault.detail)
        return None


GIVE_UP_ENV = "EUCHRE_GIVE_UP_AFTER"
"""The environment variable for ``--give-up-after`` (seconds), read by every sample bot."""
DEFAULT_GIVE_UP_S = 30.0


async def run_async(bot: Bot, address: str, token: str, *, reconnect: bool = True,
                    give_up_after: float = DEFAULT_GIVE_UP_S, tls_ca: Path | None = None) -> int:
    """Play sessions until the referee ends one normally (0), refuses us (2), or cannot
    be reached for ``give_up_after`` seconds (1). A dropped connection, a referee that
    says it is restarting and a ``SHUTTING_DOWN`` refusal are retried with exponential
    backoff; a session that was welcomed starts a fresh ``give_up_after`` budget."""
    delay = 0.1
    waited = 0.0
    while True:
        welcomed: list[bool] = []
        try:
            why = await play_session(bot, address, token, welcomed, tls_ca=tls_ca)
            log.info("%s", why)
            return 0
        except HandshakeRefused as e:
            if e.reason != _SHUTTING_DOWN:
                print(f"{bot.name}: {e}", file=sys.stderr)
                return 2
            failure = str(e)  # a referee on its way down: it may be back soon
        except RefereeRestarting as e:
            log.warning("%s: %s; reconnecting", bot.name, e)
            failure = str(e)
        except grpc.aio.AioRpcError as e:
            if e.code() in _REFUSED:
                print(f"{bot.name}: refused: {e.details()}", file=sys.stderr)
                return 2
            failure = f"connection failed: {e.code().name}: {e.details()}"
        if welcomed:  # the connection worked, then ended: a fresh retry budget
            delay, waited = 0.1, 0.0
        if not reconnect or waited >= give_up_after:
            print(f"{bot.name}: {failure}", file=sys.stderr)
            return 1
        await asyncio.sleep(delay)
        waited += delay
        delay = min(delay * 2, 2.0)


_SHUTTING_DOWN = messages.refusal_reason_name(rpb.REFUSAL_REASON_SHUTTING_DOWN)


_REFUSED = frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION,
                      grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.INVALID_ARGUMENT})


def run(bot: Bot, argv: Sequence[str] | None = None) -> None:
    """Take ``--address``, ``--token``, ``--name`` and ``--tls-ca`` from ``argv`` (default: the
    command line; defaults from the environment) and play. Every other argument is left
    to the bot: ``run`` neither rejects nor consumes it."""
    ap = argparse.ArgumentParser(description=f"{bot.name}: a Euchre bot", add_help=False)
    ap.add_argument("--address", default=os.environ.get("EUCHRE_REFEREE_ADDRESS"),
                    help="the referee's host:port or unix:PATH (default: "
                         "$EUCHRE_REFEREE_ADDRESS)")
    ap.add_argument("--token", default=os.environ.get("EUCHRE_BOT_TOKEN", ""),
                    help="the seat token for Hello (default: $EUCHRE_BOT_TOKEN)")
    ap.add_argument("--name", default=os.environ.get("EUCHRE_BOT_NAME"),
                    help="the bot name for Hello (default: $EUCHRE_BOT_NAME, else the "
                         "bot's own)")
    ap.add_argument("--tls-ca", default=None, metavar="FILE",
                    help="dial with TLS, trusting this CA certificate (PEM) (default: "
                         f"${TLS_CA_ENV}; unset or empty: plaintext)")
    ap.add_argument("--give-up-after", metavar="SECONDS",
                    default=os.environ.get(GIVE_UP_ENV) or DEFAULT_GIVE_UP_S,
                    help="how long to keep reconnecting to a referee that cannot be reached "
                         f"(default: ${GIVE_UP_ENV}, else {DEFAULT_GIVE_UP_S:g})")
    args, _ = ap.parse_known_args(argv)
    if not args.address:
        ap.error("no referee address: pass --address or set EUCHRE_REFEREE_ADDRESS")
    try:
        give_up = float(args.give_up_after)
    except ValueError:
        ap.error(f"--give-up-after (or ${GIVE_UP_ENV}) takes a number of seconds; got "
                 f"{args.give_up_after!r}")
    if not give_up > 0:
        ap.error(f"--give-up-after (or ${GIVE_UP_ENV}) must be more than 0; got {give_up:g}")
    if args.name:
        bot.name = args.name
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    tls_ca = ca_file(args.tls_ca)
    if tls_ca is not None and not tls_ca.is_file():
        ap.error(f"no CA file {tls_ca} (--tls-ca or {TLS_CA_ENV})")
    sys.exit(asyncio.run(_until_signalled(run_async(bot, args.address, args.token,
                                                     give_up_after=give_up,
                                                     tls_ca=tls_ca))))


async def _until_signalled(play: Coroutine[Any, Any, int]) -> int:
    """Run ``play``; SIGINT or SIGTERM cancels it (which closes its stream and channel)
    and makes the status 128 + the signal's number, with no traceback."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(play)
    caught: list[int] = []

    def stop(signum: int) -> None:
        caught.append(signum)
        task.cancel()

    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if not caught:
            raise
        return 128 + caught[0]
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
