"""``python -m olympus_ir``: the olympus-ir command line (see `olympus_ir.cli`)."""

from .cli import main

raise SystemExit(main())
