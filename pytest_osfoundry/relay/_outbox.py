"""The relay's outbox (SPEC D17): completions persisted before they are posted.

An entry is written *before* its POST and removed only after a 2xx answer, so a
lost POST is delivered by the next pass. :class:`MemoryOutbox` keeps entries in the
process; :class:`FileOutbox` keeps them in a JSON file written atomically (temporary
file, ``fsync``, ``os.replace``), so they survive the process being killed between
the write and the POST.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol

__all__ = ["FileOutbox", "MemoryOutbox", "Outbox"]


class Outbox(Protocol):
    """Where undelivered completions wait, oldest first."""

    def put(self, command_id: str, body: dict[str, Any]) -> None:
        """Store (or replace) the completion for ``command_id``."""
        ...

    def remove(self, command_id: str) -> None:
        """Forget the completion for ``command_id`` (after a 2xx)."""
        ...

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        """Every waiting completion, oldest first."""
        ...


def _check(command_id: object, body: object) -> None:
    if not isinstance(command_id, str) or not command_id:
        raise TypeError(f"command_id must be a non-empty string, got {command_id!r}")
    if not isinstance(body, dict):
        raise TypeError(f"a completion body must be a dict, got {type(body).__name__}")


class MemoryOutbox:
    """An outbox that lives as long as the process (like ``localStorage`` in one tab)."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Any]] = {}

    def put(self, command_id: str, body: dict[str, Any]) -> None:
        _check(command_id, body)
        self._entries.pop(command_id, None)
        self._entries[command_id] = body

    def remove(self, command_id: str) -> None:
        self._entries.pop(command_id, None)

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)


class FileOutbox:
    """An outbox in a JSON file that survives the process being killed.

    The file holds ``{"version": 1, "entries": [[command_id, body], ...]}``. Every
    change rewrites it atomically, so a reader sees the old or the new content,
    never a torn one. A file that is not an outbox raises ``ValueError`` naming it.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            self._entries = self._load()
        elif not self.path.parent.is_dir():
            raise ValueError(f"outbox folder {self.path.parent} does not exist")

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or '{"entries": []}')
            entries = data["entries"] if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise ValueError("no entries list")
            out: dict[str, dict[str, Any]] = {}
            for command_id, body in entries:
                _check(command_id, body)
                out[command_id] = body
            return out
        except (ValueError, TypeError, KeyError) as err:
            raise ValueError(f"{self.path} is not a pytest-osfoundry outbox file: {err}") from err

    def _save(self, entries: dict[str, dict[str, Any]]) -> None:
        """Write ``entries`` atomically, then make them the current ones.

        A body that cannot be stored (not JSON) raises before anything changes. The
        file is ASCII (non-ASCII escaped): a text may hold a lone surrogate (JSON's
        ``"\\ud83d"``, an emoji cut in half), which has no UTF-8 form.
        """
        payload = json.dumps({"version": 1, "entries": [[k, v] for k, v in entries.items()]})
        fd, tmp = tempfile.mkstemp(prefix=".outbox-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self._entries = entries

    def put(self, command_id: str, body: dict[str, Any]) -> None:
        _check(command_id, body)
        with self._lock:
            entries = {k: v for k, v in self._entries.items() if k != command_id}
            entries[command_id] = body
            self._save(entries)

    def remove(self, command_id: str) -> None:
        with self._lock:
            if command_id in self._entries:
                self._save({k: v for k, v in self._entries.items() if k != command_id})

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)
