"""Peak RSS over 200 jitted MLP training steps, and RSS growth from step 50 to step 200."""

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
        if i in (50, STEPS):
            rss[i] = _status_mb("VmRSS")
    return {
        "peak_rss_mb": metric(_status_mb("VmHWM"), "MB"),
        "rss_growth_50_200_mb": metric(rss[STEPS] - rss[50], "MB", geomean=False),
    }


if __name__ == "__main__":
    run(measure)
