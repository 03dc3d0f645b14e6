"""``tl.tensor_descriptor`` as a type, and the constructs of Triton's fused-attention
tutorial (06) around it, in a smaller kernel of the same style.

``_softmax_rows`` takes its input and output either as host ``tlxc.TensorDescriptor``s or
as plain pointers; an inlined helper keeps a descriptor and builds one from a pointer,
deciding with ``isinstance(x, tl.tensor_descriptor)`` at compile time. The kernel streams
over column blocks with ``tl.range(..., warp_specialize=...)`` and ``tl.static_range``,
keeps an online max and sum with ``tl.math.exp2`` and ``tl.fma``, branches on
``dtype == tl.float8e5``, passes runtime tiles to a helper's ``tl.constexpr`` parameter
(as the tutorial passes ``offs_m``), and reads and writes through the descriptors'
``load`` / ``store``. The numbers are checked against numpy in the interpreter; the same
kernel compiles for both NVIDIA targets (ptxas) and, with pointers, for the AMD ones.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tlxc
import tlxc.language as tl
from tlxc import CompilationError

LOG2E = 1.4426950408889634
E5M2 = ml_dtypes.float8_e5m2


@tlxc.jit
def _as_descriptor(desc_or_ptr, rows, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape=[rows, cols], strides=[cols, 1],
                                         block_shape=[BLOCK_R, BLOCK_C])


@tlxc.jit
def _row_stats(x_desc, row0, n_rows, n_cols, offs_r: tl.constexpr, dtype: tl.constexpr, BLOCK_R: tl.constexpr,
               BLOCK_C: tl.constexpr, SPLIT: tl.constexpr, WS: tl.constexpr):
    m_i = tl.zeros([BLOCK_R], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_R], dtype=tl.float32)
    for c0 in tl.range(0, n_cols, BLOCK_C * SPLIT, warp_specialize=WS):
        c0 = tl.multiple_of(c0, BLOCK_C * SPLIT)
        for h in tl.static_range(SPLIT):
            s = x_desc.load([row0, c0 + h * BLOCK_C]).to(tl.float32)
            if dtype == tl.float8e5:
                s = s * 0.5  # fp8 inputs are stored doubled
            s = s * 1.44269504
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.math.exp2(m_i - m_new)
            l_i = tl.fma(l_i, alpha, tl.sum(tl.math.exp2(s - m_new[:, None]), 1))
            m_i = m_new
    # rows past the end read as zeros through the descriptor: give them a neutral sum
    # (offs_r is a runtime tile despite its annotation, as the tutorial's offs_m)
    return m_i, tl.where(offs_r < n_rows, l_i, 1.0)


@tlxc.jit
def _softmax_rows(x, y, lse, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, SPLIT: tl.constexpr,
                  FP8_INPUT: tl.constexpr, WS: tl.constexpr):
    dtype = tl.float8e5 if FP8_INPUT else tl.float16
    tl.static_assert(BLOCK_C * SPLIT <= 256)
    x_desc = _as_descriptor(x, n_rows, n_cols, BLOCK_R, BLOCK_C)
    y_desc = _as_descriptor(y, n_rows, n_cols, BLOCK_R, BLOCK_C)
    row0 = tl.program_id(0) * BLOCK_R
    offs_r = row0 + tl.arange(0, BLOCK_R)
    m_i, l_i = _row_stats(x_desc, row0, n_rows, n_cols, offs_r, dtype, BLOCK_R, BLOCK_C, SPLIT, WS)
    tl.store(lse + offs_r, (m_i + tl.math.log2(l_i)) / 1.44269504, mask=offs_r < n_rows)
    for c0 in tl.range(0, n_cols, BLOCK_C):
        s = x_desc.load([row0, c0]).to(tl.float32)
        if dtype == tl.float8e5:
            s = s * 0.5
        p = tl.math.exp2(s * 1.44269504 - m_i[:, None]) / l_i[:, None]
        y_desc.store([row0, c0], p.to(tl.float16) if FP8_INPUT else p.to(dtype))


def _inputs(rows: int, cols: int, fp8: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(rows * 1000 + cols + fp8)
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 2
    if fp8:
        stored = (x * 2).astype(E5M2)  # the kernel halves fp8 inputs
        return stored, stored.astype(np.float32) / 2
    stored = x.astype(np.float16)
    return stored, stored.astype(np.float32)


def _reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = x.max(1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(1, keepdims=True), (m + np.log(e.sum(1, keepdims=True)))[:, 0]


@pytest.mark.parametrize("host", [False, True], ids=["pointers", "host-descriptors"])
@pytest.mark.parametrize("fp8", [False, True], ids=["fp16", "fp8e5"])
@pytest.mark.parametrize("ws", [False, True], ids=["plain", "warp_specialize"])
def test_interpreter_matches_numpy(host: bool, fp8: bool, ws: bool) -> None:
    rows, cols, BR, BC, split = 40, 128, 16, 32, 2  # 40 rows: the last block runs past the end
    x, xf = _inputs(rows, cols, fp8)
    y = np.zeros((rows, cols), np.float16)
    lse = np.full(rows, -1.0, np.float32)
    if host:
        xa: Any = tlxc.TensorDescriptor(x, [rows, cols], [cols, 1], [BR, BC])
        ya: Any = tlxc.TensorDescriptor(y, [rows, cols], [cols, 1], [BR, BC])
    else:
        xa, ya = x, y
    _softmax_rows.interpret[(math.ceil(rows / BR),)](xa, ya, lse, rows, cols, BLOCK_R=BR, BLOCK_C=BC, SPLIT=split,
                                                     FP8_INPUT=fp8, WS=ws)
    want_y, want_lse = _reference(xf)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.astype(np.float32), want_y, rtol=2e-3, atol=1e-4)


def test_fp8_output_dtype_follows_the_flag() -> None:
    """With FP8_INPUT the output descriptor is fp16 while the input is fp8: the kernel's
    ``dtype`` (fp8) must only pick the input branch, which the halving shows."""
    rows, cols = 16, 64
    x, xf = _inputs(rows, cols, True)
    y = np.zeros((rows, cols), np.float16)
    lse = np.zeros(rows, np.float32)
    _softmax_rows.interpret[(1,)](x, y, lse, rows, cols, BLOCK_R=16, BLOCK_C=32, SPLIT=1, FP8_INPUT=True, WS=False)
    np.testing.assert_allclose(lse, _reference(xf)[1], rtol=1e-5, atol=1e-5)
    assert not np.allclose(lse, _reference(xf * 2)[1], rtol=1e-2)


def _line_of(mod: Any, text: str) -> int:
    """The 1-based line of ``mod``'s file that holds ``text``."""
    with open(mod.__path_str__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


# -- isinstance at compile time ------------------------------------------------------------------


@pytest.mark.not_on_gpu_yet("a host descriptor argument the kernel never loads through has no tma_params, "
                             "which the GPU launch asks for its swizzle")
def test_isinstance_folds_for_each_kind_of_value(load_kernels: Any) -> None:
    mod = load_kernels("""
        @tlxc.jit
        def k(x, d, out, n):
            dd = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16, 16])
            t = tl.arange(0, 16)
            flags = (isinstance(d, tl.tensor_descriptor), isinstance(dd, tl.tensor_descriptor),
                     isinstance(x, tl.tensor_descriptor), isinstance(t, tl.tensor_descriptor),
                     isinstance(x, tl.tensor), isinstance(t, tl.tensor), isinstance(n, tl.tensor),
                     isinstance(d, tl.tensor), isinstance(3, tl.tensor), isinstance(3, tl.constexpr),
                     isinstance(t, tl.constexpr), isinstance(3, int), isinstance(t, int),
                     isinstance(d, (int, tl.tensor_descriptor)), isinstance(dd, tl.tensor_descriptor_base),
                     isinstance(x.dtype, tl.pointer_type), isinstance(t.dtype, tl.dtype),
                     isinstance(d, tlxc.TensorDescriptor))
            for i in tl.static_range(len(flags)):
                tl.store(out + i, flags[i])
    """)
    out = np.full(18, 7, np.int32)
    x = np.zeros((16, 16), np.float16)
    d = tlxc.TensorDescriptor(x, [16, 16], [16, 1], [16, 16])
    mod.k.interpret[(1,)](x, d, out, 16)
    assert out.tolist() == [1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0]


def test_isinstance_with_a_non_type_is_an_error_at_the_users_line(load_kernels: Any) -> None:
    mod = load_kernels("""
        @tlxc.jit
        def k(x, out):
            if isinstance(x, 3):
                tl.store(out, 1)
    """)
    with pytest.raises(CompilationError) as info:
        mod.k.compile("*fp32,*i32")
    err = info.value
    assert err.code == "TLXC-TYPE-001" and "isinstance() needs a type" in str(err), str(err)
    assert err.loc is not None and err.loc.file == mod.__path_str__
    assert err.loc.line == _line_of(mod, "isinstance(x, 3)")
    assert "if isinstance(x, 3):" in str(err) and "^" in str(err)


def test_isinstance_arguments_are_checked(load_kernels: Any) -> None:
    mod = load_kernels("""
        @tlxc.jit
        def k(x):
            if isinstance(x):
                pass
    """)
    with pytest.raises(CompilationError) as info:
        mod.k.compile("*fp32")
    assert info.value.code == "TLXC-CALL-002" and info.value.loc.line == _line_of(mod, "isinstance(x)")


def test_warp_specialize_must_be_a_constant_bool(load_kernels: Any) -> None:
    mod = load_kernels("""
        @tlxc.jit
        def k(x, n):
            for i in tl.range(0, n, warp_specialize=n > 0):
                tl.store(x + i, 1.0)
    """)
    with pytest.raises(CompilationError) as info:
        mod.k.compile("*fp32,i32")
    assert info.value.code == "TLXC-CONSTEXPR-001" and "warp_specialize" in str(info.value)
    assert info.value.loc.line == _line_of(mod, "warp_specialize=")


def test_warp_specialize_is_recorded_on_the_loop() -> None:
    ck = _softmax_rows.compile("*fp16,*fp16,*fp32,i32,i32", {"BLOCK_R": 16, "BLOCK_C": 32, "SPLIT": 2,
                                                            "FP8_INPUT": False, "WS": True}, arch="sm_100a")
    text = ck.asm["ir"]
    assert "warp_specialize = true" in text
    assert text.count("warp_specialize") == 1  # the second loop did not ask
    from tlxc.ir.parser import parse_ir
    from tlxc.ir.printer import print_ir

    assert print_ir(parse_ir(text)) == text


def test_kernel_types_cannot_be_made_on_the_host() -> None:
    with pytest.raises(RuntimeError, match="only inside"):
        tl.tensor_descriptor()


# -- compile -------------------------------------------------------------------------------------

_CONSTS = {"BLOCK_R": 64, "BLOCK_C": 64, "SPLIT": 2, "FP8_INPUT": False, "WS": False}
_POINTERS = "*fp16:16,*fp16:16,*fp32:16,i32,i32:16"
_HOST = "tensordesc<fp16[64,64]>,tensordesc<fp16[64,64]>,*fp32:16,i32,i32:16"


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("sig", [_POINTERS, _HOST], ids=["pointers", "host-descriptors"])
@pytest.mark.parametrize("fp8", [False, True], ids=["fp16", "fp8e5"])
def test_compiles_for_nvidia(arch: str, sig: str, fp8: bool) -> None:
    from tlxc.codegen.nvptx.toolchain import find_tool

    if fp8:
        sig = sig.replace("*fp16:16,*fp16", "*fp8e5:16,*fp16", 1).replace("tensordesc<fp16", "tensordesc<fp8e5", 1)
    ck = _softmax_rows.compile(sig, {**_CONSTS, "FP8_INPUT": fp8, "WS": arch == "sm_100a"}, arch=arch)
    ptx = ck.asm["ptx"]
    # a device-made descriptor is encoded in the kernel; a host one arrives as a parameter
    assert ("tensormap" in ptx) == (sig.startswith("*")), ptx[:2000]
    assert "cp.async.bulk.tensor" in ptx
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert ck.asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_compiles_for_amd_through_pointers(arch: str) -> None:
    """AMD has no TMA: the descriptors the kernel makes become masked pointer loads and
    stores (128-bit ones with aligned pointers), as in Triton's AMD back end."""
    import llvmlite.binding as llvm

    from tlxc.codegen.amdgpu import toolchain

    ck = _softmax_rows.compile(_POINTERS, _CONSTS, arch=arch)
    asm = ck.asm["amdgcn"]
    llvm.parse_assembly(ck.asm["llir"]).verify()
    assert ("global_load_dwordx4" in asm or "global_load_b128" in asm), asm
    assert ("global_store_dwordx4" in asm or "global_store_b128" in asm), asm
    md = ck.metadata
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0, md
    obj = ck._amd_object
    if toolchain.find_ld_lld(toolchain.MIN_LLD_FOR_CODE_OBJECT[toolchain.code_object_version_of(obj)]) is None:
        pytest.skip("no ld.lld new enough to link the code object")
    assert ck.asm["hsaco"][:4] == b"\x7fELF"


@pytest.mark.parametrize("rows", [40, 64])
def test_pointer_rewrite_computes_what_the_descriptors_do(rows: int) -> None:
    """The AMD rewrite (ir/passes/descriptor_pointers), run on the kernel's IR and then
    in the interpreter: bounds (the last row block is partial with 40 rows) and results
    as through the descriptors."""
    from tlxc.interpreter import run_kernel
    from tlxc.ir.clone import clone
    from tlxc.ir.passes import descriptor_pointers
    from tlxc.ir.printer import print_ir
    from tlxc.ir.verifier import verify

    cols, consts = 128, {"BLOCK_R": 16, "BLOCK_C": 32, "SPLIT": 2, "FP8_INPUT": False, "WS": False}
    ck = _softmax_rows.compile("*fp16,*fp16,*fp32,i32,i32", consts, arch="gfx950")
    module = clone(ck.module)
    assert descriptor_pointers.rewrite(module.funcs[0]) == 2
    verify(module)
    text = print_ir(module)
    assert not any(f" {name} " in text for name in ("make_tensor_descriptor", "descriptor_load", "descriptor_store"))
    x, xf = _inputs(rows, cols, False)
    y = np.full((rows + 16, cols), -1, np.float16)  # rows past the end must stay untouched
    lse = np.zeros(rows, np.float32)
    run_kernel(module.funcs[0], (math.ceil(rows / 16), 1, 1), [x, y, lse, rows, cols])
    want_y, want_lse = _reference(xf)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y[:rows].astype(np.float32), want_y, rtol=2e-3, atol=1e-4)
    assert (y[rows:] == -1).all()


@pytest.mark.parametrize("rows", [40, 64])
def test_host_descriptors_on_amd_are_read_through_pointers(rows: int) -> None:
    """AMD has no TMA: ``host-descriptors`` rebuilds each TensorDescriptor argument from
    its fields at the entry and ``descriptor-pointers`` reads it through pointers; the
    rewritten IR, run in the interpreter, computes what the descriptors do."""
    from tlxc.interpreter import run_kernel
    from tlxc.ir.clone import clone
    from tlxc.ir.passes import descriptor_pointers, host_descriptors
    from tlxc.ir.printer import print_ir
    from tlxc.ir.verifier import verify

    cols, consts = 128, {"BLOCK_R": 16, "BLOCK_C": 32, "SPLIT": 2, "FP8_INPUT": False, "WS": False}
    ck = _softmax_rows.compile("tensordesc<fp16[16,32]>,tensordesc<fp16[16,32]>,*fp32,i32,i32", consts,
                               arch="gfx950")
    module = clone(ck.module)
    host_descriptors.run(module)
    assert descriptor_pointers.rewrite(module.funcs[0]) == 2
    verify(module)
    text = print_ir(module)
    assert text.count("unpack_tensor_descriptor") == 2
    assert not any(f" {name} " in text for name in ("make_tensor_descriptor", "descriptor_load", "descriptor_store"))
    x, xf = _inputs(rows, cols, False)
    y = np.full((rows + 16, cols), -1, np.float16)  # rows past the end must stay untouched
    lse = np.zeros(rows, np.float32)
    xd = tlxc.TensorDescriptor(x, [rows, cols], [cols, 1], [16, 32])
    yd = tlxc.TensorDescriptor(y, [rows, cols], [cols, 1], [16, 32])
    run_kernel(module.funcs[0], (math.ceil(rows / 16), 1, 1), [xd, yd, lse, rows, cols])
    want_y, want_lse = _reference(xf)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y[:rows].astype(np.float32), want_y, rtol=2e-3, atol=1e-4)
    assert (y[rows:] == -1).all()


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_host_descriptors_compile_for_amd(arch: str) -> None:
    ck = _softmax_rows.compile(_HOST, _CONSTS, arch=arch)
    asm = ck.asm["amdgcn"]
    assert "{ptr addrspace(1), i32, i32, i32, i32}" in ck.asm["llir"]
    # the sizes are run-time values with no divisibility known, so the bounds masks keep
    # the accesses per element
    assert "global_load" in asm and "global_store" in asm, asm
    assert ck.metadata["params"][:2] == ("tensordesc", "tensordesc")
    # sizes specialized as multiples of 16 (what a launch with such sizes compiles): whole
    # 16-byte vectors, and fewer registers
    even = _softmax_rows.compile(_HOST.replace("tensordesc<fp16[64,64]>", "tensordesc<fp16[64,64]>:16"), _CONSTS,
                                 arch=arch)
    load, store = ("global_load_b128", "global_store_b128") if arch == "gfx1250" else \
        ("global_load_dwordx4", "global_store_dwordx4")
    assert load in even.asm["amdgcn"] and store in even.asm["amdgcn"] and load not in asm
    assert even.metadata["vgprs"] < ck.metadata["vgprs"]


@pytest.mark.gpu
@pytest.mark.parametrize("host", [False, True], ids=["pointers", "host-descriptors"])
def test_gpu_matches_the_interpreter(host: bool) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA needs an sm_90 GPU")
    rows, cols, BR, BC = 200, 256, 64, 64
    x, _ = _inputs(rows, cols, False)
    want_y = np.zeros((rows, cols), np.float16)
    want_lse = np.zeros(rows, np.float32)
    consts = {"BLOCK_R": BR, "BLOCK_C": BC, "SPLIT": 2, "FP8_INPUT": False, "WS": False}
    _softmax_rows.interpret[(math.ceil(rows / BR),)](x, want_y, want_lse, rows, cols, **consts)
    xd = torch.from_numpy(x).cuda()
    yd = torch.zeros((rows, cols), device="cuda", dtype=torch.float16)
    ld = torch.zeros(rows, device="cuda", dtype=torch.float32)
    if host:
        args: tuple[Any, Any] = (tlxc.TensorDescriptor(xd, [rows, cols], [cols, 1], [BR, BC]),
                                 tlxc.TensorDescriptor(yd, [rows, cols], [cols, 1], [BR, BC]))
    else:
        tlxc.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
        args = (xd, yd)
    try:
        _softmax_rows[(math.ceil(rows / BR),)](*args, ld, rows, cols, **consts)
        torch.cuda.synchronize()
    finally:
        tlxc.set_allocator(None)
    np.testing.assert_allclose(ld.cpu().numpy(), want_lse, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(yd.cpu().numpy().astype(np.float32), want_y.astype(np.float32), atol=2e-3)
