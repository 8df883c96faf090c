"""The suite's options: each ``--osf-...`` flag, also read from ``OSF_...`` in the environment.

Their help names no file a reader might not have (a wheel holds no ``docs/`` or
``benchmarks/``): what it points at is an importable module
(``tests/test_docs_installed.py``).

The environment variable of an option is its flag upper-cased with ``-`` turned into
``_`` and the leading dashes dropped (``--osf-agent-token`` ↔ ``OSF_AGENT_TOKEN``), so
CI secrets need no command line. A value on the command line wins over the
environment. :func:`add_options` registers them under pytest's ``osfoundry`` group;
:meth:`Settings.from_config` reads them back, validated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_osfoundry.conformance.expected import LEGACY_REVISIONS, MODERN_REVISION

__all__ = [
    "CREDENTIAL_KEYS",
    "CREDENTIAL_VARIABLES",
    "OPTIONS",
    "OptionSpec",
    "Settings",
    "add_options",
    "env_name",
    "read_credentials",
]

Kind = Literal["text", "flag", "int", "seconds", "level", "protocol"]
PROTOCOLS = ("auto", MODERN_REVISION, *LEGACY_REVISIONS)


@dataclass(frozen=True)
class OptionSpec:
    """One option: its flag, what it means, and how its value is read."""

    flag: str
    help: str
    kind: Kind = "text"
    metavar: str | None = None
    secret: bool = False

    @property
    def dest(self) -> str:
        """The attribute pytest stores the value under (``osf_agent_token``)."""
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def env(self) -> str:
        """The environment variable read when the flag is not given."""
        return env_name(self.flag)


def env_name(flag: str) -> str:
    """``--osf-agent-token`` → ``OSF_AGENT_TOKEN``."""
    return flag.lstrip("-").replace("-", "_").upper()


CREDENTIAL_KEYS = (
    "agent_token",
    "other_agent_token",
    "read_token",
    "desktop_token",
    "project_id",
    "stranger_token",
    "stranger_desktop_token",
    "stranger_project_id",
)
"""The keys ``--osf-credentials`` reads: each the name of an option without ``osf_``
(``agent_token`` → ``--osf-agent-token``), as ``osfoundry-fake serve`` prints them."""

#: Every option of the suite, in ``--help`` order.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "--osf-target",
        "what to check: the MCP endpoint URL of a server (runs the installed conformance "
        "suite when no test paths are given), 'embedded' (the kit's reference server on "
        "a loopback port), or 'embedded:MODULE:FACTORY' (your own in-process server: "
        "FACTORY() returns a handler with provision())",
        metavar="URL|embedded",
    ),
    OptionSpec(
        "--osf-relay-command",
        "check a desktop relay instead of a server: the command that starts your relay's "
        "adapter (split as a shell would, no shell), started for each check with "
        "OSF_RELAY_URL, OSF_DESKTOP_TOKEN, OSF_RELAY_DRIVER, OSF_RELAY_STATE_DIR and the "
        "timing variables in its environment; or 'embedded', the kit's own fake relay "
        "behind its adapter (python -m pytest_osfoundry.relay.driven, a worked example); "
        "runs the installed relay suite when no test paths are given",
        metavar="CMD|embedded",
    ),
    OptionSpec(
        "--osf-relay-realtime",
        "also run the opt-in real-time relay checks: the relay started without the timing "
        "variables, its production 20 s passes and 3 s control polls measured (slow)",
        kind="flag",
    ),
    OptionSpec(
        "--osf-relay-concurrency",
        "how many relay checks run at once, each with its own relay process (default 8, "
        "the fastest measured; 1 runs them one after another)",
        kind="int",
        metavar="N",
    ),
    OptionSpec(
        "--osf-relay-record",
        "keep every relay check's record, passed or failed, as DIR/<check id>.json: each "
        "request its relay sent, whole, with its length as JSON.stringify counts; the "
        "driver's runs and cancels; the relay's stderr lines about the check's commands",
        metavar="DIR",
    ),
    # -- the agent suite (issue 45) --------------------------------------------------
    OptionSpec(
        "--osf-agent-command",
        "check an agent, CLI or MCP client: the command that starts it (split as a shell "
        "would, no shell), started once per check with OSF_AGENT_MCP_URL, OSF_AGENT_TOKEN, "
        "OSF_AGENT_TASK and the rest of the contract in its environment; or 'embedded', "
        "the kit's own agent (python -m pytest_osfoundry.agent); runs the installed agent "
        "suite when no test paths are given",
        metavar="CMD|embedded",
    ),
    OptionSpec(
        "--osf-agent-interval",
        "the agent suite's pickup interval in seconds (default 2, the scaled tier): the "
        "tickets' poll_after_seconds and OSF_AGENT_PICKUP_INTERVAL; Graph durations, the "
        "desktop's passes and every threshold scale with it (not with --osf-agent-realtime)",
        kind="seconds",
        metavar="SECONDS",
    ),
    OptionSpec(
        "--osf-agent-blind",
        "give the agent an opaque OSF_AGENT_SCENARIO, so that it cannot branch on the check",
        kind="flag",
    ),
    OptionSpec(
        "--osf-agent-concurrency",
        "how many agent checks run at once, each with its own agent process (default 8, "
        "32 with --osf-agent-realtime; 1 runs them one after another)",
        kind="int",
        metavar="N",
    ),
    OptionSpec(
        "--osf-agent-record",
        "keep every agent check's record, passed or failed, as DIR/<check id>.json: each "
        "MCP request its agent sent and what it was answered, its exit code, its report, "
        "what it printed, and the check's measures",
        metavar="DIR",
    ),
    OptionSpec(
        "--osf-agent-realtime",
        "run the agent suite at the production rhythm (slow: minutes): pickup interval "
        "20 s (the tickets' poll_after_seconds), the desktop's 3 s control polls, Graph "
        "durations unscaled, and no OSF_AGENT_PICKUP_INTERVAL in the agent's "
        "environment: proves an agent with hard-coded production timing or an LLM "
        "harness; not with --osf-agent-interval",
        kind="flag",
    ),
    OptionSpec(
        "--osf-agent-restart",
        "also run the agent checks that restart the agent (opt-in): the agent killed "
        "(SIGKILL) after a start whose reply was lost, started again with the same "
        "OSF_AGENT_STATE_DIR, must resume with the same key or command id",
        kind="flag",
    ),
    # -- end of the agent suite's options ------------------------------------------
    OptionSpec(
        "--osf-relay-url",
        "base URL of the desktop relay API (default: the target's origin)",
        metavar="URL",
    ),
    OptionSpec(
        "--osf-agent-token",
        "bearer token of a connected agent with osfoundry:read and osfoundry:run",
        metavar="TOKEN",
        secret=True,
    ),
    OptionSpec(
        "--osf-other-agent-token",
        "a second agent of the same account and project, both scopes (D6, R5)",
        metavar="TOKEN",
        secret=True,
    ),
    OptionSpec(
        "--osf-read-token",
        "an agent of the project with osfoundry:read only (R2)",
        metavar="TOKEN",
        secret=True,
    ),
    OptionSpec(
        "--osf-desktop-token",
        "the owner's desktop relay token (the suite plays the desktop)",
        metavar="TOKEN",
        secret=True,
    ),
    OptionSpec(
        "--osf-project-id",
        "the project the agents are connected to; the suite shares its own fixed sessions in it",
        metavar="ID",
    ),
    OptionSpec(
        "--osf-stranger-token",
        "an agent of ANOTHER account, both scopes (cross-account checks)",
        metavar="TOKEN",
        secret=True,
    ),
    OptionSpec(
        "--osf-stranger-desktop-token",
        "the desktop token of that other account (R12, R13)",
        metavar="TOKEN",
        secret=True,
    ),
    OptionSpec(
        "--osf-stranger-project-id",
        "a project of that other account with nothing shared (D4, R3)",
        metavar="ID",
    ),
    OptionSpec(
        "--osf-credentials",
        "a JSON object of credentials, such as the line osfoundry-fake serve prints: its "
        + ", ".join(CREDENTIAL_KEYS)
        + " fill the options of those names not given on the command line or in the "
        "environment; other keys (mcp_url, relay_url, ...) are ignored: the target is "
        "named by --osf-target alone",
        metavar="PATH",
    ),
    OptionSpec("--osf-report", "write the results as JSON to PATH", metavar="PATH"),
    OptionSpec(
        "--osf-markdown", "write a Markdown table (for a CI step summary) to PATH", metavar="PATH"
    ),
    OptionSpec(
        "--osf-baseline",
        "file of known-failing check ids: listed and failing is "
        "expected (exit 0), listed and passing is a stale entry (exit 1)",
        metavar="PATH",
    ),
    OptionSpec(
        "--osf-write-baseline", "write the ids of the checks failing now to PATH", metavar="PATH"
    ),
    OptionSpec(
        "--osf-level",
        "'all' (default) or 'documented': leave out the checks of reconstructed behaviour",
        kind="level",
        metavar="documented|all",
    ),
    OptionSpec(
        "--osf-timing",
        "also run the opt-in D6 timing check (latency of another agent's id against a fresh one)",
        kind="flag",
    ),
    OptionSpec(
        "--osf-timing-samples",
        "requests per case in the timing check (default 60)",
        kind="int",
        metavar="N",
    ),
    OptionSpec(
        "--osf-strict",
        "count every check that could not run (a missing credential, an opt-in left out) "
        "as a failure: a CI gate cannot go green while checking little",
        kind="flag",
    ),
    OptionSpec(
        "--osf-protocol",
        "the MCP revision the domain checks speak: 'auto' (default: a modern request "
        "first, initialize when the target is legacy-only) or 2026-07-28, 2025-11-25, "
        "2025-06-18; the R1 transport checks cover every revision the target serves",
        kind="protocol",
        metavar="auto|REVISION",
    ),
    OptionSpec(
        "--osf-timeout",
        "seconds each HTTP exchange may take in all: connect, headers, body (default 10)",
        kind="int",
        metavar="SECONDS",
    ),
    OptionSpec(
        "--osf-concurrency",
        "how many checks run at once in this process (default 32, the fastest measured "
        "against a far server; 1 runs them one after another)",
        kind="int",
        metavar="N",
    ),
    OptionSpec(
        "--osf-max-response",
        "largest HTTP response body read, in MiB (default 16)",
        kind="int",
        metavar="MIB",
    ),
)

CREDENTIAL_VARIABLES: tuple[str, ...] = tuple(spec.env for spec in OPTIONS if spec.secret)
"""The environment variables the suite reads credentials from: a command under test
does not inherit them from pytest's environment (a relay or agent is handed only the
credentials its contract names)."""

_BY_DEST = {spec.dest: spec for spec in OPTIONS}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def add_options(parser: pytest.Parser) -> None:
    """Register every ``--osf-...`` option of the suite in the ``osfoundry`` group."""
    group = parser.getgroup("osfoundry", "osfoundry: conformance suite and fixtures")
    for spec in OPTIONS:
        text = f"{spec.help} [env: {spec.env}]"
        if spec.kind == "flag":
            group.addoption(spec.flag, action="store_true", default=None, dest=spec.dest, help=text)
        else:
            group.addoption(
                spec.flag,
                action="store",
                default=None,
                dest=spec.dest,
                metavar=spec.metavar,
                help=text,
            )


@dataclass(frozen=True)
class Settings:
    """The suite's options as given (command line first, then environment), validated."""

    osf_target: str | None = None
    osf_relay_command: str | None = None
    osf_relay_realtime: bool = False
    osf_relay_concurrency: int = 8
    osf_relay_record: str | None = None
    osf_agent_command: str | None = None  # the agent suite (issue 45): five fields
    osf_agent_interval: float | None = None  # None: the tier's (2 s scaled, 20 s real time)
    osf_agent_blind: bool = False
    osf_agent_concurrency: int | None = None  # None: the tier's (8 scaled, 32 real time)
    osf_agent_record: str | None = None
    osf_agent_realtime: bool = False
    osf_agent_restart: bool = False
    osf_relay_url: str | None = None
    osf_agent_token: str | None = None
    osf_other_agent_token: str | None = None
    osf_read_token: str | None = None
    osf_desktop_token: str | None = None
    osf_project_id: str | None = None
    osf_stranger_token: str | None = None
    osf_stranger_desktop_token: str | None = None
    osf_stranger_project_id: str | None = None
    osf_credentials: str | None = None
    osf_report: str | None = None
    osf_markdown: str | None = None
    osf_baseline: str | None = None
    osf_write_baseline: str | None = None
    osf_level: str = "all"
    osf_timing: bool = False
    osf_timing_samples: int = 60
    osf_strict: bool = False
    osf_timeout: int = 10
    osf_concurrency: int = 32  # chosen by benchmarks/bench_latency.py (docs/choices.md)
    osf_max_response: int = 16
    osf_protocol: str = "auto"

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and _BY_DEST[f.name].secret:
                value = "***"
            shown.append(f"{f.name}={value!r}")
        return f"Settings({', '.join(shown)})"

    @property
    def active(self) -> bool:
        """Whether a target was given (the suite's hooks do nothing otherwise)."""
        return bool(self.osf_target)

    @property
    def relay_active(self) -> bool:
        """Whether a relay command was given (the relay suite runs)."""
        return bool(self.osf_relay_command)

    @property
    def agent_active(self) -> bool:
        """Whether an agent command was given (the agent suite runs)."""
        return bool(self.osf_agent_command)

    def secrets(self) -> list[str]:
        """Every credential given, for masking."""
        return [value for spec in OPTIONS if spec.secret and (value := getattr(self, spec.dest))]

    @classmethod
    def from_values(
        cls, given: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Build from option values (``None`` = not given) and an environment.

        An environment variable that is set but empty (or blank) is an error, not
        "not given": an undefined CI secret expands to exactly that, and treating it as
        absent would let the suite skip what it cannot check and still pass. A
        credential neither given nor in the environment is taken from the
        ``--osf-credentials`` file, when one is named.

        Raises:
            pytest.UsageError: a value is malformed or an ``OSF_...`` variable is empty;
                the message names the option and its environment variable. Or the
                credentials file cannot be read, is not a JSON object, names none of
                :data:`CREDENTIAL_KEYS` or gives one as anything but a non-empty text.
                Or ``--osf-agent-realtime`` is given with ``--osf-agent-interval``.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in OPTIONS:
            value = _read(spec, given.get(spec.dest), env)
            if value is not None:
                values[spec.dest] = value
        if "osf_credentials" in values:
            for key, value in read_credentials(values["osf_credentials"]).items():
                values.setdefault(f"osf_{key}", value)
        if values.get("osf_agent_realtime") and "osf_agent_interval" in values:
            raise pytest.UsageError(
                "--osf-agent-realtime runs at the production 20 s pickup interval: leave out "
                "--osf-agent-interval (or OSF_AGENT_INTERVAL), which sets the scaled tier's"
            )
        return cls(**values)

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """The settings of a pytest run (its options, then the environment)."""
        given = {spec.dest: config.getoption(spec.dest, None) for spec in OPTIONS}
        return cls.from_values(given)

    @classmethod
    def readable(cls, config: pytest.Config, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings of a run whose options were refused: each option that can be
        read as :meth:`from_values` reads it, any other left at its default -- what the
        refused run's reports are written with (where to, about which checks)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in OPTIONS:
            try:
                value = _read(spec, config.getoption(spec.dest, None), env)
            except pytest.UsageError:
                continue
            if value is not None:
                values[spec.dest] = value
        return cls(**values)


def read_credentials(path: str) -> dict[str, str]:
    """The credentials in the JSON file at ``path`` (see :data:`CREDENTIAL_KEYS`); the
    messages of its errors quote no value, so no token.

    Raises:
        pytest.UsageError: one line naming ``--osf-credentials``, the file and what is
            wrong with it.
    """
    where = f"--osf-credentials: {path}"
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as err:
        raise pytest.UsageError(f"{where} cannot be read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise pytest.UsageError(f"{where} is not UTF-8 text") from None
    if not text.strip():
        raise pytest.UsageError(
            f"{where} is empty: has the server written its JSON line there yet?"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise pytest.UsageError(
            f"{where} is not one JSON object (line {err.lineno}, column {err.colno})"
        ) from None
    if not isinstance(data, dict):
        raise pytest.UsageError(f"{where} is not a JSON object")
    found: dict[str, str] = {}
    for key in CREDENTIAL_KEYS:
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise pytest.UsageError(f"{where}: {key} must be a non-empty text")
        found[key] = value.strip()
    if not found:
        raise pytest.UsageError(f"{where} holds none of {', '.join(CREDENTIAL_KEYS)}")
    return found


def _read(spec: OptionSpec, raw: Any, env: Mapping[str, str]) -> Any:
    """The value of one option: ``raw`` (given) or its environment variable, converted;
    ``None`` when neither is given.

    Raises:
        pytest.UsageError: the value is malformed or the variable is set but empty.
    """
    source = spec.flag
    if isinstance(raw, str) and raw.strip() == "":
        raise pytest.UsageError(f"{spec.flag} is empty: give it a value or leave it out")
    if raw is None:
        raw = env.get(spec.env)
        source = spec.env
        if raw is not None and raw.strip() == "":
            raise pytest.UsageError(
                f"{spec.env} is set but empty: give it a value or unset it "
                f"(an undefined CI secret expands to an empty string) [{spec.flag}]"
            )
    if raw is None:
        return None
    return _convert(spec, raw, source)


def _convert(spec: OptionSpec, raw: Any, source: str) -> Any:
    if spec.kind == "flag":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise pytest.UsageError(f"{source}: expected 1/0, true/false or yes/no, got {raw!r}")
    if spec.kind == "int":
        try:
            number = int(str(raw).strip())
        except ValueError:
            raise pytest.UsageError(f"{source}: expected a whole number, got {raw!r}") from None
        if number < 1:
            raise pytest.UsageError(f"{source}: must be at least 1, got {number}")
        return number
    if spec.kind == "seconds":
        try:
            seconds = float(str(raw).strip())
        except ValueError:
            raise pytest.UsageError(
                f"{source}: expected a number of seconds, got {raw!r}"
            ) from None
        if not 0.05 <= seconds <= 600:
            raise pytest.UsageError(
                f"{source}: must be between 0.05 and 600 seconds, got {raw!r}"
            )
        return seconds
    text = str(raw).strip()
    if spec.kind == "level" and text not in ("documented", "all"):
        raise pytest.UsageError(f"{source}: expected 'documented' or 'all', got {raw!r}")
    if spec.kind == "protocol" and text not in PROTOCOLS:
        raise pytest.UsageError(f"{source}: expected one of {', '.join(PROTOCOLS)}, got {raw!r}")
    return text
