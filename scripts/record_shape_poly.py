"""Records reference JAX 0.10.2's answers for symbolic dimension expressions.

Run with reference JAX's interpreter (never in a process that imports olympus):
    /work/main/benchmarks/.venv-jax/bin/python scripts/record_shape_poly.py
It writes packages/olympus-ir/tests/data/shape_poly_cases.json: for each case (a Python
expression over `symbolic_shape`, `SymbolicScope`, `max_dim`, `min_dim`), the `repr` of the
result or the error's type name and message (scope ids and source locations blanked, since
they differ between runs). `packages/olympus-ir/tests/test_shape_poly.py` evaluates the same
expressions with olympus_ir and compares.
"""

import json
import pathlib
import re

CASES = [
    # parsing and printing
    'symbolic_shape("b, 4")',
    'symbolic_shape("(b, 4)")',
    'symbolic_shape("2*b + 1")',
    'symbolic_shape("b - 1")',
    'symbolic_shape("a, b, c")',
    'symbolic_shape("a + b + c, a*b, b*a")',
    'symbolic_shape("b^2, 3*b^2 + b - 2, a*b^2 + a^2*b")',
    'symbolic_shape("max(a, b), min(a, b), max(b, 4), min(b, 1), max(b, 0)")',
    'symbolic_shape("mod(b, 4), floordiv(b, 4), mod(2*b, 2), floordiv(2*b, 2)")',
    'symbolic_shape("-b + 5, 5 - b, -3*a + 2*b")',
    'symbolic_shape("a, b, a - b + 0")',
    'symbolic_shape("floordiv(a + b, c), mod(a*b, 3)")',
    'symbolic_shape("b, _, ...", like=(None, 3, 4, 5))',
    'symbolic_shape("...", like=(2, 3))',
    'symbolic_shape(None, like=(2, 3))',
    'symbolic_shape("")',
    'symbolic_shape("()")',
    'symbolic_shape("b,")',
    'symbolic_shape("b + 15")',
    'symbolic_shape("a_1, B2, batch")',
    # parse errors
    'symbolic_shape("b, +")',
    'symbolic_shape("b c")',
    'symbolic_shape("3.5")',
    'symbolic_shape("b, ...")',
    'symbolic_shape("b, _")',
    'symbolic_shape("b, 3", like=(2, 4))',
    'symbolic_shape("_, _, _", like=(2, 3))',
    'symbolic_shape("b, _", like=(2, None))',
    'symbolic_shape("mod(b)")',
    'symbolic_shape("b ** 2")',
    'symbolic_shape(3)',
    'symbolic_shape("a", constraints=("a >= 2",), scope=SymbolicScope())',
    'SymbolicScope("a >= 2")',
    'SymbolicScope(["a > 2"])',
    'SymbolicScope(["a >= a + 1"])',
    'SymbolicScope(["a + b == 4"])',
    'SymbolicScope([3])',
    # arithmetic
    'a + a',
    'a + b',
    'b + a',
    'a - a',
    'a * 0',
    'a * 1',
    '2 * a',
    'a * b * a',
    '(a + 1) * (a - 1)',
    '(a + b) * (a + b)',
    '-(a - b)',
    'a ** 3',
    'a ** 0',
    '(2 * a) // 2',
    '(2 * a + 3) // 2',
    '(2 * a + 3) % 2',
    '(2 * a + 4) // 2',
    'a // 2',
    'a % 2',
    'divmod(a, 3)',
    'divmod(6 * a + 4, 3)',
    '(a * b) // a',
    '(a * b + a) // a',
    'a // b',
    'a % b',
    '7 // a',
    '7 % a',
    '(a * b) // b % 2',
    'a ** -1',
    'a ** 1.5',
    'int(a - a + 3)',
    'int(a)',
    'a + 1.5',
    # equality and hashing
    'a == a',
    'a + 1 == 1 + a',
    'a + a == 2 * a',
    'a == b',
    'a == 1',
    'a == 0',
    'a + 1 == a',
    'a != b',
    'a == "a"',
    'a == None',
    'hash(a) == hash(a + 0)',
    'a in (b, a)',
    'symbolic_shape("a")[0] == a',
    # inequalities
    'a >= 1',
    'a >= 0',
    'a >= 2',
    'a > 0',
    'a < 1',
    'a <= 0',
    'a >= b',
    'a - b >= 0',
    'a + b + c >= 3',
    '2 * a + b >= 3',
    'a + 2 >= 3',
    'a * 2 >= 1',
    'a // 4 >= 0',
    'a ** 2 >= 1',
    'a * b >= 1',
    'a * b >= a',
    'a * a >= a',
    'a % 4 < 4',
    'a % 4 >= 0',
    'a % 4 >= 1',
    'a >= a % 3',
    'max(a, b) >= a',
    'max_dim(a, b) >= a',
    'max_dim(a, b) >= b',
    'min_dim(a, b) <= a',
    'min_dim(a, b) >= 1',
    'max_dim(a, b) >= a + b',
    'max_dim(a, 4) >= 4',
    'a + 1 > a',
    'a - 1 >= 0',
    'a - 2 >= 0',
    '5 - a >= 0',
    'floordiv(a, 2) if False else a // 2 >= 0',
    'a // 2 <= a',
    '(a + 3) // 4 >= 1',
    'b + 1 >= a',
    'max_dim(a, 0)',
    'max_dim(a, 1)',
    'max_dim(a, 2)',
    'min_dim(a, 1)',
    'min_dim(a, 0)',
    'min_dim(a, 5)',
    'max_dim(a, b)',
    'min_dim(b, a)',
    'max_dim(3, a)',
    'min_dim(3, a)',
    'max_dim(a + 1, a)',
    'min_dim(a + 1, a)',
    'max_dim(2 * a, a)',
    # constraints
    'c16 >= 16',
    'c16 >= 17',
    'c16 + 2 * c8 >= 32',
    'c16 - 16 >= 0',
    'c16 - 17 >= 0',
    'c16 >= c8',
    'ab_a - ab_b >= 8',
    'ab_a >= 9',
    'ab_a >= ab_b',
    'sab_a >= sab_b',
    'sab_b >= 16',
    'sab_a >= 16',
    'sab_a >= 17',
    'eq_a * eq_b',
    '2 * eq_b * eq_a',
    'eq_a * eq_b * eq_b',
    'eq_a * eq_b + 1 >= 2',
    'mb >= mb % 3',
    'le10 <= 10',
    'le10 >= 11',
    'le10 >= 10',
    'le10 < 11',
    'mod_b % 4',
    'mod_b // 4 * 4',
    'mod_b >= 4',
    'a + c16',
    'c16 >= a',
]

SETUP = '''
a, b, c = symbolic_shape("a, b, c")
c16, c8 = symbolic_shape("c16, c8", constraints=("c16 >= 16", "c8 >= 8"))
ab_a, ab_b = symbolic_shape("ab_a, ab_b", constraints=("ab_a >= ab_b + 8",))
sab_a, sab_b = symbolic_shape("sab_a, sab_b", constraints=("sab_a >= sab_b", "sab_b >= 16"))
eq_a, eq_b, eq_c, eq_d = symbolic_shape("eq_a, eq_b, eq_c, eq_d", constraints=("eq_a * eq_b == eq_c + eq_d",))
mb, = symbolic_shape("mb", constraints=["mb >= mod(mb, 3)"])
le10, = symbolic_shape("le10", constraints=["le10 <= 10"])
mod_b, = symbolic_shape("mod_b", constraints=["mod(mod_b, 4) == 0"])
'''


def normalize(msg: str) -> str:
    """Blanks what differs between runs: scope ids and where a scope was created."""
    msg = re.sub(r"scope \d+ created at [^\n]*?(?=( with constraints:|\n|$))",
                 "scope <id> created at <loc>", msg)
    return msg


def run_cases(ns: dict) -> list:
    exec(SETUP, ns)
    out = []
    for case in CASES:
        try:
            res = eval(case, ns)
            out.append({"case": case, "result": repr(res)})
        except Exception as e:  # noqa: BLE001 - recording every outcome
            out.append({"case": case, "error": type(e).__name__, "message": normalize(str(e))})
    return out


def main():
    from jax import export
    from jax._src import core
    ns = dict(symbolic_shape=export.symbolic_shape, SymbolicScope=export.SymbolicScope,
              max_dim=core.max_dim, min_dim=core.min_dim)
    cases = run_cases(ns)
    path = (pathlib.Path(__file__).resolve().parent.parent
            / "packages/olympus-ir/tests/data/shape_poly_cases.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"jax_version": "0.10.2", "setup": SETUP, "cases": cases},
                               indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
