"""The ladder's rating fit in a process of its own.

A large ladder's fit costs tens of milliseconds of CPU, in many short numpy steps. On a
thread of the referee's process each step waits for Python's interpreter lock while the
referee plays games, and a refit that needs 20 ms of CPU took over 100 ms on the clock.
In a process of its own it runs beside the referee instead of taking turns with it.

:class:`FitProcess` starts ``python -m harness.ladder.fit_process`` with one end of a
socket pair, sends it a whole :class:`~harness.ladder.fitting.RatingFit` to start from,
then at each fit the results counted since the last one. The child adds them to its copy,
fits, and answers with the ratings, the drift, the games at its last exact refit and the
CPU seconds the fit took. Messages are pickles, each behind its length; both ends are
this project's own code on one machine, and nothing a bot sends reaches them but as
counted results.

The child's numerical libraries use one thread (unless the environment says otherwise),
so that a full refit never takes every core from the games. The child runs in a session
of its own, so a Ctrl-C at the terminal reaches only the ladder, which closes it; if the
ladder dies, the child reads the end of its socket and exits. A child that dies, or takes
longer than ``ANSWER_TIMEOUT_S`` to answer a fit, is reported as
:class:`~harness.errors.RatingsProcessLost`; the caller starts another from its own copy
of the results (:class:`~harness.ladder.ratings.LadderRatings` keeps one).
"""

from __future__ import annotations

import contextlib
import pickle
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from typing import Any

from harness import importable_env
from harness.errors import RatingsProcessLost
from harness.ladder.fitting import RatingFit, with_diagonal
from harness.results.elo import Ratings, Result

__all__ = ["FitAnswer", "FitProcess"]

_LENGTH = struct.Struct("!Q")
ANSWER_TIMEOUT_S = 300.0
"""How long a fit may take before its process counts as lost (a full refit at 1,000
bots takes about a second)."""


@dataclass(frozen=True)
class FitAnswer:
    """One fit's answer: the ratings, :attr:`RatingFit.drift`, the games at the last
    exact refit, and the CPU seconds the fit took in the child."""

    ratings: Ratings
    drift: float
    exact_games: int
    cpu: float


class _Channel:
    """Messages over a socket: pickles, each behind its length. A read takes what has
    arrived (what it took past the message is kept for the next), then waits for the
    rest of the message in one call: each call lets go of the interpreter's lock, and on
    a busy ladder taking it back can cost milliseconds."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()

    def send(self, message: object) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(_LENGTH.pack(len(data)) + data)

    def receive(self) -> Any:
        buffer = self._buffer
        while True:
            wanted, flags = 1 << 20, 0  # what has arrived, up to 1 MiB
            if len(buffer) >= _LENGTH.size:
                (size,) = _LENGTH.unpack_from(buffer)
                end = _LENGTH.size + size
                if len(buffer) >= end:
                    message = pickle.loads(memoryview(buffer)[_LENGTH.size:end])
                    del buffer[:end]
                    return message
                wanted, flags = end - len(buffer), socket.MSG_WAITALL  # the rest, at once
            chunk = self.sock.recv(wanted, flags)
            if not chunk:
                raise EOFError("the other end closed the socket")
            buffer += chunk

    def close(self) -> None:
        self.sock.close()


class FitProcess:
    """A child process that holds a copy of a :class:`RatingFit` and fits it."""

    def __init__(self, start_from: RatingFit) -> None:
        ours, theirs = socket.socketpair()
        env = importable_env()
        for threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(threads, "1")  # one core for the fit; the others play games
        try:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "harness.ladder.fit_process", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env,
                start_new_session=True)
        finally:
            theirs.close()
        self._channel = _Channel(ours)
        try:
            self._channel.send(start_from)
        except OSError as error:
            self.close()
            raise RatingsProcessLost(f"the ratings' process did not start: {error}") from error

    @property
    def pid(self) -> int:
        return self._child.pid

    def fit(self, new: list[Result], games: int, ours: RatingFit) -> FitAnswer:
        """Count ``new`` and fit, ``games`` games in all; ``ours`` is the caller's copy of
        the results, ``new`` included (it gives the opponents). Raises
        RatingsProcessLost."""
        plain = [(r.side_a, r.side_b, r.score_a, r.weight) for r in new]
        try:
            self._channel.sock.settimeout(ANSWER_TIMEOUT_S)
            self._channel.send((plain, games))
            answer = self._channel.receive()
        except (OSError, EOFError, pickle.UnpicklingError) as error:
            raise RatingsProcessLost(f"the ratings' process {self._ended(error)}") from error
        if isinstance(answer, str):
            raise RatingsProcessLost(f"the ratings' fit failed in its process: {answer}")
        ratings, variances, drift, exact_games, cpu = answer
        # The opponents are left out of the answer: ``ours`` knows them.
        ratings = replace(ratings, opponents=ours.opponents(ratings.players))
        return FitAnswer(with_diagonal(ratings, variances), drift, exact_games, cpu)

    def _ended(self, error: BaseException) -> str:
        """How the child ended, for a message: its exit code or signal; one that is
        still there is killed."""
        try:
            code = self._child.wait(1.0)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()
            return f"stopped answering ({error}) and was killed"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
        return f"exited with code {code}"

    def close(self, timeout: float = 5.0) -> None:
        """Close the socket (the child exits when it reads its end) and wait for the
        child, killing it after ``timeout`` seconds. Idempotent."""
        with contextlib.suppress(OSError):
            self._channel.close()
        try:
            self._child.wait(timeout)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()


def _serve(channel: _Channel) -> None:
    """The child: receive the fit to start from, then answer each fit until the end."""
    state: RatingFit = channel.receive()
    while True:
        try:
            new, games = channel.receive()
        except EOFError:
            return
        cpu = time.process_time()
        try:
            for side_a, side_b, score_a, weight in new:
                state.add(Result(side_a, side_b, score_a, weight))
            ratings, variances = state.fit_parts(games)
        except Exception as error:  # told to the ladder, which fits in its own process
            channel.send(f"{type(error).__name__}: {error}")
            continue
        channel.send((replace(ratings, opponents={}), variances, state.drift,
                      state.exact_games, time.process_time() - cpu))


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the ladder decides when to stop
    with socket.socket(fileno=int(argv[0])) as sock, \
            contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the ladder left
        _serve(_Channel(sock))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
