"""D18 bounded completion: what the desktop relay posts when a command ends.

The relay posts ``{execution_id, status, result, total_tokens, reported_cost}`` when
JavaScript's ``JSON.stringify`` of it is at most :data:`RESULT_LIMIT` (100,000)
characters, and ``{execution_id, status, result_truncated: true}`` otherwise — all or
nothing, never a partial result. Errors are cut to :data:`ERROR_LIMIT` (2,000)
characters.

Choices this module makes where SPEC D18 is silent (the kit's reading of it):

* **Characters are UTF-16 code units**, as JavaScript's ``.length`` counts them, for
  both limits: non-ASCII text is not escaped by ``JSON.stringify`` and counts 1 per
  BMP character, an emoji counts 2 (see :mod:`pytest_osfoundry._jslength`).
* **Absent fields.** A ``None`` result is kept and posted as ``null`` (a Graph that
  returned nothing). A ``None`` ``total_tokens`` / ``reported_cost`` is *omitted*,
  as JavaScript omits ``undefined`` members. ``error`` is present only when there is
  one (a ``None`` error is omitted), and comes last.
* **The error counts toward the 100,000**: it is part of the posted object. When the
  object is too large the truncated form still carries the (cut) error:
  ``{execution_id, status, result_truncated: true, error}``.
* **Cutting the error** keeps the first 2,000 UTF-16 code units, like
  ``error.slice(0, 2000)``, except that it never splits a surrogate pair: when code
  unit 2,000 would be the first half of an emoji, the whole emoji is dropped and the
  cut error is 1,999 code units long.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_osfoundry._checks import check_count, check_number
from pytest_osfoundry._jslength import js_stringify_length
from pytest_osfoundry._vocabulary import (
    COMPLETED,
    ERROR_LIMIT,
    RESULT_LIMIT,
    TERMINAL_STATUSES,
    cut_error,
)

__all__ = [
    "ERROR_LIMIT",
    "RESULT_LIMIT",
    "SEED_ENVELOPE",
    "Envelope",
    "bounded_completion",
    "cut_error",
    "max_result_text",
]

_NULL_LENGTH = len("null")


def _check_args(
    execution_id: object,
    status: object,
    total_tokens: object,
    reported_cost: object,
    error: object,
) -> None:
    if not isinstance(execution_id, str) or not execution_id:
        raise TypeError(f"execution_id must be a non-empty str, got {execution_id!r}")
    if status not in TERMINAL_STATUSES:
        raise ValueError(f"status must be one of {', '.join(TERMINAL_STATUSES)}; got {status!r}")
    if total_tokens is not None:
        check_count(total_tokens, "total_tokens")
    if reported_cost is not None:
        check_number(reported_cost, "reported_cost", low=0)
    if error is not None and not isinstance(error, str):
        raise TypeError(f"error must be a str or None, got {type(error).__name__}")


def _full_form(
    execution_id: str,
    status: str,
    result: Any,
    total_tokens: int | None,
    reported_cost: float | None,
    error: str | None,
) -> tuple[dict[str, Any], int]:
    """The untruncated completion and its ``JSON.stringify`` length."""
    full: dict[str, Any] = {"execution_id": execution_id, "status": status, "result": None}
    if total_tokens is not None:
        full["total_tokens"] = total_tokens
    if reported_cost is not None:
        full["reported_cost"] = reported_cost
    if error is not None:
        full["error"] = error
    # Measure the envelope with a null result, then swap in the result's own length:
    # the same number JSON.stringify(full).length gives, with errors naming `result`.
    length = (
        js_stringify_length(full, name="completion")
        - _NULL_LENGTH
        + js_stringify_length(result, name="result")
    )
    full["result"] = result
    return full, length


def bounded_completion(
    *,
    execution_id: str,
    status: str,
    result: Any = None,
    total_tokens: int | None = None,
    reported_cost: float | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """The completion object the relay posts for a command (D18).

    Returns ``{"execution_id", "status", "result", "total_tokens", "reported_cost"}``
    (``total_tokens`` / ``reported_cost`` omitted when ``None``; ``"error"`` last, cut
    by :func:`cut_error`, when ``error`` is given) if ``JSON.stringify`` of that object
    is at most :data:`RESULT_LIMIT` characters. Otherwise returns
    ``{"execution_id", "status", "result_truncated": True}`` plus the cut ``"error"``
    if any — no part of the result. The returned dict holds ``result`` itself, not a
    copy.

    Raises:
        TypeError: ``execution_id`` is not a non-empty str, ``error`` is not a str,
            or ``result`` is not JSON-compatible (the message names the path, e.g.
            ``result.items[3]``).
        ValueError: ``status`` is not completed/failed/cancelled, or ``total_tokens``
            / ``reported_cost`` is negative or not a number.
    """
    _check_args(execution_id, status, total_tokens, reported_cost, error)
    cut = None if error is None else cut_error(error)
    full, length = _full_form(execution_id, status, result, total_tokens, reported_cost, cut)
    if length <= RESULT_LIMIT:
        return full
    truncated: dict[str, Any] = {
        "execution_id": execution_id,
        "status": status,
        "result_truncated": True,
    }
    if cut is not None:
        truncated["error"] = cut
    return truncated


@dataclass(frozen=True)
class Envelope:
    """Everything in a completion but its result: used to find where the bound falls.

    Fields mean what they mean in :func:`bounded_completion`; validated on creation.
    """

    execution_id: str
    status: str = COMPLETED
    total_tokens: int | None = 0
    reported_cost: float | None = 0
    error: str | None = None

    def __post_init__(self) -> None:
        _check_args(
            self.execution_id, self.status, self.total_tokens, self.reported_cost, self.error
        )

    def completion(self, result: Any) -> dict[str, Any]:
        """:func:`bounded_completion` of this envelope carrying ``result``."""
        return bounded_completion(
            execution_id=self.execution_id,
            status=self.status,
            result=result,
            total_tokens=self.total_tokens,
            reported_cost=self.reported_cost,
            error=self.error,
        )

    def overhead(self) -> int:
        """``JSON.stringify`` length of the untruncated completion with result ``""``.

        Everything but the result text itself: the result's two quotes count here.
        """
        cut = None if self.error is None else cut_error(self.error)
        _, length = _full_form(
            self.execution_id, self.status, "", self.total_tokens, self.reported_cost, cut
        )
        return length


#: The seed's envelope for the truncation figure (SPEC D18, §5): 99,899 characters of
#: result text still fit in it, so everything but the text takes exactly 101:
#: ``{"execution_id":"fleet-run-0001","status":"completed","result":"",``
#: ``"total_tokens":0,"reported_cost":0}``.
SEED_ENVELOPE = Envelope(
    execution_id="fleet-run-0001", status="completed", total_tokens=0, reported_cost=0
)


def max_result_text(alphabet_char: str, envelope: Envelope = SEED_ENVELOPE) -> int:
    """How many repetitions of ``alphabet_char``, as the result string, still fit.

    The largest ``n`` for which ``envelope.completion(alphabet_char * n)`` keeps its
    result: 99,899 for ``"a"`` and for ``"日"`` in :data:`SEED_ENVELOPE`, half that
    (49,949) for an emoji, which counts 2. A character ``JSON.stringify`` escapes
    costs its escape's length (``"\\n"`` counts 2, ``"\\u0001"`` counts 6).
    0 when not even one fits.

    Raises:
        ValueError: ``alphabet_char`` is not exactly one character.
        TypeError: ``envelope`` is not an :class:`Envelope`.
    """
    if not isinstance(alphabet_char, str) or len(alphabet_char) != 1:
        raise ValueError(f"alphabet_char must be exactly one character, got {alphabet_char!r}")
    if not isinstance(envelope, Envelope):
        raise TypeError(f"envelope must be an Envelope, got {type(envelope).__name__}")
    per_char = js_stringify_length(alphabet_char) - 2
    room = RESULT_LIMIT - envelope.overhead()
    return max(0, room // per_char)
