"""Faker-made Graph session metadata and gs_ ids (D2, R8)."""

from __future__ import annotations

import random
import re
import sys
from typing import Any

import pytest
from faker import Faker

from pytest_osfoundry._ids import is_graph_session_id
from pytest_osfoundry.engine import SessionInfo, make_sessions, new_graph_session_id

KEYS = ["graph_session_id", "name", "description", "slug", "version", "status"]


def test_sessions_have_the_listed_shape() -> None:
    sessions = make_sessions(5, seed=1)
    assert len(sessions) == 5
    for session in sessions:
        assert list(session.to_dict()) == KEYS
        assert is_graph_session_id(session.graph_session_id)
        assert (session.version, session.status) == (1, "active")
        assert re.fullmatch(r"[A-Z][\w-]* [a-z ]+", session.name)
        assert session.slug == re.sub(r"[^a-z0-9]+", "-", session.name.lower())
        assert session.description.endswith(".") and " " in session.description


def test_to_dict_values() -> None:
    info = SessionInfo(
        "gs_" + "0" * 32, "Weekly sales digest", "Sums up sales.", "weekly-sales-digest"
    )
    assert info.to_dict() == {
        "graph_session_id": "gs_" + "0" * 32,
        "name": "Weekly sales digest",
        "description": "Sums up sales.",
        "slug": "weekly-sales-digest",
        "version": 1,
        "status": "active",
    }


def test_same_seed_same_sessions_other_seed_other_sessions() -> None:
    assert make_sessions(10, seed=3) == make_sessions(10, seed=3)
    assert make_sessions(10, seed=3) != make_sessions(10, seed=4)
    assert make_sessions(4, seed=3) == make_sessions(10, seed=3)[:4]
    assert make_sessions(0) == []


def test_names_slugs_and_ids_are_unique_even_when_many() -> None:
    sessions = make_sessions(1_500, seed=0)  # more than the distinct name templates
    assert len({s.slug for s in sessions}) == 1_500
    assert len({s.name for s in sessions}) == 1_500
    assert len({s.graph_session_id for s in sessions}) == 1_500
    numbered = [s for s in sessions if re.search(r" \d+$", s.name)]
    assert numbered
    for session in numbered:
        assert session.slug.endswith("-" + session.name.rsplit(" ", 1)[1])


def test_no_global_random_or_faker_state_is_used() -> None:
    # Unseeded Faker instances share one class-level random stream: Faker.seed() seeds
    # it. make_sessions must neither consume it nor touch the random module's state.
    Faker.seed(5)
    expected = Faker().words(5)
    Faker.seed(5)
    shared = Faker()
    random.seed(99)
    before = random.getstate()
    first = make_sessions(3, seed=11)
    assert shared.words(5) == expected
    assert random.getstate() == before
    assert make_sessions(3, seed=11) == first


def test_new_graph_session_id() -> None:
    gsid = new_graph_session_id(random.Random(0))
    assert re.fullmatch(r"gs_[0-9a-f]{32}", gsid)
    assert gsid == new_graph_session_id(random.Random(0))
    assert gsid != new_graph_session_id(random.Random(1))
    rng = random.Random(0)
    assert new_graph_session_id(rng) != new_graph_session_id(rng)


def test_new_graph_session_id_needs_an_rng() -> None:
    with pytest.raises(TypeError, match=r"rng must be a random\.Random"):
        new_graph_session_id(0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "seed", "error", "fragment"),
    [
        (-1, 0, ValueError, "n must be a non-negative int"),
        (2.0, 0, TypeError, "n must be an int"),
        (True, 0, TypeError, "n must be an int"),
        (2, "x", TypeError, "seed must be an int"),
    ],
)
def test_make_sessions_bad_arguments(n: Any, seed: Any, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        make_sessions(n, seed=seed)


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"graph_session_id": "gs_ABC"}, ValueError, "graph_session_id must be 'gs_'"),
        ({"graph_session_id": "gs_" + "A" * 32}, ValueError, "graph_session_id must be 'gs_'"),
        ({"name": ""}, TypeError, "SessionInfo.name must be a non-empty str"),
        ({"slug": None}, TypeError, "SessionInfo.slug must be a non-empty str"),
        ({"status": ""}, TypeError, "SessionInfo.status must be a non-empty str"),
        ({"description": 3}, TypeError, "SessionInfo.description must be a str"),
        ({"version": 0}, ValueError, "SessionInfo.version must be a positive int"),
        ({"version": True}, TypeError, "SessionInfo.version must be an int"),
    ],
)
def test_session_info_validation(kwargs: dict[str, Any], error: type, fragment: str) -> None:
    args: dict[str, Any] = {
        "graph_session_id": "gs_" + "f" * 32,
        "name": "Daily check",
        "description": "",
        "slug": "daily-check",
        **kwargs,
    }
    with pytest.raises(error) as info:
        SessionInfo(**args)
    assert fragment in str(info.value)


def test_the_reused_faker_gives_what_a_fresh_one_gives() -> None:
    from pytest_osfoundry.engine import _sessions as sessions

    first = make_sessions(6, seed=11)
    make_sessions(3, seed=99)  # the process's one instance, re-seeded in between
    again = make_sessions(6, seed=11)
    sessions._fakers.clear()  # as if in a new process
    fresh = make_sessions(6, seed=11)
    assert first == again == fresh


def test_sessions_made_from_threads_at_once_are_each_their_seeds() -> None:
    import threading

    expected = {seed: make_sessions(4, seed=seed) for seed in range(8)}
    got: dict[int, list[Any]] = {}

    def make(seed: int) -> None:
        for _ in range(20):
            got[seed] = make_sessions(4, seed=seed)

    threads = [threading.Thread(target=make, args=(seed,)) for seed in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert got == expected
