"""TLX buffers and TLX's AMD operations on AMDGPU (``tlxc/codegen/amdgpu/lower_buffers.py``,
``lower_amd_tlx.py``): each compiles where the chip has it (LLVM verifies and compiles it,
zero scratch) and is refused at the user's line where it does not; checks on the ISA:
``ds_write`` / ``ds_read``, one ``s_barrier`` between an LDS store and the loads after it,
``global_load_lds`` for ``async_load`` on gfx950, the K-major, N-major, M-minor issue order
of ``amd_scheduled_mfma`` and AGPR accumulators for its persistent role."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tlxc import CompilationError
from tlxc.codegen.amdgpu import compile as amd
from tlxc.codegen.amdgpu.lower_buffers import vmcnt_encoding
from tlxc.ir import ops

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tlx"))

import amd_tlx_kernels as T  # noqa: E402
import tlx_amd_kernels as A  # noqa: E402
import tlx_smem_kernels as K  # noqa: E402

ARCHS = ("gfx942", "gfx950", "gfx1250")


def compiled(fn, sig: str, arch: str, num_warps: int = 4, **constants):
    k = fn.compile(sig, constants=constants, arch=arch, num_warps=num_warps)
    asm = k.asm["amdgcn"]
    assert k.metadata["scratch"] == 0 and k.metadata["vgpr_spills"] == 0
    return k, asm


# gfx1250 spells LDS accesses ds_load / ds_store and the barrier s_barrier_signal + _wait
_SPELLING = {"ds_load": "ds_read", "ds_store": "ds_write", "s_barrier_signal": "s_barrier"}


def mnemonics(asm: str) -> list[str]:
    out = []
    for ln in asm.splitlines():
        if not ln.startswith("\t") or not ln.strip() or ln.strip().startswith((".", ";")):
            continue
        m = ln.split()[0]
        if m == "s_barrier_wait":
            continue
        for new, old in _SPELLING.items():
            if m.startswith(new):
                m = old + m[len(new):]
        out.append(m)
    return out


def refused(fn, sig: str, arch: str, code: str, line_text: str, num_warps: int = 4, **constants) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        fn.compile(sig, constants=constants, arch=arch, num_warps=num_warps).asm["amdgcn"]
    err = info.value
    assert err.code == code, err
    assert line_text in str(err), str(err)
    return err


# -- buffers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_store_then_two_loads_has_one_barrier(arch: str) -> None:
    _, asm = compiled(T.store_two_loads, "*fp32:16,*fp32:16", arch, R=32, C=64)
    ins = mnemonics(asm)
    lds = [m for m in ins if m.startswith(("ds_write", "ds_read", "s_barrier"))]
    assert ins.count("s_barrier") == 1, lds
    first_read = next(i for i, m in enumerate(lds) if m.startswith("ds_read"))
    last_write = max(i for i, m in enumerate(lds) if m.startswith("ds_write"))
    assert last_write < lds.index("s_barrier") < first_read, lds
    assert "ds_write_b128" in ins and "ds_read_b128" in ins, lds  # 16-byte vectors


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", ["store_load", "transpose_view", "ring", "slices", "slices_runtime", "reinterpret"])
def test_buffer_kernels_compile(case: str, arch: str) -> None:
    fn = getattr(K, case)
    consts = {"store_load": dict(R=32, C=64, NUM=2, IDX=1), "transpose_view": dict(R=32, C=64),
              "ring": dict(R=32, C=32, NUM=2), "slices": dict(R=32, C=64), "slices_runtime": dict(R=32, C=64),
              "reinterpret": dict(N=64)}[case]
    sig = {"ring": "*fp16,*fp16,i32", "slices_runtime": "*fp32,*fp32,i32", "transpose_view": "*fp16,*fp16"}.get(
        case, "*fp32,*fp32")
    _, asm = compiled(fn, sig, arch, **consts)
    ins = mnemonics(asm)
    assert any(m.startswith("ds_write") for m in ins) and any(m.startswith("ds_read") for m in ins)
    assert "s_barrier" in ins


def test_no_proxy_fence_reaches_amd() -> None:
    k = T.store_two_loads.compile("*fp32:16,*fp32:16", constants=dict(R=32, C=64), arch="gfx950")
    from tlxc.ir.clone import clone

    module = clone(k.module)
    amd.generate(module, "gfx950")
    kinds = [type(op) for op in module.funcs[0].walk()]
    assert ops.NamedBarrierWaitOp in kinds and ops.FenceOp not in kinds


# -- async copies ---------------------------------------------------------------------------------
def test_async_load_is_global_load_lds_on_gfx950() -> None:
    _, asm = compiled(K.cp_async_copy, "*fp32,*fp32,i32", "gfx950", R=32, C=32, NUM=2)
    ins = mnemonics(asm)
    assert "global_load_lds_dword" in ins and "s_barrier" in ins
    compiled(K.cp_async_other, "*fp32:16,*fp32:16,i32", "gfx950", FILL=1.5, N=256)


def test_async_load_wide_copies_on_gfx950() -> None:
    _, asm = compiled(T.async_rows, "*fp32:16,*fp32:16", "gfx950")
    ins = mnemonics(asm)
    assert "global_load_lds_dwordx4" in ins, [m for m in ins if "load" in m]
    assert re.search(r"s_waitcnt vmcnt\(0\)", asm)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1250"])
def test_async_load_refused_off_gfx950(arch: str) -> None:
    refused(K.cp_async_copy, "*fp32,*fp32,i32", arch, "TLXC-TLX-006", "tlx.async_load(", R=32, C=32, NUM=2)


def test_vmcnt_encoding() -> None:
    assert vmcnt_encoding(0) == 0x0F70  # s_waitcnt vmcnt(0) expcnt(7) lgkmcnt(15)
    assert vmcnt_encoding(17) == 0x0F71 | (1 << 14)
    assert vmcnt_encoding(100) == vmcnt_encoding(63)


# -- AMD operations -------------------------------------------------------------------------------
def test_seed_examples_compile_for_gfx950() -> None:
    _, asm = compiled(A.independent_subtiles, "*bf16,*bf16,*fp32", "gfx950")
    mfma = [ln.strip() for ln in asm.splitlines() if "v_mfma_f32_32x32x16_bf16" in ln]
    assert len(mfma) == 2 and all(re.search(r"v_mfma\S* a\[", m) for m in mfma), mfma  # persistent: AGPRs
    k, asm = compiled(A.transient_chain, "*bf16,*bf16,*fp32", "gfx950", BM=16, BN=64, BK=32)
    assert "v_mfma_f32_16x16x32_bf16" in mnemonics(asm)
    assert k.metadata["agprs"] > 0  # b_live resident in AGPRs


@pytest.mark.parametrize("role", ["transient", "persistent"])
def test_scheduled_mfma_issue_order(role: str) -> None:
    """2 x 2 fragments, two K steps: K-major, then N-major (the B source, src0 of a
    transposed layout, changes every two instructions), M-minor (the A source alternates)."""
    k, asm = compiled(T.fragments_2x2, "*bf16,*bf16,*fp32", "gfx950", num_warps=1, K=32, ROLE=role)
    mfma = [ln.split(None, 1)[1].replace(" ", "").split(",") for ln in asm.splitlines()
            if "v_mfma_f32_32x32x16_bf16" in ln]
    assert len(mfma) == 8
    for step in (mfma[:4], mfma[4:]):
        b, a = [x[1] for x in step], [x[2] for x in step]
        assert b[0] == b[1] != b[2] == b[3], step
        assert a[0] == a[2] != a[1] == a[3], step
    assert [x[0] for x in mfma[:4]] == [x[0] for x in mfma[4:]]  # the same four chains, in the same order
    assert all(x[3] == "0" for x in mfma[:4]) and all(x[3] == x[0] for x in mfma[4:])  # initialize=True
    llir = k.asm["llir"]
    assert len(re.findall(r'call <16 x float> @"?llvm\.amdgcn\.mfma\.f32\.32x32x16\.bf16', llir)) == 8
    if role == "persistent":
        assert all(x[0].startswith("a[") for x in mfma)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_scheduled_mfma_variants_compile(arch: str) -> None:
    for init, role, cls in ((False, "transient", None), (True, "persistent", "vgpr")):
        _, asm = compiled(A.accumulate, "*fp16,*fp16,*fp32", arch, num_warps=2, INIT=init, ROLE=role,
                          ACC_CLASS=cls)
        assert "v_mfma_f32_32x32x8_f16" in mnemonics(asm)
    _, asm = compiled(A.k_loop, "*fp16,*fp16,*fp32,i32", arch, BK=16)
    assert "v_mfma_f32_16x16x16_f16" in mnemonics(asm)
    _, asm = compiled(A.batched, "*fp16,*fp16,*fp32", arch)
    assert any(m.startswith("v_mfma") for m in mnemonics(asm))


@pytest.mark.parametrize("k_width", [4, 8])
def test_banded_chain_compiles(k_width: int) -> None:
    _, asm = compiled(A.banded_chain, "*bf16,*bf16,*fp32", "gfx950", BANDS=8, K_WIDTH=k_width)
    assert mnemonics(asm).count("v_mfma_f32_16x16x32_bf16") == 8


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_register_classes(arch: str) -> None:
    k, asm = compiled(A.register_ops, "*fp32,*fp32,*fp16,*fp16", arch, num_warps=1)
    assert ";;#ASMSTART" in asm and "v_accvgpr_write_b32" in mnemonics(asm)
    assert k.metadata["agprs"] > 0


@pytest.mark.parametrize("arch", ARCHS)
def test_rematerialized_range_and_slices(arch: str) -> None:
    compiled(A.remat_copy, "*fp32,*fp32,i32", arch)
    if arch == "gfx950":
        compiled(A.slice_of, "*bf16,*bf16", arch, ROW=32, COL=64)
        compiled(A.cat_kernel, "*fp32,*fp32,*fp32", arch, DIM=1)


def test_sched_barrier() -> None:
    k, _ = compiled(T.sched_fence, "*fp32:16,*fp32:16", "gfx950")
    llir = k.asm["llir"]
    masks = re.findall(r'call void @"?llvm\.amdgcn\.sched\.barrier"?\(i32 (\d+)\)', llir)
    assert masks == ["0", "8"], masks


# -- refusals at the user's line ----------------------------------------------------------------------
def test_persistent_agpr_refused_on_gfx942() -> None:
    refused(A.independent_subtiles, "*bf16,*bf16,*fp32", "gfx942", "TLXC-TLX-006", "tlx.amd_scheduled_mfma(")


def test_scheduled_mfma_refused_on_gfx1250() -> None:
    refused(A.transient_chain, "*bf16,*bf16,*fp32", "gfx1250", "TLXC-TLX-006", "has no MFMA",
            BM=16, BN=64, BK=32)


def test_instruction_the_chip_lacks() -> None:
    refused(A.transient_chain, "*bf16,*bf16,*fp32", "gfx942", "TLXC-TLX-007", "tlx.amd_scheduled_mfma(",
            BM=16, BN=64, BK=32)


def test_register_groups_must_divide() -> None:
    refused(A.register_ops, "*fp32,*fp32,*fp16,*fp16", "gfx950", "TLXC-TLX-007", "tlx.amd_register_resident(x")


def test_layout_warps_must_match() -> None:
    refused(A.accumulate, "*fp16,*fp16,*fp32", "gfx950", "TLXC-TLX-007", "tlx.require_layout(", INIT=True,
            ROLE="transient", ACC_CLASS=None)


@pytest.mark.interpreter_only  # an AMD kernel: TLXC_TEST_ON_GPU would compile it for the H200
def test_an_extract_slice_across_threads_moves_the_tile_once() -> None:
    """A slice that is not whole registers of the source's layout (16 columns of a 64-wide
    MFMA tile whose four waves each hold 16 columns): the tile is converted once into the
    slice's layout tiled over it, and the slice is then a choice of registers. It was
    refused before; TLX accepts it (its public test_tlx_amd.py kernel
    _amd_scheduled_mfma_fragmented_nd_update_kernel slices an accumulator so)."""
    import numpy as np

    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.zeros((64, 16), np.float32)
    T.misaligned_slice.interpret[(1,)](x, y)
    np.testing.assert_array_equal(y, x[:, 16:32])
    ck = T.misaligned_slice.compile("*fp32:16,*fp32:16", arch="gfx950")
    # the load into the MFMA layout (require_layout), and the one move for the slice
    assert sum(op.NAME == "convert_layout" for op in ck.lowered().walk()) == 2
    ck.asm["amdgcn"]
    assert ck.metadata["vgpr_spills"] == 0 and ck.metadata["scratch"] == 0
