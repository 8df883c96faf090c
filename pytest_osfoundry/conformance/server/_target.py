"""What the suite checks: a server at a URL, or an embedded one it starts itself.

``--osf-target`` takes one of:

* an ``http(s)://`` URL of the MCP endpoint. The relay API is at
  ``--osf-relay-url``, by default the URL's origin; credentials come from the
  ``--osf-...-token`` options.
* ``embedded``: the kit's :class:`~pytest_osfoundry.server.ReferenceServer`, served
  by a :class:`~pytest_osfoundry.server.LoopbackServer` (threads of this process) on a
  loopback port (one per pytest process, so one per xdist worker) and tested over
  real HTTP, with every credential made by its ``provision()``.
* ``embedded:MODULE:FACTORY``: the same, with the server built by ``FACTORY()``
  imported from ``MODULE``. The factory returns an HTTP handler
  (``Request -> Response``, see :mod:`pytest_osfoundry.http`) that also has a
  ``provision()`` method returning an object with the attributes of
  :class:`~pytest_osfoundry.server.Provisioned`, and optionally an ``mcp_path``
  attribute (default ``/mcp``). The kit's broken variants
  (:mod:`tests.conformance.variants`) are such factories. The server object stays
  this process's, so a test can look at it afterwards.
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pytest_osfoundry._origin import origin_of
from pytest_osfoundry.client import (
    HttpTransport,
    McpClient,
    ReplyLost,
    Transport,
    mask_token,
    mask_url,
)
from pytest_osfoundry.client._internal import ACCEPT, request_body
from pytest_osfoundry.conformance.suite._internal import Settings
from pytest_osfoundry.server import LoopbackServer

__all__ = [
    "Credentials",
    "Target",
    "TargetError",
    "describe_target",
    "load_factory",
    "origin_of",
    "parse_target",
    "probe",
    "resolve_target",
]


class TargetError(Exception):
    """``--osf-target`` cannot be used as given; the message says how to fix it."""


@dataclass(frozen=True)
class Credentials:
    """The identities the suite plays. ``None`` means not given (checks needing it skip)."""

    agent_token: str | None = field(default=None, repr=False)
    other_agent_token: str | None = field(default=None, repr=False)
    read_token: str | None = field(default=None, repr=False)
    desktop_token: str | None = field(default=None, repr=False)
    project_id: str | None = None
    stranger_token: str | None = field(default=None, repr=False)
    stranger_desktop_token: str | None = field(default=None, repr=False)
    stranger_project_id: str | None = None

    def secrets(self) -> list[str]:
        """Every token held (for masking)."""
        return [
            t
            for t in (
                self.agent_token,
                self.other_agent_token,
                self.read_token,
                self.desktop_token,
                self.stranger_token,
                self.stranger_desktop_token,
            )
            if t
        ]


@dataclass
class Target:
    """A resolved target: where to send requests, as whom, and how to stop it."""

    kind: str
    label: str
    mcp_url: str
    relay_url: str
    creds: Credentials
    transport: Transport
    """What every request of the suite goes through: an
    :class:`~pytest_osfoundry.client.HttpTransport` bounded by ``--osf-timeout`` and
    ``--osf-max-response``."""
    timing_samples: int = 60
    protocol: str = "auto"
    """``--osf-protocol``: the MCP revision the domain checks speak (``auto`` or pinned)."""
    _loopback: LoopbackServer | None = None
    _closers: list[Callable[[], None]] = field(default_factory=list)
    sessions: dict[str, McpClient] = field(default_factory=dict)
    """Initialized MCP clients by role, reused by the checks of this process (one MCP
    session per role instead of one per check)."""
    _rpc_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1_000_000))

    def next_rpc_id(self) -> int:
        """A JSON-RPC id never used before in this process (MCP forbids reusing ids)."""
        return next(self._rpc_ids)

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` of the MCP endpoint."""
        return origin_of(self.mcp_url)

    def close(self) -> None:
        """Close the transport's connections and stop an embedded server (idempotent)."""
        close = getattr(self.transport, "close", None)
        if callable(close):
            close()
        if self._loopback is not None:
            self._loopback.close()
            self._loopback = None
        while self._closers:
            self._closers.pop()()


def parse_target(spec: str) -> tuple[str, str | None]:
    """``("url", url)`` or ``("embedded", "MODULE:FACTORY" or None)`` for a target spec.

    Raises:
        TargetError: the spec is neither a URL nor an ``embedded`` form.
    """
    text = spec.strip()
    if text == "embedded":
        return "embedded", None
    if text.startswith("embedded:"):
        ref = text[len("embedded:") :]
        if ref.count(":") != 1 or not all(ref.split(":")):
            raise TargetError(
                f"--osf-target={mask_url(spec)!r}: write embedded:MODULE:FACTORY, for example "
                "embedded:tests.conformance.variants:reference"
            )
        return "embedded", ref
    if origin_of(text, None) is None:
        raise TargetError(
            f"--osf-target={mask_url(spec)!r} is neither an http(s) URL of an MCP endpoint nor "
            "'embedded' / 'embedded:MODULE:FACTORY'"
        )
    return "url", text


def describe_target(settings: Settings) -> str:
    """A printable name of the target (tokens in a URL masked), without starting it."""
    if not settings.osf_target:
        if settings.osf_relay_command:
            return f"relay command {mask_token(settings.osf_relay_command, settings.secrets())}"
        return "(none)"
    try:
        kind, value = parse_target(settings.osf_target)
    except TargetError:
        return mask_url(settings.osf_target, settings.secrets())
    if kind == "embedded":
        return "embedded" if value is None else f"embedded:{value}"
    assert value is not None
    parts = urlsplit(value)
    clean = urlunsplit(
        (parts.scheme, origin_of(value).split("://", 1)[1], parts.path, parts.query, "")
    )
    return mask_url(clean, settings.secrets())


def load_factory(ref: str) -> Callable[[], Any]:
    """Import ``FACTORY`` from ``MODULE`` for ``"MODULE:FACTORY"``.

    Raises:
        TargetError: the module cannot be imported or has no such callable.
    """
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        hint = ""
        if isinstance(err, ModuleNotFoundError) and err.name == module_name.split(".")[0]:
            hint = (
                " (is the folder holding it on sys.path? `python -m pytest` adds the "
                "current folder, pytest's `pythonpath` setting any other)"
            )
        raise TargetError(f"embedded:{ref}: cannot import {module_name!r}: {err}{hint}") from err
    except Exception as err:  # a broken module: say so in one line, not a traceback
        raise TargetError(
            f"embedded:{ref}: importing {module_name!r} raised {type(err).__name__}: {err}"
        ) from err
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise TargetError(f"embedded:{ref}: {module_name} has no callable {attr!r}")
    return factory  # type: ignore[no-any-return]


def _embedded(settings: Settings, ref: str | None, transport: Transport) -> Target:
    if ref is None:
        from pytest_osfoundry.server import ReferenceServer

        server: Any = ReferenceServer()
    else:
        factory = load_factory(ref)
        try:
            server = factory()
        except Exception as err:
            raise TargetError(
                f"embedded:{ref}: the factory raised {type(err).__name__}: {err}"
            ) from err
    provision = getattr(server, "provision", None)
    if not callable(server) or not callable(provision):
        raise TargetError(
            f"embedded:{ref}: the factory must return a handler (Request -> Response) "
            "with a provision() method"
        )
    made = provision()
    mcp_path = str(getattr(server, "mcp_path", "/mcp"))
    loop = LoopbackServer(server)
    creds = Credentials(
        agent_token=getattr(made, "agent_token", None),
        other_agent_token=getattr(made, "other_agent_token", None),
        read_token=getattr(made, "read_token", None),
        desktop_token=getattr(made, "desktop_token", None),
        project_id=getattr(made, "project_id", None),
        stranger_token=getattr(made, "stranger_token", None) or None,
        stranger_desktop_token=getattr(made, "stranger_desktop_token", None) or None,
        stranger_project_id=getattr(made, "stranger_project_id", None) or None,
    )
    label = "embedded" if ref is None else f"embedded:{ref}"
    return Target(
        kind="embedded",
        label=label,
        mcp_url=loop.origin + mcp_path,
        relay_url=settings.osf_relay_url or loop.origin,
        creds=creds,
        transport=transport,
        timing_samples=settings.osf_timing_samples,
        _loopback=loop,
    )


def probe(target: Target) -> None:
    """Check that the target answers HTTP at all (any status will do).

    Raises:
        TargetError: no reply came back; the message names the URL and the cause.
    """
    try:
        target.transport.request(
            "POST",
            target.mcp_url,
            {"Content-Type": "application/json", "Accept": ACCEPT},
            request_body("ping", None, 0),
        )
    except ReplyLost as err:
        raise TargetError(
            f"cannot reach {target.label}: {type(err).__name__} ({err}); is the server up, "
            "and is --osf-target the URL of its MCP endpoint?"
        ) from None


KEEP_ALIVE_SPARE = 12
"""Connections kept open beyond ``--osf-concurrency``: a race check's simultaneous
callers (8) and the wire-schema checks' one client per revision (3), with one to spare."""


def resolve_target(settings: Settings) -> Target:
    """Resolve ``--osf-target``, starting the embedded server when asked.

    Raises:
        TargetError: no target, or one that cannot be used (the message says why).
    """
    if not settings.osf_target:
        raise TargetError("no target: pass --osf-target=URL or --osf-target=embedded")
    kind, value = parse_target(settings.osf_target)
    transport = HttpTransport(
        timeout=float(settings.osf_timeout),
        max_bytes=settings.osf_max_response * 1024 * 1024,
        keep=settings.osf_concurrency + KEEP_ALIVE_SPARE,  # none reopened in a run
    )
    try:
        if kind == "embedded":
            return _embedded(settings, value, transport)
        assert value is not None
        creds = Credentials(
            agent_token=settings.osf_agent_token,
            other_agent_token=settings.osf_other_agent_token,
            read_token=settings.osf_read_token,
            desktop_token=settings.osf_desktop_token,
            project_id=settings.osf_project_id,
            stranger_token=settings.osf_stranger_token,
            stranger_desktop_token=settings.osf_stranger_desktop_token,
            stranger_project_id=settings.osf_stranger_project_id,
        )
        return Target(
            kind="url",
            label=describe_target(settings),
            mcp_url=value,
            relay_url=settings.osf_relay_url or origin_of(value),
            creds=creds,
            transport=transport,
            timing_samples=settings.osf_timing_samples,
        )
    except BaseException:
        transport.close()
        raise
