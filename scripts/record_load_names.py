"""Record the names JAX-based libraries read from JAX's public modules while they import,
for the compatibility sweep test (`packages/olympus/tests/test_compat_sweep.py`).

Run in a virtualenv holding reference jax 0.10.2 and the libraries (never with olympus):

    python -m venv /tmp/libvenv && /tmp/libvenv/bin/pip install jax==0.10.2 optax flax chex equinox
    /tmp/libvenv/bin/python scripts/record_load_names.py optax flax chex equinox \
        > packages/olympus/tests/data/jax_load_names.json

Each library and its public submodules are imported with every public jax module armed to
record attribute reads made from the library's own files. Prints JSON
{module: sorted names}."""
import builtins
import importlib
import json
import pkgutil
import sys
import types

import jax  # noqa

LIBS = sys.argv[1:]
recorded = {}

def public_jax_modules():
    names = set()
    for name, mod in list(sys.modules.items()):
        if name == "jax" or (name.startswith("jax.") and "._" not in name and not name.startswith("jax._")):
            if isinstance(mod, types.ModuleType):
                names.add(name)
    return names

class Recording(types.ModuleType):
    def __getattribute__(self, attr):
        if not attr.startswith("__"):
            f = sys._getframe(1)
            fn = f.f_code.co_filename
            if any(f"/{lib}/" in fn for lib in LIBS):
                mod = types.ModuleType.__getattribute__(self, "__name__")
                recorded.setdefault(mod, set()).add(attr)
        return types.ModuleType.__getattribute__(self, attr)

def arm():
    for name in public_jax_modules():
        mod = sys.modules[name]
        if type(mod) is types.ModuleType:
            mod.__class__ = Recording

# import the usual public submodules first so they can be armed
for sub in ["numpy", "lax", "random", "nn", "tree_util", "tree", "typing", "dtypes", "scipy", "scipy.special",
            "scipy.stats", "sharding", "flatten_util", "experimental", "debug", "errors", "stages", "export",
            "custom_derivatives", "ad_checkpoint", "nn.initializers", "numpy.linalg", "numpy.fft", "test_util",
            "image", "ops", "profiler", "distributed", "monitoring", "core", "experimental.checkify",
            "experimental.shard_map", "experimental.multihost_utils", "lax.linalg", "scipy.linalg"]:
    try:
        importlib.import_module("jax." + sub)
    except Exception as e:
        print("skip", sub, e, file=sys.stderr)
arm()

_orig_import = builtins.__import__
def _import(name, *a, **k):
    m = _orig_import(name, *a, **k)
    if name.startswith("jax"):
        arm()
    return m
builtins.__import__ = _import
for lib in LIBS:
    importlib.import_module(lib)
    # also import its public submodules (what `import flax.linen` etc. pull in)
    pkg = sys.modules[lib]
    for info in pkgutil.walk_packages(pkg.__path__, lib + "."):
        if any(p.startswith("_") or p in ("tests", "testing", "experimental") or p.endswith("_test") for p in info.name.split(".")[1:]):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as e:
            print("skip", info.name, type(e).__name__, file=sys.stderr)
print(json.dumps({k: sorted(v) for k, v in sorted(recorded.items())}, indent=1))
