"""Made-up Graph session metadata, as the relay's sync uploads it (SPEC D2, D4, R8).

:func:`make_sessions` gives plausible sessions ("Weekly sales digest",
``weekly-sales-digest``) from a private, seeded :class:`faker.Faker` instance, so the
same seed always gives the same list and no global Faker or ``random`` state is read
or changed. (The exact words depend on the installed Faker version; the shapes do
not.) The instance is made once per process and re-seeded for every call, under a
lock: making one costs milliseconds, more than a whole list of sessions.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_osfoundry._checks import check_count, check_int, check_positive_int
from pytest_osfoundry._ids import is_graph_session_id

if TYPE_CHECKING:
    from faker import Faker

__all__ = ["SessionInfo", "make_sessions", "new_graph_session_id"]

_CADENCES = ("Daily", "Weekly", "Monthly", "Quarterly", "Nightly", "Hourly", "On-call")
_SUBJECTS = (
    "sales",
    "support",
    "inventory",
    "invoice",
    "hiring",
    "release",
    "security",
    "marketing",
    "churn",
    "pipeline",
    "expense",
    "incident",
    "customer feedback",
    "competitor",
    "roadmap",
)
_KINDS = ("digest", "report", "summary", "triage", "review", "briefing", "audit", "check")
_SOURCES = (
    "the shared drive",
    "the CRM export",
    "the ticket queue",
    "the team inbox",
    "last week's notes",
    "the finance folder",
    "the release notes",
)
_AUDIENCES = ("the team", "leadership", "the on-call engineer", "the owner", "the channel")


def new_graph_session_id(rng: random.Random) -> str:
    """A Graph session id: ``gs_`` + 32 lowercase hex characters (D2), drawn from ``rng``."""
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    return f"gs_{rng.getrandbits(128):032x}"


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "graph"


@dataclass(frozen=True)
class SessionInfo:
    """One Graph session as ``list_graph_sessions`` lists it (R8); validated on creation.

    ``graph_session_id`` has the D2 shape, ``name`` / ``slug`` / ``status`` are
    non-empty strings, ``description`` a string, ``version`` an int >= 1.
    """

    graph_session_id: str
    name: str
    description: str
    slug: str
    version: int = 1
    status: str = "active"

    def __post_init__(self) -> None:
        gsid = self.graph_session_id
        if not is_graph_session_id(gsid):
            raise ValueError(
                f"graph_session_id must be 'gs_' + 32 lowercase hex characters, got {gsid!r}"
            )
        for attr in ("name", "slug", "status"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value:
                raise TypeError(f"SessionInfo.{attr} must be a non-empty str, got {value!r}")
        if not isinstance(self.description, str):
            raise TypeError(f"SessionInfo.description must be a str, got {self.description!r}")
        check_positive_int(self.version, "SessionInfo.version")

    def to_dict(self) -> dict[str, Any]:
        """Exactly the keys ``graph_session_id, name, description, slug, version, status``."""
        return {
            "graph_session_id": self.graph_session_id,
            "name": self.name,
            "description": self.description,
            "slug": self.slug,
            "version": self.version,
            "status": self.status,
        }


def make_sessions(n: int, *, seed: int = 0) -> list[SessionInfo]:
    """``n`` made-up sessions, the same for the same ``seed``.

    Names read like "Weekly sales digest"; each slug is the name lower-cased with
    runs of other characters turned into ``-``. Names and slugs are unique within the
    list (a repeat gets a number: "Weekly sales digest 2", ``weekly-sales-digest-2``),
    and so are the session ids. Descriptions are one sentence; version 1, status
    ``active``.

    Raises:
        TypeError / ValueError: ``n`` is not an int >= 0, or ``seed`` not an int.
    """
    check_count(n, "n")
    check_int(seed, "seed")
    with _FAKER_LOCK:
        return _make(n, seed)


_FAKER_LOCK = threading.Lock()
_fakers: list[Faker] = []  # at most one: the process's own, made on first use


def _make(n: int, seed: int) -> list[SessionInfo]:
    if not _fakers:
        # Faker is imported here, on the first list made, not with the module: a relay
        # process (the kit's own, every broken relay the tests start) imports the
        # engine for its Graphs and never makes a session list.
        from faker import Faker

        _fakers.append(Faker("en_US"))
    fake = _fakers[0]
    fake.seed_instance(seed)
    ids = random.Random(f"graph-session-ids:{seed}")
    seen_slugs: set[str] = set()
    seen_ids: set[str] = set()
    sessions: list[SessionInfo] = []
    for _ in range(n):
        cadence = fake.random_element(_CADENCES)
        subject = fake.random_element(_SUBJECTS)
        kind = fake.random_element(_KINDS)
        name = f"{cadence} {subject} {kind}"
        slug = _slugify(name)
        if slug in seen_slugs:
            number = 2
            while f"{slug}-{number}" in seen_slugs:
                number += 1
            name, slug = f"{name} {number}", f"{slug}-{number}"
        seen_slugs.add(slug)
        description = (
            f"{fake.random_element(('Collects', 'Reads', 'Gathers', 'Scans'))} "
            f"{subject} {fake.random_element(('updates', 'figures', 'threads', 'changes'))} "
            f"from {fake.random_element(_SOURCES)} and sends {_article(kind)} {kind} to "
            f"{fake.random_element(_AUDIENCES)} {fake.day_of_week()} "
            f"{fake.random_element(('morning', 'afternoon', 'evening'))}."
        )
        gsid = new_graph_session_id(ids)
        while gsid in seen_ids:  # pragma: no cover - a 128-bit collision
            gsid = new_graph_session_id(ids)
        seen_ids.add(gsid)
        sessions.append(SessionInfo(gsid, name, description, slug))
    return sessions
