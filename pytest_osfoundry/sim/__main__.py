"""``python -m pytest_osfoundry.sim`` is ``osfoundry-sim``."""

from pytest_osfoundry.sim._cli import main

raise SystemExit(main())
