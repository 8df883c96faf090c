"""``python -m pytest_osfoundry.sim`` is ``osfoundry-sim``."""

from pytest_osfoundry.sim.cli import main

raise SystemExit(main())
