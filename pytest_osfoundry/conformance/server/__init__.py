"""The server suite's own parts (``--osf-target``): the target, the wire, the roles the
suite plays, the context one check works in, and the preflight."""
