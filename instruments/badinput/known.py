"""Open divergences found by the corpus, each to be fixed (not acceptable, unlike
`allowlist.ALLOWED`). `nox -s badinput` reports them (with their count) without failing on
them, and fails once one is fixed and its entry not deleted; in the default test command's
subset they are strict xfails, so a fix shows up as a failure asking to delete the entry.

`KNOWN_CRASHES` are the cases that crash Olympus today (a crash is never acceptable: the
session fails on them whatever this file says; only the smoke subset marks them xfail).
"""

from __future__ import annotations

KNOWN_CRASHES: dict[str, str] = {}

KNOWN_OPEN: dict[str, str] = {
    "grad.jacfwd_scalar_fn_of_tuple": "weak type differs (JAX seq; Olympus seq)",
    "grad.of_pow_zero_base":
        "weak type differs (JAX float32[] ['inf']; Olympus float32[] weak ['inf'])",
    "vjp.cotangent_float64_numpy": "weak type differs (JAX seq; Olympus seq)",
}
