"""The suites' pytest hooks: the run's set-up, the rule book's collection, the fixtures,
each check's report, the end of the run, and the relay suite's own hooks; each module
is registered as a plugin of its own, and the run's state is kept under the keys of
:mod:`~pytest_osfoundry.conformance.plugin._stash`."""
