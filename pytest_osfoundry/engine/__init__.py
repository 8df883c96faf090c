"""The fake Graph engine and Faker-made session metadata.

* :mod:`~pytest_osfoundry.engine._graph` — a Graph as data (:class:`Graph`, durations,
  :class:`ResultText`).
* :mod:`~pytest_osfoundry.engine._fake_engine` — :class:`FakeEngine`, the desktop's fleet
  engine on the kit's clock, and its :class:`EngineRun`.
* :mod:`~pytest_osfoundry.engine._contract` — what the relay needs of an engine
  (:class:`Engine`, :class:`StartedRun`) and how a run ended (:class:`RunOutcome`).
* :mod:`~pytest_osfoundry.engine._sessions` — :class:`SessionInfo`,
  :func:`make_sessions`, :func:`new_graph_session_id`.
"""

from pytest_osfoundry.engine._contract import Engine, RunOutcome, StartedRun
from pytest_osfoundry.engine._fake_engine import EngineRun, FakeEngine, GraphNotFound, RunNotFound
from pytest_osfoundry.engine._graph import (
    Duration,
    Fixed,
    Graph,
    LogNormal,
    ResultText,
    Uniform,
    served_graph,
)
from pytest_osfoundry.engine._sessions import SessionInfo, make_sessions, new_graph_session_id

__all__ = [
    "Duration",
    "Engine",
    "EngineRun",
    "FakeEngine",
    "Fixed",
    "Graph",
    "GraphNotFound",
    "LogNormal",
    "ResultText",
    "RunNotFound",
    "RunOutcome",
    "SessionInfo",
    "StartedRun",
    "Uniform",
    "make_sessions",
    "new_graph_session_id",
    "served_graph",
]
