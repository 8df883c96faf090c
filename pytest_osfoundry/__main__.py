"""``python -m pytest_osfoundry`` is ``osfoundry-fake``."""

from pytest_osfoundry._cli import main

raise SystemExit(main())
