"""Reading a ``WWW-Authenticate`` Bearer challenge (RFC 6750 §3, RFC 9110 §11.6.1)."""

from __future__ import annotations

import re

__all__ = ["challenge_params"]

_PARAM = re.compile(r'([A-Za-z_][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def challenge_params(value: str | None) -> dict[str, str] | None:
    """The auth-params of the ``Bearer`` challenge in a ``WWW-Authenticate`` value."""
    if not value:
        return None
    at = value.lower().find("bearer")
    if at < 0:
        return None
    return {
        m[0].lower(): (m[1] if m[1] or not m[2] else m[2])
        for m in _PARAM.findall(value[at + len("bearer") :])
    }
