"""The ladder's operator API, ``euchre.v1.LadderService``: the service's stub and
servicer base, its message types, and builders from plain values (registry entrants,
standings rows, stored games, events) to its messages and back, so the ladder and the
``ctl`` client never touch the generated code."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness._generated.euchre.v1 import ladder_pb2 as _lpb
from harness._generated.euchre.v1 import ladder_pb2_grpc as _lrpc
from harness._generated.euchre.v1.ladder_pb2 import (
    BotBenched,
    BotConnected,
    GameFinished,
    GetBuildLogRequest,
    GetBuildLogResponse,
    GetStandingsRequest,
    GetStandingsResponse,
    LadderBot,
    LadderGame,
    LadderStanding,
    LiftBenchRequest,
    LiftBenchResponse,
    ListGamesRequest,
    ListGamesResponse,
    NewVersionRequest,
    NewVersionResponse,
    RatingChanged,
    RegisterBotRequest,
    RegisterBotResponse,
    RestoreBotRequest,
    RestoreBotResponse,
    RetireBotRequest,
    RetireBotResponse,
    RotateTokenRequest,
    RotateTokenResponse,
    SubmitBotRequest,
    SubmitBotResponse,
    WatchLadderRequest,
    WatchLadderResponse,
)
from harness._generated.euchre.v1.referee_pb2 import BundleFormat, SubmitHeader

__all__ = [
    "BUNDLE_FORMATS", "SERVICE_NAME", "BotBenched", "BotConnected", "BundleFormat",
    "GameFinished", "GetBuildLogRequest", "GetBuildLogResponse", "GetStandingsRequest",
    "GetStandingsResponse", "LadderBot", "LadderGame", "LadderServiceServicer",
    "LadderServiceStub", "LadderStanding", "LiftBenchRequest", "LiftBenchResponse",
    "ListGamesRequest", "ListGamesResponse", "NewVersionRequest", "NewVersionResponse",
    "RatingChanged", "RegisterBotRequest", "RegisterBotResponse", "RestoreBotRequest",
    "RestoreBotResponse", "RetireBotRequest", "RetireBotResponse", "RotateTokenRequest",
    "RotateTokenResponse", "SubmitBotRequest", "SubmitBotResponse", "SubmitHeader",
    "WatchLadderRequest", "WatchLadderResponse", "add_to_server",
    "bot", "bundle_format", "event_to_dict", "game", "game_to_dict", "standing",
    "standing_to_dict",
]

SERVICE_NAME: str = _lpb.DESCRIPTOR.services_by_name["LadderService"].full_name
LadderServiceServicer = _lrpc.LadderServiceServicer
LadderServiceStub = _lrpc.LadderServiceStub
add_to_server = _lrpc.add_LadderServiceServicer_to_server

BUNDLE_FORMATS: dict[str, BundleFormat.ValueType] = {"tar.gz": BundleFormat.BUNDLE_FORMAT_TAR_GZ,
                                  "zip": BundleFormat.BUNDLE_FORMAT_ZIP}
"""A bundle's format (as :mod:`harness.hosting.bundle` names it) -> its enum value."""


def bundle_format(value: int) -> str:
    """The format name of a SubmitHeader's ``format`` ("" if unset or unknown)."""
    return next((name for name, number in BUNDLE_FORMATS.items() if number == value), "")


def header_format(value: int) -> str:
    """The format name of a SubmitHeader's ``format``; ValueError (saying which formats
    there are) if it is unset or unknown."""
    name = bundle_format(value)
    if not name:
        raise ValueError(f"the header's format must be one of {', '.join(BUNDLE_FORMATS)}")
    return name


def bot(*, name: str, base: str, version: int, owner: str, description: str,
        concurrency: int, created_at: str, retired: bool,
        build_state: str | None = None) -> LadderBot:
    """A LadderBot from a registry entrant's fields; ``build_state`` for a hosted bot."""
    return LadderBot(name=name, base=base, version=version, owner=owner,
                     description=description, concurrency=concurrency,
                     created_at=created_at, retired=retired, hosted=build_state is not None,
                     build_state=build_state or "")


def standing(row: Mapping[str, Any], benched_reason: str = "",
             build_state: str = "") -> LadderStanding:
    """A LadderStanding from a standings row (``LadderRatings.standings``: name, owner,
    elo (None when unrated or a sweep), ci95, games, score, sweep, lower, upper,
    retired, inherited_from), with a hosted bot's build state."""
    sweep = str(row.get("sweep") or "")
    bound = row.get("upper" if sweep == "all_lost" else "lower") if sweep else None
    rated = row.get("elo") is not None or bool(sweep)
    return LadderStanding(
        name=str(row["name"]), owner=str(row.get("owner") or ""), rated=rated,
        elo=float(row.get("elo") or 0.0), ci95=float(row.get("ci95") or 0.0),
        games=float(row.get("games") or 0.0), score=float(row.get("score") or 0.0),
        sweep=sweep, bound=float(bound or 0.0), retired=bool(row.get("retired")),
        benched_reason=benched_reason, inherited_from=str(row.get("inherited_from") or ""),
        build_state=build_state)


def standing_to_dict(s: LadderStanding) -> dict[str, Any]:
    """The inverse of :func:`standing`, as JSON-ready data."""
    return {"name": s.name, "owner": s.owner, "rated": s.rated,
            "elo": s.elo if s.rated and not s.sweep else None,
            "ci95": s.ci95 if s.rated and not s.sweep else None, "games": s.games,
            "score": s.score, "sweep": s.sweep or None,
            "bound": s.bound if s.sweep else None, "retired": s.retired,
            "benched": s.benched_reason or None, "inherited_from": s.inherited_from or None,
            "build": s.build_state or None}


def game(*, game_key: str, seats: Iterable[str], scores: Iterable[int], termination: str,
         finished_at: str, hands: int) -> LadderGame:
    return LadderGame(game_key=game_key, seats=list(seats), scores=list(scores),
                      termination=termination, finished_at=finished_at, hands=hands)


def game_to_dict(g: LadderGame) -> dict[str, Any]:
    return {"game_key": g.game_key, "seats": list(g.seats), "scores": list(g.scores),
            "termination": g.termination, "finished_at": g.finished_at, "hands": g.hands}


def event_to_dict(e: WatchLadderResponse) -> dict[str, Any]:
    """A watch message as ``{"event": KIND, ...}`` (KIND: game_finished,
    rating_changed, bot_connected, bot_benched)."""
    kind = e.WhichOneof("event")
    if kind == "game_finished":
        return {"event": kind, "game": game_to_dict(e.game_finished.game)}
    if kind == "rating_changed":
        return {"event": kind, "standings": [standing_to_dict(s)
                                             for s in e.rating_changed.standings]}
    if kind == "bot_connected":
        return {"event": kind, "name": e.bot_connected.name}
    if kind == "bot_benched":
        b = e.bot_benched
        return {"event": kind, "name": b.name, "reason": b.reason, "until": b.until}
    return {"event": "unknown"}
