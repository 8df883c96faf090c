"""ids: the fast formatters give exactly what the standard library would."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_osfoundry._ids import is_uuid, new_command_id, rfc3339, uuid4_hex


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_uuid4_hex_is_uuids_own(n: int) -> None:
    assert uuid4_hex(n) == uuid.UUID(int=n, version=4).hex


def test_seeded_command_ids_are_version_4_uuids_as_before() -> None:
    a, b = random.Random(7), random.Random(7)
    for _ in range(200):
        cid = new_command_id(a)
        assert cid == str(uuid.UUID(int=b.getrandbits(128), version=4))
        assert is_uuid(cid)


@given(st.floats(min_value=0, max_value=253402300799.0, allow_nan=False))
def test_rfc3339_matches_datetime(epoch: float) -> None:
    secs, ms = divmod(round(epoch * 1000), 1000)
    when = datetime.fromtimestamp(secs, timezone.utc)
    assert rfc3339(epoch) == f"{when.year:04d}-" + when.strftime("%m-%dT%H:%M:%S") + f".{ms:03d}Z"


@pytest.mark.parametrize(
    ("epoch", "text"),
    [(0.0, "1970-01-01T00:00:00.000Z"), (1_794_096_000.0, "2026-11-08T00:00:00.000Z")],
)
def test_rfc3339_known_instants(epoch: float, text: str) -> None:
    assert rfc3339(epoch) == text
