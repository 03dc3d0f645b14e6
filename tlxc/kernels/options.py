"""Launch and compile options: every option a launch (``kernel[grid](..., num_warps=8)``),
``kernel.compile``, ``kernel.warmup`` or a ``tlxc.Config`` may carry, and what tlxc does
with it. Each is honoured or refused with an error naming it; none is dropped quietly.

Honoured: ``num_warps``, ``maxnreg``, ``waves_per_eu`` (AMD), ``ctas_per_cga`` (NVIDIA:
the grid's blocks are grouped in clusters of that shape, launched with
``cuLaunchKernelEx``; as in TLX, the grid still counts blocks and must hold whole
clusters), ``launch_cooperative_grid`` (NVIDIA: a cooperative launch), ``stream``,
``enable_fp_fusion`` (True, the default: the PTX code generator writes ``add``/``mul``
without a rounding mode, so ptxas may fuse them into ``fma``; False: ``add.rn``/``mul.rn``,
which it does not fuse; the AMD code carries no contraction flags either way), ``debug`` (device
assertions are always compiled in, so ``debug=True`` holds; ``debug=False`` does not
take them out), ``extern_libs`` (the device libraries tlxc implements itself: libdevice on
NVIDIA, ocml and ockl on AMD; no bitcode is linked, extern_libs.py). ``num_stages``
chooses the variant (it is part of the key) but, as a software-pipelining hint that
tlxc's code generators do not use, changes no code.

``num_ctas`` (NVIDIA, up to 8): as in Triton, each program runs on a cluster of that many
CTAs and the grid counts programs (the launch multiplies its x by ``num_ctas``). tlxc does
not spread a program's tiles over the cluster: the first CTA of each cluster runs the
program and the others leave at entry, so results and side effects are those of
``num_ctas=1``; TLX's cluster operations need ``ctas_per_cga`` instead (not both).

Refused unless they hold their default: clusters and cooperative
launches on AMD targets, and the options of TLX's ``Config`` that drive compiler
features tlxc does not have (automatic warp specialization, TMA multicast,
``preferred_ctas_per_cga``, IR overrides...). AMD's ``matrix_instr_nonkdim`` and
``kpack`` are refused on AMD targets unless default (its code generator chooses the
MFMA shape itself) and do not apply to NVIDIA targets, as Triton's CUDA back end
ignores them; so does ``waves_per_eu``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CompilationError
from ..ir.ops.reduce import INPUT_PRECISIONS
from .extern_libs import check_extern_libs

if TYPE_CHECKING:  # pragma: no cover
    from ..compiler import CompileOptions

# The options that choose the variant. The fast path of kernel[grid] keys on them
# (launch.py); ``stream`` only says where a launch runs.
KEY_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "ctas_per_cga",
               "launch_cooperative_grid", "enable_fp_fusion")

# Options accepted only at their default (or, for ``debug``, with no effect on code): the
# fast path sends a launch that names one to the slow path, which checks it.
_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "debug": (None, False, True),
    "matrix_instr_nonkdim": (None, 0),
    "kpack": (None, 1),
    "preferred_ctas_per_cga": (None,),
    "allowDependentTwoCTA": (None, False),
    "multicast": (None, False),
    "minRegAutoWS": (None,),
    "maxRegAutoWS": (None,),
    "pingpongAutoWS": (None, False),
    "ir_override": (None,),
    "early_tma_store_lowering": (None, False),
    "tma_store_pipelining": (None, False),
    "generate_subtiled_region": (None, False),
    "auto_tma": (None, False),
    "enable_tree_reduction": (None, False),
    "num_buffers_warp_spec": (None, 0),
    "num_consumer_groups": (None, 0),
    "reg_dec_producer": (None, 0),
    "reg_inc_consumer": (None, 0),
    "launch_pdl": (None, False),
}
CHECKED_OPTIONS = tuple(_DEFAULTS)
# ``extern_libs`` names bitcode libraries; tlxc links none and accepts only the ones it
# implements itself (extern_libs.py), so it changes no code and is not part of the key
LAUNCH_OPTIONS = KEY_OPTIONS + ("stream", "extern_libs") + CHECKED_OPTIONS
_AMD_ONLY = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")

# why each checked option cannot take another value (the error's words)
_WHY = {
    "matrix_instr_nonkdim": "the AMD code generator chooses the MFMA instruction shape itself",
    "kpack": "the AMD code generator chooses the MFMA operand packing itself",
    "preferred_ctas_per_cga": "preferred (driver-chosen) cluster shapes are not supported; ctas_per_cga is",
    "allowDependentTwoCTA": "two-CTA tcgen05 operations need cluster support in the code generator",
    "multicast": "TMA multicast needs cluster support in the code generator",
    "ir_override": "tlxc compiles from the kernel's source only",
    "launch_pdl": "programmatic dependent launches are not supported",
}
_AUTO_WS = "tlxc has no automatic warp specialization or compiler-chosen TMA; write it with tlx.async_tasks and tlx TMA"

# The most blocks a portable cluster holds (CUDA: 8; 16 only with a non-portable opt-in).
MAX_CLUSTER = 8


def _fail(name: str, message: str, loc: Any, help: str | None = None) -> CompilationError:
    return CompilationError("TLXC-OPTION-001", f"option {name}: {message}", loc, help)


def _int(name: str, v: Any, loc: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            import operator

            return operator.index(v)
        except TypeError:
            raise _fail(name, f"must be an int, got {v!r}", loc) from None
    return v


def cluster_dims(v: Any, loc: Any) -> tuple[int, int, int] | None:
    """``ctas_per_cga`` as three ints, None for no clusters (None or all ones)."""
    if v is None:
        return None
    dims = (v,) if isinstance(v, int) else v
    if not isinstance(dims, (tuple, list)) or not 1 <= len(dims) <= 3:
        raise _fail("ctas_per_cga", f"must be 1 to 3 positive ints (a cluster shape), got {v!r}", loc)
    out = [_int("ctas_per_cga", d, loc) for d in dims] + [1] * (3 - len(dims))
    if any(d < 1 for d in out):
        raise _fail("ctas_per_cga", f"must be 1 to 3 positive ints (a cluster shape), got {v!r}", loc)
    if out[0] * out[1] * out[2] > MAX_CLUSTER:
        raise _fail("ctas_per_cga", f"{tuple(out)} makes clusters of {out[0] * out[1] * out[2]} blocks; a "
                    f"portable cluster holds at most {MAX_CLUSTER}", loc)
    return None if out == [1, 1, 1] else (out[0], out[1], out[2])


def check_option(name: str, value: Any, arch: str, loc: Any) -> None:
    """Refuse ``name=value`` where tlxc cannot honour it on ``arch`` (see the module docstring)."""
    if name not in _DEFAULTS:
        return
    if name in _AMD_ONLY and not arch.startswith("gfx"):
        return  # as Triton's CUDA back end: AMD's options do not apply
    if any(value is d or (d is not None and type(value) is type(d) and value == d) for d in _DEFAULTS[name]):
        return
    if name in ("minRegAutoWS", "maxRegAutoWS", "pingpongAutoWS", "early_tma_store_lowering", "tma_store_pipelining",
                "generate_subtiled_region", "auto_tma", "enable_tree_reduction", "num_buffers_warp_spec",
                "num_consumer_groups", "reg_dec_producer", "reg_inc_consumer"):
        why = _AUTO_WS if name != "enable_tree_reduction" else "the reduction strategy is not selectable"
    else:
        why = _WHY.get(name, "it is not supported")
    default = next((d for d in _DEFAULTS[name] if d is not None), None)
    raise _fail(name, f"{value!r} is not supported by tlxc: {why}", loc,
                f"leave {name} out" + (f" (or give {default!r})" if default is not None else ""))


def compile_options(given: dict[str, Any], arch: str, loc: Any) -> CompileOptions:
    """The ``CompileOptions`` of a launch or compile for ``arch`` from the options given by
    name (absent ones take their defaults), each checked; ``stream`` is ignored here."""
    from ..compiler import CompileOptions  # the compiler is imported by the first compile, not by `import tlxc`

    for name, value in given.items():
        if name not in LAUNCH_OPTIONS:
            raise _fail(name, "unknown option", loc, f"options are {', '.join(LAUNCH_OPTIONS)}")
        check_option(name, value, arch, loc)
    check_extern_libs(given.get("extern_libs"), arch, loc)
    num_ctas = _int("num_ctas", given.get("num_ctas", 1), loc)
    clusters = cluster_dims(given.get("ctas_per_cga"), loc)
    if num_ctas != 1:
        if num_ctas < 1 or num_ctas > MAX_CLUSTER:
            raise _fail("num_ctas", f"must be from 1 to {MAX_CLUSTER} (a portable cluster), got {num_ctas}", loc)
        if arch.startswith("gfx"):
            raise _fail("num_ctas", f"num_ctas={num_ctas}: clusters are not supported on {arch} by tlxc", loc)
        if clusters is not None:
            raise _fail("num_ctas", f"num_ctas={num_ctas} with ctas_per_cga={clusters}: give one of them (num_ctas "
                        "makes a cluster run one program; ctas_per_cga makes clusters of programs)", loc)
        clusters = (num_ctas, 1, 1)
    cooperative = given.get("launch_cooperative_grid", False)
    if not isinstance(cooperative, bool):
        raise _fail("launch_cooperative_grid", f"must be True or False, got {cooperative!r}", loc)
    if arch.startswith("gfx") and clusters is not None:
        raise _fail("ctas_per_cga", f"clusters are not supported on {arch} by tlxc", loc)
    if arch.startswith("gfx") and cooperative:
        raise _fail("launch_cooperative_grid", f"cooperative launches are not supported on {arch} by tlxc", loc)
    from .. import knobs

    fusion = given.get("enable_fp_fusion")
    if fusion is None:
        fusion = knobs.language.default_fp_fusion
    if not isinstance(fusion, bool):
        raise _fail("enable_fp_fusion", f"must be True or False, got {fusion!r}", loc)
    fp32 = knobs.language.fp32_default
    if fp32 is not None and fp32 not in INPUT_PRECISIONS:
        raise _fail("knobs.language.fp32_default", f"must be one of {list(INPUT_PRECISIONS)} or None, got {fp32!r}",
                    loc)
    waves = given.get("waves_per_eu", 0)
    options = CompileOptions(arch=arch, num_warps=_int("num_warps", given.get("num_warps", 4), loc),
                             num_stages=_int("num_stages", given.get("num_stages", 3), loc), num_ctas=num_ctas,
                             maxnreg=given.get("maxnreg"), waves_per_eu=0 if waves is None else waves,
                             cluster_dims=clusters, cooperative=cooperative, enable_fp_fusion=fusion,
                             fp32_default=fp32)
    options.check(loc)
    return options.for_target()
