"""Identifier shapes and timestamps shared by the server, relay and suite.

* Command ids are UUIDs (SPEC D9); the relay refuses anything else (D15).
* Graph session ids are ``gs_`` followed by 32 lowercase hex characters (D2).

(The patterns themselves live in :mod:`pytest_osfoundry._vocabulary`.)
* Timestamps are RFC 3339 in UTC with millisecond precision, e.g.
  ``2026-11-08T00:00:20.000Z``.
"""

from __future__ import annotations

import random
import re
import time
import uuid
from datetime import datetime
from functools import lru_cache

from pytest_osfoundry._vocabulary import GRAPH_SESSION_ID_RE, UUID_RE

__all__ = [
    "is_graph_session_id",
    "is_uuid",
    "new_command_id",
    "parse_rfc3339",
    "rfc3339",
]

_RFC3339_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def is_uuid(value: object) -> bool:
    """True when ``value`` is a string in the canonical 8-4-4-4-12 hex UUID form."""
    return isinstance(value, str) and UUID_RE.fullmatch(value) is not None


def is_graph_session_id(value: object) -> bool:
    """True when ``value`` is ``gs_`` + 32 lowercase hex characters (D2)."""
    return isinstance(value, str) and GRAPH_SESSION_ID_RE.fullmatch(value) is not None


def new_command_id(rng: random.Random | None = None) -> str:
    """A fresh random (version 4) UUID string; deterministic when ``rng`` is given."""
    if rng is None:
        return str(uuid.uuid4())
    h = uuid4_hex(rng.getrandbits(128))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


#: The bits ``uuid.UUID(int=n, version=4)`` overwrites: the variant (2 bits) and
#: the version (4 bits).
_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def uuid4_hex(n: int) -> str:
    """``uuid.UUID(int=n, version=4).hex`` for a 128-bit ``n``, without the UUID object."""
    return f"{(n & _UUID4_CLEAR) | _UUID4_SET:032x}"


@lru_cache(maxsize=65_536)
def rfc3339(epoch: float) -> str:
    """Format ``epoch`` seconds as an RFC 3339 UTC timestamp with milliseconds.

    Cached: a run's timestamps are formatted again at every poll of it.
    """
    millis = round(epoch * 1000)
    secs, ms = divmod(millis, 1000)
    t = time.gmtime(secs)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{ms:03d}Z"
    )


def parse_rfc3339(text: object) -> datetime | None:
    """Parse an RFC 3339 timestamp; ``None`` when ``text`` is not one."""
    if not isinstance(text, str) or _RFC3339_RE.fullmatch(text) is None:
        return None
    normal = text.replace("z", "Z").replace("t", "T")
    if normal.endswith("Z"):
        normal = normal[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(normal)
    except ValueError:
        return None
