"""The reference JAX lives in its own virtualenv, so the olympus processes can never import it.

`ensure()` creates ``benchmarks/.venv-jax`` on first use (``python -m venv`` + pip) and
reuses it while it still imports the pinned versions.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

JAX_VERSION = "0.10.2"
REQUIREMENTS = [f"jax=={JAX_VERSION}", f"jaxlib=={JAX_VERSION}", "threadpoolctl"]
DEFAULT_VENV = Path(__file__).resolve().parent / ".venv-jax"
_CHECK = (
    "import jax, jaxlib, threadpoolctl; "
    f"assert jax.__version__ == jaxlib.__version__ == {JAX_VERSION!r}, jax.__version__"
)


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _works(python: Path) -> bool:
    if not python.exists():
        return False
    return subprocess.run([str(python), "-c", _CHECK], capture_output=True).returncode == 0


def ensure(venv: Path = DEFAULT_VENV) -> str:
    """Return the python of a virtualenv with the reference jax installed, creating it if needed."""
    python = _python(venv)
    if _works(python):
        return str(python)
    print(f"[bench] creating reference jax virtualenv in {venv}", flush=True)
    # The base interpreter, not the bench venv's: a venv made from inside a venv is fine,
    # but this keeps the reference environment independent of how nox built its own.
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS], check=True
    )
    if not _works(python):
        raise RuntimeError(f"reference jax {JAX_VERSION} does not import from {python}")
    return str(python)


if __name__ == "__main__":
    print(ensure())
