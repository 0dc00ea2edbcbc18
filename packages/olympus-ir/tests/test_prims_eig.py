"""The shape rule of ``eig``: complex outputs (eigenvalues, then the left and right
eigenvectors when asked for), batch dimensions kept, clear errors for bad operands."""

from __future__ import annotations

import numpy as np
import pytest

from olympus_ir import ShapedArray, abstract_eval
from olympus_ir import primitives as P

_COMPLEX = {np.float32: np.complex64, np.float64: np.complex128,
            np.complex64: np.complex64, np.complex128: np.complex128}


@pytest.mark.parametrize("dt", list(_COMPLEX), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (4, 4), (2, 3, 3), (2, 0, 5, 5)])
def test_outputs_match_numpy_shapes_and_are_complex(dt, shape):
    x = ShapedArray(shape, np.dtype(dt))
    w, vl, vr = abstract_eval(P.eig_p, x, compute_left_eigenvectors=True,
                              compute_right_eigenvectors=True)
    want = np.dtype(_COMPLEX[dt])
    assert (w.shape, w.dtype) == (shape[:-1], want)
    assert (vl.shape, vl.dtype) == (shape, want)
    assert (vr.shape, vr.dtype) == (shape, want)
    # numpy agrees on the shapes (its dtype is real when every eigenvalue is real)
    if 0 not in shape:
        nw, nv = np.linalg.eig(np.ones(shape, dt))
        assert (w.shape, vr.shape) == (nw.shape, nv.shape)


@pytest.mark.parametrize("left,right,n_out", [(True, True, 3), (True, False, 2),
                                              (False, True, 2), (False, False, 1)])
def test_optional_eigenvectors(left, right, n_out):
    outs = abstract_eval(P.eig_p, ShapedArray((3, 5, 5), np.dtype(np.float64)),
                         compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    assert len(outs) == n_out
    assert outs[0].shape == (3, 5)
    assert all(o.shape == (3, 5, 5) and o.dtype == np.complex128 for o in outs[1:])


def test_defaults_compute_both():
    outs = abstract_eval(P.eig_p, ShapedArray((2, 2), np.dtype(np.float32)))
    assert [o.shape for o in outs] == [(2,), (2, 2), (2, 2)]


@pytest.mark.parametrize("shape,match", [
    ((2, 3), r"eig requires square matrices, got shape \(2, 3\)"),
    ((4, 3, 2), r"eig requires square matrices, got shape \(4, 3, 2\)"),
    ((3,), r"eig requires an operand of rank >= 2 .*got shape \(3,\)"),
])
def test_non_square_or_vector_operand_is_a_value_error(shape, match):
    with pytest.raises(ValueError, match=match):
        abstract_eval(P.eig_p, ShapedArray(shape, np.dtype(np.float32)))


@pytest.mark.parametrize("dt", [np.int32, np.float16, np.bool_])
def test_unsupported_dtype_names_it(dt):
    with pytest.raises(TypeError, match=f"eig requires a float32, float64, complex64 or "
                                        f"complex128 operand, got {np.dtype(dt).name}"):
        abstract_eval(P.eig_p, ShapedArray((3, 3), np.dtype(dt)))


def test_non_bool_flag_is_rejected():
    with pytest.raises(TypeError, match="compute_right_eigenvectors must be a bool, got 'yes'"):
        abstract_eval(P.eig_p, ShapedArray((3, 3), np.dtype(np.float32)),
                      compute_right_eigenvectors="yes")


def test_eig_is_a_lapack_primitive_with_multiple_results():
    from olympus_ir.prims.linalg_lapack import LINALG_LAPACK

    assert P.eig_p in LINALG_LAPACK
    assert P.eig_p.multiple_results and P.eig_p.name == "eig"
