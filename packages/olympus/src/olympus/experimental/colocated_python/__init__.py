"""`olympus.experimental.colocated_python`: run Python code on the hosts of a set of
devices (JAX's ``jax.experimental.colocated_python``).

Olympus runs on one process's CPU devices, so "the host of the devices" is this process:
a colocated function or object method runs here, directly, on the arrays it is given,
as JAX's CPU backend runs it (JAX pickles the function and unpickles it again first;
Olympus never unpickles bytes, and does not need to). Devices of another process would
need the function shipped there serialized: that is refused with a clear error.
"""

from .api import colocated_cpu_devices, colocated_python, colocated_python_class

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]
