"""Run the bad-input corpus, each case in its own process, and judge it against JAX.

    python -m instruments.badinput.runner [--differential] [--smoke] [--cases ID,...]
        [--workers 2] [--timeout 60] [--report FILE.md] [--record-jax]

Each case runs in a fresh Olympus process (a pool of `--workers` at a time) with a timeout,
and is classified as a clean error (a Python exception: type and message recorded), a value,
a crash (killed by a signal, or a non-zero exit without an outcome) or a hang (timeout).

Its outcome is then compared with reference JAX 0.10.2's outcome for the same source with
JAX's names: recorded once in `jax_outcomes.json` (``--record-jax`` runs JAX and rewrites
it), or with ``--differential`` run live in JAX's own virtualenv (`benchmarks/jaxenv.py`),
where a live outcome that differs from the recorded one is reported too. Two outcomes agree
when both are values (same dtype, shape and weak type; floats within a tolerance) or both
are errors of the same type (and, for `message=True` cases, the same first line of message
after translating names).

Exit status 1 on any Olympus crash or hang, and on any divergence that is explained
neither by the reviewed allow-list (`allowlist.py`: JAX is wrong or cryptic, Olympus's
answer is accepted) nor by `known.py` (open divergences, each with its reason, to be fixed:
reported in their own section, with their count, but they do not fail the run, so the
session catches new divergences while old ones are worked off). An allow-list or known
entry whose case now agrees is reported as stale and fails the run, so both lists stay
honest.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .allowlist import ALLOWED
from .cases import CASES, Case, translate
from .known import KNOWN_CRASHES, KNOWN_OPEN

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "jax_outcomes.json"
DEFAULT_TIMEOUT = 60.0
RTOL, ATOL = 1e-5, 1e-6


def jax_python() -> str:
    """The reference JAX interpreter: $OLYMPUS_JAX_PYTHON, else the virtualenv that
    benchmarks/jaxenv.py creates on first use."""
    if os.environ.get("OLYMPUS_JAX_PYTHON"):
        return os.environ["OLYMPUS_JAX_PYTHON"]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import jaxenv

    return jaxenv.ensure()


# ------------------------------------------------------------------------ running


def run_case(python: str, lib: str, case: Case, timeout: float = DEFAULT_TIMEOUT) -> dict:
    """The outcome of one case in a fresh process: the child's JSON, or crash / hang."""
    with tempfile.TemporaryDirectory(prefix="badinput-") as tmp:
        out = os.path.join(tmp, "outcome.json")
        env = dict(os.environ, PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu",
                   PYTHONFAULTHANDLER="1")
        start = time.monotonic()
        proc = subprocess.Popen(
            [python, "-m", "instruments.badinput.child", lib, case.id, out],
            cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return {"outcome": "hang", "detail": f"no outcome after {timeout:.0f} s"}
        seconds = time.monotonic() - start
        err = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.strip()]
        # The first lines name the failure (an XLA check, a fatal error); the last, where.
        tail = err[:3] + (["..."] + err[-2:] if len(err) > 5 else err[3:])
        result = None
        if os.path.exists(out):
            with open(out) as f:
                result = json.load(f)
        if proc.returncode != 0:
            how = (f"killed by {signal.Signals(-proc.returncode).name}"
                   if proc.returncode < 0 else f"exit status {proc.returncode}")
            when = " at interpreter exit, after the case finished" if result else ""
            return {"outcome": "crash", "detail": f"{how}{when}", "stderr": tail}
        if result is None:
            return {"outcome": "crash", "detail": "exited 0 without an outcome",
                    "stderr": tail}
        result["seconds"] = round(seconds, 2)
        return result


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_all(python: str, lib: str, cases: list[Case], workers: int, timeout: float,
            progress: bool = True) -> dict[str, dict]:
    results: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {c.id: pool.submit(run_case, python, lib, c, timeout) for c in cases}
        for i, (cid, fut) in enumerate(futures.items(), 1):
            results[cid] = fut.result()
            if progress and (i % 25 == 0 or i == len(cases)):
                print(f"[badinput] {lib}: {i}/{len(cases)}", file=sys.stderr, flush=True)
    return results


# ------------------------------------------------------------------------ comparing


def normalize_name(name: str) -> str:
    return name.replace("Olympus", "Jax")


def normalize_message(msg: str) -> str:
    """First line, with Olympus's names as JAX's, addresses and spacing flattened."""
    msg = translate(msg).replace("OLYMPUS", "JAX").replace("Olympus", "JAX")
    msg = re.sub(r"0x[0-9a-fA-F]+", "0x", msg)
    first = msg.strip().splitlines()[0] if msg.strip() else ""
    return re.sub(r"\s+", " ", first).strip()


def describe(o: dict) -> str:
    kind = o["outcome"]
    if kind == "error":
        first = o["message"].strip().splitlines()[0] if o["message"].strip() else ""
        return f"{o['type']}: {first[:240]}"
    if kind == "value":
        return "value " + _short(o["value"])
    return f"{kind} ({o.get('detail', '')})"


def _short(v: dict) -> str:
    if v["kind"] == "array":
        weak = ", weak" if v.get("weak") else ""
        vals = v.get("values")
        shown = (vals[:8] if isinstance(vals, list) else vals)
        return f"{v['dtype']}{v['shape']}{weak} {shown}"
    if v["kind"] == "py":
        return f"{v['type']} {v['value']!r}"[:200]
    return json.dumps(v)[:200]


def _close(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str) and a.startswith("unavailable") and \
            b.startswith("unavailable"):
        return True  # neither side's values can be read (e.g. key arrays)
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)
    return a == b


def diff_values(ours: dict, theirs: dict, path: str = "") -> str | None:
    """None if the summaries agree, else where and how they differ."""
    if ours.get("kind") != theirs.get("kind"):
        return f"{path or 'value'}: {_short(ours)} vs JAX {_short(theirs)}"
    kind = ours["kind"]
    if kind == "array":
        for field in ("dtype", "shape", "weak"):
            if ours.get(field) != theirs.get(field):
                return (f"{path or 'value'} {field}: {ours.get(field)} vs JAX "
                        f"{theirs.get(field)}")
        if not _close(ours.get("values"), theirs.get("values")):
            return f"{path or 'value'} values: {_short(ours)} vs JAX {_short(theirs)}"
        return None
    if kind == "seq":
        if len(ours["items"]) != len(theirs["items"]):
            return f"{path or 'value'}: {len(ours['items'])} items vs JAX {len(theirs['items'])}"
        for i, (a, b) in enumerate(zip(ours["items"], theirs["items"])):
            d = diff_values(a, b, f"{path}[{i}]")
            if d:
                return d
        return None
    if kind == "dict":
        if sorted(ours["items"]) != sorted(theirs["items"]):
            return f"{path or 'value'} keys: {sorted(ours['items'])} vs JAX {sorted(theirs['items'])}"
        for k in ours["items"]:
            d = diff_values(ours["items"][k], theirs["items"][k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if kind == "object":
        return None  # any other object: its class is the library's own business
    a, b = dict(ours), dict(theirs)
    for d in (a, b):
        for key in ("type", "name", "value"):
            if isinstance(d.get(key), str):
                d[key] = normalize_message(d[key]) if key == "value" else normalize_name(d[key])
    if a.get("type") == "float" and b.get("type") == "float":
        return None if _close(a["value"], b["value"]) else f"{path or 'value'}: {_short(ours)} vs JAX {_short(theirs)}"
    if a != b:
        return f"{path or 'value'}: {_short(ours)} vs JAX {_short(theirs)}"
    return None


def compare(case: Case, ours: dict, theirs: dict) -> str | None:
    """None when Olympus agrees with JAX, else the divergence in one line."""
    if theirs["outcome"] in ("crash", "hang"):
        return f"JAX: {describe(theirs)}; Olympus: {describe(ours)}"
    if ours["outcome"] != theirs["outcome"]:
        return f"JAX: {describe(theirs)}; Olympus: {describe(ours)}"
    if ours["outcome"] == "error":
        if normalize_name(ours["type"]) != normalize_name(theirs["type"]):
            return f"error type: JAX {describe(theirs)}; Olympus {describe(ours)}"
        if case.message and normalize_message(ours["message"]) != normalize_message(
                theirs["message"]):
            return (f"message: JAX {normalize_message(theirs['message'])!r}; Olympus "
                    f"{normalize_message(ours['message'])!r}")
        return None
    d = diff_values(ours["value"], theirs["value"])
    return None if d is None else f"value: {d}"


# ------------------------------------------------------------------------ verdicts

VERDICTS = ("agrees", "allowed", "crash", "hang", "divergence", "known open",
            "stale allow-list entry", "fixed (remove from known.py)", "no JAX outcome")
FAILING = {"crash", "hang", "divergence", "stale allow-list entry",
           "fixed (remove from known.py)", "no JAX outcome"}


def verdict(case: Case, ours: dict, theirs: dict | None) -> tuple[str, str]:
    """(verdict, detail) for one case."""
    if ours["outcome"] in ("crash", "hang"):
        known = f" (known: {KNOWN_CRASHES[case.id]})" if case.id in KNOWN_CRASHES else ""
        return ours["outcome"], describe(ours) + (
            f"; JAX: {describe(theirs)}" if theirs else "") + known
    if theirs is None:
        return "no JAX outcome", "run with --record-jax (or --differential)"
    diff = compare(case, ours, theirs)
    if diff is None:
        if case.id in ALLOWED:
            return "stale allow-list entry", "Olympus now agrees with JAX"
        if case.id in KNOWN_OPEN:
            return "fixed (remove from known.py)", "Olympus now agrees with JAX"
        return "agrees", ""
    if case.id in ALLOWED:
        return "allowed", diff
    if case.id in KNOWN_OPEN:
        return "known open", diff
    return "divergence", diff


def load_recorded() -> dict[str, dict]:
    if RECORDED.exists():
        return json.loads(RECORDED.read_text())["outcomes"]
    return {}


def write_recorded(outcomes: dict[str, dict], python: str) -> None:
    version = subprocess.run([python, "-c", "import jax; print(jax.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    data = {"jax_version": version, "outcomes": {k: _strip(v) for k, v in sorted(
        outcomes.items())}}
    tmp = RECORDED.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, RECORDED)


def _strip(o: dict) -> dict:
    o = {k: v for k, v in o.items() if k not in ("seconds", "stderr")}
    if "message" in o:
        o["message"] = o["message"][:500]
    return o


def classify(o: dict) -> str:
    return {"error": "clean error", "value": "value"}.get(o["outcome"], o["outcome"])


def report(cases: list[Case], ours: dict, theirs: dict, verdicts: dict, stale: dict,
           title: str) -> str:
    from collections import Counter

    lines = [f"# {title}", ""]
    lines.append(f"{len(cases)} cases.")
    lines.append("")
    lines.append("| class | Olympus | JAX |")
    lines.append("|---|---|---|")
    co = Counter(classify(ours[c.id]) for c in cases)
    cj = Counter(classify(theirs[c.id]) for c in cases if c.id in theirs)
    for k in ("clean error", "value", "crash", "hang"):
        lines.append(f"| {k} | {co.get(k, 0)} | {cj.get(k, 0)} |")
    lines.append("")
    cv = Counter(v for v, _ in verdicts.values())
    lines.append("Verdicts: " + ", ".join(f"{k}: {cv[k]}" for k in VERDICTS if cv.get(k)))
    lines.append("")
    by_case = {c.id: c for c in cases}
    for kind in ("crash", "hang", "divergence", "known open", "stale allow-list entry",
                 "fixed (remove from known.py)", "no JAX outcome", "allowed"):
        ids = [cid for cid, (v, _) in verdicts.items() if v == kind]
        if not ids:
            continue
        lines += [f"## {kind} ({len(ids)})", ""]
        for cid in ids:
            src = by_case[cid].source
            shown = src if "\n" not in src else src.replace("\n", "; ")
            lines.append(f"- `{cid}`: `{shown}`")
            lines.append(f"  - {verdicts[cid][1]}")
            if kind in ("crash", "hang") and ours[cid].get("stderr"):
                lines.append(f"  - stderr: {' | '.join(ours[cid]['stderr'])[:400]}")
        lines.append("")
    if stale:
        lines += [f"## recorded JAX outcome differs from live JAX ({len(stale)})", ""]
        for cid, d in stale.items():
            lines.append(f"- `{cid}`: {d}")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--differential", action="store_true",
                    help="run every case against reference JAX too (its own virtualenv)")
    ap.add_argument("--record-jax", action="store_true",
                    help="run JAX on every case and rewrite jax_outcomes.json")
    ap.add_argument("--smoke", action="store_true", help="only the smoke subset")
    ap.add_argument("--cases", default="", help="comma-separated case ids (or prefixes)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    ap.add_argument("--report", default=None, help="write a Markdown report here")
    ap.add_argument("--json", default=None, help="write both sides' outcomes here")
    ap.add_argument("--jax-python", default=None,
                    help="reference JAX's interpreter (default: $OLYMPUS_JAX_PYTHON or "
                         "benchmarks/jaxenv.py's virtualenv)")
    args = ap.parse_args(argv)

    cases = [c for c in CASES if not args.smoke or c.smoke]
    if args.cases:
        wanted = args.cases.split(",")
        cases = [c for c in cases if any(c.id == w or c.id.startswith(w) for w in wanted)]
    if not cases:
        print("no case selected", file=sys.stderr)
        return 2
    recorded = load_recorded()
    theirs: dict[str, dict] = dict(recorded)
    stale: dict[str, str] = {}
    if args.differential or args.record_jax:
        jpy = args.jax_python or jax_python()
        live = run_all(jpy, "jax", cases, args.workers, args.timeout)
        for c in cases:
            if c.id in recorded:
                d = compare(c, live[c.id], recorded[c.id])
                if d is not None:
                    stale[c.id] = d
        theirs.update(live)
        if args.record_jax:
            merged = dict(recorded)
            merged.update(live)
            write_recorded(merged, jpy)
            print(f"[badinput] recorded {len(live)} JAX outcomes in {RECORDED}",
                  file=sys.stderr)
    ours = run_all(sys.executable, "olympus", cases, args.workers, args.timeout)
    verdicts = {c.id: verdict(c, ours[c.id], theirs.get(c.id)) for c in cases}
    mode = "differential" if args.differential else "against recorded JAX outcomes"
    text = report(cases, ours, theirs, verdicts, stale, f"Bad-input corpus ({mode})")
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"olympus": ours, "jax": theirs,
                                               "verdicts": verdicts}, indent=1))
    failing = sorted(cid for cid, (v, _) in verdicts.items() if v in FAILING)
    if failing:
        print(f"[badinput] FAILED: {len(failing)} case(s): {', '.join(failing[:40])}"
              f"{' ...' if len(failing) > 40 else ''}", file=sys.stderr)
        return 1
    print(f"[badinput] all {len(cases)} cases pass", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
