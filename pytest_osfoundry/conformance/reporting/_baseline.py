"""Baseline files: the check ids a team knows fail, so CI can gate on everything else.

Format: one check id per line; ``#`` starts a comment (whole line or after the id);
blank lines are ignored::

    # known failures of our server, 2026-11
    D6-get-other-agent      # tracked in #123
    R11-oversized-413

With ``--osf-baseline`` a listed check that fails is reported as failed *as
expected* and does not fail the run; a listed check that passes fails the run as a
stale entry (remove it); an unlisted failure fails the run. ``--osf-write-baseline``
writes the checks failing now in this format. A check's former id (a check renamed,
:data:`~pytest_osfoundry.conformance.suite._checkids.RENAMED_CHECKS`) is read as its id now.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_osfoundry.conformance.suite._internal import current_check_id, is_check_id

__all__ = ["Baseline", "BaselineError", "decode_baseline", "read_baseline", "write_baseline"]


class BaselineError(ValueError):
    """The baseline file cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Baseline:
    """The ids listed in a baseline file, in file order, and where it came from."""

    path: str
    ids: tuple[str, ...]

    def __contains__(self, check_id: object) -> bool:
        return check_id in self.ids


def parse_baseline(text: str, path: str = "<baseline>") -> Baseline:
    """Parse baseline text.

    Raises:
        BaselineError: a line holds something that is not a check id.
    """
    ids: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if not is_check_id(entry):
            raise BaselineError(
                f"{path}:{number}: {entry!r} is not a check id "
                "(like D6-get-other-agent or X-ACME-rate-limit); "
                "put comments after '#'"
            )
        entry = current_check_id(entry)
        if entry not in ids:
            ids.append(entry)
    return Baseline(path, tuple(ids))


def read_baseline(path: str | Path) -> Baseline:
    """Read a baseline file.

    Raises:
        BaselineError: the file is missing, unreadable or malformed.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise BaselineError(f"cannot read baseline {path}: {err.strerror or err}") from err
    return parse_baseline(decode_baseline(data, str(path)), str(path))


def decode_baseline(data: bytes, path: str = "<baseline>") -> str:
    """The text of a baseline file: UTF-8 with or without a BOM, or UTF-16 with a BOM
    (what Windows PowerShell's ``>`` writes).

    Raises:
        BaselineError: any other encoding (the message says which ones are read).
    """
    if data.startswith(codecs.BOM_UTF8):
        encoding, body = "utf-8", data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, body = "utf-16", data
    else:
        encoding, body = "utf-8", data
    try:
        return body.decode(encoding)
    except UnicodeDecodeError as err:
        raise BaselineError(
            f"{path} is not {encoding.upper()} text (byte {err.start}: {err.reason}); "
            "save it as UTF-8 (or UTF-16 with a byte-order mark)"
        ) from None


def write_baseline(path: str | Path, ids: Iterable[str], header: Iterable[str] = ()) -> None:
    """Write ``ids`` (one per line) after ``header`` lines written as comments."""
    lines = [f"# {line}".rstrip() for line in header]
    lines += sorted(set(ids), key=_sort_key)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _sort_key(check_id: str) -> tuple[str, int, str]:
    rule, _, rest = check_id.partition("-")
    return (rule[0], int(rule[1:]), rest)
