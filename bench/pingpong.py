"""Transport floor: a raw gRPC bidirectional-stream ping-pong with the protocol's real
messages, and a plain-pipe baseline, between separate Python processes.

    python bench/pingpong.py [--n 2000] [--runs 5] [--clients 1] [--events 0]

gRPC: this process runs a ``grpc.aio`` server for ``euchre.v1.RefereeService/Connect``;
``--clients`` child processes (started with ``subprocess``) each dial it with
``grpc.aio`` and open one stream. A round trip is: the server writes a
``ConnectResponse(decision_request=...)`` (a mid-hand observation of a real game, built
with ``convert.decision_request_to_pb``) to one client, and reads that client's
``ConnectRequest(decision_reply=...)`` (the first legal action copied back). The decision
goes to the clients in turn. There are no rules and no referee logic: nothing but
writes, reads and the timing.

``--events E`` also writes E small ``ConnectResponse(game_event=card_played)`` messages per
round trip before the request, spread over the clients in turn (a fraction is carried
over to the next round trip), to match what a referee writes per decision.
``--event-writes`` says how: ``seq`` awaits each write in turn (the default); ``gather``
awaits each round of the clients as one ``asyncio.gather`` (a broadcast); ``queue`` hands
every message, the request included, to a writer task per stream (an ``asyncio.Queue``)
and only awaits the reply.

Pipe: a child process reads JSON lines on stdin and answers each with a JSON line on
stdout; the request is the same DecisionRequest in protobuf's JSON mapping.

Each run times ``--n`` round trips with ``time.perf_counter_ns`` and reports the median
and the mean round trip, plus the server process's own CPU per round trip
(``time.process_time``, every thread of the process). Figures printed are medians over
``--runs`` runs; the clients stay connected across runs, after ``--warmup`` round trips.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# gRPC core logs an INFO line for every fork() while its threads are busy (starting the
# client processes); harmless, and noise in the output.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from harness._generated.euchre.v1 import referee_pb2 as rpb  # noqa: E402
from harness._generated.euchre.v1 import referee_pb2_grpc as rpc  # noqa: E402
from harness.protocol import convert  # noqa: E402
from harness.rules import EventKind, Game, Phase, RulesConfig  # noqa: E402

PROTOCOL_VERSION = 1


# --------------------------------------------------------------------------- messages


def _mid_hand_game(seed: int = 7) -> Game:
    """A four-handed game in the PLAY phase with two tricks done and two cards on the
    table: a typical, fairly large observation."""
    game = Game(RulesConfig(), seed)
    rng = random.Random(seed)
    while True:
        if game.outcome is not None:
            seed += 1
            game, rng = Game(RulesConfig(), seed), random.Random(seed)
        obs = game.observation(game.current) if game.current is not None else None
        if (obs is not None and obs.phase is Phase.PLAY and len(obs.tricks) == 2
                and len(obs.current_trick) == 2):
            return game
        game.apply(rng.choice(game.legal_actions()))


def sample_request(request_id: int = 1) -> rpb.DecisionRequest:
    """The DecisionRequest of a mid-hand decision (clock fields as under tc 1.0+10)."""
    game = _mid_hand_game()
    assert game.current is not None
    obs = game.observation(game.current)
    return convert.decision_request_to_pb(request_id, obs, 11_000, 10_000)


def sample_event() -> rpb.ConnectResponse:
    """A card-played event, the commonest message a referee broadcasts."""
    game = _mid_hand_game()
    hi = len(game.hands) - 1
    play = next(e for e in reversed(game.hand.events) if e.kind is EventKind.PLAY)
    pbev = convert.event_to_pb(hi, play)
    assert pbev is not None
    return rpb.ConnectResponse(game_event=pbev)


def message_sizes() -> dict[str, int]:
    req = sample_request(12345)
    reply = rpb.ConnectRequest(decision_reply=rpb.DecisionReply(
        request_id=12345, action=req.legal_actions[0]))
    return {"request_bytes": rpb.ConnectResponse(decision_request=req).ByteSize(),
            "reply_bytes": reply.ByteSize(), "event_bytes": sample_event().ByteSize()}


# --------------------------------------------------------------------------- results


@dataclasses.dataclass(frozen=True, slots=True)
class RunStats:
    """One run of ``n`` round trips."""

    n: int
    median_us: float  # median round trip
    mean_us: float  # wall time of the run / n
    p90_us: float
    server_cpu_us: float  # server process CPU (all threads) / n
    messages_per_rt: float  # messages the server wrote per round trip

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


def summarize(runs: Sequence[RunStats]) -> dict[str, float]:
    """Median of each figure over the runs."""
    return {f: statistics.median(getattr(r, f) for r in runs)
            for f in ("median_us", "mean_us", "p90_us", "server_cpu_us", "messages_per_rt")}


def _stats(samples_ns: Sequence[int], wall_ns: int, cpu_s: float, writes: int) -> RunStats:
    n = len(samples_ns)
    qs = statistics.quantiles(samples_ns, n=10)
    return RunStats(n, statistics.median(samples_ns) / 1e3, wall_ns / n / 1e3, qs[8] / 1e3,
                    cpu_s / n * 1e6, writes / n)


# --------------------------------------------------------------------------- gRPC


class _Hub(rpc.RefereeServiceServicer):
    """Accepts the clients' streams and holds them open for the driver."""

    def __init__(self, clients: int) -> None:
        self.clients = clients
        self.contexts: list[grpc.aio.ServicerContext[Any, Any]] = []
        self.ready = asyncio.Event()
        self.done = asyncio.Event()

    async def Connect(  # type: ignore[override]
            self, request_iterator: AsyncIterator[rpb.ConnectRequest],
            context: grpc.aio.ServicerContext[Any, Any]) -> None:
        hello = await context.read()
        if hello is grpc.aio.EOF:
            return
        self.contexts.append(context)
        if len(self.contexts) == self.clients:
            self.ready.set()
        await self.done.wait()


async def _round_trips(hub: _Hub, request: rpb.DecisionRequest, event: rpb.ConnectResponse,
                       n: int, events: float, mode: str, first_id: int) -> RunStats:
    ctxs = hub.contexts
    k = len(ctxs)
    samples: list[int] = []
    carry = 0.0
    ev_seat = 0
    writes = 0
    queues: list[asyncio.Queue[rpb.ConnectResponse | None]] = []
    writers: list[asyncio.Task[None]] = []
    if mode == "queue":
        async def writer(ctx: grpc.aio.ServicerContext[Any, Any],
                         q: asyncio.Queue[rpb.ConnectResponse | None]) -> None:
            while (msg := await q.get()) is not None:
                await ctx.write(msg)

        queues = [asyncio.Queue() for _ in ctxs]
        writers = [asyncio.ensure_future(writer(c, q)) for c, q in zip(ctxs, queues,
                                                                          strict=True)]
    perf = time.perf_counter_ns
    cpu0 = time.process_time()
    t_start = perf()
    for i in range(n):
        t0 = perf()
        carry += events
        m = int(carry)
        carry -= m
        writes += m + 1
        if mode == "gather":
            while m > 0:  # one concurrent batch per round of the clients
                batch = min(m, k)
                await asyncio.gather(*(ctxs[(ev_seat + j) % k].write(event)
                                       for j in range(batch)))
                ev_seat = (ev_seat + batch) % k
                m -= batch
        elif mode == "queue":
            for _ in range(m):
                queues[ev_seat].put_nowait(event)
                ev_seat = (ev_seat + 1) % k
        else:
            for _ in range(m):
                await ctxs[ev_seat].write(event)
                ev_seat = (ev_seat + 1) % k
        ctx = ctxs[i % k]
        request.request_id = first_id + i
        msg = rpb.ConnectResponse(decision_request=request)
        if mode == "queue":
            queues[i % k].put_nowait(msg)
        else:
            await ctx.write(msg)
        reply = await ctx.read()
        samples.append(perf() - t0)
        if reply is grpc.aio.EOF or reply.decision_reply.request_id != first_id + i:
            raise RuntimeError(f"bad reply: {reply!r}")
    for q in queues:
        q.put_nowait(None)
    if writers:
        await asyncio.gather(*writers)
    wall = perf() - t_start
    return _stats(samples, wall, time.process_time() - cpu0, writes)


@dataclasses.dataclass
class GrpcPingPong:
    """A server plus ``clients`` connected client processes; call :meth:`run` repeatedly."""

    clients: int = 1
    server: grpc.aio.Server | None = None
    hub: _Hub | None = None
    procs: list[subprocess.Popen[bytes]] = dataclasses.field(default_factory=list)
    next_id: int = 1

    async def start(self) -> None:
        self.hub = _Hub(self.clients)
        server = grpc.aio.server()
        rpc.add_RefereeServiceServicer_to_server(self.hub, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        self.server = server
        for _ in range(self.clients):
            self.procs.append(subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--client",
                 f"127.0.0.1:{port}"], cwd=ROOT, stdin=subprocess.DEVNULL))
        await asyncio.wait_for(self.hub.ready.wait(), 30.0)

    async def run(self, n: int, *, events: float = 0.0, mode: str = "seq") -> RunStats:
        assert self.hub is not None
        stats = await _round_trips(self.hub, sample_request(), sample_event(), n, events,
                                   mode, self.next_id)
        self.next_id += n
        return stats

    async def close(self) -> None:
        if self.hub is not None:
            self.hub.done.set()
        if self.server is not None:
            await self.server.stop(1.0)
        for p in self.procs:
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


async def grpc_runs(n: int, runs: int, *, clients: int = 1, events: float = 0.0,
                    mode: str = "seq", warmup: int = 300) -> list[RunStats]:
    pp = GrpcPingPong(clients)
    try:
        await pp.start()
        await pp.run(warmup, events=events, mode=mode)
        return [await pp.run(n, events=events, mode=mode) for _ in range(runs)]
    finally:
        await pp.close()


async def _client(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = rpc.RefereeServiceStub(channel).Connect()
        await call.write(rpb.ConnectRequest(hello=rpb.Hello(
            protocol_version=PROTOCOL_VERSION, bot_name="pingpong", bot_version="1")))
        while True:
            msg = await call.read()
            if not isinstance(msg, rpb.ConnectResponse):  # grpc.aio.EOF
                return
            if msg.WhichOneof("payload") == "decision_request":
                req = msg.decision_request
                await call.write(rpb.ConnectRequest(decision_reply=rpb.DecisionReply(
                    request_id=req.request_id, action=req.legal_actions[0])))


# --------------------------------------------------------------------------- pipe


def pipe_runs(n: int, runs: int, warmup: int = 300) -> list[RunStats]:
    """JSON lines over a child's stdin/stdout, blocking reads and writes on both ends."""
    request = json_format.MessageToDict(
        rpb.ConnectResponse(decision_request=sample_request()))
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--pipe-child"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    out, inp = proc.stdin, proc.stdout
    perf = time.perf_counter_ns
    next_id = 1
    results = []
    try:
        for run in range(runs + 1):
            count = warmup if run == 0 else n
            samples: list[int] = []
            cpu0 = time.process_time()
            t_start = perf()
            for _ in range(count):
                t0 = perf()
                request["decisionRequest"]["requestId"] = str(next_id)
                out.write(json.dumps(request).encode() + b"\n")
                out.flush()
                reply = json.loads(inp.readline())
                samples.append(perf() - t0)
                if reply["decisionReply"]["requestId"] != str(next_id):
                    raise RuntimeError(f"bad reply: {reply!r}")
                next_id += 1
            if run:
                results.append(_stats(samples, perf() - t_start,
                                      time.process_time() - cpu0, count))
    finally:
        out.close()
        proc.wait(5.0)
    return results


def _pipe_child() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        req = json.loads(line)["decisionRequest"]
        reply = {"decisionReply": {"requestId": req["requestId"],
                                   "action": req["legalActions"][0]}}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


# --------------------------------------------------------------------------- main


def format_row(label: str, s: dict[str, float]) -> str:
    return (f"{label:<42} {s['median_us']:>9.0f} {s['mean_us']:>9.0f} {s['p90_us']:>9.0f} "
            f"{s['server_cpu_us']:>9.0f} {s['messages_per_rt']:>7.2f}")


HEADER = (f"{'':<42} {'median':>9} {'mean':>9} {'p90':>9} {'srv CPU':>9} {'msgs':>7}\n"
          f"{'(us per round trip)':<42} {'':>9} {'':>9} {'':>9} {'':>9} {'/RT':>7}")


async def _main_async(args: argparse.Namespace) -> None:
    print(HEADER)
    runs = await grpc_runs(args.n, args.runs, clients=args.clients, events=args.events,
                           mode=args.event_writes)
    label = f"gRPC aio, {args.clients} client(s)"
    if args.events:
        label += f", +{args.events:g} ev ({args.event_writes})"
    print(format_row(label, summarize(runs)))
    if not args.no_pipe:
        print(format_row("pipe, JSON lines (sync)", summarize(pipe_runs(args.n, args.runs))))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="round trips per run")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--clients", type=int, default=1, help="client processes (streams)")
    ap.add_argument("--events", type=float, default=0.0,
                    help="small event messages written per round trip")
    ap.add_argument("--event-writes", choices=("seq", "gather", "queue"), default="seq",
                    help="how event messages are written: awaited one after another, in "
                         "concurrent batches, or queued to a writer task per stream")
    ap.add_argument("--no-pipe", action="store_true", help="skip the pipe baseline")
    ap.add_argument("--client", metavar="ADDRESS", help=argparse.SUPPRESS)
    ap.add_argument("--pipe-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.client:
        asyncio.run(_client(args.client))
        return
    if args.pipe_child:
        _pipe_child()
        return
    sizes = message_sizes()
    print(f"messages: request {sizes['request_bytes']} B, reply {sizes['reply_bytes']} B, "
          f"event {sizes['event_bytes']} B; {args.runs} runs x {args.n} round trips")
    asyncio.run(_main_async(args))


if __name__ == "__main__":
    main()
