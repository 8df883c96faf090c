"""The relay checks of the conformance suite, one module per area (``test_<area>.py``).

Run them with ``pytest --osf-relay-command=CMD`` (no test paths needed). Each
function decorated with :func:`~pytest_osfoundry.conformance.check` and
taking ``osf_relay_conf`` is one check, collected under its check id.
"""
