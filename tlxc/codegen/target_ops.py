"""Which TLX operations a target has, checked at the start of code generation.

The frontend does not know the target (one IR serves the interpreter and every code
generator), so the rules that depend on it are checked here, on the IR, before any pass
runs, and reported at the user's line (``TLXC-TLX-006``):

* AMD operations (``tlx.amd_*``, AMD register layouts in ``tlx.zeros`` /
  ``tlx.require_layout``) on an NVIDIA target;
* NVIDIA-only operations on an AMD target: TMA (descriptor loads and stores, device
  descriptors), ``async_dot`` / ``async_dot_wait`` (wgmma), ``barrier_expect_bytes``,
  tensor memory (named barriers and fences: ``amdgpu/lower_sync`` decides);
* AMD operations the chip lacks: MFMA scheduling without MFMA (gfx1250 has WMMA), AGPRs
  on a chip without them, and an AGPR MFMA accumulator on CDNA3, which the seed rules
  out (``accumulator_register_class="agpr"``, and ``persistent`` with the ``auto``
  class, which means AGPRs).

``check_nvidia(func, arch)`` runs in ``codegen/nvptx/compile.py``; the AMD code generator
calls ``check_amd(func, arch)`` first, and, once it has chosen layouts,
``check_register_groups`` and ``check_wmma_period`` for the rules that need them.
"""

from __future__ import annotations

from typing import Any

from ..errors import CompilationError
from ..ir import ops
from ..ir.core import Operation

TARGET = "TLXC-TLX-006"
AMD_OP = "TLXC-TLX-007"

# Chips whose scheduled-MFMA lowering may keep the accumulator in AGPRs. The seed
# ("Explicit MFMA scheduling") verifies the register-class constraints on CDNA4 only and
# rejects every AGPR accumulator on gfx942, so CDNA3 kernels select "vgpr" explicitly.
AGPR_ACCUMULATOR_ARCHS = frozenset({"gfx950"})

# What a user wrote, for the messages.
_USER_NAMES = {
    "amd_sched_barrier": "tlx.amd_sched_barrier", "amd_register_resident": "tlx.amd_register_resident",
    "amd_register_class_anchor": "tlx.amd_register_class_anchor", "amd_scheduled_mfma": "tlx.amd_scheduled_mfma",
    "amd_mfma_commit": "tlx.amd_mfma_commit", "tma_load": "tlx.async_descriptor_load",
    "tma_store": "tlx.async_descriptor_store", "tma_store_wait": "tlx.async_descriptor_store_wait",
    "descriptor_load": "a tensor descriptor's load (TMA)", "descriptor_store": "a tensor descriptor's store (TMA)",
    "make_tensor_descriptor": "make_tensor_descriptor (TMA)",
    "reinterpret_tensor_descriptor": "tlx.reinterpret_tensor_descriptor (TMA)",
    "tensordesc_alloc": "tlx.allocate_tensor_descriptor (TMA)", "async_dot": "tlx.async_dot (wgmma)",
    "async_dot_wait": "tlx.async_dot_wait (wgmma)", "barrier_expect": "tlx.barrier_expect_bytes",
    "named_barrier_wait": "tlx.named_barrier_wait", "named_barrier_arrive": "tlx.named_barrier_arrive",
    "fence": "tlx.fence", "cluster_cta_rank": "tlx.cluster_cta_rank (clusters)",
    "cluster_size": "tlx.cluster_size_1d (clusters)", "cluster_barrier": "tlx.cluster_barrier",
    "remote_store": "tlx.remote_shmem_store", "async_remote_store": "tlx.async_remote_shmem_store",
    "async_remote_copy": "tlx.async_remote_shmem_copy", "vote_ballot_sync": "tlx.vote_ballot_sync",
    "warp_redux": "tlx.warp_redux", "inline_asm": "tl.inline_asm_elementwise (inline PTX)",
    "print": "tl.device_print", "special_register": "tl.extra.cuda.smid / globaltimer",
}

# Ops only NVIDIA targets lower (the AMD equivalents are other operations: TDM, MFMA/WMMA).
NVIDIA_ONLY: tuple[type[Operation], ...] = (
    ops.TmaLoadOp, ops.TmaStoreOp, ops.TmaStoreWaitOp, ops.DescriptorLoadOp, ops.DescriptorStoreOp,
    ops.MakeTensorDescOp, ops.ReinterpretTensorDescOp, ops.AllocTensorDescOp, ops.AsyncDotOp, ops.AsyncDotWaitOp,
    ops.BarrierExpectOp, ops.ClusterCtaRankOp, ops.ClusterSizeOp, ops.ClusterBarrierOp, ops.RemoteStoreOp,
    ops.AsyncRemoteStoreOp, ops.AsyncRemoteCopyOp,
    # TLX defines them for NVIDIA's 32-lane warps; an AMD wave has 32 or 64 lanes, so the
    # ownership rule (ir/ops/warp.py) would need a wave-size variant first
    ops.VoteBallotOp, ops.WarpReduxOp,
    ops.InlineAsmOp,  # its text is PTX
    ops.SpecialRegisterOp,  # tl.extra.cuda's smid / globaltimer (tl.extra.hip's are not there yet)
)
# Named barriers and fences are the AMD code generator's own to judge (``amdgpu/lower_sync``):
# it lowers ``fence("gpu"/"sys")`` and the compiler's CTA barrier (barrier 0 of every
# thread, which the hazard pass inserts after this check) and refuses user named barriers
# and ``fence("async_shared")`` at the user's line.

# Layout ops that are not AMD-only in TLX but that the NVIDIA code generator cannot lower
# yet (rematerialized_range and release_layout it rewrites away; dot_scaled the pipeline's
# decompose-scaled-dot pass rewrites after this check).
_NVIDIA_NOT_YET = (ops.ExtractSliceOp,)


def _name(op: Operation) -> str:
    return _USER_NAMES.get(op.NAME, f"'{op.NAME}'")


def _layout(op: Operation) -> dict[str, Any] | None:
    if isinstance(op, (ops.ZerosOp, ops.RequireLayoutOp)):
        return op.layout
    return None


def check_nvidia(func: Operation, arch: str) -> None:
    """Refuse AMD operations and layouts; rewrite the layout-only ops NVIDIA lowers as
    plain ones (a rematerialized range is an arange, a released layout the value)."""
    for op in list(func.walk()):
        layout = _layout(op)
        if isinstance(op, ops.AMD_OPS) or (layout is not None and layout["kind"].startswith("amd")):
            what = _name(op) if layout is None else f"tlx.{op.NAME} with {layout['kind']} layout"
            raise CompilationError(TARGET, f"{what} is an AMD operation; target {arch} is an NVIDIA GPU", op.loc,
                                   "compile for gfx942, gfx950 or gfx1250, or keep AMD-only code under a "
                                   "tl.constexpr flag that is false for NVIDIA targets")
        if isinstance(op, _NVIDIA_NOT_YET):
            raise CompilationError("TLXC-CODEGEN-001", f"'{op.NAME}' cannot be compiled for {arch} yet", op.loc)
        if isinstance(op, ops.RematerializedRangeOp):
            from ..ir.builder import Builder
            from ..ir.passes.rewrite import replace_op

            b = Builder()
            with b.before(op):
                r = b.value(ops.ArangeOp, [], op.result.type, start=op.start, end=op.end)
            r.op.loc = op.loc  # type: ignore[attr-defined]
            replace_op(op, [r])
        elif isinstance(op, ops.ReleaseLayoutOp):
            from ..ir.passes.rewrite import replace_op

            replace_op(op, [op.x])


def check_amd(func: Operation, arch: str) -> None:
    """Refuse NVIDIA-only operations and the AMD operations ``arch`` does not have. The AMD
    pipeline first rewrites descriptors made in the kernel as pointer accesses
    (``ir/passes/descriptor_pointers``); the descriptor ops that remain are refused here."""
    from .amdgpu.isa import TARGETS  # only when compiling for AMD

    chip = TARGETS[arch]
    for op in func.walk():
        if isinstance(op, NVIDIA_ONLY):
            raise CompilationError(TARGET, f"{_name(op)} is an NVIDIA operation; target {arch} is an AMD GPU",
                                   op.loc, _AMD_HELP.get(op.NAME, "compile for sm_90a or sm_100a"))
        if isinstance(op, ops.LocalAllocOp) and op.result.type.storage == "tmem":
            raise CompilationError(TARGET, f"tensor memory (storage=tmem) is an NVIDIA Blackwell feature; target "
                                   f"{arch} has none", op.loc, "allocate the buffer in shared memory (LDS)")
        if isinstance(op, (ops.AmdScheduledMfmaOp, ops.AmdMfmaCommitOp)) and not chip.has_mfma:
            raise CompilationError(TARGET, f"{_name(op)} schedules MFMA instructions; {arch} has none (its matrix "
                                   "cores are WMMA)", op.loc, "use tl.dot, or compile for gfx942 or gfx950")
        layout = _layout(op)
        if layout is not None:
            kind = layout["parent"]["kind"] if layout["kind"] == "amd_dot_operand" else layout["kind"]
            if (kind == "amd_mfma" and not chip.has_mfma) or (kind == "amd_wmma" and not chip.has_wmma):
                raise CompilationError(TARGET, f"tlx.{op.NAME} with an {kind} layout: {arch} has no "
                                       f"{kind[4:].upper()} instructions", op.loc)
        cls = _register_class(op)
        if cls == "agpr" and not chip.max_agprs:
            raise CompilationError(TARGET, f"{_name(op)} asks for AGPRs; {arch} has none", op.loc,
                                   'use register_class="vgpr"')
        if isinstance(op, ops.AmdScheduledMfmaOp) and arch not in AGPR_ACCUMULATOR_ARCHS:
            role, acc = op.accumulator_role, op.accumulator_register_class
            if acc == "agpr" or (role == "persistent" and acc == "auto"):
                why = ('accumulator_register_class="agpr"' if acc == "agpr"
                       else 'accumulator_role="persistent" with the default class (AGPRs)')
                raise CompilationError(TARGET, f"tlx.amd_scheduled_mfma with {why} is not available on {arch}",
                                       op.loc, 'pass accumulator_register_class="vgpr"')


def _register_class(op: Operation) -> str | None:
    if isinstance(op, (ops.AmdRegisterResidentOp, ops.AmdRegisterClassAnchorOp)):
        return op.register_class
    if isinstance(op, ops.AmdScheduledMfmaOp):
        return op.accumulator_register_class
    return None


_AMD_HELP = {
    "async_dot": "use tl.dot (MFMA / WMMA) or tlx.amd_scheduled_mfma",
    "async_dot_wait": "use tl.dot (MFMA / WMMA) or tlx.amd_scheduled_mfma",
    "barrier_expect": "on AMD, wait for copies with tlx.async_load_wait_group",
    "print": "tlxc cannot print from AMD GPUs yet: run the kernel in the interpreter (kernel.interpret[grid] "
             "or TLXC_INTERPRET=1) to see the values, or compile for sm_90a or sm_100a",
}


def replicated_atomic(op: Operation, arch: str) -> CompilationError:
    """The refusal of an atomic whose old values are used, on a tile that several threads
    hold, under a branch on ``tlx.thread_id``: each element is updated once, by its owner
    thread, which then hands the old value to the copies with a warp shuffle or through
    shared memory and a barrier -- both need every thread, and the owner may be one of
    those the branch left out."""
    name = "cas" if isinstance(op, ops.AtomicCASOp) else op.attrs["kind"]
    return CompilationError("TLXC-CODEGEN-001", f"the old values of tl.atomic_{name} on a tile of "
                            f"{op.operands[0].type.shape} elements, which several threads hold, under a branch "
                            f"on tlx.thread_id cannot be compiled for {arch}", op.loc,
                            "do the atomic outside the branch (mask it instead), use a tile with at least as "
                            "many elements as the kernel has threads, or leave the result unused")


def check_register_groups(op: Operation, elements_per_thread: int) -> None:
    """``amd_register_resident``'s groups must split the value's per-thread elements
    (known once the code generator has its layout)."""
    group = op.registers_per_group
    bits = op.x.type.scalar.bits
    per_group = group * 32 // bits
    if elements_per_thread % per_group:
        raise CompilationError(AMD_OP, f"tlx.amd_register_resident: each thread holds {elements_per_thread} "
                               f"{op.x.type.scalar} values, which do not split into groups of "
                               f"{group} registers ({per_group} values)", op.loc,
                               "pick a registers_per_group that divides the per-thread register count")


def check_wmma_period(op: Operation, instr_shape: tuple[int, ...], warps_per_cta: tuple[int, ...]) -> None:
    """``dot_scaled(tiles_per_warp=)``: the layout period instr * warps * tiles of each
    result dim must fit in the result tile (known once the WMMA layout's warps are)."""
    tiles = op.tiles_per_warp
    shape = op.result.type.shape
    for i, d in enumerate((-2, -1)):  # instr_shape is [M, N, K]; the others end in [.., M, N]
        period = instr_shape[i] * warps_per_cta[d] * tiles[d]
        if period > shape[d]:
            raise CompilationError("TLXC-DOT-001", f"tiles_per_warp={list(tiles)}: the WMMA layout period along "
                                   f"result dim {len(shape) + d} is {instr_shape[i]} x {warps_per_cta[d]} warps x "
                                   f"{tiles[d]} = {period}, more than the result's {shape[d]}", op.loc,
                                   "use smaller tiles_per_warp or a larger result tile")
