"""A bug in a code generator's lowering rule reaches the user as TLXC-INTERNAL-001 at the
line of the op it was lowering, never as a bare Python exception (Triton's
test_split_to_scalar once surfaced an AttributeError from the NVIDIA rule of ``split``)."""

from __future__ import annotations

import importlib

import pytest

import tlxc
import tlxc.language as tl
from tlxc.errors import InternalCompilerError
from tlxc.ir import ops


@tlxc.jit
def _evens(x_ptr, y_ptr):
    offs = tl.arange(0, 64)
    tl.store(y_ptr + offs, tl.split(tl.reshape(tl.load(x_ptr + tl.arange(0, 128)), (64, 2)))[0])


@pytest.mark.parametrize("arch, family", [("sm_90a", "nvptx"), ("gfx942", "amdgpu")])
def test_a_crash_in_a_lowering_rule_is_an_internal_error_at_the_users_line(monkeypatch: pytest.MonkeyPatch,
                                                                          arch: str, family: str) -> None:
    emitter = importlib.import_module(f"tlxc.codegen.{family}.emitter")
    importlib.import_module(f"tlxc.codegen.{family}.target_info")  # registers the rules

    def broken(e: object, op: object) -> None:
        raise AttributeError("'DType' object has no attribute 'layout'")

    monkeypatch.setitem(emitter.RULES, ops.SplitOp, broken)
    ck = _evens.compile("*fp32:16,*fp32:16", {}, arch=arch)
    with pytest.raises(InternalCompilerError) as info:
        ck.asm["ptx" if family == "nvptx" else "llir"]
    err = info.value
    assert err.code == "TLXC-INTERNAL-001"
    assert "lowering 'split': AttributeError" in err.message
    assert err.loc is not None and err.loc.line == _evens.fn.__code__.co_firstlineno + 3
