"""AMDGPU reductions, layout conversions and barriers (issue 5), on gfx942, gfx950 and
gfx1250 with no GPU: the kernels compile (LLVM verifies them) with zero scratch, the ISA
holds the cross-lane instructions each chip should use (DPP, ``ds_swizzle``,
``ds_bpermute``), LDS traffic and barriers appear exactly where data crosses waves, and a
lane-level model of the DPP / swizzle / bpermute controls ``cross_lane`` picks gives
``lane ^ m`` for every lane of a wave. Numerics of the same kernels are the
interpreter's (``tests/ops``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import tlxc
from tlxc.codegen.amdgpu import cross_lane
from tlxc.codegen.amdgpu.isa import TARGETS

sys.path.insert(0, str(Path(__file__).parent))
import amd_reduce_kernels as K  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ARCHS = ["gfx942", "gfx950", "gfx1250"]


def _compile(kernel, sig: str, arch: str, num_warps: int = 4, **constants):
    c = kernel.compile(signature=sig, constants=constants, arch=arch, num_warps=num_warps)
    asm = c.asm["amdgcn"]
    body = asm[:asm.index(".section\t.rodata")]
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip().startswith((";", "."))]
    assert c.metadata["scratch"] == 0, f"{arch}: {c.metadata['scratch']} bytes of scratch"
    return c, lines


def _count(lines: list[str], pattern: str) -> int:
    rx = re.compile(pattern)
    return sum(1 for ln in lines if rx.search(ln))


def barriers(lines: list[str], arch: str) -> int:
    """Work-group barriers: ``s_barrier`` on GFX9; GFX12 splits it into
    ``s_barrier_signal -1`` + ``s_barrier_wait -1``."""
    return _count(lines, r"^s_barrier_wait\b" if arch == "gfx1250" else r"^s_barrier$")


def lds_stores(lines: list[str]) -> int:
    return _count(lines, r"^ds_(write|store)")


def lds_loads(lines: list[str]) -> int:
    return _count(lines, r"^ds_(read|load)")


# -- the lane model of the cross-lane primitives -----------------------------------------------------
def _dpp_model(ctrl: int, row_mask: int, bank_mask: int, old: list[int], src: list[int]) -> list[int]:
    """``v_mov_b32_dpp`` as the CDNA3 / RDNA ISA guides describe it (rows of 16 lanes,
    banks of 4 lanes; a lane whose bank or row is masked off keeps ``old``)."""
    out = list(old)
    for i in range(len(src)):
        row, k = divmod(i, 16)
        if not (row_mask >> (row % 4)) & 1 or not (bank_mask >> (k // 4)) & 1:
            continue
        if ctrl <= 0xFF:
            j = (k & ~3) | ((ctrl >> (2 * (k & 3))) & 3)
        elif 0x101 <= ctrl <= 0x10F:
            j = k + (ctrl - 0x100)
        elif 0x111 <= ctrl <= 0x11F:
            j = k - (ctrl - 0x110)
        elif 0x160 <= ctrl <= 0x16F:
            j = k ^ (ctrl - 0x160)
        else:
            raise AssertionError(f"no model for dpp_ctrl {ctrl:#x}")
        if 0 <= j < 16:
            out[i] = src[16 * row + j]
    return out


class _ModelEmitter:
    """Enough of ``Emitter`` for ``cross_lane.xor_word``: calls build lane vectors."""

    def __init__(self, arch: str) -> None:
        self.target = TARGETS[arch]
        n = self.target.wave_size
        outer = self

        class B:
            def call(self, fn, args):
                return outer.calls[fn](*args)

            def shl(self, x, c):
                return [v << c.constant for v in x]

            def xor(self, x, c):
                return [v ^ c.constant for v in x]

        self.b = B()
        self.lanes = list(range(n))
        self.calls = {
            "dpp": lambda old, src, ctrl, rm, bm, bc: _dpp_model(ctrl.constant, rm.constant, bm.constant, old, src),
            "swizzle": lambda x, off: self._swizzle(x, off.constant),
            "bpermute": lambda addr, x: [x[(a // 4) % n] for a in addr],
        }

    @staticmethod
    def _swizzle(x: list[int], offset: int) -> list[int]:
        assert not offset & 0x8000, "only the bit-mask mode is modelled"
        and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
        return [x[(i & ~31) | (((i & and_m) | or_m) ^ xor_m)] for i in range(len(x))]

    def intrinsic(self, name, ret, args):
        return {"llvm.amdgcn.update.dpp.i32": "dpp", "llvm.amdgcn.ds.swizzle": "swizzle",
                "llvm.amdgcn.ds.bpermute": "bpermute"}[name]

    def in_entry(self, key, make):
        return make(self.b)

    def special(self, name):
        assert name == "lane"
        return self.lanes


@pytest.mark.parametrize("arch", ARCHS)
def test_xor_lanes_model(arch: str) -> None:
    """Every butterfly step ``cross_lane.xor_word`` builds moves lane ``i ^ m`` to lane
    ``i`` in every lane of the wave (the DPP bank masks of the two-move GFX9 form cover
    each lane exactly once)."""
    e = _ModelEmitter(arch)
    n = e.target.wave_size
    values = [1000 + i for i in range(n)]
    m = 1
    while m < n:
        got = cross_lane.xor_word(e, values, m)  # type: ignore[arg-type]
        assert got == [values[i ^ m] for i in range(n)], (arch, m)
        m *= 2


# -- reductions -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_single_wave_reduction_needs_no_lds(arch: str) -> None:
    """A reduction whose axis lives in one wave's lanes: butterfly steps only."""
    _, lines = _compile(K.reduce_1d, "*fp32,*fp32", arch, num_warps=1, N=256)
    assert barriers(lines, arch) == 0
    assert lds_stores(lines) == 0 and lds_loads(lines) == 0
    assert _count(lines, r"quad_perm:\[1,0,3,2\]") == 1 and _count(lines, r"quad_perm:\[2,3,0,1\]") == 1
    assert _count(lines, r"^ds_swizzle_b32") == 1  # xor 16
    if arch == "gfx1250":  # wave32: GFX10+ row_xmask for 4 and 8, no 32-lane step
        assert _count(lines, r"row_xmask:4") == 1 and _count(lines, r"row_xmask:8") == 1
        assert _count(lines, r"^ds_bpermute") == 0
    else:  # wave64: row_shr/row_shl pairs for 4 and 8, ds_bpermute for the halves
        for m in (4, 8):
            assert _count(lines, rf"row_shr:{m}\b") == 1 and _count(lines, rf"row_shl:{m}\b") == 1
        assert _count(lines, r"^ds_bpermute_b32") == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_reduction_across_waves(arch: str) -> None:
    """Four waves along the axis: one LDS round trip between two barriers."""
    _, lines = _compile(K.reduce_1d, "*fp64,*fp64", arch, num_warps=4, N=1024)
    assert barriers(lines, arch) == 2
    assert lds_stores(lines) >= 1 and lds_loads(lines) >= 1


KINDS = [("sum", "*fp32,*fp32"), ("max", "*fp32,*fp32"), ("min", "*i32,*i32"), ("argmax", "*fp32,*i32"),
         ("argmin", "*i8,*i32"), ("xor", "*i64,*i64")]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("kind,sig", KINDS, ids=[k for k, _ in KINDS])
def test_reduce_kinds_and_axes(arch: str, axis: int, kind: str, sig: str) -> None:
    _compile(K.reduce_2d, sig, arch, num_warps=4, M=64, N=128, AXIS=axis, KIND=kind)


@pytest.mark.parametrize("arch", ARCHS)
def test_reduce_small_tile_many_waves(arch: str) -> None:
    """A tile smaller than the work-group: lanes and waves hold copies (zero bases)."""
    _compile(K.reduce_2d, "*fp32,*i32", arch, num_warps=8, M=4, N=8, AXIS=0, KIND="argmax")
    _compile(K.reduce_2d, "*u16,*u16", arch, num_warps=2, M=16, N=64, AXIS=1, KIND="min")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("example,kernel,sig,consts", [
    ("fused_softmax", "softmax_kernel", "*fp32,*fp32,i32,i32,i32,i32", {"BLOCK": 1024}),
    ("layer_norm", "layer_norm_fwd", "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32,i32,fp32", {"BLOCK": 1024}),
])
def test_reduction_examples(arch: str, example: str, kernel: str, sig: str, consts: dict) -> None:
    sys.path.insert(0, str(EXAMPLES))
    mod = __import__(example)
    _, lines = _compile(getattr(mod, kernel), sig, arch, num_warps=4, **consts)
    # two reductions of a 1024-element row over 4 waves: two LDS round trips
    assert barriers(lines, arch) == 4
    assert _count(lines, r"^ds_swizzle_b32") >= 2
    assert _count(lines, r"_dpp ") >= 8
    if arch != "gfx1250":
        assert _count(lines, r"^ds_bpermute_b32") >= 2


# -- layout conversions ---------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_transpose_goes_through_lds_vectorized(arch: str) -> None:
    """``tl.trans`` of a loaded tile stored row-major: the layouts pass converts between
    two blocked layouts; the planner's swizzled buffer takes 16-byte vectors on one side."""
    _, lines = _compile(K.transpose, "*fp32,*fp32", arch, num_warps=4, M=64, N=64)
    assert barriers(lines, arch) == 2
    assert _count(lines, r"^ds_(write|store)_b128|^ds_(read|load)_b128") >= 1
    assert lds_stores(lines) >= 1 and lds_loads(lines) >= 1


@pytest.mark.parametrize("arch", ARCHS)
def test_slice_result_converted(arch: str) -> None:
    """A reduction result (slice layout) added to a row load (blocked layout)."""
    _, lines = _compile(K.row_bias, "*fp32,*fp32,*fp32", arch, num_warps=4, M=64, N=128)
    assert lds_stores(lines) >= 1 and lds_loads(lines) >= 1


def test_conversion_planner_uses_the_chips_banks() -> None:
    """The conversion planner sees 32 banks on gfx942 and 64 on gfx950 / gfx1250 (see
    ``isa.py``), and its scratch layout for a transpose is conflict-free on each."""
    from tlxc.codegen.amdgpu.lower_convert import MAX_VECTOR_BYTES
    from tlxc.ir.layout.common import blocked
    from tlxc.ir.layout.conversion import plan_shared_conversion
    from tlxc.ir.layout.target import LayoutTarget

    assert [TARGETS[a].lds_banks for a in ARCHS] == [32, 64, 64]
    for arch in ARCHS:
        t = TARGETS[arch]
        target = LayoutTarget(t.wave_size, t.lds_banks, t.lds_bank_bytes, MAX_VECTOR_BYTES)
        lanes = t.wave_size
        rows = blocked([64, 64], [1, 4], [lanes // 16, 16], [4, 1], [1, 0])
        cols = blocked([64, 64], [4, 1], [16, lanes // 16], [1, 4], [0, 1])
        plan = plan_shared_conversion(rows, cols, elem_bits=32, target=target)
        assert plan.store.conflicts == 1 and plan.load.conflicts == 1, arch


# -- barriers, fences, asserts, clocks ------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_user_named_barriers_are_nvidia_only(arch: str) -> None:
    for kernel, consts in ((K.named_barrier, {"BAR": 9, "THREADS": 128}), (K.named_arrive, {})):
        with pytest.raises(tlxc.CompilationError, match="TLXC-TLX-006") as info:
            kernel.compile(signature="*fp32", constants=consts, arch=arch, num_warps=4).asm["amdgcn"]
        assert "no named barriers" in str(info.value)


@pytest.mark.parametrize("arch", ARCHS)
def test_async_shared_fence_is_refused(arch: str) -> None:
    with pytest.raises(tlxc.CompilationError, match="TLXC-TLX-006") as info:
        K.fence_async.compile(signature="*fp32", constants={}, arch=arch, num_warps=4).asm["amdgcn"]
    assert "async proxy" in str(info.value) and "amd_reduce_kernels.py" in str(info.value)


@pytest.mark.parametrize("arch", ARCHS)
def test_gpu_fence(arch: str) -> None:
    _, lines = _compile(K.fence_gpu, "*fp32", arch)
    # an agent-scope acquire-release fence writes back and invalidates the caches
    assert _count(lines, r"^buffer_wbl2|^global_wb") >= 1
    assert _count(lines, r"^buffer_inv|^global_inv") >= 1


@pytest.mark.parametrize("arch", ARCHS)
def test_device_assert_traps(arch: str) -> None:
    _, lines = _compile(K.asserts, "*fp32", arch, N=256)
    assert _count(lines, r"^s_trap 2") == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_clock64_and_thread_id(arch: str) -> None:
    _, lines = _compile(K.clock_and_tid, "*i64", arch)
    clock = r"^s_get_shader_cycles_u64" if arch == "gfx1250" else r"^s_memtime"
    assert _count(lines, clock) == 2
