"""Every exception the harness raises, in one tree::

    HarnessError
    ├── ConfigError (ValueError)          a bad option or configuration key; names it
    │   ├── UnknownKeysError              keys that do not exist, each with a "did you mean"
    │   ├── NotFoundError                 no such bot (or version, or tournament)
    │   └── AlreadyExistsError            a name that is taken
    ├── IllegalActionError (ValueError)   an action outside the legal list; state unchanged
    ├── InconsistentObservation (ValueError) no deal fits an observation (search helpers)
    ├── ReplayError (ValueError)          a game record that does not replay
    ├── ProtocolError                     the gRPC conversation went wrong
    │   ├── HandshakeRefused              version, token or capability refused
    │   ├── RefereeRestarting             the referee stops and will start again
    │   └── ProtocolViolation             wrong request id, malformed or illegal reply
    ├── BotError                          a bot process or connection failed
    │   ├── BotStartupError               never connected / handshake timed out
    │   │   └── StartupFailuresError      one bot failed to start too often: the run stops
    │   ├── BotTimeoutError               no answer within the clock
    │   └── BotTerminatedError            crashed, exited or disconnected
    ├── StoreError                        the results store cannot be used
    ├── SandboxError                      a box cannot be set up for a bot or a build
    │   └── SandboxUnavailable            bubblewrap or the cgroup controllers are missing
    ├── BundleError (ValueError)          a submitted bot bundle is refused: archive,
    │   │                                 manifest (bot.toml) or checksum; says why
    │   └── UploadLimit                   over a limit of the referee: too little free
    │       │                             disk, too many submissions of a bot in a day
    │       └── BundleTooLarge            over the size or file-count cap
    ├── ClusterError                      the Dask cluster cannot be used, or a game failed on it
    │   └── ClusterLost                   the connection to the scheduler was lost
    ├── RatingsProcessLost                the ladder's ratings process exited or broke
    ├── CtlError                          an operator call (ctl) failed; one line
    │   └── SubmitError                   a bundle that cannot be sent
    └── HumanQuit                         the person at a terminal seat left the game

Faults of bots never escape a match as exceptions: the referee turns them into recorded
results (see :mod:`harness.referee.outcome`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any


class HarnessError(Exception):
    """Base of every error raised by euchre-harness."""


class ConfigError(HarnessError, ValueError):
    """A configuration value is invalid. ``option`` names the offending key."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


class NotFoundError(ConfigError):
    """The name given (a bot, a version, a tournament) does not exist."""


class AlreadyExistsError(ConfigError):
    """The name given is taken."""


class UnknownKeysError(ConfigError):
    """Keys that do not exist, all of them at once. ``unknown`` holds ``(prefix, key,
    allowed)``: the table's prefix ("rules.", "bot[1]." or ""), the key, and the keys
    that table has; each key is shown with the closest allowed one, or with the list."""

    def __init__(self, unknown: Sequence[tuple[str, str, Sequence[str]]],
                 noun: str = "key") -> None:
        self.keys = [prefix + key for prefix, key, _ in unknown]
        parts = []
        for prefix, key, allowed in unknown:
            close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.75)
            hint = (f"did you mean {prefix}{close[0]}?" if close
                    else f"{noun}s here: {', '.join(allowed)}")
            parts.append(f"{prefix}{key}: unknown {noun} ({hint})")
        option = self.keys[0]
        super().__init__(option, "; ".join(parts).removeprefix(f"{option}: "))


class IllegalActionError(HarnessError, ValueError):
    """An action that is not among the legal actions was applied. Nothing changed."""

    def __init__(self, action: Any, seat: int | None, state: str, legal: list[Any]) -> None:
        self.action = action
        self.seat = seat
        self.state = state
        self.legal = legal
        legal_text = ", ".join(str(a) for a in legal) or "none"
        super().__init__(
            f"illegal action {action} by seat {seat} in {state}; legal: {legal_text}"
        )


class ReplayError(HarnessError, ValueError):
    """A stored game record cannot be replayed (corrupt, or from other rules)."""


class ProtocolError(HarnessError):
    """The conversation with a bot broke the protocol."""


class HandshakeRefused(ProtocolError):
    """The referee refused a bot's handshake; ``reason`` is the refusal code."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"handshake refused ({reason}): {detail}")


class RefereeRestarting(ProtocolError):
    """The referee said it is stopping and will start again on the same address (a
    standing ladder being restarted): the bot should reconnect, not exit."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the referee is restarting: {reason}")


class ProtocolViolation(ProtocolError):
    """A bot sent something the protocol does not allow at that point."""


class BotError(HarnessError):
    """A bot failed: it did not start, timed out, or went away."""


class BotStartupError(BotError):
    """A local bot process did not connect and complete the handshake in time.
    ``reason`` says why in one line, without the bot's name; ``log_tail`` quotes the end
    of its log (``its log PATH ends: WORDS``, "" if there is none): kept apart, because a
    bot's output may hold anything and only operators may see it."""

    def __init__(self, message: str, *, reason: str | None = None,
                 log_tail: str = "") -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason
        self.log_tail = log_tail


class BotTimeoutError(BotError):
    """A bot did not answer a decision request before its clock ran out."""


class BotTerminatedError(BotError):
    """A bot's process exited or its stream closed."""


class StoreError(HarnessError):
    """The results store is unusable (wrong schema version, corrupt, locked)."""


class SandboxError(HarnessError):
    """A box (see :mod:`harness.sandbox`) cannot be set up: its files are not readable
    by the box's user, its cgroup cannot be made, and so on."""


class SandboxUnavailable(SandboxError):
    """Boxed bots cannot run here: bubblewrap, setpriv or a cgroup controller is missing
    (or not writable). The message is one line saying which; a boxed bot is never run
    without its box."""


class BundleError(HarnessError, ValueError):
    """A submitted bot bundle is refused (a bad archive, a bad or missing bot.toml, a
    checksum that does not match); the message says why, for the bot's owner."""


class UploadLimit(BundleError):
    """A submission is refused for one of the referee's limits rather than for what the
    bundle holds: the free disk it would leave, or a bot's submissions in a day. The
    message says which, and when a limit in time lets the next one through."""


class BundleTooLarge(UploadLimit):
    """A submitted bundle, or what it unpacks to, is over the ladder's caps."""


class ClusterError(HarnessError):
    """The Dask cluster cannot be reached, or a game could not be played on it."""


class ClusterLost(ClusterError):
    """The Dask scheduler was lost during a run."""


class InconsistentObservation(HarnessError, ValueError):
    """No deal is consistent with the observation (it was not produced by these rules)."""


class StartupFailuresError(BotStartupError):
    """A bot failed to start too many times in a row; the run stopped."""


class RatingsProcessLost(HarnessError):
    """The process that fits a large ladder's ratings exited, broke its socket, or
    failed a fit; the ladder starts another (or fits in its own process)."""


class CtlError(HarnessError):
    """An operator call failed; the message is one line for ``ctl`` to print."""


class SubmitError(CtlError):
    """A bundle that cannot be sent; one line."""


class HumanQuit(HarnessError):
    """The person chose to leave the game (``q``, or the end of the input)."""
