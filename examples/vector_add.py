"""Vector addition: the "hello world" of tile programming.

``out[i] = x[i] + y[i]`` for ``i < n``. The vector is cut into blocks of ``BLOCK``
consecutive elements and each *program* (one instance of the kernel, what CUDA calls a
thread block) handles one block. A program does not index single elements: it builds the
whole tile of offsets it owns at once,

    offs = pid * BLOCK + tl.arange(0, BLOCK)        # BLOCK int32 offsets

and loads, adds and stores the tile with one operation each. ``x + offs`` is a tile of
pointers, which is what ``tl.load`` and ``tl.store`` take.

The idioms this example shows:

* ``tl.program_id(0)`` and a 1-D grid of ``cdiv(n, BLOCK)`` programs;
* ``BLOCK: tl.constexpr``: a compile-time parameter; tile shapes must be constants
  (and powers of two), so the kernel is specialized, and compiled, per ``BLOCK``;
* masking: ``n`` need not be a multiple of ``BLOCK``, so the last program owns lanes past
  the end of the arrays. ``mask = offs < n`` switches those lanes off: a masked load
  does not touch memory (and yields ``other``, here left undefined because it is never
  stored), a masked store writes nothing. Without the mask the interpreter reports an
  out-of-bounds access (``TLXC-INTERP-001``) -- as the GPU would, less politely;
* the dtype follows the pointers: the same source adds fp32 or fp16 vectors, one
  compiled variant per dtype.

Run ``python examples/vector_add.py`` to add two vectors on the CPU interpreter and see
the IR of the compiled kernel.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.optional_pytest import pytest


@tlxc.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: np.ndarray, y: np.ndarray, block: int = 256) -> np.ndarray:
    """``x + y`` computed by ``add_kernel`` on the CPU interpreter."""
    assert x.shape == y.shape and x.dtype == y.dtype and x.ndim == 1
    out = np.empty_like(x)
    n = x.size
    grid = (tlxc.cdiv(n, block),)
    add_kernel.interpret[grid](x, y, out, n, BLOCK=block)
    return out


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 1000, 4097])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_vector_add(n: int, dtype: type) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    # one rounding of the exact sum, in the vectors' dtype, as numpy does it: bit-exact
    np.testing.assert_array_equal(add(x, y), x + y)


def test_vector_add_block_sizes() -> None:
    x = np.arange(1000, dtype=np.float32)
    y = np.full(1000, 0.5, dtype=np.float32)
    for block in (64, 1024):
        np.testing.assert_array_equal(add(x, y, block), x + y)


def test_tail_is_untouched() -> None:
    """The masked store writes nothing past ``n``: elements beyond stay as they were."""
    x = np.ones(100, dtype=np.float32)
    out = np.full(128, -1.0, dtype=np.float32)
    add_kernel.interpret[(1,)](x, x, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out[:100], 2.0)
    np.testing.assert_array_equal(out[100:], -1.0)


def test_specializes_per_dtype() -> None:
    ir32 = add_kernel.compile(signature="*fp32,*fp32,*fp32,i32", constants={"BLOCK": 128}).asm["ir"]
    ir16 = add_kernel.compile(signature="*fp16,*fp16,*fp16,i32", constants={"BLOCK": 128}).asm["ir"]
    assert "tile<128xf32>" in ir32 and "tile<128xf16>" in ir16


if __name__ == "__main__":
    n = 1000
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = add(x, y)
    print(f"add of {n} fp32 elements in blocks of 256: max |error| = {np.max(np.abs(out - (x + y)))}")
    print(add_kernel.compile(signature="*fp32:16,*fp32:16,*fp32:16,i32", constants={"BLOCK": 256}).asm["ir"])
