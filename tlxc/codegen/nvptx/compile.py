"""The NVIDIA emitter driver: the IR that the NVIDIA pipeline (``pipeline.py``) leaves
-> PTX text for one target, and the launch metadata the runtime needs.

``emit`` writes the ``.entry`` with its parameters, registers and shared memory (the
buffers at the offsets ``smem-alloc`` wrote into the IR, then the scratch area of layout
conversions and reductions) and runs the emitter over the kernel's body.
``generate`` runs the pipeline's lowering passes first, for callers that hold the tile
IR (tests, tools).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ops
from ...ir.analysis.axis_analysis import analyze
from ...ir.passes import smem_alloc
from ...ir.passes.options import PassOptions
from ...ir.passes.pipeline import TILE_PIPELINE, run_pipeline
from ...ir.types import DType, Kind, PointerType, TensorDescType
from . import lower_arith, lower_tasks, lower_tensormap
from .barrier_peephole import drop_repeated_barriers
from .emitter import Emitter
from .pipeline import PIPELINE
from .ptx import PtxFunction, module_text, reg_class
from .target_info import NvidiaTargetInfo, target_info

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


def reaches_peers(func) -> bool:
    """Whether the kernel writes into (or arrives on barriers of) other CTAs of its cluster."""
    from .check_target import peer_access

    return any(peer_access(op) is not None for op in func.walk())


def generate(module, arch: str, timings: dict[str, float] | None = None, maxnreg: int | None = None,
             verify_each: bool = False) -> PtxKernel:
    """PTX of ``module`` (the tile IR) for ``arch``: the pipeline's lowering passes, then
    ``emit``."""
    info = target_info(arch)
    module = run_pipeline(module, PassOptions(target=info), PIPELINE[len(TILE_PIPELINE):],
                          verify_each=verify_each, timings=timings)
    return emit(module, info, timings, maxnreg)


def emit(module, info: NvidiaTargetInfo, timings: dict[str, float] | None = None,
         maxnreg: int | None = None, fp_fusion: bool = True) -> PtxKernel:
    """PTX of ``module`` as the NVIDIA pipeline left it (layouts and the shared-memory plan
    in the IR)."""
    import time

    t0 = time.perf_counter()
    target = info.isa
    assert target is not None
    arch = info.name
    (func,) = module.funcs
    plan = smem_alloc.read_plan(func)
    name = func.sym_name
    num_warps = func.num_warps
    args = func.body.args
    ptypes = [param_type(a.type) for a in args]
    tensormaps = lower_tensormap.plan(func)
    hidden = [("u64", f"{name}_param_scratch")] if tensormaps.size else []
    tensormaps.param = hidden[0][1] if hidden else ""
    fn = PtxFunction(name, [(pt, f"{name}_param_{i}") for i, pt in enumerate(ptypes)] + hidden)
    fn.num_threads = num_warps * 32
    fn.maxnreg = maxnreg
    e = Emitter(fn, target, num_warps, cluster_dims=tuple(func.attrs["cluster_dims"]), num_ctas=func.num_ctas)
    if e.clustered:
        fn.cluster = tuple(func.attrs["cluster_dims"])  # type: ignore[assignment]
    e.tensormaps = tensormaps
    e.fp_fusion = fp_fusion
    e.remote_stores = e.clustered and any(isinstance(o, ops.RemoteStoreOp) for o in func.walk())
    e.smem = plan
    e.scratch_offset = plan.scratch_offset
    e.axis = analyze(func)
    for i, (a, pt) in enumerate(zip(args, ptypes)):
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
    if func.num_ctas > 1:  # Triton's num_ctas: the cluster's first CTA runs the program, the others leave
        rank, other = fn.reg("b32"), fn.reg("pred")
        e.prologue += [f"\tmov.u32 {rank}, %cluster_ctarank;", f"\tsetp.ne.u32 {other}, {rank}, 0;",
                       f"\t@{other} ret;"]
    # no CTA leaves while a peer may still reach into its shared memory
    ending_sync = e.clustered and reaches_peers(func)
    # warp specialization: the warps and budgets of its partitions
    ws = lower_tasks.plan(e, func, maxnreg, ending_sync)
    if ws is not None:
        num_warps = ws.total_warps
        fn.num_threads = num_warps * 32
        if ws.budget.default is not None or ws.budget.groups:
            fn.maxnreg = ws.budget.maxnreg  # what every warp starts with, before setmaxnreg
    e.block(func.body)
    if ws.end_cluster_sync if ws is not None else ending_sync:
        from .lower_cluster import cluster_sync

        cluster_sync(e)
    fn.body = e.prologue + fn.body + [lower_arith.EXIT_MARK]
    if e.worker_code:
        fn.body += ["\tret;"] + e.worker_code
    fn.body = lower_arith.exit_checks(e, fn.body)
    scratch = e.scratch_bytes
    if ws is not None:  # the partitions' scratch areas, then the values the workers read from the default path
        body, scratch = e.place_scratch("\n".join(fn.body))
        capture = -(-(plan.scratch_offset + scratch) // 16) * 16
        scratch = capture - plan.scratch_offset + ws.capture_bytes
        fn.body = body.replace(lower_tasks.CAPTURE, str(capture)).split("\n")
    fn.body = drop_repeated_barriers(fn.body)
    shared = plan.check_limit(target.max_shared_bytes, scratch, arch, func.loc)
    fn.shared_bytes = shared
    fn.shared_align = max([PLAIN_SHARED_ALIGN] + [a.align for a in plan.allocations])
    files = sorted(e.files, key=e.files.get)
    text = module_text(arch, target.ptx_version_text, files, [fn])
    if timings is not None:
        timings["emit-ptx"] = time.perf_counter() - t0
    tma = tuple(e.tma_params[i] for i in sorted(e.tma_params))
    return PtxKernel(name, text, num_warps, shared, tuple(ptypes + [t for t, _ in hidden]), tma, tensormaps.size)
