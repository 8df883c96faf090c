"""What the kit's other subpackages use of the engine beyond its public names.

Not for users (they use :mod:`pytest_osfoundry.engine`); the one door through which
another subpackage reaches the engine's private modules (``tests/test_faces.py``).
Each name, with who needs it:

* :func:`served_graph` -- the Graph ``osfoundry-fake serve --relay``'s desktop runs.
"""

from pytest_osfoundry.engine._graph import served_graph

__all__ = ["served_graph"]
