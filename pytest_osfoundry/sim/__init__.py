"""The seed's experiments, reproduced from the kit's own components (``osfoundry-sim``).

Every experiment of conformance/spec.md#figures is rebuilt from the same fake server, relay, engine
and scripted agents the fixtures hand to users, on a virtual clock — a seeded run
through the components, not a formula — so matching the seed's figures is evidence
that the fakes are faithful. See docs/experiments.md.

* :func:`simulate` runs experiments and returns a :class:`SimRun`.
* :class:`SimParams` holds the model's parameters (relay interval, control poll,
  duration median and spread, strategies, ...).
* :data:`SEED` holds the seed's figures in the shapes ``--json`` prints.
"""

from pytest_osfoundry.sim._params import DEFAULT_RUNS, SimParams
from pytest_osfoundry.sim._runner import SimRun, simulate
from pytest_osfoundry.sim._seed_figures import SEED
from pytest_osfoundry.sim._tasks import NAMES, SimulationError

__all__ = ["DEFAULT_RUNS", "NAMES", "SEED", "SimParams", "SimRun", "SimulationError", "simulate"]
