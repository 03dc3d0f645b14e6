"""``dot_to_wgmma`` on IR text: which dots become ``local_store`` + ``async_dot`` +
``async_dot_wait``, that the buffers are allocated outside the loop, and that the hazard
pass then puts a barrier between one iteration's ``async_dot`` and the next one's stores
(write after read) and a fence and a barrier before the ``async_dot``."""

from __future__ import annotations

import pytest
from passes_helpers import kernel, parse  # tests/passes/passes_helpers.py

from tlxc.ir import print_ir
from tlxc.ir.core import Operation
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, buffer_layouts, dot_to_wgmma, membar, smem_alloc
from tlxc.ir.target import Capabilities, TargetInfo
from tlxc.ir.verifier import verify


class _Wgmma(TargetInfo):
    """Stands for a target with wgmma that takes every dot (any non-None layout says
    'wgmma takes it')."""

    def async_dot_layout(self, op: Operation, num_warps: int) -> object:
        return "wgmma"

    def wgmma_instr_k(self, element: str) -> int | None:
        """Stands for the code generator's table (codegen/nvptx/mma_table.wgmma_instr_k)."""
        return {"f16": 16, "bf16": 16, "f32": 8, "f8e4m3": 32, "i8": 32}.get(element)


class _Refuses(_Wgmma):
    def async_dot_layout(self, op: Operation, num_warps: int) -> object:
        return None


OPTS = PassOptions(target=_Wgmma(has=Capabilities(wgmma=True)))
ARGS = "%a: tile<MxKxT>, %b: tile<KxNxT>, %acc: tile<MxNxC>, %n: i32"
LOOP = """
    %c0 = constant {value = 0} : i32
    %r = for %c0, %n, %c0, %acc : tile<MxNxC> {
    ^(%i: i32, %x: tile<MxNxC>):
      %d = dot %a, %b, %x : tile<MxNxC>
      yield %d
    }
    return
"""


def _kernel(m: int = 64, n: int = 64, k: int = 32, t: str = "f16", c: str = "f32", warps: int = 4) -> Operation:
    text = kernel(LOOP, ARGS)
    for key, v in (("M", m), ("N", n), ("K", k), ("T", t), ("C", c)):
        text = text.replace(f"<{key}x", f"<{v}x").replace(f"x{key}x", f"x{v}x").replace(f"x{key}>", f"x{v}>")
    if warps != 4:  # 4 is the default, which is not printed
        text = text.replace('func {sym_name = "k"}', f'func {{sym_name = "k", num_warps = {warps}}}')
    return parse(text)


def _run(**kw: object) -> Operation:
    module = _kernel(**kw)  # type: ignore[arg-type]
    dot_to_wgmma.run(module, OPTS)
    verify(module)
    out = print_ir(module)
    assert print_ir(parse_ir(out)) == out
    return module


def _names(module: Operation) -> str:
    out = []
    for op in module.walk():
        if op.NAME == "named_barrier_wait":
            out.append("B")
        elif op.NAME == "fence":
            out.append("F")
        elif op.NAME not in ("module", "func", "constant", "local_view", "return"):
            out.append(op.NAME)
    return " ".join(out)


def test_dot_in_a_loop_becomes_async_dot_with_hoisted_buffers() -> None:
    # A (a register tile, not a load) stays in registers; B is loop-invariant, so it is
    # stored once before the loop. A wgmma reading registers is waited for at once (the
    # next iteration may change them)
    module = _run()
    assert _names(module) == "local_alloc local_store for async_dot async_dot_wait yield"
    waits = [op.attrs["pendings"] for op in module.walk() if op.NAME == "async_dot_wait"]
    assert waits == [0]


RESCALED = LOOP.replace("%d = dot %a, %b, %x", "%s = mul %x, %x : tile<MxNxC>\n      %d = dot %a, %b, %s")


def test_a_rescaled_accumulator_is_waited_for_where_the_next_iteration_reads_it() -> None:
    # attention's acc: the loop carries the dot's result to a rescale, not straight into
    # the next dot. The wgmma stays in flight over the back edge; the next iteration waits
    # right before the rescale reads the carried value, and the loop's result is waited for
    # after the loop
    module = parse(kernel(RESCALED, ARGS).replace("<Mx", "<64x").replace("xKx", "x32x").replace(
        "<Kx", "<32x").replace("xNx", "x64x").replace("xT>", "xf16>").replace("xC>", "xf32>"))
    dot_to_wgmma.run(module, OPTS)
    verify(module)
    assert _names(module) == "local_alloc local_store for async_dot_wait mul async_dot yield async_dot_wait"
    loop = next(op for op in module.walk() if op.NAME == "for")
    body = loop.regions[0].block
    early, mul, dot, term = body.ops
    assert early.operands == [body.args[1]] and early.attrs["pendings"] == 0
    assert mul.operands == [early.results[0], early.results[0]]
    assert term.operands == [dot.results[0]]  # yielded in flight
    final = loop.parent.ops[loop.parent.ops.index(loop) + 1]
    assert final.NAME == "async_dot_wait" and final.operands == [loop.results[0]]
    assert final.attrs["pendings"] == 0 and all(u is final for u in loop.results[0].uses)


def test_a_shared_memory_write_before_the_rescale_comes_after_the_wait() -> None:
    # a store into shared memory before the rescale (it could be a buffer the wgmma in
    # flight reads): the wait moves up to before it
    text = RESCALED.replace("%c0 = constant {value = 0} : i32", "%c0 = constant {value = 0} : i32\n"
                            "    %u = local_alloc : memdesc<32x64xf16, smem, num=1>\n"
                            "    %uv = local_view %u, %c0 : memdesc<32x64xf16, smem>").replace(
        "%s = mul %x, %x", "local_store %uv, %b\n      %s = mul %x, %x")
    module = parse(kernel(text, ARGS).replace("<Mx", "<64x").replace("xKx", "x32x").replace(
        "<Kx", "<32x").replace("xNx", "x64x").replace("xT>", "xf16>").replace("xC>", "xf32>"))
    dot_to_wgmma.run(module, OPTS)
    verify(module)
    assert _names(module) == ("local_alloc local_alloc local_store for async_dot_wait local_store mul async_dot "
                              "yield async_dot_wait")


def test_hazard_pass_orders_the_buffers_across_iterations() -> None:
    module = _run()
    buffer_layouts.run(module, OPTS)
    smem_alloc.run(module, OPTS)
    membar.run(module, OPTS)
    verify(module)
    # B is stored once: its fence and barrier come before the loop, not every iteration
    assert _names(module) == "local_alloc local_store F B for async_dot async_dot_wait yield"


def test_an_operand_made_in_the_loop_is_stored_every_iteration() -> None:
    module = parse(kernel(LOOP.replace("%d = dot %a, %b, %x", "%bb = mul %b, %b : tile<32x64xf16>\n      "
                                       "%d = dot %a, %bb, %x"), ARGS).replace("<Mx", "<64x").replace(
        "xKx", "x32x").replace("<Kx", "<32x").replace("xNx", "x64x").replace("xT>", "xf16>").replace(
        "xC>", "xf32>").replace("<MxNxC>", "<64x64xf32>"))
    dot_to_wgmma.run(module, OPTS)
    buffer_layouts.run(module, OPTS)
    smem_alloc.run(module, OPTS)
    membar.run(module, OPTS)
    verify(module)
    # the barrier before the store: the previous iteration's async_dot read the buffer
    assert _names(module) == "local_alloc for mul B local_store F B async_dot async_dot_wait yield"


@pytest.mark.parametrize("kw", [
    {"m": 32},                          # M not a multiple of a warpgroup's 64 rows
    {"warps": 2},                       # not whole warpgroups
    {"t": "f32"},                       # tf32 stays on mma.sync (rounding)
    {"t": "i8", "c": "i32"},            # K-major B not done yet
    {"t": "bf16", "c": "f16"},          # an f16 accumulator of bf16 operands (no such wgmma)
    {"n": 48},                          # not a power of two: no buffer layout
])
def test_dots_wgmma_does_not_take_stay(kw: dict) -> None:
    assert "async_dot" not in _names(_run(**kw))


def test_an_f16_accumulator_of_f16_operands_is_taken() -> None:
    """``out_dtype=tl.float16``: wgmma's ``.f16`` accumulators (Triton's form)."""
    assert "async_dot" in _names(_run(c="f16"))


def test_a_rejected_layout_leaves_the_dot_alone() -> None:
    module = _kernel()
    before = print_ir(module)
    dot_to_wgmma.run(module, PassOptions(target=_Refuses(has=Capabilities(wgmma=True))))
    assert print_ir(module) == before


def _matmul_loop(bm: int, bn: int, warps: int) -> list[Operation]:
    """The ops of the dot loop's body in examples/matmul.py's sm_90a target IR."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
    try:
        from matmul import matmul_kernel
    finally:
        sys.path.pop(0)
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
    ck = matmul_kernel.compile(sig, constants=dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, GROUP_SIZE_M=8),
                               arch="sm_90a", num_warps=warps, num_stages=3)
    module = parse_ir(ck.asm["target_ir"])
    loop = next(op for op in module.walk() if op.NAME == "for" and any(x.NAME == "async_dot" for x in op.walk()))
    return loop.regions[0].block.ops


@pytest.mark.parametrize("bm, bn, warps", [(128, 256, 8), (128, 128, 4)])
def test_the_next_copies_addresses_are_computed_before_the_wgmma_it_overlaps(bm: int, bn: int, warps: int) -> None:
    # the wgmma of iteration k stays in flight (pendings = 1) while the copies of k + 2 are
    # issued; their addresses and masks are computed before the async_dot (ptxas does not
    # move them back over wgmma.wait_group), so the wait is followed at once by the
    # barrier that orders the refill of the slot the previous wgmma read, and the copies
    body = _matmul_loop(bm, bn, warps)
    names = [op.NAME for op in body]
    dot, wait = names.index("async_dot"), names.index("async_dot_wait")
    assert body[wait].attrs["pendings"] == 1 and wait == dot + 1
    assert names[wait + 1:wait + 3] == ["named_barrier_wait", "async_load"]
    copies = [op for op in body if op.NAME == "async_load"]
    assert len(copies) == 2
    for copy in copies:  # pointers and mask: made before the dot (or carried into the loop)
        for v in copy.operands[:1] + copy.operands[2:]:
            assert v.owner not in body or body.index(v.owner) < dot
