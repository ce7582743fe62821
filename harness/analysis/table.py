"""The per-bot table of an analysis: decisions analysed, average loss and mistakes per
100 decisions, overall and by phase."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from tabulate import tabulate

from harness.analysis.evaluate import PHASE_GROUPS, DecisionAnalysis


@dataclasses.dataclass
class Tally:
    decisions: int = 0
    loss: float = 0.0
    mistakes: int = 0

    def add(self, d: DecisionAnalysis) -> None:
        self.decisions += 1
        self.loss += d.loss
        self.mistakes += d.mistake

    @property
    def average_loss(self) -> float:
        return self.loss / self.decisions if self.decisions else 0.0

    @property
    def mistakes_per_100(self) -> float:
        return 100.0 * self.mistakes / self.decisions if self.decisions else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {"decisions": self.decisions, "average_loss": round(self.average_loss, 4),
                "mistakes": self.mistakes,
                "mistakes_per_100": round(self.mistakes_per_100, 2)}


@dataclasses.dataclass
class BotSummary:
    bot: str
    total: Tally = dataclasses.field(default_factory=Tally)
    phases: dict[str, Tally] = dataclasses.field(
        default_factory=lambda: {p: Tally() for p in PHASE_GROUPS})

    def to_dict(self) -> dict[str, object]:
        return {"bot": self.bot, **self.total.to_dict(),
                "phases": {p: t.to_dict() for p, t in self.phases.items()}}


def summarize(decisions: Iterable[DecisionAnalysis]) -> list[BotSummary]:
    """One summary per bot, in order of first appearance."""
    by_bot: dict[str, BotSummary] = {}
    for d in decisions:
        s = by_bot.setdefault(d.bot, BotSummary(d.bot))
        s.total.add(d)
        s.phases[d.phase].add(d)
    return list(by_bot.values())


def render_table(summaries: Sequence[BotSummary]) -> str:
    """Per bot: decisions, average loss, mistakes per 100, and the same by phase
    (``mistakes/100 (decisions)``)."""
    headers = ["Bot", "Decisions", "Avg loss", "Mistakes/100",
               *[f"{p} m/100 (n)" for p in PHASE_GROUPS]]
    rows = []
    for s in summaries:
        rows.append([s.bot, s.total.decisions, f"{s.total.average_loss:.3f}",
                     f"{s.total.mistakes_per_100:.1f}",
                     *[f"{t.mistakes_per_100:.1f} ({t.decisions})" if t.decisions else "-"
                       for t in (s.phases[p] for p in PHASE_GROUPS)]])
    return tabulate(rows, headers=headers)
