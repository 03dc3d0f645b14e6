"""The AMDGPU emitter driver: the IR that the AMDGPU pipeline (``pipeline.py``) leaves
-> LLVM IR for one chip, and the launch metadata the runtime needs.

``emit`` builds the ``amdgpu_kernel`` function and runs the emitter over the kernel's
body. The LDS of the kernel (its buffers at the offsets ``smem-alloc`` wrote into the
IR, then the scratch area of layout conversions and reductions) is one static array,
``@global_smem``, sized at the end. ``generate`` runs the pipeline's lowering passes
first, for callers that hold the tile IR (tests, tools).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import llvmlite.ir as ir

from ...ir import ops
from ...ir.analysis.axis_analysis import analyze
from ...ir.passes import smem_alloc
from ...ir.passes.options import PassOptions
from ...ir.passes.pipeline import TILE_PIPELINE, run_pipeline
from ...ir.types import DType, Kind, PointerType, TensorDescType
from .emitter import Emitter
from .isa import TRIPLE
from .llvm import GLOBAL_PTR, I8, I32, LDS_AS, VOID, value_type
from .pipeline import PIPELINE
from .target_info import AmdTargetInfo, target_info

LDS_ALIGN = 16


@dataclass(frozen=True)
class AmdKernel:
    name: str
    llvm_ir: str
    num_warps: int
    wave_size: int
    lds_bytes: int
    params: tuple[str, ...]  # kernel argument types in order ("ptr", "i32", "f32", "i8" for bool...)
    # tl.device_print's sites (runtime/device_print.py); the kernel then takes the record
    # buffer as a last parameter ("printbuf" in params)
    print_sites: tuple[dict, ...] = ()


def param_type(t: DType | PointerType | TensorDescType) -> tuple[str, ir.Type]:
    """(runtime name, LLVM type) of one kernel argument."""
    if isinstance(t, TensorDescType):  # a host descriptor: its fields by value (host-descriptors pass)
        rank = len(t.block_shape)
        return "tensordesc", ir.LiteralStructType([value_type(PointerType(t.element))] + [I32] * (2 * rank))
    if isinstance(t, PointerType):
        return "ptr", value_type(t)
    if t.kind == Kind.BOOL:
        return "i8", I8
    ty = value_type(t)
    return str(ty), ty


def generate(module, arch: str, timings: dict[str, float] | None = None, waves_per_eu: int = 0,
             verify_each: bool = False) -> AmdKernel:
    """LLVM IR of ``module`` (the tile IR) for ``arch``: the pipeline's lowering passes,
    then ``emit``."""
    info = target_info(arch)
    module = run_pipeline(module, PassOptions(target=info), PIPELINE[len(TILE_PIPELINE):],
                          verify_each=verify_each, timings=timings)
    return emit(module, info, timings, waves_per_eu)


def emit(module, info: AmdTargetInfo, timings: dict[str, float] | None = None, waves_per_eu: int = 0) -> AmdKernel:
    """LLVM IR of ``module`` as the AMDGPU pipeline left it; ``waves_per_eu`` (0: LLVM's
    choice) is the occupancy the register budget is sized for
    (``_with_kernel_attributes``)."""
    t0 = time.perf_counter()
    target = info.chip
    arch = info.name
    (func,) = module.funcs
    plan = smem_alloc.read_plan(func)
    name = func.sym_name
    num_warps = func.num_warps
    threads = num_warps * target.wave_size  # check-target refused more than a work-group holds
    args = func.body.args
    params = [param_type(a.type) for a in args]
    prints = any(isinstance(op, ops.PrintOp) for op in func.walk())
    if prints:
        params.append(("printbuf", GLOBAL_PTR))
    llmod = ir.Module(name=name)
    llmod.triple = TRIPLE
    fn = ir.Function(llmod, ir.FunctionType(VOID, [ty for _, ty in params]), name=name)
    fn.calling_convention = "amdgpu_kernel"
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block("body")
    builder = ir.IRBuilder(entry)
    lds = ir.GlobalVariable(llmod, ir.ArrayType(I8, 0), name="global_smem", addrspace=LDS_AS)
    lds.linkage = "internal"
    lds.align = LDS_ALIGN
    e = Emitter(llmod, fn, builder, target, num_warps, axis=analyze(func), smem=plan,
                scratch_offset=plan.scratch_offset, lds=lds, entry=entry,
                print_buffer=fn.args[-1] if prints else None)
    for a, (kind, _), arg in zip(args, params, fn.args):
        v = arg
        if isinstance(a.type, DType) and a.type.kind == Kind.BOOL:  # passed as a byte; i8/u8 stay integers
            v = builder.icmp_unsigned("!=", arg, ir.Constant(I8, 0))
        e.set(a, [v])
    builder.position_at_end(body)
    e.block(func.body)
    builder.ret_void()
    builder.position_at_end(entry)
    builder.branch(body)

    total = plan.check_limit(target.lds_bytes, e.scratch_bytes, arch, func.loc)
    lds.value_type = ir.ArrayType(I8, max(total, 1))
    lds.initializer = ir.Constant(lds.value_type, ir.Undefined)  # LDS has no initial contents (LLVM refuses any other)
    text = _with_kernel_attributes(str(llmod), name, threads, waves_per_eu)
    if timings is not None:
        timings["emit-llir"] = time.perf_counter() - t0
    return AmdKernel(name, text, num_warps, target.wave_size, total, tuple(kind for kind, _ in params),
                     tuple(e.print_sites))


def _with_kernel_attributes(text: str, name: str, threads: int, waves_per_eu: int = 0) -> str:
    """Attach the kernel attributes that llvmlite.ir cannot spell (string attributes):
    the work-group size the kernel is compiled for (LLVM sizes its register budget by it),
    that every work-group is whole, and with ``waves_per_eu`` the occupancy to size the
    register budget for.

    ``"amdgpu-waves-per-eu"="N"`` is what Triton's AMD back end emits for its
    ``waves_per_eu`` option (``make_llir``): at least N waves per SIMD, the maximum left to
    the hardware. LLVM then caps the registers so that N waves fit (512 / N unified
    registers on gfx942 / gfx950) and spills past the cap; it lowers N where LDS allows
    fewer work-groups per CU (a kernel with 64 KiB of LDS on gfx950 gets 2 at most
    whatever is asked). 0 leaves the attribute out, as LLVM's default."""
    head = f'define amdgpu_kernel void @"{name}"('
    i = text.index(head)
    j = text.index("\n", i)
    line = text[i:j]
    text = text[:i] + line.rstrip() .removesuffix("{").rstrip() + " #0\n{" + text[j:] \
        if line.rstrip().endswith("{") else text[:i] + line + " #0" + text[j:]
    attrs = (f'attributes #0 = {{ "amdgpu-flat-work-group-size"="1,{threads}" '
             f'"uniform-work-group-size"="true"'
             + (f' "amdgpu-waves-per-eu"="{waves_per_eu}"' if waves_per_eu else "") + " nounwind }")
    return text.rstrip("\n") + "\n\n" + attrs + "\n"


__all__ = ["AmdKernel", "generate", "I32"]
