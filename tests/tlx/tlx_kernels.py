"""Small TLX kernels shared by the TLX tests, one feature each (the GEMMs are the
examples' kernels: examples/hopper_gemm_cp_async.py, examples/hopper_gemm_tma.py)."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def roundtrip_smem(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """y = x transposed, through a buffer: local_store, local_trans view, local_load."""
    offs_r = tl.arange(0, BLOCK)
    offs_c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs_r[:, None] * BLOCK + offs_c[None, :])
    bufs = tlx.local_alloc((BLOCK, BLOCK), tlx.dtype_of(x_ptr), 2)
    tlx.local_store(bufs[1], x)
    t = tlx.local_load(tlx.local_trans(bufs[1]))
    tl.store(y_ptr + offs_r[:, None] * BLOCK + offs_c[None, :], t)
