"""pytest11 entry point: options and fixtures, nothing else."""
