"""Referee speed: random bots playing over gRPC on loopback, against the raw transport.

    python bench/referee.py [--games 40] [--runs 3] [--concurrency 1,2,4] [--tc 1.0+10]
                            [--pingpong-n 2000] [--profile] [--timeline] [--bare-bots]
                            [--json PATH]
    python bench/referee.py --runner-alone GAMES [--runs 3]

An :class:`~harness.referee.arena.Arena` (the real referee: gRPC server, sessions, game
runner) with ``4 x max(--concurrency)`` local ``python -m sample_bots.random_bot``
processes, four-handed games under ``--tc``. For each concurrency K, ``--games`` games
are split over K lanes that run at once (``asyncio.gather`` of ``arena.play`` loops); each
game has its own four bot processes. K = 1 is one match of back-to-back games.

Measured per configuration: decisions/s, games/s, wall-clock us per decision (wall time /
decisions, so for K > 1 the inverse of the aggregate throughput), the referee process's
own CPU per decision (``time.process_time``: every thread, gRPC's included; and the main
thread alone), the median request-to-reply time the referee records per decision, the
messages the referee writes per decision (counted by wrapping ``Session.send``), and
every fault and abnormal ending (must be zero with a realistic clock).

In the same run, between the matches, the raw ping-pong of ``bench/pingpong.py``: one
client process (request/reply only), and four client processes with as many extra small
event messages per round trip as the referee wrote per decision in that run's K = 1
match. The ratios compare referee wall us per decision with the raw mean round trip, and
the referee's CPU per decision with the raw server's CPU per round trip, run by run; the
medians over ``--runs`` are printed.

``CPU by thread`` splits the referee's CPU in the K = 1 match, and the raw server's in
the same run, by the threads of the process (psutil, with the names from
``/proc/self/task``: Linux only): the main thread (the event loop: all of the referee's
Python, and gRPC's work done inline when it writes and reads), the other threads that
Python started (gRPC's poller thread, which waits on gRPC's completion queue and wakes the
event loop), and the threads gRPC's C core started (``event_engine``: sockets, timers).
It shows which part of the referee's CPU is the transport, which the raw server pays
alike, and which is the referee's own.

``--profile`` then plays one more K = 1 match of ``--games`` games under ``cProfile``
(main thread, where all of the referee's Python runs) and prints the top functions by
cumulative and by own time, per decision.

``--timeline`` then plays one more K = 1 match noting the clock at each step of every
decision and prints where the match's wall time went (``bench/timeline.py``): the round
trip as the referee sees it (its write, then the bot's reply), beside the referee's own
work between round trips. ``--bare-bots`` plays ``bench/bare_bot.py``, a random bot without
the SDK, in place of the sample random bot.

``--runner-alone GAMES`` times the referee without gRPC or bot processes: GAMES games
through the game runner and real sessions whose streams are stand-ins that drop every
write and answer each decision request at once with a seeded random legal action (the
referee's cost per decision that is not the transport).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import dataclasses
import json
import logging
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
THREAD_KINDS = ("main", "Python threads", "gRPC core threads")
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # no INFO line per fork() of a bot

import grpc  # noqa: E402
import psutil  # noqa: E402
from pingpong import GrpcPingPong, RunStats, message_sizes  # noqa: E402
from timeline import Timeline, print_parts  # noqa: E402

from harness._generated.euchre.v1 import referee_pb2 as rpb  # noqa: E402
from harness.protocol import messages  # noqa: E402
from harness.referee.arena import Arena  # noqa: E402
from harness.referee.match import GameRunner  # noqa: E402
from harness.referee.outcome import GameResult, Termination, TimeControl  # noqa: E402
from harness.referee.pool import Entrant  # noqa: E402
from harness.referee.process import BotCommand  # noqa: E402
from harness.referee.session import Session, SlotRegistry  # noqa: E402
from harness.rules import RulesConfig  # noqa: E402

BOT = "random"

# ------------------------------------------------------------------ counting writes
# Every message the referee writes to a bot goes through Session.send; count them by
# kind. The wrapper costs well under a microsecond per message.
WRITES: collections.Counter[str] = collections.Counter()
_original_send = Session.send


async def _counting_send(self: Session, message: messages.Outgoing) -> None:
    WRITES[message_kind(message)] += 1
    await _original_send(self, message)


def message_kind(message: messages.Outgoing) -> str:
    """The payload of a message or of its wire bytes (the field number of the
    ConnectResponse's one field, without parsing the rest)."""
    if isinstance(message, bytes):
        return _FIELD_NAMES.get(message[0] >> 3, "?") if message else "?"
    return message.WhichOneof("payload") or "?"


_FIELD_NAMES = {f.number: f.name for f in rpb.ConnectResponse.DESCRIPTOR.fields}


Session.send = _counting_send  # type: ignore[method-assign]


# ------------------------------------------------------------------ one configuration


@dataclasses.dataclass
class MatchStats:
    concurrency: int
    games: int
    decisions: int
    wall_s: float
    cpu_s: float
    main_cpu_s: float
    writes: dict[str, int]
    faults: dict[str, int]
    abnormal: int  # games that did not end normally
    decision_us: list[float]  # request -> reply, as the referee records it
    threads: dict[str, float]  # CPU seconds by THREAD_KINDS (empty where not measurable)
    bots_cpu_s: float | None  # the bot processes' CPU over the match (None: not measurable)
    bot_processes: int  # how many: every bot the arena started (4 x the largest K)

    @property
    def messages(self) -> int:
        return sum(self.writes.values())

    def figures(self) -> dict[str, float]:
        d = self.decisions
        return {
            "decisions_per_s": d / self.wall_s,
            "games_per_s": self.games / self.wall_s,
            "wall_us_per_decision": self.wall_s / d * 1e6,
            "cpu_us_per_decision": self.cpu_s / d * 1e6,
            "main_cpu_us_per_decision": self.main_cpu_s / d * 1e6,
            "decide_median_us": statistics.median(self.decision_us),
            "messages_per_decision": self.messages / d,
            "decisions_per_game": d / self.games,
        }


async def play_lanes(arena: Arena, k: int, games: int, tc: TimeControl, tag: str,
                     seed0: int = 0) -> MatchStats:
    """``games`` games over ``k`` concurrent lanes of back-to-back games."""
    per_lane = [games // k + (1 if i < games % k else 0) for i in range(k)]
    results: list[GameResult] = []

    async def lane(i: int) -> None:
        for g in range(per_lane[i]):
            results.append(await arena.play(f"{tag}-{i}-{g}", RulesConfig(),
                                            seed=seed0 + i * 1000 + g, seats=[BOT] * 4,
                                            time_control=tc))

    WRITES.clear()
    bot_pids = [i.process.pid for i in arena.pool.instances(BOT)
                if i.process is not None and i.process.pid is not None]
    bots0 = processes_cpu(bot_pids)
    by_thread = thread_cpu()
    cpu0, main0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
    await asyncio.gather(*(lane(i) for i in range(k)))
    wall = time.perf_counter() - t0
    cpu, main_cpu = time.process_time() - cpu0, time.thread_time() - main0
    threads = cpu_by_thread_kind(by_thread, thread_cpu())
    bots1 = processes_cpu(bot_pids)
    bots_cpu = None if bots0 is None or bots1 is None else bots1 - bots0
    faults: collections.Counter[str] = collections.Counter()
    decision_us: list[float] = []
    for r in results:
        faults.update(f.kind.value for f in r.faults)
        decision_us.extend(ms * 1000 for ms in r.record["decision_ms"])
    return MatchStats(k, len(results), len(decision_us), wall, cpu, main_cpu, dict(WRITES),
                      dict(faults), sum(r.termination is not Termination.NORMAL
                                        for r in results), decision_us, threads, bots_cpu,
                      len(bot_pids))


# ------------------------------------------------------------------ CPU by thread


def thread_cpu() -> dict[str, tuple[str, float]]:
    """Each thread of this process: its name (``/proc/self/task/ID/comm``) and CPU seconds
    so far (psutil), by thread id; empty where the names cannot be read."""
    out: dict[str, tuple[str, float]] = {}
    for thread in psutil.Process().threads():
        try:
            name = Path(f"/proc/self/task/{thread.id}/comm").read_text().strip()
        except OSError:  # no /proc, or the thread ended meanwhile
            continue
        out[str(thread.id)] = (name, thread.user_time + thread.system_time)
    return out


def processes_cpu(pids: Sequence[int]) -> float | None:
    """The CPU seconds so far of the processes ``pids`` (every thread, as
    bench/inprocess.py counts its bots'); None if one of them has gone."""
    try:
        return sum(t.user + t.system for t in (psutil.Process(p).cpu_times() for p in pids))
    except psutil.Error:
        return None


def cpu_by_thread_kind(before: dict[str, tuple[str, float]],
                       after: dict[str, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds between two :func:`thread_cpu` readings by THREAD_KINDS: this main
    thread; the other threads with the main thread's name (Python names none of the
    threads it starts); and the rest, which gRPC's C core started and named."""
    main = str(os.getpid())
    if main not in after:
        return {}
    python = after[main][0]
    out = dict.fromkeys(THREAD_KINDS, 0.0)
    for tid, (name, cpu) in after.items():
        used = cpu - before.get(tid, (name, 0.0))[1]
        kind = "main" if tid == main else "Python threads" if name == python \
            else "gRPC core threads"
        out[kind] += used
    return out


# ------------------------------------------------------------------ the game alone


class InstantContext:
    """Stands in for a bot's stream under a real :class:`Session`: every write is
    dropped, and a decision request (alone or last in a Bundle) is answered at once with
    a seeded random legal action, handed to the session on the loop's next turn as its
    reader task would."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.session: Session | None = None

    async def write(self, data: messages.Outgoing) -> None:
        request = messages.decision_request_in(data)
        if request is not None and self.session is not None:
            reply = rpb.DecisionReply(request_id=request.request_id,
                                      action=self.rng.choice(request.legal_actions))
            asyncio.get_running_loop().call_soon(self.session.on_reply, reply)


async def runner_alone(games: int, tc: TimeControl) -> tuple[int, float]:
    """Decisions and CPU seconds of ``games`` four-handed games through real sessions on
    stand-in streams that answer at once."""
    registry = SlotRegistry()
    contexts: list[InstantContext] = []
    sessions: list[Session] = []
    for seat in range(4):
        context = InstantContext(random.Random(seat))
        slot = registry.add(BOT, seat)
        context.session = Session(cast(Any, context), slot, BOT, "1", "bench", bundles=True)
        contexts.append(context)
        sessions.append(context.session)
    decisions = 0
    cpu0 = time.process_time()
    for seed in range(games):
        for seat, context in enumerate(contexts):
            context.rng.seed(seed * 4 + seat)
            sessions[seat].slot.game_id = f"alone-{seed}"
        result = await GameRunner(f"alone-{seed}", RulesConfig(), seed, sessions, [BOT] * 4,
                                  time_control=tc).play()
        decisions += len(result.record["decision_ms"])
    return decisions, time.process_time() - cpu0


# ------------------------------------------------------------------ profile


def print_profile(prof: cProfile.Profile, decisions: int, top: int) -> None:
    st = pstats.Stats(prof)
    rows = st.stats  # type: ignore[attr-defined]
    total_tt = sum(v[2] for v in rows.values())

    def name(key: tuple[str, int, str]) -> str:
        file, line, func = key
        if file == "~":
            return func
        path = Path(file)
        try:
            path = path.resolve().relative_to(ROOT)
        except ValueError:
            parts = path.parts
            path = Path(*parts[-2:]) if len(parts) > 1 else path
        return f"{path}:{line}({func})"

    print(f"\nprofile: {decisions} decisions, {total_tt:.3f} s profiled (main thread, wall "
          f"clock, cProfile overhead included: compare rows, not absolute times)")
    for title, idx in (("cumulative", 3), ("own time", 2)):
        print(f"\ntop {top} by {title}, per decision:")
        print(f"{'calls':>7} {'own us':>8} {'cum us':>8}  function")
        for key, (_cc, nc, tt, ct, _callers) in sorted(
                rows.items(), key=lambda kv: kv[1][idx], reverse=True)[:top]:
            print(f"{nc / decisions:>7.2f} {tt / decisions * 1e6:>8.1f} "
                  f"{ct / decisions * 1e6:>8.1f}  {name(key)}")


# ------------------------------------------------------------------ main


def environment() -> dict[str, str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": str(os.cpu_count()), "cpu": cpu, "python": platform.python_version(),
            "grpcio": grpc.__version__, "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def _median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tc = TimeControl.parse(args.tc)
    levels = sorted({int(x) for x in args.concurrency.split(",")})
    kmax = max(levels)
    out: dict[str, Any] = {"env": environment(), "args": vars(args),
                           "sizes": message_sizes(), "runs": []}
    with tempfile.TemporaryDirectory(prefix="euchre-bench-") as tmp:
        async with Arena(log_dir=Path(tmp)) as arena:
            bot = ((sys.executable, str(ROOT / "bench" / "bare_bot.py")) if args.bare_bots
                   else (sys.executable, "-m", "sample_bots.random_bot"))
            arena.add(Entrant(BOT, BotCommand(bot, cwd=str(ROOT))), 4 * kmax)
            plain, events4 = GrpcPingPong(1), GrpcPingPong(4)
            try:
                # Warm up: start every bot process and both ping-pong setups.
                warm = await play_lanes(arena, kmax, 2 * kmax, tc, "warmup", 10_000)
                if warm.decisions == 0:
                    raise SystemExit("the warm-up games had no decision: "
                                     f"faults {warm.faults or 'none'}")
                await plain.start()
                await events4.start()
                await plain.run(300)
                await events4.run(300, events=warm.messages / warm.decisions - 1)
                print(f"warm-up: {warm.games} games, {warm.decisions} decisions, "
                      f"{warm.messages / warm.decisions:.2f} messages per decision",
                      file=sys.stderr)
                for r in range(args.runs):
                    run_out: dict[str, Any] = {"matches": {}}
                    for k in levels:
                        m = await play_lanes(arena, k, args.games, tc, f"r{r}k{k}", r * 100)
                        run_out["matches"][k] = m
                    m1 = run_out["matches"][min(levels)]
                    ev = m1.messages / m1.decisions - 1
                    before = thread_cpu()
                    run_out["pp_plain"] = await plain.run(args.pingpong_n)
                    run_out["pp_plain_threads"] = cpu_by_thread_kind(before, thread_cpu())
                    clients = [p.pid for p in events4.procs]
                    clients0 = processes_cpu(clients)
                    run_out["pp_events"] = await events4.run(args.pingpong_n, events=ev)
                    clients1 = processes_cpu(clients)
                    run_out["pp_events_clients_cpu_s"] = (
                        None if clients0 is None or clients1 is None else clients1 - clients0)
                    run_out["pp_queue"] = await events4.run(args.pingpong_n, events=ev,
                                                            mode="queue")
                    out["runs"].append(run_out)
                    print(f"run {r + 1}/{args.runs} done", file=sys.stderr)
                if args.profile:
                    prof = cProfile.Profile()
                    prof.enable()
                    pm = await play_lanes(arena, 1, args.games, tc, "profile", 50_000)
                    prof.disable()
                    out["profile"] = (prof, pm.decisions)
                if args.timeline:
                    with Timeline().installed() as timeline:
                        await play_lanes(arena, 1, args.games, tc, "timeline", 60_000)
                    try:  # a fault leaves a decision unanswered: keep the runs' figures
                        out["timeline"] = timeline.parts()
                    except ValueError as e:
                        print(f"no timeline: {e}", file=sys.stderr)
            finally:
                await plain.close()
                await events4.close()
    return out


def report(out: dict[str, Any], levels: Sequence[int], tc: str) -> dict[str, Any]:
    runs = out["runs"]
    env = out["env"]
    sizes = out["sizes"]
    print(f"\n{env['nproc']} CPUs, {env['cpu']}; Python {env['python']}, grpcio "
          f"{env['grpcio']}; {env['date']}")
    print(f"four-handed, random bots, tc {tc}; {len(runs)} runs; medians over runs")
    print(f"messages: DecisionRequest {sizes['request_bytes']} B (mid-hand), "
          f"reply {sizes['reply_bytes']} B, card-played event {sizes['event_bytes']} B\n")
    summary: dict[str, Any] = {"env": env, "sizes": sizes, "matches": {}, "ratios": {}}

    hdr = (f"{'games at once':<14} {'dec/s':>7} {'games/s':>8} {'wall us':>8} {'CPU us':>7} "
           f"{'main us':>8} {'decide':>7} {'msgs':>6} {'faults':>7} {'abnormal':>8}")
    print("referee (per decision; 'decide' = median request->reply the referee records)")
    print(hdr)
    total_faults = 0
    for k in levels:
        ms: list[MatchStats] = [r["matches"][k] for r in runs]
        figs = [m.figures() for m in ms]
        med = {f: _median([x[f] for x in figs]) for f in figs[0]}
        faults: collections.Counter[str] = collections.Counter()
        for m in ms:
            faults.update(m.faults)
        abnormal = sum(m.abnormal for m in ms)
        total_faults += sum(faults.values()) + abnormal
        fault_text = ",".join(f"{k2}={v}" for k2, v in faults.items()) or "0"
        print(f"{k:<14} {med['decisions_per_s']:>7.0f} {med['games_per_s']:>8.2f} "
              f"{med['wall_us_per_decision']:>8.0f} {med['cpu_us_per_decision']:>7.0f} "
              f"{med['main_cpu_us_per_decision']:>8.0f} {med['decide_median_us']:>7.0f} "
              f"{med['messages_per_decision']:>6.2f} {fault_text:>7} {abnormal:>8}")
        writes: collections.Counter[str] = collections.Counter()
        for m in ms:
            writes.update(m.writes)
        dec = sum(m.decisions for m in ms)
        summary["matches"][k] = {**med, "faults": dict(faults), "abnormal": abnormal,
                                 "games": sum(m.games for m in ms), "decisions": dec,
                                 "writes_per_decision": {w: n / dec for w, n in
                                                         writes.items()}}
    k1 = min(levels)
    wpd = summary["matches"][k1]["writes_per_decision"]
    print(f"\nwrites per decision (K={k1}): " + ", ".join(
        f"{w} {v:.2f}" for w, v in sorted(wpd.items(), key=lambda kv: -kv[1])))

    pp: dict[str, list[RunStats]] = {key: [r[key] for r in runs]
                                      for key in ("pp_plain", "pp_events", "pp_queue")}
    print(f"\nraw gRPC ping-pong, same run ({runs[0]['pp_plain'].n} round trips per run)")
    print(f"{'':<46} {'median':>7} {'mean':>7} {'srv CPU':>8} {'msgs/RT':>8}")
    labels = {"pp_plain": "1 client, request/reply only",
              "pp_events": "4 clients, + same events, awaited writes",
              "pp_queue": "4 clients, + same events, writer task/stream"}
    for key, lab in labels.items():
        s = pp[key]
        print(f"{lab:<46} {_median([x.median_us for x in s]):>7.0f} "
              f"{_median([x.mean_us for x in s]):>7.0f} "
              f"{_median([x.server_cpu_us for x in s]):>8.0f} "
              f"{_median([x.messages_per_rt for x in s]):>8.2f}")
        summary[key] = {"median_us": _median([x.median_us for x in s]),
                        "mean_us": _median([x.mean_us for x in s]),
                        "server_cpu_us": _median([x.server_cpu_us for x in s]),
                        "messages_per_rt": _median([x.messages_per_rt for x in s])}

    def ratio(fn: Callable[[dict[str, Any]], float]) -> float:
        return _median([fn(r) for r in runs])

    def ref(r: dict[str, Any], f: str) -> float:
        return float(r["matches"][k1].figures()[f])

    ratios = {
        "wall / raw RT (request only)": ratio(
            lambda r: ref(r, "wall_us_per_decision") / r["pp_plain"].mean_us),
        "wall / raw RT (with events)": ratio(
            lambda r: ref(r, "wall_us_per_decision") / r["pp_events"].mean_us),
        "wall / raw RT (with events, writer tasks)": ratio(
            lambda r: ref(r, "wall_us_per_decision") / r["pp_queue"].mean_us),
        "CPU / raw server CPU (request only)": ratio(
            lambda r: ref(r, "cpu_us_per_decision") / r["pp_plain"].server_cpu_us),
        "CPU / raw server CPU (with events)": ratio(
            lambda r: ref(r, "cpu_us_per_decision") / r["pp_events"].server_cpu_us),
        "CPU / raw server CPU (with events, writer tasks)": ratio(
            lambda r: ref(r, "cpu_us_per_decision") / r["pp_queue"].server_cpu_us),
        "decide median / raw median RT (request only)": ratio(
            lambda r: ref(r, "decide_median_us") / r["pp_plain"].median_us),
    }
    print(f"\nratios, referee K={k1} vs raw (median of per-run ratios; the target: wall / "
          f"raw RT with events at most 1.3, and at most 200 us of referee CPU per decision)")
    for lab, v in ratios.items():
        print(f"  {lab:<50} {v:5.2f}")
    summary["ratios"] = ratios
    k1_threads = [(r["matches"][k1].threads, r["matches"][k1].decisions,
                   r["pp_plain_threads"], r["pp_plain"].n) for r in runs]
    if all(t and p for t, _, p, _ in k1_threads):
        print(f"\nCPU by thread, us (referee: per decision, K={k1}; raw: per round trip, 1 "
              f"client, request only; medians over runs)")
        print(f"{'':<20} {'referee':>8} {'raw':>8}")
        summary["threads"] = {}
        def per(t: dict[str, float], n: int, kind: str) -> float:
            return (sum(t.values()) if kind == "all" else t[kind]) / n * 1e6

        for kind in (*THREAD_KINDS, "all"):
            referee = _median([per(t, d, kind) for t, d, _, _ in k1_threads])
            raw = _median([per(p, n, kind) for _, _, p, n in k1_threads])
            print(f"{kind:<20} {referee:>8.0f} {raw:>8.0f}")
            summary["threads"][kind] = {"referee_us": referee, "raw_us": raw}
    bots = [(r["matches"][k1].bots_cpu_s, r["matches"][k1].decisions,
             r["pp_events_clients_cpu_s"], r["pp_events"].n) for r in runs]
    if all(b is not None and c is not None for b, _, c, _ in bots):
        per_bots = _median([b / d * 1e6 for b, d, _, _ in bots])
        per_clients = _median([c / n * 1e6 for _, _, c, n in bots])
        print(f"\nthe other side, us of CPU: the {runs[0]['matches'][k1].bot_processes} bot "
              f"processes per decision (K={k1}, idle ones included) {per_bots:.0f}; the four "
              f"raw clients per round trip (same events) {per_clients:.0f}")
        summary["bots_cpu_us"] = {"bots_per_decision": per_bots,
                                  "raw_clients_per_round_trip": per_clients}
    print(f"\nfaults + abnormal endings, all configurations and runs: {total_faults}")
    summary["faults_total"] = total_faults
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=40,
                    help="games per configuration and run (split over the lanes)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", default="1,2,4",
                    help="games at once, comma-separated (each with its own 4 bots)")
    ap.add_argument("--tc", default="1.0+10", help="time control, PER+BANK seconds")
    ap.add_argument("--pingpong-n", type=int, default=2000,
                    help="raw ping-pong round trips per run")
    ap.add_argument("--profile", action="store_true",
                    help="profile one more K=1 match with cProfile and print the top")
    ap.add_argument("--profile-top", type=int, default=25)
    ap.add_argument("--timeline", action="store_true",
                    help="play one more K=1 match noting the clock at each step of every "
                         "decision, and print where its wall time went (bench/timeline.py)")
    ap.add_argument("--bare-bots", action="store_true",
                    help="play bench/bare_bot.py (a random bot without the SDK) instead of "
                         "the sample random bot")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--runner-alone", type=int, metavar="GAMES", default=0,
                    help="only time the referee without a transport: GAMES games through "
                         "real sessions on stand-in streams that answer at once, in this "
                         "process (CPU us per decision, median of --runs)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.runner_alone:
        tc = TimeControl.parse(args.tc)
        per = []
        for _ in range(args.runs):
            decisions, cpu = asyncio.run(runner_alone(args.runner_alone, tc))
            per.append(cpu / decisions * 1e6)
        print(f"referee without a transport: {statistics.median(per):.1f} us CPU per decision "
              f"(median of {args.runs}: {', '.join(f'{x:.1f}' for x in per)}; "
              f"{decisions} decisions a run)")
        return
    levels = sorted({int(x) for x in args.concurrency.split(",")})
    t0 = time.perf_counter()
    out = asyncio.run(run(args))
    summary = report(out, levels, args.tc)
    if "profile" in out:
        prof, decisions = out["profile"]
        print_profile(prof, decisions, args.profile_top)
    if "timeline" in out:
        raw = summary["pp_events"]
        print_parts(out["timeline"], raw["median_us"], raw["mean_us"])
        summary["timeline"] = {part: dataclasses.asdict(figures)
                               for part, figures in out["timeline"].items()}
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    if args.json:
        summary["args"] = {k: str(v) for k, v in vars(args).items()}
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
