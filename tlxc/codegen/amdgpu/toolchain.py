"""From LLVM IR text to an AMDGPU code object: llvmlite's AMDGPU target (LLVM 22) parses,
verifies, optimizes and compiles the module to assembly and a relocatable object, and
ld.lld links the object into the shared object that the HIP runtime loads (hsaco).

The resource figures (VGPRs, AGPRs, SGPRs, LDS, scratch, wave size, spills) are read back
from the assembly: from the code object metadata note (``.amdgpu_metadata``, "Code Object
V5 Metadata" in LLVM's AMDGPUUsage), with the kernel descriptor's ``.amdhsa_*``
directives where the note leaves a figure out.

Three things LLVM does that callers must know:

- A module is compiled as code object v5 (:data:`.isa.DEFAULT_CODE_OBJECT_VERSION`) unless
  it names one itself: LLVM 22 defaults to v6, which Debian 12's ld.lld 14 refuses
  ("unknown abi version"), and v5 is what ROCm's clang emits. ld.lld 15 or newer links v5.
- Some LLVM code generation errors (a kernel over the chip's register limit, for example
  "addressable scalar registers (106) exceeds limit (102)") are reported through LLVM's
  default diagnostic handler, which ends the process; llvmlite offers no hook to catch
  them. The code generator must stay inside the limits in :mod:`.isa` rather than rely on
  an exception here. Parse and verification errors do come back as exceptions and become
  :class:`~tlxc.errors.InternalCompilerError` (tlxc wrote the IR, so a bad module is a
  compiler bug).
- Its default machine scheduler (the occupancy-driven GCN one) hoists uniform address
  arithmetic far ahead of the memory instructions. A kernel with many loads whose
  constant offsets exceed the instruction's immediate field gets one 64-bit SGPR base
  (``s_add_u32``/``s_addc_u32`` of the pointer and the constant) per distinct offset, all
  live at once: past 102 (106) SGPRs they spill into VGPR lanes (``v_writelane`` /
  ``v_readlane``; 42 spills in a 256x128 bf16 tile load held in a dot-operand layout). So
  when the assembly has SGPR spills, the code is generated again with the kernel
  attribute ``"amdgpu-sched-strategy"`` set to each of :data:`SGPR_SPILL_STRATEGIES` in
  turn, and the first schedule without SGPR spills, without more VGPR spills or scratch
  and with the same occupancy is kept (``KernelResources.sched_strategy`` names it;
  ``""``: LLVM's default). Kernels without SGPR spills are compiled exactly as before.
  Spills of values live across a loop (the row masks and row addresses of an attention
  epilogue, 64-bit lane masks in wave64) are not a scheduling matter and stay; nor are
  bases whose rows depend on the program id (a 256x256x128 gfx1250 ``dot_scaled``): the
  i32 index arithmetic may wrap, so LLVM may not move the row constants out of the
  64-bit extension into an immediate offset, and each row keeps its own SGPR base.

The relocatable object is emitted when it is first asked for (``AmdObject.obj``): code
generation runs once for a kernel whose assembly is all that is read.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable

from ...errors import CompilationError, InternalCompilerError
from .isa import (
    ABI_VERSION_OF_CODE_OBJECT,
    DEFAULT_CODE_OBJECT_VERSION,
    EM_AMDGPU,
    MIN_LLD_FOR_CODE_OBJECT,
    TARGETS,
    TRIPLE,
)

_WHERE = "the AMDGPU toolchain"
_LLD_HELP = ("install LLVM's linker, version 15 or newer (Debian/Ubuntu: apt-get install lld-19; "
             "ROCm ships one in /opt/rocm/llvm/bin), or point TLXC_LD_LLD at it")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class KernelResources:
    """What one kernel uses, as the code object metadata reports it."""

    name: str
    vgprs: int          # .vgpr_count (on gfx942/gfx950: the unified ArchVGPR+AccVGPR allocation)
    agprs: int          # .agpr_count (0 where the chip has no AccVGPRs)
    sgprs: int          # .sgpr_count (includes VCC, FLAT_SCRATCH and XNACK_MASK where reserved)
    lds_bytes: int      # .group_segment_fixed_size: static LDS
    scratch_bytes: int  # .private_segment_fixed_size: per-lane scratch (spills, stack)
    wave_size: int      # .wavefront_size
    vgpr_spills: int
    sgpr_spills: int
    max_flat_workgroup_size: int
    kernarg_bytes: int
    sched_strategy: str = ""  # "amdgpu-sched-strategy" chosen to avoid SGPR spills ("": LLVM's default)
    directives: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Every ``.amdhsa_*`` directive of the kernel descriptor, name (without ``.amdhsa_``)
    to its text, for figures the metadata does not carry (``accum_offset``,
    ``next_free_vgpr``, ...)."""


@dataclass(frozen=True)
class AmdObject:
    """A compiled module: its optimized LLVM IR, its assembly, its relocatable object
    (``obj``, emitted on first use; link it with :func:`link_hsaco`) and the resources of
    each kernel."""

    arch: str
    llvm_ir: str
    asm: str
    emit_object: Callable[[], bytes] = field(compare=False, repr=False)
    kernels: dict[str, KernelResources] = field(default_factory=dict)
    code_object_version: int = DEFAULT_CODE_OBJECT_VERSION
    seconds: float = 0.0
    _cache: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    @property
    def obj(self) -> bytes:
        """The relocatable object (an ELF file), generated from the same module and
        schedule as ``asm``."""
        if "obj" not in self._cache:
            self._cache["obj"] = self.emit_object()
        return self._cache["obj"]

    def kernel(self, name: str | None = None) -> KernelResources:
        """The resources of kernel ``name``, or of the module's only kernel."""
        if name is None:
            if len(self.kernels) != 1:
                raise KeyError(f"the module has {len(self.kernels)} kernels ({', '.join(self.kernels)}); name one")
            return next(iter(self.kernels.values()))
        return self.kernels[name]


# --------------------------------------------------------------------------- LLVM


@lru_cache(maxsize=None)
def _llvm() -> Any:
    """llvmlite's binding with every target and asm printer initialized (once)."""
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


@lru_cache(maxsize=None)
def _target_machine(arch: str, opt_level: int) -> Any:
    llvm = _llvm()
    target = llvm.Target.from_triple(TRIPLE)
    # Code objects are position independent shared objects; "default" is the small code model.
    return target.create_target_machine(cpu=arch, features="", opt=opt_level, reloc="pic", codemodel="default")


_FLAGS = re.compile(r"^!llvm\.module\.flags\s*=\s*!\{(.*)\}\s*$", re.M)
_MD_ID = re.compile(r"!(\d+)\b")


def with_code_object_version(llvm_ir: str, version: int) -> str:
    """``llvm_ir`` with the ``amdhsa_code_object_version`` module flag set to ``version``
    (e.g. 5 → 500); a module that already sets the flag is left as it is."""
    if "amdhsa_code_object_version" in llvm_ir:
        return llvm_ir
    ids = [int(m.group(1)) for m in _MD_ID.finditer(llvm_ir)]
    node = max(ids, default=-1) + 1
    flag = f'!{node} = !{{i32 1, !"amdhsa_code_object_version", i32 {version * 100}}}'
    m = _FLAGS.search(llvm_ir)
    if m:
        items = m.group(1).strip()
        listed = f"!llvm.module.flags = !{{{items}, !{node}}}" if items else f"!llvm.module.flags = !{{!{node}}}"
        return llvm_ir[:m.start()] + listed + llvm_ir[m.end():] + f"\n{flag}\n"
    return llvm_ir.rstrip("\n") + f"\n\n!llvm.module.flags = !{{!{node}}}\n{flag}\n"


def _check_arch(arch: str) -> None:
    if arch not in TARGETS:
        # LLVM itself only warns about an unknown processor and compiles for a generic
        # one, so the check has to happen here.
        raise CompilationError("TLXC-CLI-001", f"unknown AMDGPU architecture {arch!r}; "
                                               f"choose one of {', '.join(TARGETS)}")


def compile_llvm_ir(llvm_ir: str, arch: str, *, opt_level: int = 3,
                    code_object_version: int = DEFAULT_CODE_OBJECT_VERSION,
                    sgpr_spill_retry: bool = True) -> AmdObject:
    """Parse, verify, optimize (LLVM's default ``O<opt_level>`` pipeline, new pass
    manager) and compile ``llvm_ir`` for ``arch``; with ``sgpr_spill_retry``, a kernel that
    spills SGPRs under LLVM's default scheduler is scheduled again (module doc).

    The module's triple and data layout are set to the AMDGPU ones (a module written for
    another triple is refused). A module that does not parse or verify is an
    :class:`InternalCompilerError` carrying LLVM's message.
    """
    _check_arch(arch)
    if code_object_version not in ABI_VERSION_OF_CODE_OBJECT:
        raise InternalCompilerError(_WHERE, f"code object version {code_object_version} is not one of "
                                            f"{sorted(ABI_VERSION_OF_CODE_OBJECT)}")
    if not 0 <= opt_level <= 3:
        raise InternalCompilerError(_WHERE, f"opt_level must be 0 to 3, got {opt_level}")
    llvm = _llvm()
    t0 = time.perf_counter()
    text = with_code_object_version(llvm_ir, code_object_version)
    try:
        module = llvm.parse_assembly(text)
    except RuntimeError as e:
        raise InternalCompilerError("the LLVM IR parser", f"the generated LLVM IR does not parse: {e}") from None
    if module.triple and module.triple != TRIPLE:
        raise InternalCompilerError(_WHERE, f"the module's target triple is {module.triple!r}, not {TRIPLE!r}")
    tm = _target_machine(arch, opt_level)
    module.triple = TRIPLE
    module.data_layout = str(tm.target_data)
    _verify(module, "before optimization")

    pass_builder = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=opt_level))
    pass_builder.getModulePassManager().run(module, pass_builder)
    _verify(module, "after optimization")
    optimized = str(module)

    # Code generation runs IR passes that rewrite the module it is given (kernel
    # argument and LDS lowering), so the assembly and the object each get a fresh copy.
    asm = _emit(tm.emit_assembly, module)
    kernels = parse_resources(asm)
    if sgpr_spill_retry and any(k.sgpr_spills for k in kernels.values()):
        module, asm, kernels = _without_sgpr_spills(llvm, tm, arch, optimized, module, asm, kernels)
    version = _asm_code_object_version(asm)
    chosen = module
    return AmdObject(arch, optimized, asm, lambda: bytes(_emit(tm.emit_object, chosen)), kernels, version,
                     time.perf_counter() - t0)


def _emit(emit: Callable[[Any], Any], module: Any) -> Any:
    try:
        return emit(module.clone())
    except RuntimeError as e:
        raise InternalCompilerError("the LLVM AMDGPU code generator", str(e)) from None


#: The machine schedulers tried, in order, when LLVM's default one leaves SGPR spills (see
#: the module doc): the memory-clause variant of the default (occupancy) strategy, which
#: keeps each load's address computation next to it. ``max-ilp`` removes the same spills
#: but reorders more; ``iterative-minreg`` only reduces them. One retry bounds the cost
#: where no schedule helps (one more code generation of the module, as for the 256x256x128
#: gfx1250 ``dot_scaled`` of the TLX tests, whose spills are not of this kind).
SGPR_SPILL_STRATEGIES = ("max-memory-clause",)
_DEFINE = re.compile(r"^define [^@\n]*amdgpu_kernel [^@\n]*@\"?([^\"(\s]+)\"?\(.*\)[^#\n]*#(\d+)", re.M)


def _with_sched_strategy(llvm_ir: str, strategy: str) -> str | None:
    """``llvm_ir`` (LLVM's printed module) with every kernel's attribute group asking for
    ``strategy``; None where a kernel has no attribute group or already names one."""
    groups = {m.group(2) for m in _DEFINE.finditer(llvm_ir)}
    if not groups or "amdgpu-sched-strategy" in llvm_ir:
        return None
    for g in groups:
        head = f"attributes #{g} = {{ "
        if head not in llvm_ir:
            return None
        llvm_ir = llvm_ir.replace(head, f'{head}"amdgpu-sched-strategy"="{strategy}" ', 1)
    return llvm_ir


def occupancy(arch: str, unified_vgprs: int) -> int:
    """Waves per SIMD that ``unified_vgprs`` registers per lane allow (allocation in
    blocks of 8 registers)."""
    t = TARGETS[arch]
    return min(t.max_waves_per_eu, t.max_vgprs // max(8, -(-unified_vgprs // 8) * 8))


def _without_sgpr_spills(llvm: Any, tm: Any, arch: str, optimized: str, module: Any, asm: str,
                         kernels: dict[str, KernelResources]) -> tuple[Any, str, dict[str, KernelResources]]:
    """(module, assembly, resources) of the first schedule of :data:`SGPR_SPILL_STRATEGIES`
    that has no SGPR spills and costs nothing else (VGPR spills, scratch, occupancy), or
    the ones given."""
    for strategy in SGPR_SPILL_STRATEGIES:
        text = _with_sched_strategy(optimized, strategy)
        if text is None:
            break
        alt_module = llvm.parse_assembly(text)
        alt_asm = _emit(tm.emit_assembly, alt_module)
        alt = parse_resources(alt_asm)
        if set(alt) == set(kernels) and all(
                a.sgpr_spills == 0 and a.vgpr_spills <= b.vgpr_spills and a.scratch_bytes <= b.scratch_bytes
                and occupancy(arch, a.vgprs) >= occupancy(arch, b.vgprs)
                for a, b in ((alt[n], kernels[n]) for n in kernels)):
            return alt_module, alt_asm, {n: replace(r, sched_strategy=strategy) for n, r in alt.items()}
    return module, asm, kernels


def _verify(module: Any, when: str) -> None:
    try:
        module.verify()
    except RuntimeError as e:
        raise InternalCompilerError("the LLVM verifier", f"the LLVM module is invalid {when}: {str(e).strip()}") \
            from None


# --------------------------------------------------------------------------- resources

_METADATA = re.compile(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata", re.M | re.S)
_KERNEL_KEY = re.compile(r"^(  - |    )(\.\w+):\s*(.*?)\s*$")
_DESCRIPTOR = re.compile(r"^\s*\.amdhsa_kernel\s+(\S+)\s*$(.*?)^\s*\.end_amdhsa_kernel", re.M | re.S)
_DIRECTIVE = re.compile(r"^\s*\.amdhsa_(\w+)\s+(.*?)\s*$", re.M)
_SET = re.compile(r"^\s*\.set\s+([\w.$]+)\s*,\s*(.*?)\s*$", re.M)
_COV = re.compile(r"^\s*\.amdhsa_code_object_version\s+(\d+)", re.M)


def _metadata_kernels(asm: str) -> list[dict[str, str]]:
    """The scalar keys of each entry of ``amdhsa.kernels`` in the metadata note (YAML).
    Nested lists (``.args``) are indented deeper and skipped."""
    m = _METADATA.search(asm)
    if not m:
        return []
    kernels: list[dict[str, str]] = []
    in_kernels = False
    for line in m.group(1).splitlines():
        if line.startswith("amdhsa.kernels:"):
            in_kernels = True
            continue
        if line and not line.startswith(" "):
            in_kernels = False
        if not in_kernels:
            continue
        km = _KERNEL_KEY.match(line)
        if not km:
            continue
        if km.group(1) == "  - ":
            kernels.append({})
        if kernels:
            kernels[-1][km.group(2)] = km.group(3).strip("'\"")
    return kernels


def parse_resources(asm: str) -> dict[str, KernelResources]:
    """The resources of every kernel in ``asm`` (assembly from LLVM's AMDGPU target)."""
    symbols = dict(_SET.findall(asm))
    descriptors = {name: dict(_DIRECTIVE.findall(body)) for name, body in _DESCRIPTOR.findall(asm)}
    entries = _metadata_kernels(asm)
    if not entries:
        raise InternalCompilerError(_WHERE, "the assembly has no .amdgpu_metadata kernel list")
    result: dict[str, KernelResources] = {}
    for meta in entries:
        name = meta.get(".name", "")
        directives = descriptors.get(name, {})

        def figure(key: str, directive: str | None = None, default: int | None = None,
                   meta: dict[str, str] = meta, directives: dict[str, str] = directives, name: str = name) -> int:
            text = meta.get(key)
            if text is None and directive is not None:
                text = directives.get(directive)
            if text is None:
                if default is not None:
                    return default
                raise InternalCompilerError(_WHERE, f"kernel {name!r}: the assembly does not give {key}")
            return _evaluate(text, symbols, f"kernel {name!r}: {key}")

        wave32 = directives.get("wavefront_size32")
        wave_default = 32 if wave32 is not None and _evaluate(wave32, symbols, "wavefront_size32") else 64
        result[name] = KernelResources(
            name=name,
            vgprs=figure(".vgpr_count", "next_free_vgpr"),
            agprs=figure(".agpr_count", default=0),
            sgprs=figure(".sgpr_count", "next_free_sgpr"),
            lds_bytes=figure(".group_segment_fixed_size", "group_segment_fixed_size"),
            scratch_bytes=figure(".private_segment_fixed_size", "private_segment_fixed_size"),
            wave_size=figure(".wavefront_size", default=wave_default),
            vgpr_spills=figure(".vgpr_spill_count", default=0),
            sgpr_spills=figure(".sgpr_spill_count", default=0),
            max_flat_workgroup_size=figure(".max_flat_workgroup_size", default=1024),
            kernarg_bytes=figure(".kernarg_segment_size", "kernarg_size", default=0),
            directives=directives,
        )
    return result


def _evaluate(text: str, symbols: dict[str, str], what: str, depth: int = 0) -> int:
    """An integer figure: a literal, or a symbol that ``.set`` defines (LLVM writes some
    kernel descriptor fields as ``k.num_vgpr``-style symbols)."""
    text = text.strip()
    try:
        return int(text, 0)
    except ValueError:
        pass
    if text in symbols and depth < 8:
        return _evaluate(symbols[text], symbols, what, depth + 1)
    raise InternalCompilerError(_WHERE, f"{what} is {text!r}, which tlxc cannot evaluate")


def _asm_code_object_version(asm: str) -> int:
    m = _COV.search(asm)
    return int(m.group(1)) if m else DEFAULT_CODE_OBJECT_VERSION


# --------------------------------------------------------------------------- ld.lld


@dataclass(frozen=True)
class Linker:
    path: str
    version: int  # LLD's major version


class LdLldNotFound(CompilationError):
    def __init__(self, detail: str = "ld.lld was not found") -> None:
        super().__init__("TLXC-TOOL-001", detail, help=_LLD_HELP)


_LLD_VERSION = re.compile(r"LLD (\d+)\.")


@lru_cache(maxsize=None)
def _lld_version(path: str) -> int | None:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = _LLD_VERSION.search(proc.stdout + proc.stderr)
    return int(m.group(1)) if m else None


def _lld_candidates() -> list[str]:
    """Where ld.lld may be, in order: ``TLXC_LD_LLD``, ``ld.lld`` on PATH, versioned
    Debian/Ubuntu names (newest first), ROCm's copy."""
    names: list[str] = []
    explicit = os.environ.get("TLXC_LD_LLD")
    if explicit:
        names.append(explicit)
    names.append(shutil.which("ld.lld") or "")
    for v in range(40, 6, -1):
        names += [shutil.which(f"ld.lld-{v}") or "", f"/usr/lib/llvm-{v}/bin/ld.lld"]
    names.append("/opt/rocm/llvm/bin/ld.lld")
    seen: list[str] = []
    for n in names:
        if n and n not in seen and os.path.isfile(n) and os.access(n, os.X_OK):
            seen.append(n)
    return seen


@lru_cache(maxsize=None)
def find_ld_lld(min_version: int = 0) -> Linker | None:
    """The first ld.lld (see :func:`_lld_candidates`) of LLD ``min_version`` or newer, or None."""
    for path in _lld_candidates():
        version = _lld_version(path)
        if version is not None and version >= min_version:
            return Linker(path, version)
    return None


def code_object_version_of(obj: bytes) -> int:
    """The code object version of an AMDGPU ELF file, from its ABI version byte."""
    if obj[:4] != b"\x7fELF" or len(obj) < 20 or int.from_bytes(obj[18:20], "little") != EM_AMDGPU:
        raise InternalCompilerError(_WHERE, "not an AMDGPU ELF object")
    for version, abi in ABI_VERSION_OF_CODE_OBJECT.items():
        if obj[8] == abi:
            return version
    raise InternalCompilerError(_WHERE, f"unknown AMDGPU ELF ABI version {obj[8]}")


def link_hsaco(obj: bytes) -> bytes:
    """Link a relocatable object from :func:`compile_llvm_ir` into a code object (an ELF
    shared object) with ``ld.lld -shared``, in a temporary directory."""
    version = code_object_version_of(obj)
    need = MIN_LLD_FOR_CODE_OBJECT[version]
    linker = find_ld_lld(need)
    if linker is None:
        older = find_ld_lld(0)
        if older is None:
            raise LdLldNotFound()
        raise LdLldNotFound(f"ld.lld {older.version} ({older.path}) cannot link AMDGPU code object v{version}: "
                            f"LLD {need} or newer is needed")
    from ...runtime.child import run_tool, tool_dir

    with tool_dir("tlxc-lld-") as d:
        src, out = os.path.join(d, "kernel.o"), os.path.join(d, "kernel.hsaco")
        with open(src, "wb") as f:
            f.write(obj)
        proc = run_tool([linker.path, "-shared", src, "-o", out])
        if proc.returncode != 0:
            raise CompilationError("TLXC-TOOL-002", f"ld.lld failed: {(proc.stdout + proc.stderr).strip()}")
        with open(out, "rb") as f:
            return f.read()
