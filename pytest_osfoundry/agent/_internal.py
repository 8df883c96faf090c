"""What the kit's other subpackages use of the agent beyond its public names.

Not for users (they use :mod:`pytest_osfoundry.agent`); the one door through which
another subpackage reaches the agent's private modules (``tests/test_faces.py``).
Each name, with who needs it:

* :data:`Retry` -- how an agent retries a lost call: the world and the simulator pass it on.
* :func:`strategy_name` -- a strategy's display name: the simulator's tables show it.
"""

from pytest_osfoundry.agent._scripted import Retry
from pytest_osfoundry.agent._strategies import strategy_name

__all__ = ["Retry", "strategy_name"]
