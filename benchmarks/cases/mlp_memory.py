"""Peak RSS over 200 jitted MLP training steps, and RSS growth from step 50 to step 200.

The growth is the least-squares trend of RSS sampled after every step from 50 to 200,
times 150 steps: the allocator moves RSS up and down by several MB from one step to the
next (both libraries), so the difference of two single samples is mostly that noise. The
two-sample difference is reported too (not in the geometric mean)."""

import resource

from _common import metric, run
from _mlp import init, make_step

STEPS = 200


def _status_mb(field: str) -> float:
    """VmRSS / VmHWM from /proc/self/status in MB (Linux); ru_maxrss as a fallback."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(lib, jnp):
    params, batch = init(jnp)
    step = lib.jit(make_step(lib, jnp))
    rss = {}
    for i in range(1, STEPS + 1):
        params = step(params, batch)
        lib.block_until_ready(params)
        if i >= 50:
            rss[i] = _status_mb("VmRSS")
    steps = sorted(rss)
    mean_s = sum(steps) / len(steps)
    mean_r = sum(rss.values()) / len(steps)
    slope = (sum((s - mean_s) * (rss[s] - mean_r) for s in steps)
             / sum((s - mean_s) ** 2 for s in steps))
    return {
        "peak_rss_mb": metric(_status_mb("VmHWM"), "MB"),
        "rss_growth_50_200_mb": metric(slope * (STEPS - 50), "MB", geomean=False),
        "rss_change_50_200_mb": metric(rss[STEPS] - rss[50], "MB", geomean=False),
    }


if __name__ == "__main__":
    run(measure)
