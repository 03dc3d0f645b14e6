"""Small kernels that the AMD runtime tests compile for gfx targets (their signatures
cover each scalar size and the padding between arguments)."""

import tlxc
import tlxc.language as tl


@tlxc.jit
def vadd(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@tlxc.jit
def mixed(a, flag, x, h, n, big, d, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + a, mask=m)


@tlxc.jit
def many(a, p, b, c, d, e, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(out + offs) + 1.0)
