"""``python -m pytest_osfoundry.load``: the same as ``osfoundry-load``."""

import sys

from pytest_osfoundry.load._cli import main

sys.exit(main())
