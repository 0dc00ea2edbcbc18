"""JVP and transpose rules, one module per primitive family (the same families as
`olympus_ir.prims`). Importing this package fills `ad.jvp_rules` and `ad.transpose_rules`."""

from . import elementwise  # noqa: F401
from . import loops  # noqa: F401  (scan and while)
