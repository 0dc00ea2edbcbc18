"""`olympus.scipy.spatial`: rotations (`transform`)."""

from . import transform

__all__ = ["transform"]
