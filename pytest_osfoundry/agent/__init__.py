"""The scripted agent and its poll strategies.

* :class:`ScriptedAgent` — queues runs over MCP, polls by a strategy, cancels, retries.
* Strategies: :class:`every`, :class:`backoff`, :class:`wait_then_every`,
  :data:`SEED_STRATEGIES` (the seed's six) and :func:`parse_strategy`.
"""

from pytest_osfoundry.agent._scripted import AgentRun, CallRecord, ScriptedAgent, ToolClient
from pytest_osfoundry.agent._strategies import (
    SEED_STRATEGIES,
    Strategy,
    backoff,
    every,
    parse_strategy,
    wait_then_every,
)

__all__ = [
    "SEED_STRATEGIES",
    "AgentRun",
    "CallRecord",
    "ScriptedAgent",
    "Strategy",
    "ToolClient",
    "backoff",
    "every",
    "parse_strategy",
    "wait_then_every",
]
