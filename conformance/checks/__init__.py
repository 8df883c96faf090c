"""The checks of the conformance suite, one module per area (``test_<area>.py``).

Run them with ``pytest --osf-target=URL`` (no test paths needed). Each function
decorated with :func:`~pytest_osfoundry.conformance.check` is one check,
collected under its check id.
"""
