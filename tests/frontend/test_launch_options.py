"""Launch and compile options (tlxc/kernels/options.py): each one is honoured or refused
with an error naming it, on every path -- ``kernel[grid]`` (slow and fast), the
interpreter, ``compile``, ``warmup`` and an autotune ``Config``.

Runs on the CPU with the fake driver of tests/conftest.py (launches are recorded)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from tlxc.runtime import LaunchError

import tlxc
from tlxc import CompilationError

pytestmark = pytest.mark.interpreter_only


class FakeTensor:
    def __init__(self, ptr: int, dtype: Any = np.float32) -> None:
        self.ptr = ptr
        self.dtype = np.dtype(dtype)

    def data_ptr(self) -> int:
        return self.ptr


SOURCE = """
@tlxc.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)


@tlxc.jit(noinline=True)
def helper(x):
    return x + 1


@tlxc.jit
def calls_noinline(x, n):
    helper(n)  # the call


@tlxc.autotune(configs=[tlxc.Config({"BLOCK": 64}, allowDependentTwoCTA=True, ctas_per_cga=(2, 1, 1))], key=["n"])
@tlxc.jit
def tuned(x, n, BLOCK: tl.constexpr):
    pass
"""


def _refused(excinfo: Any, option: str, words: str) -> None:
    e = excinfo.value
    assert e.code == "TLXC-OPTION-001" and f"option {option}:" in e.message and words in e.message, e.message


def test_num_ctas_makes_each_program_a_cluster(load_kernels: Any, fake_driver: Any) -> None:
    """Triton's num_ctas: the grid counts programs, each launched as a cluster of num_ctas
    CTAs along x; program ids count clusters and only a cluster's first CTA runs the
    program (the others leave at entry), so the results are num_ctas=1's."""
    m = load_kernels(SOURCE)
    x = np.arange(256, dtype=np.float32)
    m.k.interpret[(4,)](x, 200, BLOCK=64, num_ctas=2)
    np.testing.assert_array_equal(x, np.where(np.arange(256) < 200, np.arange(256) + 1.0, np.arange(256)))
    ck = m.k[(3, 2)](FakeTensor(4096), 64, BLOCK=64, num_ctas=2)
    assert ck.launch_spec.cluster_dims == (2, 1, 1) and ck.launch_spec.ctas_per_program == 2
    assert ck.metadata.num_ctas == 2 and ck.metadata.cluster_dims == (2, 1, 1)
    assert [g for g, _, _ in fake_driver.launches] == [(6, 2, 1)]  # x counts CTAs: 3 programs x 2
    assert m.k[(3, 2)](FakeTensor(4096), 64, BLOCK=64, num_ctas=2) is ck  # the fast path multiplies too
    assert [g for g, _, _ in fake_driver.launches][-1] == (6, 2, 1)
    ptx = ck.asm["ptx"]
    assert re.search(r"mov.u32 (%r\d+), %cluster_ctarank;\n\tsetp.ne.u32 (%p\d+), \1, 0;\n\t@\2 ret;", ptx), ptx
    assert "%clusterid.x" in ptx
    assert "%ctaid.x" not in ptx
    with pytest.raises(CompilationError) as ei:
        m.k.interpret[(1,)](x, 64, BLOCK=64, num_ctas=9)
    _refused(ei, "num_ctas", "must be from 1 to 8")
    assert "test_launch_options.py" in str(ei.value)  # points at the caller's line
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, num_ctas=2, ctas_per_cga=(2, 1, 1))
    _refused(ei, "num_ctas", "give one of them")
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, arch="gfx942", num_ctas=2)
    _refused(ei, "num_ctas", "not supported on gfx942")


def test_ctas_per_cga_launches_clusters(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    ck = m.k[(4,)](FakeTensor(4096), 64, BLOCK=64, ctas_per_cga=(2, 1, 1))
    assert ck.options.cluster_dims == (2, 1, 1) and ck.launch_spec.cluster_dims == (2, 1, 1)
    lk = ck._loaded
    assert lk.cluster_dims == (2, 1, 1) and "cfg" in lk.launch_source  # cuLaunchKernelEx's config
    assert [g for g, _, _ in fake_driver.launches] == [(4, 1, 1)]
    plain = m.k[(4,)](FakeTensor(4096), 64, BLOCK=64)
    assert plain is not ck and plain._loaded.cluster_dims is None  # another variant: the option is in the key
    again = m.k[(4,)](FakeTensor(4096), 64, BLOCK=64, ctas_per_cga=(2, 1, 1))  # the fast path keys on it
    assert again is ck and len(fake_driver.launches) == 3
    with pytest.raises(LaunchError, match="not a multiple of the cluster dims"):  # a fast-path hit: the runtime checks
        m.k[(3,)](FakeTensor(4096), 64, BLOCK=64, ctas_per_cga=(2, 1, 1))
    with pytest.raises(CompilationError) as ei:  # a new variant: the slow path checks before compiling
        m.k[(3,)](FakeTensor(4096), 64, BLOCK=128, ctas_per_cga=(2, 1, 1))
    _refused(ei, "ctas_per_cga", "not a multiple of the cluster shape")
    with pytest.raises(CompilationError) as ei:
        m.k.interpret[(3,)](np.zeros(64, np.float32), 64, BLOCK=64, ctas_per_cga=(2,))
    _refused(ei, "ctas_per_cga", "not a multiple")
    with pytest.raises(CompilationError) as ei:
        m.k[(16,)](FakeTensor(4096), 64, BLOCK=64, ctas_per_cga=(16, 1, 1))
    _refused(ei, "ctas_per_cga", "at most 8")
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, arch="gfx942", ctas_per_cga=(2, 1, 1))
    _refused(ei, "ctas_per_cga", "not supported on gfx942")


def test_cooperative_launch_reaches_the_loader(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    ck = m.k[(2,)](FakeTensor(4096), 64, BLOCK=64, launch_cooperative_grid=True)
    assert ck.launch_spec.cooperative and ck._loaded.cooperative and "cfg" in ck._loaded.launch_source
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, arch="gfx950", launch_cooperative_grid=True)
    _refused(ei, "launch_cooperative_grid", "not supported on gfx950")


def test_options_outside_the_key_are_checked_on_the_fast_path_too(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    x = FakeTensor(4096)
    m.k[(1,)](x, 64, BLOCK=64)
    m.k[(1,)](x, 64, BLOCK=64)  # the variant is now in the fast table
    m.k[(1,)](x, 64, BLOCK=64, enable_fp_fusion=False)  # a variant of its own, not the fast path's
    assert len(m.k.cache) == 2
    with pytest.raises(CompilationError) as ei:
        m.k[(1,)](x, 64, BLOCK=64, multicast=True)
    _refused(ei, "multicast", "TMA multicast")
    m.k[(1,)](x, 64, BLOCK=64, enable_fp_fusion=True, debug=True, matrix_instr_nonkdim=16)  # defaults; AMD's on NVIDIA
    assert len(fake_driver.launches) == 4
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, arch="gfx942", matrix_instr_nonkdim=16)
    _refused(ei, "matrix_instr_nonkdim", "MFMA instruction shape")
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, frobnicate=1)
    _refused(ei, "frobnicate", "unknown option")


def test_a_config_takes_tlx_options_and_refuses_them_when_used(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)  # no TypeError at import: Config takes every option of TLX's
    c = tlxc.Config({"BLOCK": 64}, ctas_per_cga=(2, 1, 1), allowDependentTwoCTA=True)
    assert c.ctas_per_cga == (2, 1, 1) and c.allowDependentTwoCTA is True
    with pytest.raises(CompilationError) as ei:
        m.tuned.interpret[(2,)](np.zeros(64, np.float32), 64)
    _refused(ei, "allowDependentTwoCTA", "two-CTA")


def test_noinline_is_refused_at_the_call(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    with pytest.raises(CompilationError) as ei:
        m.calls_noinline.compile("*fp32:16,i32")
    e = ei.value
    assert e.code == "TLXC-OPTION-001" and "noinline=True" in e.message
    assert e.loc.line == 18  # the call (load_kernels adds 3 header lines)


def test_warmup_honours_its_arguments(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    x = FakeTensor(4096)
    ck = m.k.warmup(x, 64, BLOCK=64, num_warps=8, grid=(1,))
    assert ck.options.arch == "sm_90a" and ck.options.num_warps == 8  # the (fake) device's target
    assert fake_driver.launches == []  # compiled, not launched
    amd = m.k.warmup(x, 64, BLOCK=64, arch="gfx942", num_warps=2)
    assert amd.options.arch == "gfx942" and amd.options.num_warps == 2
    assert m.k[(1,)](x, 64, BLOCK=64, num_warps=8) is ck  # the launch finds the warmed-up variant
    with pytest.raises(CompilationError) as ei:
        m.k.warmup(x, 64, BLOCK=64, grid=(3,), ctas_per_cga=(2, 1, 1))
    _refused(ei, "ctas_per_cga", "not a multiple")
    with pytest.raises(CompilationError) as ei:
        m.k.warmup(x, 64, BLOCK=64, num_ctas=0)
    _refused(ei, "num_ctas", "must be from 1 to 8")


def test_extern_libs_names_the_libraries_tlxc_implements(load_kernels: Any, fake_driver: Any) -> None:
    """Triton's tutorial 07 launches with extern_libs={'libdevice': path}: tlxc accepts the
    library it implements itself per target family (libdevice on NVIDIA and in the
    interpreter, ocml/ockl on AMD), links nothing, and refuses any other library or file."""
    m = load_kernels(SOURCE)
    x = np.arange(64, dtype=np.float32)
    m.k.interpret[(1,)](x, 64, BLOCK=64, extern_libs={"libdevice": "/nowhere/libdevice.10.bc"})
    np.testing.assert_array_equal(x, np.arange(64) + 1.0)
    t = FakeTensor(4096)
    plain = m.k[(1,)](t, 64, BLOCK=64)
    m.k[(1,)](t, 64, BLOCK=64)  # now in the fast table
    assert m.k[(1,)](t, 64, BLOCK=64, extern_libs={"libdevice": "libdevice.10.bc"}) is plain  # the same code
    assert len(fake_driver.launches) == 3
    amd = m.k.compile("*fp32:16,i32", {"BLOCK": 64}, arch="gfx942",
                      extern_libs=(("ocml", "/rocm/ocml.bc"), ("ockl", "/rocm/ockl.bc")))
    assert amd.options.arch == "gfx942"
    assert m.k.compile("*fp32:16,i32", {"BLOCK": 64}, extern_libs={}).options.arch == "sm_90a"
    with pytest.raises(CompilationError) as ei:  # a fast-path launch that names a wrong file is checked too
        m.k[(1,)](t, 64, BLOCK=64, extern_libs={"libdevice": "/home/me/mylib.bc"})
    _refused(ei, "extern_libs", "'/home/me/mylib.bc', which is not libdevice's bitcode (libdevice*.bc)")
    assert "test_launch_options.py" in str(ei.value)  # the caller's line
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, extern_libs={"cublas": "/x/libcublas.bc"})
    _refused(ei, "extern_libs", "tlxc does not implement the functions of a library 'cublas'")
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, arch="gfx942", extern_libs={"libdevice": "/x/libdevice.10.bc"})
    _refused(ei, "extern_libs", "'libdevice' is a library of the NVIDIA targets, not of gfx942")
    with pytest.raises(CompilationError) as ei:
        m.k.interpret[(1,)](x, 64, BLOCK=64, extern_libs={"ocml": "/rocm/ocml.bc"})
    _refused(ei, "extern_libs", "'ocml' is a library of the AMD targets, not of sm_90a")
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, extern_libs="libdevice.10.bc")
    _refused(ei, "extern_libs", "must be a dict of library name to bitcode path")
    with pytest.raises(CompilationError) as ei:
        m.k.compile("*fp32:16,i32", {"BLOCK": 64}, extern_libs={"libdevice": 10})
    _refused(ei, "extern_libs", "must be a str or os.PathLike, got 10")
    assert tlxc.Config({"BLOCK": 64}, extern_libs={"libdevice": "libdevice.10.bc"}).extern_libs == {
        "libdevice": "libdevice.10.bc"}


MUL_ADD = """
@tlxc.jit
def mul_add(data):
    ptrs = data + tl.arange(0, 128)
    tl.store(ptrs, tl.load(ptrs) * 1.5 + 1.0)
"""


@pytest.mark.parametrize("fusion", [True, False])
def test_enable_fp_fusion(load_kernels: Any, fusion: bool) -> None:
    """False keeps a*b + c a rounded multiply and a rounded add: the .rn forms, which ptxas
    does not contract into an FFMA (Triton's test_enable_fp_fusion)."""
    m = load_kernels(MUL_ADD)
    ck = m.mul_add.compile("*fp32", {}, arch="sm_90a", enable_fp_fusion=fusion)
    ptx = ck.asm["ptx"]
    assert ("mul.rn.f32" in ptx and "add.rn.f32" in ptx) != fusion
    if "sass" in ck.asm.available():
        assert ("FFMA" in ck.asm["sass"]) == fusion
    with pytest.raises(CompilationError) as ei:
        m.mul_add.compile("*fp32", {}, arch="sm_90a", enable_fp_fusion="no")
    _refused(ei, "enable_fp_fusion", "must be True or False")


def test_default_fp_fusion_knob_picks_the_variant_of_a_launch_that_does_not_say(load_kernels: Any,
                                                                                fake_driver: Any) -> None:
    m = load_kernels(MUL_ADD)
    x = FakeTensor(128)
    m.mul_add[(1,)](x)
    m.mul_add[(1,)](x)  # now on the fast path
    with tlxc.knobs.language.scope():
        tlxc.knobs.language.default_fp_fusion = False
        m.mul_add[(1,)](x)  # the knob is part of the fast path's key: a variant of its own
        assert len(m.mul_add.cache) == 2
        fused = [ck for ck in m.mul_add.cache.values() if "mul.rn.f32" not in ck.asm["ptx"]]
        assert len(fused) == 1
        m.mul_add[(1,)](x, enable_fp_fusion=True)  # a launch that says wins over the knob
        assert len(m.mul_add.cache) == 2
    assert tlxc.knobs.language.default_fp_fusion is True


FP32_DOT = """
@tlxc.jit
def mm(a, b, c):
    r = tl.arange(0, 16)
    x = tl.load(a + r[:, None] * 16 + r[None, :])
    y = tl.load(b + r[:, None] * 16 + r[None, :])
    tl.store(c + r[:, None] * 16 + r[None, :], tl.dot(x, y))
"""


def test_fp32_default_knob_is_the_dots_input_precision(load_kernels: Any) -> None:
    """Triton's knobs.language.fp32_default: the input_precision of an fp32 tl.dot that
    gives none. The interpreter rounds tf32 inputs to 10 mantissa bits, ieee keeps them."""
    m = load_kernels(FP32_DOT)
    a = (1 + np.arange(256, dtype=np.float32).reshape(16, 16) * 2.0 ** -20)  # bits tf32 drops
    b = np.eye(16, dtype=np.float32)
    outs = {}
    for knob in (None, "ieee", "tf32"):
        with tlxc.knobs.language.scope():
            tlxc.knobs.language.fp32_default = knob
            c = np.zeros((16, 16), np.float32)
            m.mm.interpret[(1,)](a, b, c)
            outs[knob] = c
            ir = m.mm.compile("*fp32:16,*fp32:16,*fp32:16", arch="sm_90a").asm["ir"]
            assert ('input_precision = "tf32"' in ir) == (knob != "ieee")  # ieee, the default, is not printed
    np.testing.assert_array_equal(outs["ieee"], a)
    assert not np.array_equal(outs["tf32"], a) and np.array_equal(outs[None], outs["tf32"])
    with tlxc.knobs.language.scope():
        tlxc.knobs.language.fp32_default = "fp64"
        with pytest.raises(CompilationError) as ei:
            m.mm.compile("*fp32:16,*fp32:16,*fp32:16", arch="sm_90a")
    _refused(ei, "knobs.language.fp32_default", "must be one of")
