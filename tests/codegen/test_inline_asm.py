"""``tl.inline_asm_elementwise``: the PTX it makes (ptxas assembles it), and its refusals
-- AMD targets, the interpreter, ``pack > 1``, constraints that do not fit. The numbers
are checked on the GPU (tests/gpu/test_inline_asm_gpu.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from codegen_helpers import filecheck, ptxas_or_skip

import tlxc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import inline_asm_kernels as K  # noqa: E402  (tests/inline_asm_kernels.py)


def test_registers_replace_the_operands() -> None:
    ptx = K.add_and_convert.compile("*i32,*fp32", {"BLOCK": 128}, arch="sm_90a").asm["ptx"]
    # CHECK: ld.global{{.*}} [[V:%r[0-9]+]], [{{.*}}];
    # CHECK: mov.b32 [[SEVEN:%r[0-9]+]], 7;
    # CHECK: {
    # CHECK-NEXT: add.s32 [[W:%r[0-9]+]], [[V]], [[SEVEN]];
    # CHECK-NEXT: }
    # CHECK: {
    # CHECK-NEXT: cvt.rn.f32.s32 [[F:%f[0-9]+]], [[W]];
    # CHECK-NEXT: }
    # CHECK: st.global{{.*}}[[F]]
    filecheck(ptx, test_registers_replace_the_operands, "sm_90a")


def test_other_register_classes_move_through_a_copy() -> None:
    ptx = K.two_results.compile("*fp32,*i32,*i32", {"BLOCK": 128}, arch="sm_90a").asm["ptx"]
    # CHECK: ld.global{{.*}} [[V:%f[0-9]+]], [{{.*}}];
    # CHECK: mov.b32 [[BITS:%r[0-9]+]], [[V]];
    # CHECK-NEXT: {
    # CHECK-NEXT: and.b32 [[A:%r[0-9]+]], [[BITS]], 65535; shr.u32 [[B:%r[0-9]+]], [[BITS]], 16;
    filecheck(ptx, test_other_register_classes_move_through_a_copy, "sm_90a")


@pytest.mark.parametrize("kernel,signature,constants", [
    (K.add_and_convert, "*i32,*fp32", {"BLOCK": 256}), (K.two_results, "*fp32,*i32,*i32", {"BLOCK": 64}),
    (K.sleep_then_store, "*fp32", {})])
def test_ptxas_assembles(kernel: Any, signature: str, constants: dict) -> None:
    ptxas_or_skip()
    ck = kernel.compile(signature, constants, arch="sm_90a")
    assert ck.asm["cubin"]
    if kernel is K.sleep_then_store:
        assert "nanosleep.u32 100;" in ck.asm["ptx"]  # impure and unused: kept


def test_amd_targets_refuse_it_by_name() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        K.add_and_convert.compile("*i32,*fp32", {"BLOCK": 128}, arch="gfx942").asm["amdgcn"]
    assert "tl.inline_asm_elementwise (inline PTX) is an NVIDIA operation" in str(info.value)
    assert info.value.loc is not None and info.value.loc.line > 0


@pytest.mark.interpreter_only
def test_the_interpreter_says_it_cannot_run_ptx() -> None:
    with pytest.raises(tlxc.InterpreterError) as info:
        K.add_and_convert.interpret[(1,)](np.zeros(128, np.int32), np.zeros(128, np.float32), BLOCK=128)
    assert info.value.code == "TLXC-INTERP-008" and "add.s32 $0, $1, $2;" in str(info.value)


BAD = """
@tlxc.jit
def k(x, y):
    v = tl.load(x)
    w = tl.inline_asm_elementwise({asm}, {cons}, {args}, dtype={dtype}, is_pure=True, pack={pack})
    tl.store(y, w)
"""


@pytest.mark.parametrize("asm,cons,args,dtype,pack,message", [
    ('"mov.b32 $0, $1;"', '"=r,r"', "[v]", "tl.int32", 4, "pack=4 is not supported yet"),
    ('"mov.b32 $0, $1;"', '"=r,r,r"', "[v]", "tl.int32", 1, "must name the 1 output(s) first"),
    ('"mov.b32 $0, $1;"', '"r,=r"', "[v]", "tl.int32", 1, "must name the 1 output(s) first"),
    ('"mov.b32 $0, $1;"', '"=q,r"', "[v]", "tl.int32", 1, "unknown register constraint '=q'"),
    ("v", '"=r,r"', "[v]", "tl.int32", 1, "asm and constraints must be compile-time strings"),
    ('"mov.b32 $0, $1;"', '"=r,r"', "[v]", "3", 1, "dtype must be a tl dtype"),
    ('"mov.b32 $0, $3;"', '"=r,r"', "[v]", "tl.int32", 1, "$3 names no operand"),
    ('"mov.b64 $0, $1;"', '"=l,r"', "[v]", "tl.int32", 1, "cannot be written through a =l register"),
])
def test_bad_input_is_an_error_at_the_call(load_kernels: Any, asm: str, cons: str, args: str, dtype: str, pack: int,
                                           message: str) -> None:
    m = load_kernels(BAD.format(asm=asm, cons=cons, args=args, dtype=dtype, pack=pack))
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*i32,*i32", arch="sm_90a").asm["ptx"]
    assert message in str(info.value), str(info.value)
    assert "w = tl.inline_asm_elementwise(" in str(info.value)  # the call's line is shown
