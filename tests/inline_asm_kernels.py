"""Kernels that use ``tl.inline_asm_elementwise`` (tests/codegen/test_inline_asm.py on the
CPU, tests/gpu/test_inline_asm_gpu.py on the GPU)."""

import tlxc
import tlxc.language as tl


@tlxc.jit
def add_and_convert(x, y, BLOCK: tl.constexpr):
    """``y = float(x + 7)`` through two snippets: an i32 add (``=r,r,r``, one operand a
    number), and a conversion written to an f32 result (``=f,r``)."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    w = tl.inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r,r", [v, 7], dtype=tl.int32, is_pure=True, pack=1)
    f = tl.inline_asm_elementwise("cvt.rn.f32.s32 $0, $1;", "=f,r", [w], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y + offs, f)


@tlxc.jit
def two_results(x, lo, hi, BLOCK: tl.constexpr):
    """An f32 passed as ``r`` (its bits), split into two 16-bit halves: two results."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    a, b = tl.inline_asm_elementwise("and.b32 $0, $2, 65535; shr.u32 $1, $2, 16;", "=r,=r,r", [v],
                                     dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(lo + offs, a)
    tl.store(hi + offs, b)


@tlxc.jit
def sleep_then_store(y):
    """An impure snippet with no operands (TLX's cluster test delays a CTA this way)."""
    tl.inline_asm_elementwise("nanosleep.u32 100; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(y, 1.0)
