"""Relays broken on purpose (one violation each) and legal variations, as commands.

``python -m tests.relay_conformance.broken NAME`` runs the kit's driven relay
(:mod:`pytest_osfoundry.relay.driven`) with one change, named by ``NAME``
(:data:`BROKEN` and :data:`LEGAL`). The relay suite must fail each broken one on
exactly the checks :data:`CAUGHT_BY` names, and pass every legal one.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_osfoundry._jslength import js_stringify, js_stringify_length
from pytest_osfoundry.client._errors import HttpStatusError
from pytest_osfoundry.client._relay_client import RelayClient
from pytest_osfoundry.clock import ProcessGen
from pytest_osfoundry.relay import _bounded, _desktop
from pytest_osfoundry.relay._bounded import bounded_completion
from pytest_osfoundry.relay._desktop import PassReason, PassRecord, ProjectShare
from pytest_osfoundry.relay._driver_seams import DriverError
from pytest_osfoundry.relay.driven import DrivenRelay, main

_LIMIT = 100_000
Patch = Callable[[], type[DrivenRelay]]


# ---------------------------------------------------------------- D13
class NoRecheck(DrivenRelay):
    def _still_shared(self, project_id: str, command: Mapping[str, Any]) -> bool:
        return True


class RecheckWithoutSlug(DrivenRelay):
    def _still_shared(self, project_id: str, command: Mapping[str, Any]) -> bool:
        share = self._shares.get(project_id)
        return bool(
            share and share.enabled and str(command.get("graph_session_id")) in share.sessions
        )


class _SyncThenRead:
    """A relay client that reads the relay's sharing once each sync has answered."""

    def __init__(self, inner: Any, read: Callable[[], object]) -> None:
        self.inner = inner
        self.read = read

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        commands: list[dict[str, Any]] = self.inner.sync(project_id, sessions)
        self.read()
        return commands

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class RecheckOncePerSync(DrivenRelay):
    """Reads the sharing once when a sync answers and re-checks each of its commands
    against that reading (so a change while an earlier command runs goes unseen)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.client = _SyncThenRead(self.client, self.refresh)

    def _handle(self, project_id: str, command: Mapping[str, Any]) -> ProcessGen:
        yield from super(DrivenRelay, self)._handle(project_id, command)  # no fresh read


class RecheckSyncedSlug(DrivenRelay):
    """Compares the sharing's slug with the slug it has just synced, not the command's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.synced_slugs: dict[str, str] = {}

    def _to_sync(self, share: ProjectShare) -> list[dict[str, Any]]:
        sessions = super()._to_sync(share)
        self.synced_slugs = {s["graph_session_id"]: s["slug"] for s in sessions}
        return sessions

    def _still_shared(self, project_id: str, command: Mapping[str, Any]) -> bool:
        share = self._shares.get(project_id)
        gsid = str(command.get("graph_session_id"))
        session = share.sessions.get(gsid) if share is not None and share.enabled else None
        return session is not None and session["slug"] == self.synced_slugs.get(gsid)


class RecheckMissingShared(DrivenRelay):
    """Cancels only what the sharing list says is off (a session unticked, a project
    disabled, a slug renamed): a session or project missing from it counts as shared."""

    def _still_shared(self, project_id: str, command: Mapping[str, Any]) -> bool:
        try:
            projects = self.driver.sharing()["projects"]
        except DriverError:
            return False
        gsid = command.get("graph_session_id")
        project = next((p for p in projects if p.get("project_id") == project_id), None)
        if project is None:
            return True
        if not project.get("enabled"):
            return False
        session = next((s for s in project["sessions"] if s["graph_session_id"] == gsid), None)
        if session is None:
            return True
        return bool(session.get("ticked")) and session.get("slug") == command.get("slug")


# ---------------------------------------------------------------- D18
def _bound_by(measure: Callable[[dict[str, Any]], int]) -> Callable[..., dict[str, Any]]:
    def bounded(**kwargs: Any) -> dict[str, Any]:
        full = bounded_completion(**{**kwargs, "result": None})
        full["result"] = kwargs.get("result")
        if measure(full) <= _LIMIT:
            return full
        return {k: v for k, v in full.items() if k != "result"} | {"result_truncated": True}

    return bounded


def _bytes(body: dict[str, Any]) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _code_points(body: dict[str, Any]) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _go_escapes(body: dict[str, Any]) -> int:
    """As Go's ``encoding/json`` writes it: ``JSON.stringify``'s text with ``<``, ``>``,
    ``&``, U+2028 and U+2029 escaped as ``\\u003c`` etc. (five units more each)."""
    text = js_stringify(body)
    return _utf16_units(text) + 5 * sum(text.count(c) for c in "<>&\u2028\u2029")


def _python_compact(body: dict[str, Any]) -> int:
    """Python's compact ``json.dumps`` (non-ASCII as is), in UTF-16 units: only its
    numbers differ (``1.0``, ``-0.0``, ``5e-07``, an int's every digit)."""
    return _utf16_units(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def _python_default(body: dict[str, Any]) -> int:
    """Python's ``json.dumps`` as it comes: non-ASCII escaped, ``", "`` and ``": "``."""
    return len(json.dumps(body))


def _no_truncation_mark(**kwargs: Any) -> dict[str, Any]:
    """Over the bound: ``result: null`` where the truncated form's mark belongs."""
    body = bounded_completion(**kwargs)
    if body.pop("result_truncated", None):
        body = {"execution_id": body["execution_id"], "status": body["status"], "result": None}
    return body


def _partial(**kwargs: Any) -> dict[str, Any]:
    body = bounded_completion(**kwargs)
    result = kwargs.get("result")
    if "result_truncated" in body and isinstance(result, dict) and "text" in result:
        text = str(result["text"])
        while text and js_stringify_length({**body, "result": {"text": text}}) > _LIMIT:
            text = text[: len(text) - max(1, (js_stringify_length({"text": text}) - _LIMIT) + 200)]
        body = {k: v for k, v in body.items() if k != "result_truncated"}
        body["result"] = {"text": text}
    return body


def _error_uncut(**kwargs: Any) -> dict[str, Any]:
    body = bounded_completion(**kwargs)
    if kwargs.get("error") is not None:
        body["error"] = kwargs["error"]
    return body


def _utf16_cut(decode_errors: str) -> Callable[..., str]:
    """An error cut at 2,000 UTF-16 units as ``slice(0, 2000)`` cuts it: an emoji across
    the cut leaves its first half, kept (``surrogatepass``: posted escaped, ``\\ud83d``)
    or replaced by U+FFFD (``replace``: what Rust's or Go's lossy decoding makes of it)."""

    def cut(error: str, limit: int = 2_000) -> str:
        units = error.encode("utf-16-le", "surrogatepass")
        return units[: 2 * limit].decode("utf-16-le", decode_errors)

    return cut


def _utf16_cut_encoded(error: str, limit: int = 2_000) -> str:
    """``slice(0, 2000)`` then a UTF-8 encoder that writes ``?`` for the lone half emoji
    (Java's ``String.getBytes``)."""
    return _utf16_cut("surrogatepass")(error, limit).encode("utf-8", "replace").decode("utf-8")


def _cut_bytes(error: str, limit: int = 2_000) -> str:
    return error.encode("utf-8")[:limit].decode("utf-8", "ignore")


def _cut_code_points(error: str, limit: int = 2_000) -> str:
    return error[:limit]


def _patch_cut(cut: Callable[..., str]) -> Patch:
    def patch() -> type[DrivenRelay]:
        setattr(_bounded, "cut_error", cut)  # noqa: B010 - how this relay cuts its errors
        return DrivenRelay

    return patch


def _patch_bound(bounded: Callable[..., dict[str, Any]]) -> Patch:
    def patch() -> type[DrivenRelay]:
        setattr(_desktop, "bounded_completion", bounded)  # noqa: B010 - a broken relay
        return DrivenRelay

    return patch


# ---------------------------------------------------------------- D17
class NoOutbox(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "outbox": False})


class OutboxAfterPost(DrivenRelay):
    def _complete(self, command_id: str, body: dict[str, Any]) -> None:
        assert self.outbox is not None
        try:
            self.client.complete(command_id, body)
        except Exception:
            self.outbox.put(command_id, body)


class ResendDelivered(DrivenRelay):
    def _post(self, command_id: str, body: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):  # kept in the outbox, never removed
            self.client.complete(command_id, body)


class DiesOn5xx(DrivenRelay):
    def _event(
        self, kind: str, command_id: str | None = None, detail: str = "", error: Any = None
    ) -> None:
        super()._event(kind, command_id, detail, error)
        if (isinstance(error, HttpStatusError) and error.status >= 500) or "HTTP 5" in detail:
            sys.stderr.write(f"fatal: {detail}\n")
            sys.stderr.flush()
            import os

            os._exit(1)


# ---------------------------------------------------------------- D11 / D12
class TwoAtOnce(DrivenRelay):
    def _pass(self, record: PassRecord) -> ProcessGen:
        self.refresh()
        self._flush_outbox()
        for project_id, share in list(self._shares.items()):
            if not share.enabled:
                continue
            try:
                commands = self.client.sync(project_id, self._to_sync(share))
            except Exception:
                continue
            for command in commands:
                self.clock.start(self._handle(project_id, command), name="parallel")
        self._busy = False
        record.ended_at = self.clock.now()
        return
        yield


class OverlappingPasses(DrivenRelay):
    def _tick(self, reason: PassReason, *, reschedule: bool = True) -> None:
        self._busy = False  # never seen busy: a pass starts whatever runs
        super()._tick(reason, reschedule=reschedule)


class NoSharingPass(DrivenRelay):
    def sharing_changed(self) -> None:
        return None


class SyncsDisabled(DrivenRelay):
    def _pass(self, record: PassRecord) -> ProcessGen:
        self.refresh()
        for share in self._shares.values():
            share.enabled = True
        yield from super(DrivenRelay, self)._pass(record)


class FirstProjectOnly(DrivenRelay):
    def _pass(self, record: PassRecord) -> ProcessGen:
        self.refresh()
        first = next((pid for pid, share in self._shares.items() if share.enabled), None)
        for pid, share in self._shares.items():
            share.enabled = share.enabled and pid == first
        yield from super(DrivenRelay, self)._pass(record)


class SendsUnticked(DrivenRelay):
    def _to_sync(self, share: ProjectShare) -> list[dict[str, Any]]:
        out = super()._to_sync(share)
        for project in self.driver.sharing()["projects"]:
            for session in project["sessions"]:
                if not session.get("ticked") and len(out) < 100:
                    out.append({k: v for k, v in session.items() if k != "ticked"})
        return out


class IgnoresControlPoll(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "control_poll": 3.0})


class IgnoresInterval(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "interval": 20.0})


# ---------------------------------------------------------------- D14 / D15 / D16
class NoUuidCheck(DrivenRelay):
    def _handle(self, project_id: str, command: Mapping[str, Any]) -> ProcessGen:
        original = getattr(_desktop, "is_uuid")  # noqa: B009
        setattr(_desktop, "is_uuid", lambda value: isinstance(value, str))  # noqa: B010
        try:
            yield from super()._handle(project_id, command)
        finally:
            setattr(_desktop, "is_uuid", original)  # noqa: B010


class RunsCancelledStart(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inner = self.client

        class Client:
            def sync(self, p: str, s: list[dict[str, Any]]) -> list[dict[str, Any]]:
                return inner.sync(p, s)

            def start(self, c: str, e: str) -> str:
                inner.start(c, e)
                return "running"  # whatever the server said

            def control(self, c: str) -> dict[str, Any]:
                return inner.control(c)

            def complete(self, c: str, b: Mapping[str, Any]) -> dict[str, Any]:
                return inner.complete(c, b)

        self.client = Client()


class CancelsTwice(DrivenRelay):
    def _cancel_requested(self, command_id: str) -> bool:
        asked = super()._cancel_requested(command_id)
        if asked and self.current_run is not None:
            self.current_run.cancel()  # once here, once more by the relay
        return asked


class CompletedAfterCancel(DrivenRelay):
    """Reports how the Graph ended, even after the cancel flag was seen."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started: dict[str, Any] = {}
        start = self.engine.start

        def remembered(gsid: str, arguments: dict[str, Any], channel: str) -> Any:
            run = start(gsid, arguments, channel)
            self.started[channel.rsplit(":", 1)[-1]] = run
            return run

        setattr(self.engine, "start", remembered)  # noqa: B010

    def _complete(self, command_id: str, body: dict[str, Any]) -> None:
        run = self.started.get(command_id)
        ended = run.outcome.status if run is not None and run.outcome is not None else None
        if body.get("status") == "cancelled" and ended not in (None, "cancelled"):
            body = {**body, "status": ended}
        super()._complete(command_id, body)


class ControlAfterRun(DrivenRelay):
    """Polls a command's control path three more times after posting its completion."""

    def _complete(self, command_id: str, body: dict[str, Any]) -> None:
        super()._complete(command_id, body)
        if command_id in self.executed:
            for _ in range(3):
                time.sleep(0.05)
                self._cancel_requested(command_id)


class WrongChannel(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        engine = self.engine
        start = engine.start

        def wrong(gsid: str, arguments: dict[str, Any], channel: str) -> Any:
            return start(gsid, arguments, channel.replace("graph:external:", "graph:"))

        setattr(engine, "start", wrong)  # noqa: B010


# ---------------------------------------------------------------- R14
class GivesUpLostStart(DrivenRelay):
    """Sends a start up to 3 times in a row while it has no answer, then gives the
    command up (both kit relays before issue 43's R14 fix)."""

    def _handle(self, project_id: str, command: Mapping[str, Any]) -> ProcessGen:
        yield from super()._handle(project_id, command)
        self.unanswered.clear()


# ---------------------------------------------------------------- R15
class _Hammering:
    """A relay client that retries a 401 at once, up to 1,000 times."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def _again(self, call: Callable[[], Any]) -> Any:
        for _ in range(999):
            try:
                return call()
            except HttpStatusError as err:
                if err.status != 401:
                    raise
        return call()

    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._again(lambda: self.inner.sync(project_id, sessions))  # type: ignore[no-any-return]

    def complete(self, command_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._again(lambda: self.inner.complete(command_id, body))  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class HammersRefusedToken(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.client = _Hammering(self.client)


# ---------------------------------------------------------------- legal variations
class LongExecutionIds(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        original = getattr(_desktop, "uuid4_hex")  # noqa: B009
        setattr(_desktop, "uuid4_hex", lambda n: "x" * 200 + original(n))  # noqa: B010


class EscapedJson(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inner = getattr(self.client, "inner", self.client)
        assert isinstance(inner, RelayClient)
        transport = inner.transport
        request = transport.request

        def escaped(method: str, url: str, headers: Any, body: bytes) -> Any:
            if body:
                body = json.dumps(json.loads(body), ensure_ascii=True).encode("ascii")
            return request(method, url, headers, body)

        transport.request = escaped  # type: ignore[method-assign]


class SqliteOutbox:
    """Another outbox store: SQLite (any persistent store is the relay's choice)."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("create table if not exists outbox (id text primary key, body text)")
        self._lock = threading.Lock()

    def put(self, command_id: str, body: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("replace into outbox values (?, ?)", (command_id, json.dumps(body)))

    def remove(self, command_id: str) -> None:
        with self._lock:
            self._db.execute("delete from outbox where id = ?", (command_id,))

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute("select id, body from outbox").fetchall()
        return [(str(i), json.loads(b)) for i, b in rows]


class OtherOutboxStore(DrivenRelay):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        folder = Path(kwargs["outbox"].path).parent
        super().__init__(*args, **{**kwargs, "outbox": SqliteOutbox(folder / "outbox.sqlite")})


class SlowFirstSync(DrivenRelay):
    def start(self, *, phase: float = 0.0) -> None:
        super().start(phase=3.0)


class Floods(DrivenRelay):
    """Passes every 2 ms: hundreds of syncs a second."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "interval": 0.002})


def _wrong_token() -> type[DrivenRelay]:
    os.environ["OSF_DESKTOP_TOKEN"] = "a-token-of-its-own"  # not the one it was given
    return DrivenRelay


def _plain(cls: type[DrivenRelay]) -> Patch:
    return lambda: cls


BROKEN: dict[str, Patch] = {
    "no-recheck": _plain(NoRecheck),
    "recheck-without-slug": _plain(RecheckWithoutSlug),
    "recheck-once-per-sync": _plain(RecheckOncePerSync),
    "recheck-synced-slug": _plain(RecheckSyncedSlug),
    "recheck-missing-shared": _plain(RecheckMissingShared),
    "bytes": _patch_bound(_bound_by(_bytes)),
    "code-points": _patch_bound(_bound_by(_code_points)),
    "go-escapes": _patch_bound(_bound_by(_go_escapes)),
    "python-compact": _patch_bound(_bound_by(_python_compact)),
    "python-default": _patch_bound(_bound_by(_python_default)),
    "no-truncation-mark": _patch_bound(_no_truncation_mark),
    "partial-result": _patch_bound(_partial),
    "error-uncut": _patch_bound(_error_uncut),
    "error-cut-bytes": _patch_cut(_cut_bytes),
    "error-cut-code-points": _patch_cut(_cut_code_points),
    "no-outbox": _plain(NoOutbox),
    "outbox-after-post": _plain(OutboxAfterPost),
    "resend-delivered": _plain(ResendDelivered),
    "two-at-once": _plain(TwoAtOnce),
    "overlapping-passes": _plain(OverlappingPasses),
    "no-sharing-pass": _plain(NoSharingPass),
    "syncs-disabled": _plain(SyncsDisabled),
    "sends-unticked": _plain(SendsUnticked),
    "first-project-only": _plain(FirstProjectOnly),
    "no-uuid-check": _plain(NoUuidCheck),
    "runs-cancelled-start": _plain(RunsCancelledStart),
    "cancels-twice": _plain(CancelsTwice),
    "completed-after-cancel": _plain(CompletedAfterCancel),
    "control-after-run": _plain(ControlAfterRun),
    "dies-on-5xx": _plain(DiesOn5xx),
    "ignores-interval": _plain(IgnoresInterval),
    "ignores-control-poll": _plain(IgnoresControlPoll),
    "wrong-channel": _plain(WrongChannel),
    "gives-up-lost-start": _plain(GivesUpLostStart),
    "hammers-refused-token": _plain(HammersRefusedToken),
}

#: Relays that are unusable or hostile (preflight and fault tests, not a check's teeth).
HOSTILE: dict[str, Patch] = {
    "floods": _plain(Floods),
    "wrong-token": _wrong_token,
}

LEGAL: dict[str, Patch] = {
    "reference": _plain(DrivenRelay),
    "long-execution-ids": _plain(LongExecutionIds),
    "escaped-json": _plain(EscapedJson),
    "other-outbox-store": _plain(OtherOutboxStore),
    "slow-first-sync": _plain(SlowFirstSync),
    "error-cut-lone-surrogate": _patch_cut(_utf16_cut("surrogatepass")),
    "error-cut-replacement": _patch_cut(_utf16_cut("replace")),
    "error-cut-question-mark": _patch_cut(_utf16_cut_encoded),
}

#: The checks each broken relay must fail (and no other of those it is run against).
CAUGHT_BY: dict[str, set[str]] = {
    "no-recheck": {"D13-relay-untick", "D13-relay-disable", "D13-relay-rename"},
    "recheck-without-slug": {"D13-relay-rename"},
    "recheck-once-per-sync": {"D13-relay-each-command"},
    "recheck-synced-slug": {"D13-relay-rename-queued"},
    "recheck-missing-shared": {"D13-relay-session-removed", "D13-relay-project-removed"},
    "bytes": {"D18-relay-bound-japanese", "D18-relay-bound-emoji"},
    "code-points": {"D18-relay-bound-emoji"},
    "go-escapes": {"D18-relay-bound-escapes"},
    "python-compact": {"D18-relay-bound-escapes"},
    # Its ", " separators and ASCII escapes: the older bound checks catch it too.
    "python-default": {
        "D18-relay-bound-escapes",
        "D18-relay-bound-ascii",
        "D18-relay-bound-japanese",
        "D18-relay-bound-emoji",
    },
    "no-truncation-mark": {"D18-relay-truncated-form"},
    "partial-result": {
        "D18-relay-bound-ascii",
        "D18-relay-bound-japanese",
        "D18-relay-bound-emoji",
    },
    "error-uncut": {"D18-relay-error-cut"},
    "error-cut-bytes": {"D18-relay-error-cut-utf16"},
    "error-cut-code-points": {"D18-relay-error-cut-utf16"},
    "no-outbox": {
        "D12-relay-outbox-first",
        "D17-relay-resend-refused",
        "D17-relay-resend-dropped",
        "D17-relay-kill-restart",
        "D17-relay-sigterm",
        "D17-relay-survives-5xx",
        "D17-relay-survives-drops",
        "D17-relay-survives-refused",
    },
    "outbox-after-post": {"D17-relay-kill-restart"},
    "resend-delivered": {"D17-relay-no-resend"},
    "two-at-once": {"D14-relay-serial", "D11-relay-busy-skip"},
    "overlapping-passes": {"D11-relay-busy-skip"},
    "no-sharing-pass": {"D11-relay-sharing-pass"},
    "syncs-disabled": {"D12-relay-enabled-only"},
    "sends-unticked": {"D12-relay-ticked-only"},
    "first-project-only": {"D12-relay-every-enabled"},
    "no-uuid-check": {"D15-relay-non-uuid"},
    "runs-cancelled-start": {"D16-relay-start-cancelled"},
    "cancels-twice": {"D16-relay-cancel-once"},
    "completed-after-cancel": {"D16-relay-cancel-finished"},
    "control-after-run": {"D14-relay-no-control-after"},
    "dies-on-5xx": {
        "D12-relay-outbox-first",
        "D17-relay-resend-refused",
        "D17-relay-survives-5xx",
    },
    "ignores-interval": {"D11-relay-cadence"},
    "ignores-control-poll": {"D14-relay-control-cadence"},
    "wrong-channel": {"D14-relay-channel"},
    "gives-up-lost-start": {"R14-relay-lost-start-next-pass"},
    "hammers-refused-token": {"R15-relay-refused-token"},
}


def run(name: str) -> int:
    """Run the relay called ``name``; 2 for an unknown name."""
    patch = BROKEN.get(name) or LEGAL.get(name) or HOSTILE.get(name)
    if patch is None:
        print(
            f"unknown relay {name!r}; one of {', '.join([*BROKEN, *LEGAL, *HOSTILE])}",
            file=sys.stderr,
        )
        return 2
    return main(relay_class=patch())


if __name__ == "__main__":
    sys.exit(run(sys.argv[1] if len(sys.argv) > 1 else ""))
