"""Where a decision's wall time goes in the referee, for ``bench/referee.py --timeline``.

While installed (:meth:`Timeline.installed`), wrappers around the game runner's and the
session's methods note the clock (``time.perf_counter``) at each step of every decision,
and :meth:`Timeline.parts` cuts the wall time of a match of back-to-back games (K = 1)
into parts that add up to it, per decision:

* ``request``: from the game asking a seat to the session starting the decision (the
  seat's Observation and the request's bytes, the clock's bookkeeping);
* ``write``: from there until gRPC has taken the request (the awaited write of the
  request, or of the Bundle that carries it);
* ``to reply``: from the end of that write until the session's reader task has read the
  reply (the bot's turn: the bytes both ways, the bot's process, gRPC on both sides);
* ``hand-off``: from the reply read to the game's task holding it (one turn of the event
  loop);
* ``checks``: from there to the end of the ask (the reply's checks, the time charged);
* ``between``: from the end of one ask to the next in the same game (the action applied,
  the events queued for the seats);
* ``per game``: the rest, spread over the decisions (a game's start and end, its
  GameOver written to every seat, the arena between games).

``write`` plus ``to reply`` is the round trip as the referee sees it, to compare with the
raw ping-pong's; the other parts are the referee's own work between round trips. The
wrappers cost a few microseconds a decision, which fall in the parts they bound.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from harness.referee.match import GameRunner
from harness.referee.session import Session

PARTS = ("request", "write", "to reply", "hand-off", "checks", "between", "per game")


@dataclass(frozen=True)
class Part:
    """One part of a decision's wall time, in microseconds: its mean over every
    decision, and its median where it has one sample a decision or a gap."""

    mean_us: float
    median_us: float | None = None


class Timeline:
    """The clock's readings at each step of every decision of the games played while
    installed (one game at a time: the steps of two games at once would interleave)."""

    def __init__(self) -> None:
        self.asks: list[tuple[float, float]] = []  # GameRunner._ask: start, end
        self.decides: list[tuple[float, float]] = []  # Session.decide: start, end
        self.sends: list[tuple[float, float]] = []  # Session.send: start, end
        self.replies: list[float] = []  # Session.on_reply: the reply read
        self.games: list[tuple[int, int]] = []  # each game's first ask, and the one after
        self.wall_s = 0.0

    @contextmanager
    def installed(self) -> Iterator[Timeline]:
        """Wrap the methods for the ``with`` block's games; its wall time is the match's."""
        targets = ((GameRunner, "play"), (GameRunner, "_ask"), (Session, "decide"),
                   (Session, "send"), (Session, "on_reply"))
        originals = [getattr(cls, name) for cls, name in targets]
        play, ask, decide, send, on_reply = originals
        clock = time.perf_counter

        async def timed_play(runner: GameRunner) -> Any:
            first = len(self.asks)
            result = await play(runner)
            self.games.append((first, len(self.asks)))
            return result

        async def timed_ask(runner: GameRunner, seat: int) -> Any:
            start = clock()
            result = await ask(runner, seat)
            self.asks.append((start, clock()))
            return result

        async def timed_decide(session: Session, *args: Any, **kwargs: Any) -> Any:
            start = clock()
            result = await decide(session, *args, **kwargs)
            self.decides.append((start, clock()))
            return result

        async def timed_send(session: Session, message: Any) -> None:
            start = clock()
            await send(session, message)
            self.sends.append((start, clock()))

        def timed_on_reply(session: Session, reply: Any) -> None:
            self.replies.append(clock())
            on_reply(session, reply)

        wrappers = (timed_play, timed_ask, timed_decide, timed_send, timed_on_reply)
        for (cls, name), wrapper in zip(targets, wrappers, strict=True):
            setattr(cls, name, wrapper)
        start = clock()
        try:
            yield self
        finally:
            self.wall_s = clock() - start
            for (cls, name), original in zip(targets, originals, strict=True):
                setattr(cls, name, original)

    def parts(self) -> dict[str, Part]:
        """Each part's mean and median in microseconds per decision (no median for
        ``per game``), and ``total``: the match's wall time per decision (the means add up
        to it). Raises ValueError unless every decision was asked over gRPC and answered."""
        n = len(self.asks)
        if not n or len(self.decides) != n or len(self.replies) != n:
            raise ValueError(f"an incomplete timeline ({n} asks, {len(self.decides)} "
                             f"decisions, {len(self.replies)} replies): every decision "
                             f"must be asked of a bot over gRPC and answered")
        samples: dict[str, list[float]] = {part: [] for part in PARTS[:-1]}
        send_ends = iter(self.sends)
        last_send: tuple[float, float] | None = next(send_ends, None)
        for (ask0, ask1), (dec0, dec1), reply in zip(self.asks, self.decides, self.replies,
                                                     strict=True):
            written = None  # the end of the last write that began within this decision
            while last_send is not None and last_send[0] <= dec1:
                if last_send[0] >= dec0:
                    written = last_send[1]
                last_send = next(send_ends, None)
            if written is None:
                raise ValueError("a decision with no write of its request")
            samples["request"].append(dec0 - ask0)
            samples["write"].append(written - dec0)
            samples["to reply"].append(reply - written)
            samples["hand-off"].append(dec1 - reply)
            samples["checks"].append(ask1 - dec1)
        for first, after in self.games:
            samples["between"].extend(self.asks[i + 1][0] - self.asks[i][1]
                                      for i in range(first, after - 1))
        # Means per decision: 'between' has a sample fewer per game, so it is spread too.
        out = {part: Part(sum(s) / n * 1e6, statistics.median(s) * 1e6 if s else None)
               for part, s in samples.items()}
        accounted = sum(sum(s) for s in samples.values())
        out["per game"] = Part((self.wall_s - accounted) / n * 1e6)
        out["total"] = Part(self.wall_s / n * 1e6)
        return out


def print_parts(parts: dict[str, Part], raw_rt_median_us: float,
                raw_rt_mean_us: float) -> None:
    """The parts as a table, with the raw ping-pong's round trip of the same run."""
    print("\nwhere a decision's wall time goes (K=1, one more match; us per decision; the "
          "means add up to the wall time, 'between' and 'per game' spread over every "
          "decision)")
    print(f"{'part':<32} {'mean':>7} {'median':>7}")
    for part in (*PARTS, "total"):
        median = parts[part].median_us
        shown = "" if median is None else f"{median:.0f}"
        print(f"{part:<32} {parts[part].mean_us:>7.0f} {shown:>7}")
    trip = parts["write"].mean_us + parts["to reply"].mean_us
    own = parts["total"].mean_us - trip
    print(f"{'round trip (write + to reply)':<32} {trip:>7.0f}")
    print(f"{'the referee between round trips':<32} {own:>7.0f}")
    print(f"{'raw round trip, 4 clients':<32} {raw_rt_mean_us:>7.0f} {raw_rt_median_us:>7.0f}")
