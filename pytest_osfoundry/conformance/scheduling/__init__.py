"""When each check runs, for every suite: what a check declares it needs
(:mod:`~pytest_osfoundry.conformance.scheduling._protocol`), the concurrent batch that
honours it, the waits of the checks that run alone or last, the session list one check
holds while the others run, and the hint that crowding may be why a check got no answer."""
