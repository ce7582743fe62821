"""Decision analysis of stored games: each decision's legal actions valued by search from
the deciding seat's information only, the chosen action's loss against the best, and
per-bot tables (``euchre-harness analyze``; docs/research.md)."""

from harness.analysis.evaluate import (
    PHASE_GROUPS,
    Analysis,
    DecisionAnalysis,
    analyze_position,
    analyze_record,
    phase_group,
)
from harness.analysis.table import BotSummary, render_table, summarize

__all__ = ["PHASE_GROUPS", "Analysis", "BotSummary", "DecisionAnalysis", "analyze_position",
           "analyze_record", "phase_group", "render_table", "summarize"]
