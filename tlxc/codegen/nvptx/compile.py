"""IR module (canonicalized) -> PTX text for one NVIDIA target, and the launch metadata
the runtime needs.

Steps: ``tl.dot`` rewritten to wgmma where the target has it, buffer layouts (NVMMA
swizzles), layout assignment (with this target's facts) and the dead code it leaves,
shared-memory allocation,
hazard barriers and proxy fences, the emitter over the kernel's body, then the
``.entry`` with its parameters, registers and shared memory (the buffers, then the
scratch area of layout conversions and reductions).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import CompilationError
from ...ir import ops
from ...ir.analysis.axis_info import analyze
from ...ir.layout.target import LayoutTarget
from ...ir.passes import buffer_layouts, dce, dot_to_wgmma, layouts, membar, smem_alloc, tma_staging
from ...ir.passes.options import PassOptions
from ...ir.types import DType, Kind, PointerType, TensorDescType
from .. import target_ops
from . import (  # noqa: F401  (importing a lowering module registers its rules)
    lower_arith,
    lower_buffers,
    lower_control,
    lower_convert,
    lower_dot,
    lower_memory,
    lower_reduce,
    lower_shape,
    lower_sync,
    lower_tensormap,
    lower_tma,
    lower_wgmma,
)
from .emitter import Emitter
from .isa import TARGETS, NvidiaTarget
from .ptx import PtxFunction, module_text

PLAIN_SHARED_ALIGN = 16
GLOBAL_SCRATCH_ALIGN = lower_tensormap.TENSORMAP_ALIGN  # of the per-launch global scratch (metadata)


@dataclass(frozen=True)
class PtxKernel:
    name: str
    ptx: str
    num_warps: int
    shared_bytes: int
    params: tuple[str, ...]  # PTX param types in order ("u64", "u32", "f32"...; "tensormap": a TMA descriptor)
    tma_params: tuple[dict, ...] = ()  # per descriptor parameter: index, block_shape, element, swizzle
    # bytes of global scratch per program (descriptors built in the kernel); when non-zero the
    # last of ``params`` is the hidden u64 pointer to it, after the kernel's own parameters
    global_scratch: int = 0


def layout_target(t: NvidiaTarget) -> LayoutTarget:
    return LayoutTarget(t.warp_size, t.shared_banks, t.bank_bytes, t.max_vector_bytes)


def param_type(t: DType | PointerType | TensorDescType) -> str:
    if isinstance(t, TensorDescType):
        return "tensormap"  # .param .align 64 .b8 name[128], the CUtensorMap by value
    if isinstance(t, PointerType):
        return "u64"
    if t.kind == Kind.FLOAT:
        return {16: "b16", 32: "f32", 64: "f64"}.get(t.bits, "b16")
    if t.kind == Kind.BOOL:
        return "u8"
    return f"{'s' if t.kind == Kind.INT else 'u'}{max(8, t.bits)}"


def check_storage(func, target: NvidiaTarget) -> None:
    """Tensor memory (``storage=tmem``) exists on sm_100a only, and its allocation and
    tcgen05 lowering are not part of the code generator yet."""
    for op in func.walk():
        if isinstance(op, ops.LocalAllocOp) and op.result.type.storage == "tmem":
            if target.compute_capability < 100:
                raise CompilationError("TLXC-TLX-005", f"tensor memory needs sm_100a (Blackwell); {target.arch} has "
                                       "none", op.loc, "allocate the buffer in shared memory (storage=smem)")
            raise CompilationError("TLXC-TLX-005", "tensor-memory buffers (storage=tmem) are not supported by the "
                                   "code generator yet", op.loc, "run the kernel in the interpreter for now")


def generate(module, arch: str, timings: dict[str, float] | None = None, maxnreg: int | None = None) -> PtxKernel:
    import time

    target = TARGETS[arch]
    t0 = time.perf_counter()
    options = PassOptions(target=layout_target(target), dot_layout=lower_dot.dot_layout,
                          async_dot_layout=lower_wgmma.async_dot_layout,
                          async_dot_a_layout=lower_wgmma.async_dot_a_layout)
    for func in module.funcs:
        target_ops.check_nvidia(func, arch)  # AMD operations: refused at the user's line
        check_storage(func, target)
    module = tma_staging.run(module, options)
    if target.arch in lower_wgmma.WGMMA_ARCHS:  # tl.dot on wgmma where it fits (else mma.sync)
        module = dot_to_wgmma.run(module, options)
    module = buffer_layouts.run(module, options)
    module = layouts.run(module, options)
    module = dce.run(module, options)  # what layout assignment computed again elsewhere
    if timings is not None:
        timings["layouts"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    (func,) = module.funcs
    plan = smem_alloc.plan(func)
    membar.run(module, options, plan)
    if timings is not None:
        timings["smem"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    name = func.attrs["sym_name"]
    num_warps = func.attrs["num_warps"]
    args = func.body.args
    ptypes = [param_type(a.type) for a in args]
    tensormaps = lower_tensormap.plan(func)
    hidden = [("u64", f"{name}_param_scratch")] if tensormaps.size else []
    tensormaps.param = hidden[0][1] if hidden else ""
    fn = PtxFunction(name, [(pt, f"{name}_param_{i}") for i, pt in enumerate(ptypes)] + hidden)
    fn.maxntid = num_warps * 32
    fn.maxnreg = maxnreg
    e = Emitter(fn, target, num_warps)
    e.tensormaps = tensormaps
    e.smem = plan
    e.scratch_offset = plan.scratch_offset
    e.axis = analyze(func)
    for i, (a, pt) in enumerate(zip(args, ptypes)):
        from .ptx import reg_class

        r = fn.reg("b64" if pt == "tensormap" else reg_class(a.type))
        if pt == "tensormap":  # the generic address of the parameter: cp.async.bulk.tensor reads the map there
            e.prologue.append(f"\tmov.u64 {r}, {name}_param_{i};")
            e.prologue.append(f"\tcvta.param.u64 {r}, {r};")
        elif isinstance(a.type, DType) and a.type.kind == Kind.BOOL:  # a byte in the parameters, a predicate
            h = fn.reg("b16")  # here; i8/u8 take the branch below (ld.param.s8/u8 extend them as their type says)
            e.prologue.append(f"\tld.param.u8 {h}, [{name}_param_{i}];")
            e.prologue.append(f"\tsetp.ne.u16 {r}, {h}, 0;")
        else:
            e.prologue.append(f"\tld.param.{pt} {r}, [{name}_param_{i}];")
        e.set(a, [r])
    e.block(func.body)
    fn.body = e.prologue + fn.body
    shared = plan.check_limit(target.max_shared_bytes, e.scratch_bytes, arch, func.loc)
    fn.shared_bytes = shared
    fn.shared_align = max([PLAIN_SHARED_ALIGN] + [a.align for a in plan.allocations])
    files = sorted(e.files, key=e.files.get)
    text = module_text(arch, target.ptx_version_text, files, [fn])
    if timings is not None:
        timings["ptx"] = time.perf_counter() - t0
    tma = tuple(e.tma_params[i] for i in sorted(e.tma_params))
    return PtxKernel(name, text, num_warps, shared, tuple(ptypes + [t for t, _ in hidden]), tma, tensormaps.size)
