"""Olympus's instruments: differential fuzzing (`fuzz`), the bad-input corpus (`badinput`)
and the memory / thread soak (`soak`). Each is a nox session; small sizes run in the
default test command (`nox -s instruments`, part of `nox -s tests`)."""
