"""JVP and transpose rules, one module per primitive family (the same families as
`olympus_ir.prims`). Importing this package fills `ad.jvp_rules` and `ad.transpose_rules`."""

from . import elementwise  # noqa: F401
from . import shape_ops  # noqa: F401
from . import reductions  # noqa: F401
from . import linalg  # noqa: F401
from . import indexing  # noqa: F401
from . import cumulative  # noqa: F401
from . import sorting  # noqa: F401
from . import misc  # noqa: F401
from . import control_flow  # noqa: F401
from . import collectives  # noqa: F401  (axis_index, all_gather transpose)
from . import loops  # noqa: F401  (scan and while)
from . import callbacks  # noqa: F401,E402  (debug_callback)
from . import convolution, linalg_lapack, windowed  # noqa: F401,E402  (conv, LAPACK, fft, top_k, reduce_window)
