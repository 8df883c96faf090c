"""The agent checks of the conformance suite, one module per area (``test_<area>.py``).

Run them with ``pytest --osf-agent-command=CMD`` (no test paths needed). Each
function decorated with :func:`~pytest_osfoundry.conformance.check` and taking
``osf_agent_conf`` is one check, collected under its check id; it starts the agent
command once or twice and judges what the server saw and what the agent reported
(docs/agent-conformance.md).
"""
