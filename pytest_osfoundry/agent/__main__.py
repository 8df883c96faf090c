"""``python -m pytest_osfoundry.agent``: the kit's agent as a command
(``--osf-agent-command=embedded``; :mod:`pytest_osfoundry.agent._contract`)."""

import sys

from pytest_osfoundry.agent._contract import main

if __name__ == "__main__":
    sys.exit(main())
