"""Where ``--osf-target=embedded`` serves the reference server from (``_target._embedded``).

Both forms -- ``embedded`` and ``embedded:MODULE:FACTORY`` -- serve it from threads of
this process (a :class:`~pytest_osfoundry.server.LoopbackServer`: one selector
thread and its workers), so a test can look at the server object afterwards; the
target's close stops those threads and frees the port.
"""

from __future__ import annotations

import socket
import threading

import pytest

from pytest_osfoundry.conformance.server._target import resolve_target
from pytest_osfoundry.conformance.suite._options import Settings
from pytest_osfoundry.server import LoopbackServer


@pytest.mark.parametrize("spec", ["embedded", "embedded:tests.conformance.variants:reference"])
def test_embedded_is_served_from_this_process_until_the_target_closes(spec: str) -> None:
    target = resolve_target(Settings(osf_target=spec))
    served = target._loopback
    assert isinstance(served, LoopbackServer)
    threads = [t for t in threading.enumerate() if t.name.startswith(f"osf-loopback-{served.port}")]
    reply = target.transport.request(
        "GET", target.origin + "/.well-known/oauth-protected-resource", {}, b""
    )
    assert reply.status == 200 and len(threads) == 16 + 1
    target.close()
    assert target._loopback is None
    for thread in threads:
        thread.join(timeout=5)
    assert not any(t.is_alive() for t in threads)
    with pytest.raises(OSError):
        socket.create_connection((served.host, served.port), timeout=5).close()
