"""Running an outside command under test (a relay today): split without a shell, in a
process group of its own, watched, and stopped with every descendant."""
