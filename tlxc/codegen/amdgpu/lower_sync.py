"""Barriers, fences, assertions and the small thread / clock values on AMDGPU.

* ``named_barrier_wait`` with ``bar_id = 0`` over every work-item is the compiler's own
  work-group barrier (``membar`` inserts it between LDS writes and reads by other waves):
  ``s_barrier`` between a release and an acquire fence at work-group scope, so that LLVM
  keeps LDS accesses on their side (``Emitter.barrier``; LLVM AMDGPUUsage, "Memory Model
  GFX942" / "GFX12": a workgroup-scope release/acquire orders LDS through ``s_waitcnt
  lgkmcnt(0)``). Other named barriers -- a sub-group of waves synchronizing on one of 16
  hardware barriers -- are NVIDIA's ``bar.sync id, n``; TLX defines them for NVIDIA only
  (its ``named_barrier_wait`` / ``_arrive``, tlx-semantics §1.6), so they are refused.
* ``fence``: ``gpu`` / ``sys`` are acquire-release fences at agent / system scope
  (``fence syncscope("agent") acq_rel`` / ``fence acq_rel``), what NVIDIA's
  ``fence.acq_rel.gpu`` / ``.sys`` mean. ``async_shared`` orders shared-memory writes before
  reads by NVIDIA's async proxy (TMA, wgmma), which AMD chips do not have: refused (the
  hazard pass only inserts it before TMA and wgmma, which never reach AMD code generation).
* ``assert``: ``llvm.trap`` (``s_trap 2``) in a block entered when any element is false.
* ``thread_id``: ``llvm.amdgcn.workitem.id.{x,y,z}``.
* ``clock64``: ``llvm.readcyclecounter``, which LLVM 22 selects as ``s_memtime`` on
  gfx942/gfx950 and ``s_get_shader_cycles_u64`` on gfx1250 (checked with llvmlite;
  ``llvm.amdgcn.s.memtime`` itself cannot be selected for gfx1250, which has no
  ``s_memtime``). Both count shader clock cycles of the wave's chip.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from .emitter import Emitter, lowers
from .llvm import I1, I32, I64, VOID


def _all_threads(e: Emitter) -> int:
    return e.num_warps * e.target.wave_size


@lowers(ops.NamedBarrierWaitOp)
def named_barrier_wait(e: Emitter, op: Operation) -> None:
    if op.bar_id == 0 and op.threads >= _all_threads(e):
        e.barrier()
        return
    _refuse_named(e, op)


@lowers(ops.NamedBarrierArriveOp)
def named_barrier_arrive(e: Emitter, op: Operation) -> None:
    _refuse_named(e, op)


def _refuse_named(e: Emitter, op: Operation) -> None:
    raise CompilationError("TLXC-TLX-006", f"'{op.NAME}' (barrier {op.bar_id}, {op.threads} "
                           f"threads) is an NVIDIA operation; {e.target.arch} has one work-group barrier "
                           "(s_barrier) and no named barriers", op.loc,
                           "synchronize the whole work-group with an mbarrier (tlx.alloc_barriers / "
                           "barrier_arrive / barrier_wait), or compile for sm_90a / sm_100a")


@lowers(ops.FenceOp)
def fence(e: Emitter, op: Operation) -> None:
    scope = op.scope
    if scope == "async_shared":
        raise CompilationError("TLXC-TLX-006", f"fence('async_shared') orders shared-memory writes before NVIDIA's "
                               f"async proxy (TMA, wgmma); {e.target.arch} has no async proxy", op.loc,
                               "remove the fence: LDS writes are ordered by the barriers the compiler inserts")
    e.b.fence("acq_rel", "agent" if scope == "gpu" else None)


@lowers(ops.AssertOp)
def device_assert(e: Emitter, op: Operation) -> None:
    # Asserts compile to a trap when any element is false; Triton does this under debug only,
    # tlxc keeps them (they are rare and cheap next to a silent wrong result).
    conds = list(dict.fromkeys(e.get(op.cond).vals))
    ok: ir.Value = conds[0]
    for c in conds[1:]:
        ok = e.b.and_(ok, c)
    if isinstance(ok, ir.Constant) and ok.constant:
        return
    fail = e.fn.append_basic_block("assert.fail")
    cont = e.fn.append_basic_block("assert.ok")
    e.b.cbranch(ok, cont, fail)
    e.b.position_at_end(fail)
    e.b.call(e.intrinsic("llvm.trap", VOID, []), [])
    e.b.unreachable()
    e.b.position_at_end(cont)


@lowers(ops.ThreadIdOp)
def thread_id(e: Emitter, op: Operation) -> None:
    axis = "xyz"[op.axis]
    if axis == "x":
        e.set(op.result, [e.special("tid")])
        return
    e.set(op.result, [e.in_entry(f"tid.{axis}", lambda b: b.call(
        e.intrinsic(f"llvm.amdgcn.workitem.id.{axis}", I32, []), []))])


@lowers(ops.Clock64Op)
def clock64(e: Emitter, op: Operation) -> None:
    e.set(op.result, [e.b.call(e.intrinsic("llvm.readcyclecounter", I64, []), [])])


__all__ = ["I1"]
