"""IR module (canonicalized) -> PTX text for one NVIDIA target, and the launch metadata
the runtime needs.

Steps: layout assignment (with this target's facts), the emitter over the kernel's
body, then the ``.entry`` with its parameters, registers and shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import CompilationError
from ...ir.analysis.axis_info import analyze
from ...ir.layout.target import LayoutTarget
from ...ir.passes import layouts
from ...ir.passes.options import PassOptions
from ...ir.types import DType, Kind, PointerType
from . import lower_arith, lower_control, lower_convert, lower_dot, lower_memory, lower_reduce, lower_shape  # noqa: F401,E501
from .emitter import Emitter
from .isa import TARGETS, NvidiaTarget
from .ptx import PtxFunction, module_text


@dataclass(frozen=True)
class PtxKernel:
    name: str
    ptx: str
    num_warps: int
    shared_bytes: int
    params: tuple[str, ...]  # PTX param types in order ("u64", "u32", "f32"...)


def layout_target(t: NvidiaTarget) -> LayoutTarget:
    return LayoutTarget(t.warp_size, t.shared_banks, t.bank_bytes, t.max_vector_bytes)


def param_type(t: DType | PointerType) -> str:
    if isinstance(t, PointerType):
        return "u64"
    if t.kind == Kind.FLOAT:
        return {16: "b16", 32: "f32", 64: "f64"}.get(t.bits, "b16")
    if t.kind == Kind.BOOL:
        return "u8"
    return f"{'s' if t.kind == Kind.INT else 'u'}{max(8, t.bits)}"


def generate(module, arch: str, timings: dict[str, float] | None = None) -> PtxKernel:
    import time

    target = TARGETS[arch]
    t0 = time.perf_counter()
    module = layouts.run(module, PassOptions(target=layout_target(target), dot_layout=lower_dot.dot_layout))
    if timings is not None:
        timings["layouts"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    (func,) = module.funcs
    name = func.attrs["sym_name"]
    num_warps = func.attrs["num_warps"]
    args = func.body.args
    ptypes = [param_type(a.type) for a in args]
    fn = PtxFunction(name, [(pt, f"{name}_param_{i}") for i, pt in enumerate(ptypes)])
    fn.maxntid = num_warps * 32
    e = Emitter(fn, target, num_warps)
    e.axis = analyze(func)
    for i, (a, pt) in enumerate(zip(args, ptypes)):
        from .ptx import reg_class

        r = fn.reg(reg_class(a.type))
        if pt == "u8":
            h = fn.reg("b16")
            e.prologue.append(f"\tld.param.u8 {h}, [{name}_param_{i}];")
            e.prologue.append(f"\tsetp.ne.u16 {r}, {h}, 0;")
        else:
            e.prologue.append(f"\tld.param.{pt} {r}, [{name}_param_{i}];")
        e.set(a, [r])
    e.block(func.body)
    fn.body = e.prologue + fn.body
    fn.shared_bytes = e.scratch_bytes
    if e.scratch_bytes > target.max_shared_bytes:
        raise CompilationError("TLXC-RESOURCE-001", f"the kernel needs {e.scratch_bytes} bytes of shared memory; "
                               f"{arch} allows {target.max_shared_bytes}", func.loc)
    files = sorted(e.files, key=e.files.get)
    text = module_text(arch, target.ptx_version_text, files, [fn])
    if timings is not None:
        timings["ptx"] = time.perf_counter() - t0
    return PtxKernel(name, text, num_warps, e.scratch_bytes, tuple(ptypes))
