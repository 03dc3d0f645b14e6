"""The compile driver: a kernel and its specialization in, a ``CompiledKernel`` out.

frontend (AST -> IR) -> the target's pass pipeline (``codegen/<target>/pipeline.py``,
run by ``tlxc.ir.passes.pipeline.run_pipeline``) -> the target's emitter. The shared
first stage (``TILE_PIPELINE``) runs at once: it makes the tile IR (``asm["ir"]``) that
the interpreter runs. The target's lowering passes and its emitter run when an output
of the target is first asked for (``asm["target_ir"]``, ``asm["ptx"]``...), with the same
``dump``/``timings``/verification settings. Settings arrive in a ``CompileOptions``;
nothing here reads the environment.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import tlxc.errors as errors  # noqa: F401  (Triton's tests catch `triton.compiler.errors.CompilationError`)

from .codegen.targets import TARGETS  # noqa: F401  (the CLI and the launch path name it from here)
from .errors import CompilationError, TlxcError, clean
from .frontend.build import build_module
from .frontend.specialize import ArgSpec
from .frontend.tuple_args import flat_values
from .ir.core import Location, Operation
from .ir.passes.options import PassOptions
from .ir.passes.pipeline import TILE_PIPELINE, DumpHook, run_pipeline
from .ir.printer import print_ir

if TYPE_CHECKING:  # pragma: no cover
    from .frontend.function import KernelDef
    from .runtime.spec import LaunchSpec


# The family of targets that produces each output.
OUTPUTS = {"ir": None, "target_ir": None, "ptx": "NVIDIA", "cubin": "NVIDIA", "sass": "NVIDIA", "llir": "AMDGPU",
           "amdgcn": "AMDGPU", "hsaco": "AMDGPU"}


_NEEDS = {"cubin": "ptxas was not found (pip install 'tlxc[cuda]' or a CUDA toolkit)",
          "sass": "nvdisasm was not found (pip install 'tlxc[cuda]' or a CUDA toolkit)"}


def _family(arch: str) -> str:
    return "NVIDIA" if arch.startswith("sm_") else "AMDGPU"


class _Verify:
    """Whether every compile verifies the IR after every pass, whatever its options say
    (the test suite turns it on: ``set_verify_each_pass``)."""

    always = False


def set_verify_each_pass(on: bool) -> None:
    """Verify the IR after every pass of every compile in this process (tests do)."""
    _Verify.always = bool(on)


@dataclass(frozen=True)
class CompileOptions:
    arch: str = "sm_90a"
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    debug: bool = False
    verify_each_pass: bool = False
    maxnreg: int | None = None  # registers per thread at most (PTX .maxnreg); None: ptxas decides
    # AMD: waves each SIMD should hold at least (LLVM's "amdgpu-waves-per-eu", which sizes the
    # register budget for that occupancy); 0: LLVM decides. NVIDIA targets ignore it, as Triton's
    # CUDA back end ignores the AMD-only options (the variant is then compiled with 0).
    waves_per_eu: int = 0
    # launch shape, carried to the runtime in the launch spec: the grid's blocks grouped in
    # clusters of this shape (None: none), and a cooperative launch (tlxc.kernels.options
    # checks both against the target)
    cluster_dims: tuple[int, int, int] | None = None
    cooperative: bool = False
    # False: floating-point a*b + c stays a rounded multiply and a rounded add (NVIDIA: the
    # .rn forms, which ptxas does not contract into fma; the AMD code carries no contraction
    # flags either way)
    enable_fp_fusion: bool = True
    # the input_precision of an fp32 tl.dot that gives none (knobs.language.fp32_default;
    # None: Triton's default, "tf32" unless allow_tf32=False)
    fp32_default: str | None = None

    def check(self, loc: Location | None) -> None:
        if self.arch not in TARGETS:
            raise CompilationError("TLXC-CLI-001", f"unknown target architecture {self.arch!r}; "
                                   f"choose one of {', '.join(TARGETS)}", loc)
        if self.num_warps < 1 or self.num_warps > 32 or self.num_warps & (self.num_warps - 1):
            raise CompilationError("TLXC-LAUNCH-003", f"num_warps must be a power of two from 1 to 32, got "
                                   f"{self.num_warps}", loc)
        if self.maxnreg is not None and (not isinstance(self.maxnreg, int) or not 16 <= self.maxnreg <= 255):
            raise CompilationError("TLXC-LAUNCH-003", f"maxnreg must be a number of registers from 16 to 255, got "
                                   f"{self.maxnreg!r}", loc)
        w = self.waves_per_eu
        if not isinstance(w, int) or isinstance(w, bool) or w < 0:
            raise CompilationError("TLXC-LAUNCH-003", f"waves_per_eu must be an int >= 0 (0: the compiler's "
                                   f"default), got {w!r}", loc)
        if w and _family(self.arch) == "AMDGPU":
            from .codegen.amdgpu.isa import TARGETS as AMD_TARGETS

            most = AMD_TARGETS[self.arch].max_waves_per_eu
            if w > most:
                raise CompilationError("TLXC-LAUNCH-003", f"waves_per_eu={w}: a SIMD of {self.arch} holds at most "
                                       f"{most} waves", loc, f"use waves_per_eu from 1 to {most}, or 0 to let the "
                                       "compiler choose")

    def for_target(self) -> "CompileOptions":
        """The options that decide the code for this target: the AMD-only ``waves_per_eu``
        is dropped (0) for an NVIDIA target, so that it neither changes nor splits the
        NVIDIA variants."""
        if self.waves_per_eu and _family(self.arch) == "NVIDIA":
            return replace(self, waves_per_eu=0)
        return self


class Artifacts(dict):
    """``compiled.asm``: the outputs by name, produced on first use (so that a kernel
    compiled only for its IR or for the interpreter never runs code generation); asking
    for one that the target's code generator does not produce yet says so.

    Reading is on demand: ``asm[key]`` and ``asm.get(key)`` both produce the output
    (``get`` returns its default where ``[]`` raises ``KeyError``: an output of the other
    family, or one whose tool is missing). The container view is what has been produced so
    far: ``key in asm``, ``keys()``, ``items()``, ``len`` and iteration never run a code
    generator or a tool, so they cannot fail or take seconds; ``available()`` lists what
    ``[]`` can give for this target."""

    producer: Any = None
    owner: Any = None  # the CompiledKernel whose outputs these are (its target, what it can make)
    # Held while an output is made: threads that launch one variant at once (TLX tests
    # compile from a thread pool) would otherwise see "ptx" made and "cubin" not yet.
    lock: Any = None

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        # dict.get skips __missing__; going through [] keeps get and [] consistent
        try:
            return self[key]
        except KeyError:
            return default

    def available(self) -> list[str]:
        """The outputs that ``[]`` gives for this target (produced or producible; an output
        whose tool is missing is left out), without producing them."""
        if self.owner is None:
            return sorted(self)
        return sorted(set(self) | set(self.owner._producible()))

    def __missing__(self, key: str) -> Any:
        if self.producer is not None:
            with self.lock or contextlib.nullcontext():
                if dict.__contains__(self, key):  # another thread made it meanwhile
                    return dict.__getitem__(self, key)
                try:
                    made = self.producer(key)
                except TlxcError as e:
                    raise clean(e) from None
            if made:
                return self[key]
        if key in OUTPUTS:
            arch = self.owner.options.arch if self.owner is not None else "this target"
            if OUTPUTS[key] == _family(arch):  # this target's output, but its tool is missing
                raise KeyError(f"'{key}' is not available: {_NEEDS.get(key, 'its tool was not found')}; "
                               f"available: {', '.join(sorted(self))}")
            raise KeyError(f"'{key}' is not an output of {arch}: {OUTPUTS[key]} targets give it; available: "
                           f"{', '.join(sorted(set(self) | {k for k, v in OUTPUTS.items() if v == _family(arch)}))}")
        raise KeyError(f"unknown output '{key}'; outputs are {', '.join(OUTPUTS)}")


class KernelMetadata(dict):
    """``CompiledKernel.metadata``: a dict that also reads by attribute, as Triton's
    metadata does (``kernel.metadata.ctas_per_cga``, ``.num_warps``, ``.shared``), so
    that TLX's programs run unchanged. The launch options are there from the start; what
    code generation learns (name, warps, shared bytes, registers) once an output is made."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"kernel metadata has no '{key}' (it has: {', '.join(sorted(self))}); what code "
                                 "generation reports is there once an output such as asm['ptx'] was made") from None


@dataclass
class CompiledKernel:
    """One specialized, compiled variant of a kernel."""

    name: str
    module: Operation
    signature: dict[str, ArgSpec]
    constants: dict[str, Any]
    options: CompileOptions
    used_globals: dict[str, Any]
    asm: Artifacts = field(default_factory=Artifacts)
    timings: dict[str, float] = field(default_factory=dict)
    # why this variant was compiled although others existed (see tlxc.kernels.function.KernelFunction.get_compiled)
    recompile_reason: str = ""
    # launch facts from code generation: kernel name, num_warps, shared bytes, registers...
    metadata: dict[str, Any] = field(default_factory=dict)
    # the kernel functions it inlined, at any depth: a change to their source changes the variant
    callees: tuple[Any, ...] = ()
    # every parameter of the kernel in order, constexprs included (``compiled[grid](*args)``)
    param_names: tuple[str, ...] = ()
    _amd: Any = None  # the AMDGPU compile (toolchain.AmdObject): its object, until ld.lld links it
    _dump: Any = None  # the compile's dump hook, for the target's passes that run later
    _lowered: Any = None  # the IR the target's pipeline left (``lowered()``)

    @property
    def _amd_object(self) -> bytes:
        """The AMDGPU relocatable object (emitted on first use), for ld.lld (asm["hsaco"])."""
        return self._amd.obj if self._amd is not None else b""

    def __post_init__(self) -> None:
        self.asm.producer = self._produce
        self.asm.owner = self
        self.asm.lock = threading.RLock()
        o = self.options
        self.metadata = KernelMetadata({"num_ctas": o.num_ctas, "num_stages": o.num_stages,
                                        "cluster_dims": o.cluster_dims or (1, 1, 1),
                                        "ctas_per_cga": (o.cluster_dims if o.num_ctas == 1 else None) or (1, 1, 1),
                                        **self.metadata})

    def lowered(self) -> Operation:
        """The IR after the target's whole pipeline (layouts, shared-memory offsets,
        hazard barriers), made on first use from a copy of the tile IR."""
        if self._lowered is None:
            from .codegen.targets import backend
            from .ir.clone import clone

            be = backend(self.options.arch)
            options = PassOptions(target=be.info, num_stages=self.options.num_stages)
            self._lowered = run_pipeline(clone(self.module), options, be.lowering,
                                         verify_each=self.options.verify_each_pass or _Verify.always,
                                         dump=self._dump, timings=self.timings)
        return self._lowered
    def _producible(self) -> list[str]:
        """The outputs this target can make, given the tools found on this machine."""
        if self.options.arch.startswith("sm_"):
            from .codegen.nvptx.toolchain import find_tool

            out = ["ir", "target_ir", "ptx"]
            if find_tool("ptxas") is not None:
                out.append("cubin")
                if find_tool("nvdisasm") is not None:
                    out.append("sass")
            return out
        from .codegen.amdgpu.toolchain import find_ld_lld

        return ["ir", "target_ir", "llir", "amdgcn"] + (["hsaco"] if find_ld_lld(0) is not None else [])

    def _produce(self, key: str) -> bool:
        """Make output ``key`` if this target can; False if it cannot."""
        if key == "target_ir":
            self.asm["target_ir"] = print_ir(self.lowered())
            return True
        if self.options.arch.startswith("sm_"):
            if key in ("ptx", "cubin") and "ptx" not in self.asm:
                _nvidia(self, self.timings)
                return key in self.asm
            if key == "sass" and "cubin" not in self.asm:
                self._produce("cubin")
            if key == "sass" and "cubin" in self.asm:
                from .codegen.nvptx.toolchain import nvdisasm

                self.asm["sass"] = nvdisasm(self.asm["cubin"])
                return True
        elif self.options.arch.startswith("gfx"):
            if key in ("llir", "amdgcn") and "llir" not in self.asm:
                _amd(self, self.timings)
                return key in self.asm
            if key == "hsaco" and "hsaco" not in self.asm:
                if "amdgcn" not in self.asm:
                    _amd(self, self.timings)
                from .codegen.amdgpu.toolchain import link_hsaco

                t0 = time.perf_counter()
                self.asm["hsaco"] = link_hsaco(self._amd_object)
                self.timings["ld.lld"] = time.perf_counter() - t0
                return True
        return False

    # -- Triton's CompiledKernel surface that tutorials use (02: occupancy, then a launch) --
    def __getitem__(self, grid: Any) -> Any:
        """``compiled[grid](*args)``: launch this variant with every argument of the kernel,
        constexprs included (those are compiled in and skipped), as Triton's
        ``CompiledKernel``. Under ``TLXC_INTERPRET=1`` the interpreter runs it."""
        import os

        dims = (grid,) if isinstance(grid, int) else tuple(grid)
        dims = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))

        def launch(*args: Any, stream: Any = None, **kwargs: Any) -> Any:
            named = dict(zip(self.param_names, args))
            named.update(kwargs)
            named = flat_values(named)  # a tuple argument's leaves (frontend/tuple_args.py)
            missing = [p for p in self.signature if p not in named]
            if missing:
                raise CompilationError("TLXC-LAUNCH-001", f"kernel '{self.name}' launched without "
                                       f"{', '.join(missing)}")
            passed = [named[p] for p in self.signature]
            if os.environ.get("TLXC_INTERPRET", "0") not in ("", "0"):
                from .interpreter import run_kernel

                run_kernel(self.func, dims, passed)
                return self
            if getattr(self, "_loaded", None) is None:
                from .runtime import LoadedKernel

                binary = self.asm["hsaco"] if self.options.arch.startswith("gfx") else self.asm["cubin"]
                self._loaded = LoadedKernel.from_spec(binary, self.launch_spec)  # type: ignore[attr-defined]
            self._loaded(dims, passed, stream=stream)  # type: ignore[attr-defined]
            return self

        return launch

    def _init_handles(self) -> None:
        """Triton loads the binary here; tlxc makes it (ptxas) so that ``n_regs`` is known,
        and loads it on the first launch."""
        if self.options.arch.startswith("sm_"):
            self.asm["cubin"]

    @property
    def n_regs(self) -> int:
        """Registers per thread (ptxas's count; AMD: the VGPRs the code object declares)."""
        self._init_handles()
        if "registers" in self.metadata:
            return int(self.metadata["registers"])
        if self.options.arch.startswith("gfx"):
            self.asm["amdgcn"]
            return int(self.metadata.get("vgprs", self.metadata.get("registers", 0)))
        raise KeyError(f"kernel '{self.name}': no register count (ptxas did not run)")

    @property
    def n_spills(self) -> int:
        self._init_handles()
        return int(self.metadata.get("spill_stores", 0))

    @property
    def launch_spec(self) -> LaunchSpec:
        """What the runtime needs to launch this variant (made by code generation's
        metadata and the options)."""
        from .runtime.hip import kernarg_layout  # the runtime is imported by the first launch, not before
        from .runtime.spec import DEFAULT_SCRATCH_ALIGN, LaunchSpec

        if "name" not in self.metadata:
            self._produce("ptx" if self.options.arch.startswith("sm_") else "amdgcn")
        m = self.metadata
        amd = self.options.arch.startswith("gfx")
        scratch = m.get("global_scratch") or {}
        return LaunchSpec(m["name"], self.options.arch, tuple(str(s) for s in self.signature.values()),
                          tuple(self.signature), m["num_warps"], m.get("wave_size", 32), m["shared"],
                          self.options.cluster_dims, self.options.cooperative, tuple(m.get("params", ())),
                          tuple(dict(t) for t in m.get("tma_params", ())), int(scratch.get("size", 0)),
                          int(scratch.get("align", DEFAULT_SCRATCH_ALIGN)),
                          kernarg_layout(self.asm["amdgcn"], m["name"]).to_json() if amd else None,
                          ctas_per_program=self.options.num_ctas,
                          device_print=tuple(dict(s) for s in m.get("device_print", ())))

    @property
    def func(self) -> Operation:
        return self.module.funcs[0]  # type: ignore[attr-defined]

    @property
    def specialization(self) -> str:
        """What this variant assumes, e.g. ``x: *fp32:16, n: i32:16, BLOCK=1024``."""
        parts = [f"{k}: {v}" + ("=1" if v.equals_one else "") for k, v in self.signature.items()]
        parts += [f"{k}={v!r}" for k, v in self.constants.items()]
        return ", ".join(parts)


def compile_kernel(kernel: "KernelDef", specs: dict[str, ArgSpec], constants: dict[str, Any],
                   options: CompileOptions, dump: DumpHook | None = None) -> CompiledKernel:
    """The frontend and the shared tile stage now; the target's passes when an output of
    it is asked for (see the module doc)."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    module, used, callees = build_module(kernel, specs, constants, options.num_warps, options.arch,
                                         options.fp32_default)
    for func in module.funcs:  # type: ignore[attr-defined]
        if options.num_ctas > 1:  # one program per cluster: not TLX's clusters of programs
            func.attrs["num_ctas"] = options.num_ctas
        elif options.cluster_dims:  # what the cluster ops and the code generator's cluster syncs go by
            func.attrs["cluster_dims"] = tuple(options.cluster_dims)
    timings["frontend"] = time.perf_counter() - t0
    module = run_pipeline(module, PassOptions(), TILE_PIPELINE, verify_each=options.verify_each_pass or _Verify.always,
                          dump=dump, timings=timings)
    ck = CompiledKernel(kernel.__name__, module, specs, constants, options, used, timings=timings,
                        callees=tuple(callees), param_names=tuple(kernel.params))
    ck._dump = dump
    ck.asm["ir"] = print_ir(module)
    return ck


def _nvidia(ck: CompiledKernel, timings: dict[str, float]) -> None:
    from .codegen.nvptx import compile as nvptx
    from .codegen.nvptx.target_info import target_info
    from .codegen.nvptx.toolchain import find_tool, ptxas

    kernel = nvptx.emit(ck.lowered(), target_info(ck.options.arch), timings, maxnreg=ck.options.maxnreg,
                        fp_fusion=ck.options.enable_fp_fusion)
    ck.asm["ptx"] = kernel.ptx
    ck.metadata.update(name=kernel.name, num_warps=kernel.num_warps, shared=kernel.shared_bytes,
                       params=kernel.params, arch=ck.options.arch, tma_params=[dict(t) for t in kernel.tma_params],
                       global_scratch={"size": kernel.global_scratch, "align": nvptx.GLOBAL_SCRATCH_ALIGN})
    if find_tool("ptxas") is not None:
        res = ptxas(kernel.ptx, ck.options.arch)
        timings["ptxas"] = res.seconds
        ck.asm["cubin"] = res.cubin
        ck.metadata.update(registers=res.registers, spill_stores=res.spill_stores, spill_loads=res.spill_loads,
                           static_shared=res.shared_bytes)


def _amd(ck: CompiledKernel, timings: dict[str, float]) -> None:
    """LLVM IR, assembly and the relocatable object for a gfx target; the figures of the
    kernel (registers, LDS, scratch) from the code object metadata. The code object
    (``asm["hsaco"]``) is linked on demand, since it needs ld.lld."""
    from .codegen.amdgpu import compile as amdgpu
    from .codegen.amdgpu.target_info import target_info
    from .codegen.amdgpu.toolchain import compile_llvm_ir

    kernel = amdgpu.emit(ck.lowered(), target_info(ck.options.arch), timings, waves_per_eu=ck.options.waves_per_eu)
    obj = compile_llvm_ir(kernel.llvm_ir, ck.options.arch)
    timings["llvm"] = obj.seconds
    ck.asm["llir"] = kernel.llvm_ir
    ck.asm["amdgcn"] = obj.asm
    ck._amd = obj
    res = obj.kernel(kernel.name)
    ck.metadata.update(name=kernel.name, num_warps=kernel.num_warps, wave_size=kernel.wave_size,
                       shared=kernel.lds_bytes, params=kernel.params, arch=ck.options.arch, vgprs=res.vgprs,
                       agprs=res.agprs, sgprs=res.sgprs, lds=res.lds_bytes, scratch=res.scratch_bytes,
                       vgpr_spills=res.vgpr_spills, sgpr_spills=res.sgpr_spills,
                       waves_per_eu=ck.options.waves_per_eu, sched_strategy=res.sched_strategy)
    if kernel.print_sites:
        ck.metadata["device_print"] = [dict(s) for s in kernel.print_sites]
