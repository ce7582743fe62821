"""The operator half of the protocol, ``euchre.v1.OperatorService``: the service's
stub and servicer base, its message types, and builders that turn plain values into its
messages and back, so the referee, the tournament service and the ``ctl`` client never
touch the generated code.

Tournament statuses are plain strings everywhere else (the same words the results store
keeps): ``pending``, ``running``, ``finished``, ``cancelled``, ``interrupted``, ``failed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness._generated.euchre.v1 import referee_pb2 as _rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as _rpc
from harness._generated.euchre.v1.referee_pb2 import (
    BotInfo,
    CancelTournamentRequest,
    CancelTournamentResponse,
    GetHostedBuildLogRequest,
    GetHostedBuildLogResponse,
    GetTournamentRequest,
    GetTournamentResponse,
    ListBotsRequest,
    ListBotsResponse,
    ListTournamentsRequest,
    ListTournamentsResponse,
    ResumeTournamentRequest,
    ResumeTournamentResponse,
    StartTournamentRequest,
    StartTournamentResponse,
    SubmitHostedBotRequest,
    SubmitHostedBotResponse,
    TournamentProgress,
    WatchTournamentRequest,
    WatchTournamentResponse,
)

__all__ = [
    "FINAL_STATUSES", "SERVICE_NAME", "STATUSES", "BotInfo", "CancelTournamentRequest",
    "CancelTournamentResponse", "GetHostedBuildLogRequest", "GetHostedBuildLogResponse",
    "GetTournamentRequest", "GetTournamentResponse",
    "ListBotsRequest", "ListBotsResponse", "ListTournamentsRequest",
    "ListTournamentsResponse", "OperatorServiceServicer", "OperatorServiceStub",
    "ResumeTournamentRequest", "ResumeTournamentResponse", "StartTournamentRequest",
    "StartTournamentResponse", "SubmitHostedBotRequest", "SubmitHostedBotResponse",
    "TournamentProgress", "WatchTournamentRequest",
    "WatchTournamentResponse", "add_to_server", "bot_info", "bot_state_name",
    "progress", "progress_to_dict", "status_name",
]

SERVICE_NAME: str = _rpb.DESCRIPTOR.services_by_name["OperatorService"].full_name
OperatorServiceServicer = _rpc.OperatorServiceServicer
OperatorServiceStub = _rpc.OperatorServiceStub
add_to_server = _rpc.add_OperatorServiceServicer_to_server

_STATUS_PB = {
    "pending": _rpb.TOURNAMENT_STATUS_PENDING,
    "running": _rpb.TOURNAMENT_STATUS_RUNNING,
    "finished": _rpb.TOURNAMENT_STATUS_FINISHED,
    "cancelled": _rpb.TOURNAMENT_STATUS_CANCELLED,
    "interrupted": _rpb.TOURNAMENT_STATUS_INTERRUPTED,
    "failed": _rpb.TOURNAMENT_STATUS_FAILED,
}
STATUSES: tuple[str, ...] = tuple(_STATUS_PB)
FINAL_STATUSES = frozenset({"finished", "cancelled", "interrupted", "failed"})
_STATUS_NAME: dict[int, str] = {int(v): k for k, v in _STATUS_PB.items()}

_BOT_STATE_PB = {
    "idle": _rpb.BOT_STATE_IDLE,
    "playing": _rpb.BOT_STATE_PLAYING,
    "disconnected": _rpb.BOT_STATE_DISCONNECTED,
}
_BOT_STATE_NAME: dict[int, str] = {int(v): k for k, v in _BOT_STATE_PB.items()}


def status_name(value: int) -> str:
    """``TOURNAMENT_STATUS_CANCELLED`` -> ``"cancelled"`` (``"unspecified"`` if unknown)."""
    return _STATUS_NAME.get(int(value), "unspecified")


def bot_state_name(value: int) -> str:
    return _BOT_STATE_NAME.get(int(value), "unspecified")


def progress(tournament_id: str, name: str, status: str, games_done: int,
             games_total: int, standings: Iterable[Mapping[str, Any]] = (),
             detail: str = "") -> TournamentProgress:
    """A TournamentProgress; ``standings`` rows have name, elo, ci95, games and score, and
    may have ``sweep`` and ``bound`` (see ``StandingsRow``)."""
    rows = [_rpb.StandingsRow(name=str(r["name"]), elo=float(r["elo"]),
                              ci95=float(r["ci95"]), games=int(r["games"]),
                              score=float(r["score"]), sweep=str(r.get("sweep") or ""),
                              bound=float(r.get("bound") or 0.0)) for r in standings]
    return TournamentProgress(tournament_id=tournament_id, name=name,
                              status=_STATUS_PB[status], games_done=games_done,
                              games_total=games_total, standings=rows, detail=detail)


def progress_to_dict(p: TournamentProgress) -> dict[str, Any]:
    """The inverse of :func:`progress`, as JSON-ready data."""
    return {
        "tournament_id": p.tournament_id, "name": p.name, "status": status_name(p.status),
        "games_done": p.games_done, "games_total": p.games_total, "detail": p.detail,
        "standings": [{"name": r.name, "elo": r.elo, "ci95": r.ci95, "games": r.games,
                       "score": r.score, "sweep": r.sweep or None,
                       "bound": r.bound if r.sweep else None} for r in p.standings],
    }


def bot_info(*, session_id: str, name: str, version: str, state: str, game_id: str,
             games_played: int, faults: int, peer: str) -> BotInfo:
    """A BotInfo; ``state`` is ``idle``, ``playing`` or ``disconnected``."""
    return BotInfo(session_id=session_id, name=name, version=version,
                   state=_BOT_STATE_PB[state], game_id=game_id, games_played=games_played,
                   faults=faults, peer=peer)
