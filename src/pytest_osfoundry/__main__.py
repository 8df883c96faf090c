"""``python -m pytest_osfoundry`` is ``osfoundry-fake``."""

from pytest_osfoundry.cli import main

raise SystemExit(main())
