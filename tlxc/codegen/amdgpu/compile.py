"""IR module (canonicalized) -> LLVM IR for one AMDGPU target, and the launch metadata
the runtime needs.

Steps: buffer layouts, layout assignment with this target's facts (wave size, LDS banks)
and the dead code it leaves, LDS allocation, hazard barriers, then the emitter over the
kernel's body into an ``amdgpu_kernel`` function. The LDS of the kernel (its buffers,
then the scratch area of layout conversions and reductions) is one static array,
``@global_smem``, sized at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.analysis.axis_info import analyze
from ...ir.layout.target import LayoutTarget
from ...ir.passes import buffer_layouts, dce, descriptor_pointers, layouts, membar, smem_alloc
from ...ir.passes.options import PassOptions
from ...ir.types import DType, Kind, PointerType, TensorDescType
from .. import target_ops
from . import (  # noqa: F401  (importing a lowering module registers its rules)
    lower_amd_tlx,
    lower_arith,
    lower_buffers,
    lower_cast,
    lower_control,
    lower_convert,
    lower_dot,
    lower_dot_scaled,
    lower_math,
    lower_memory,
    lower_reduce,
    lower_shape,
    lower_sync,
)
from .emitter import Emitter
from .isa import TARGETS, TRIPLE, AmdTarget
from .llvm import I8, I32, LDS_AS, VOID, value_type

LDS_ALIGN = 16


@dataclass(frozen=True)
class AmdKernel:
    name: str
    llvm_ir: str
    num_warps: int
    wave_size: int
    lds_bytes: int
    params: tuple[str, ...]  # kernel argument types in order ("ptr", "i32", "f32", "i8" for bool...)


def layout_target(t: AmdTarget) -> LayoutTarget:
    return LayoutTarget(t.wave_size, t.lds_banks, t.lds_bank_bytes, 16)


def param_type(t: DType | PointerType | TensorDescType) -> tuple[str, ir.Type]:
    """(runtime name, LLVM type) of one kernel argument."""
    if isinstance(t, TensorDescType):
        raise CompilationError("TLXC-TLX-006", "TMA tensor descriptors are NVIDIA operations; AMDGPU targets have "
                                               "none")
    if isinstance(t, PointerType):
        return "ptr", value_type(t)
    if t.kind == Kind.BOOL:
        return "i8", I8
    ty = value_type(t)
    return str(ty), ty


def check_target_ops(func, target: AmdTarget) -> None:
    """NVIDIA-only operations are refused at the user's line before any code is built."""
    nvidia_only = (ops.AsyncDotOp, ops.AsyncDotWaitOp, ops.TmaLoadOp, ops.TmaStoreOp, ops.TmaStoreWaitOp,
                   ops.MakeTensorDescOp, ops.AllocTensorDescOp, ops.ReinterpretTensorDescOp, ops.BarrierExpectOp,
                   ops.DescriptorLoadOp, ops.DescriptorStoreOp)
    for op in func.walk():
        if isinstance(op, nvidia_only):
            raise CompilationError("TLXC-TLX-006", f"'{op.NAME}' is an NVIDIA operation (Hopper/Blackwell); "
                                   f"{target.arch} has no equivalent", op.loc,
                                   "compile this kernel for sm_90a / sm_100a, or use the portable operations")
        if isinstance(op, ops.LocalAllocOp) and op.result.type.storage == "tmem":
            raise CompilationError("TLXC-TLX-005", f"tensor memory exists on sm_100a only; {target.arch} has none",
                                   op.loc, "allocate the buffer in shared memory (storage=smem: LDS on AMD)")


def generate(module, arch: str, timings: dict[str, float] | None = None, waves_per_eu: int = 0) -> AmdKernel:
    """LLVM IR of ``module``'s kernel for ``arch``; ``waves_per_eu`` (0: LLVM's choice) is
    the occupancy the register budget is sized for (``_with_kernel_attributes``)."""
    target = TARGETS[arch]
    t0 = time.perf_counter()
    options = PassOptions(target=layout_target(target), dot_layout=lower_dot.dot_layout_hook(target),
                          dot_operand_layout=lower_dot.dot_operand_layout_hook(target),
                          buffer_layout=lower_buffers.lds_buffer_layout(target), plain_async_copy_buffers=True,
                          scheduled_mfma_layouts=lower_amd_tlx.scheduled_mfma_layouts(target))
    (func,) = module.funcs
    descriptor_pointers.rewrite(func)  # descriptors made in the kernel: masked pointer accesses, as Triton's AMD
    target_ops.check_amd(func, arch)  # NVIDIA-only TLX operations, AMD ones this chip lacks
    check_target_ops(func, target)
    lower_dot.check(func, target)
    lower_buffers.check_async_copies(func, target)
    module = buffer_layouts.run(module, options)
    module = layouts.run(module, options)
    module = dce.run(module, options)
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
    threads = num_warps * target.wave_size
    if threads > target.max_threads_per_block:
        raise CompilationError("TLXC-LAUNCH-003", f"num_warps={num_warps} makes {threads} work-items of "
                               f"{target.wave_size}-lane waves; {arch} allows {target.max_threads_per_block} "
                               "per work-group", func.loc, f"use num_warps <= "
                               f"{target.max_threads_per_block // target.wave_size}")
    args = func.body.args
    params = [param_type(a.type) for a in args]
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
                scratch_offset=plan.scratch_offset, lds=lds, entry=entry)
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
        timings["llir"] = time.perf_counter() - t0
    return AmdKernel(name, text, num_warps, target.wave_size, total, tuple(kind for kind, _ in params))


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
