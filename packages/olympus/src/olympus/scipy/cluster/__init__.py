"""`olympus.scipy.cluster`: vector quantization (`vq`)."""

from . import vq

__all__ = ["vq"]
