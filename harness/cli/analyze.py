"""``euchre-harness analyze GAME`` and ``analyze --bot NAME [STORE]``: decision analysis
of stored games (harness.analysis; docs/research.md)."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from harness.analysis import Analysis, DecisionAnalysis, analyze_record, render_table, summarize
from harness.analysis.evaluate import DEFAULT_ROLLOUTS, DEFAULT_THRESHOLD, decisions_of
from harness.cli import COMMANDS
from harness.cli.common import existing_store
from harness.errors import HarnessError
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path


def register(sub: Any) -> None:
    default = store_path(Path("results"))
    p = sub.add_parser(
        "analyze", help=COMMANDS["analyze"],
        description="Value each legal action of each decision by search from the deciding "
                    "seat's information only (seeded world sampling, a fixed number of "
                    "rollouts), give the chosen action's loss against the best and flag "
                    "mistakes above a threshold. With a GAME (TOURNAMENT/KEY, a key or a row "
                    "id): every decision of that game. With --bot NAME: a sample of that "
                    "bot's decisions over a whole store.")
    p.add_argument("target", nargs="?", help="the game (without --bot), or the results store "
                                             "or folder (with --bot)")
    p.add_argument("--bot", metavar="NAME", help="analyse this bot's decisions in every game "
                                                 "of the store")
    p.add_argument("--store", default=str(default),
                   help=f"the results store of GAME (default {default})")
    p.add_argument("--sample", type=int, default=200, metavar="N",
                   help="with --bot: analyse at most N of its decisions, drawn at random "
                        "(seeded; default 200; 0 = all)")
    p.add_argument("--rollouts", type=int, default=DEFAULT_ROLLOUTS,
                   help=f"rollouts per decision (default {DEFAULT_ROLLOUTS})")
    p.add_argument("--seed", type=int, default=0, help="the analysis seed (default 0)")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                   help="a loss above this many points is a mistake (default "
                        f"{DEFAULT_THRESHOLD})")
    p.add_argument("--json", metavar="FILE", help="also write every analysed decision and "
                                                  "the table as JSON to FILE")
    p.add_argument("--html", metavar="FILE", help="GAME only: write the replay viewer with "
                                                  "the analysis to FILE")
    p.set_defaults(handler=cmd_analyze)


def _store(text: str) -> Path:
    path = Path(text)
    return existing_store(str(store_path(path) if path.is_dir() else path))


def cmd_analyze(args: argparse.Namespace) -> int:
    if args.rollouts < 1:
        raise HarnessError("--rollouts must be at least 1")
    analysis = Analysis(rollouts=args.rollouts, seed=args.seed, threshold=args.threshold)
    if args.bot:
        decisions = _bot_decisions(args, analysis)
    else:
        if not args.target:
            raise HarnessError("name a GAME to analyse, or use --bot NAME [STORE]")
        decisions = _game_decisions(args, analysis)
    summaries = summarize(decisions)
    print(render_table(summaries) if summaries else "no decisions with a choice to analyse")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "settings": {"rollouts": analysis.rollouts, "seed": analysis.seed,
                         "threshold": analysis.threshold},
            "bots": [s.to_dict() for s in summaries],
            "decisions": [d.to_dict() for d in decisions]}, indent=1), encoding="utf-8")
    return 0


def _game_decisions(args: argparse.Namespace, analysis: Analysis) -> list[DecisionAnalysis]:
    path = existing_store(args.store)
    with ResultsStore(path) as store:
        row = store.find_game(args.target)
    if row is None:
        raise HarnessError(f"no game {args.target!r} in {path}")
    record = dict(row.record)
    record.setdefault("game_id", f"{row.tournament_id}/{row.game_key}")
    decisions = analyze_record(record, analysis)
    for d in decisions:
        print(describe(d))
    print()
    if args.html:
        from harness.web import replay_html

        Path(args.html).write_text(replay_html(record, analysis=decisions), encoding="utf-8")
        print(args.html, file=sys.stderr)
    return decisions


def _bot_decisions(args: argparse.Namespace, analysis: Analysis) -> list[DecisionAnalysis]:
    if args.html:
        raise HarnessError("--html shows one game: name a GAME instead of --bot")
    path = _store(args.target or str(store_path(Path("results"))))
    with ResultsStore(path) as store:
        rows = [r for r in store.games() if args.bot in r.seats]
    if not rows:
        raise HarnessError(f"no stored game in {path} has a seat of {args.bot!r}")
    pool = [(i, d) for i, r in enumerate(rows) for d in decisions_of(r.record, args.bot)]
    if args.sample and len(pool) > args.sample:
        pool = random.Random(f"sample/{args.seed}").sample(pool, args.sample)
    chosen: dict[int, set[int]] = {}
    for i, d in pool:
        chosen.setdefault(i, set()).add(d)
    out: list[DecisionAnalysis] = []
    for i in sorted(chosen):
        record = dict(rows[i].record)
        record.setdefault("game_id", f"{rows[i].tournament_id}/{rows[i].game_key}")
        out += analyze_record(record, analysis, only=chosen[i], bot=args.bot)
    return out


def describe(d: DecisionAnalysis) -> str:
    values = ", ".join(f"{a} {v:+.2f}" for a, v in sorted(d.values.items(),
                                                           key=lambda kv: -kv[1]))
    flag = "  MISTAKE" if d.mistake else ""
    return (f"#{d.index:<4} hand {d.hand + 1:<2} seat {d.seat} {d.bot:<12} {d.phase:<11} "
            f"chose {d.chosen} (loss {d.loss:.2f}){flag}   [{values}]")
