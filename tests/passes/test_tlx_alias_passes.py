"""The shared-memory passes on ``storage_alias_spec`` allocations and pinned layouts:
``smem_alloc`` places a spec's allocations at the spec's offset plus their ``alias``
placement (and refuses placements that break a swizzled buffer's alignment), ``membar``
sees which aliases overlap, the verifier checks placements, and ``buffer_layouts``
keeps pinned layouts (views derive from them)."""

from __future__ import annotations

import pytest
from passes_helpers import kernel, parse  # tests/passes/passes_helpers.py
from test_tlx_buffer_passes import _barriers, _layouts, _plan  # tests/passes/

from tlxc.errors import CompilationError
from tlxc.ir import print_ir
from tlxc.ir.core import VerificationError
from tlxc.ir.layout.common import swizzled_shared
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, membar, smem_alloc
from tlxc.ir.verifier import verify

OPTS = PassOptions()
T = "%t: tile<64x64xf16>, %u: tile<64x1xf32>"
SPEC = """
        %c0 = constant {value = 0} : i32
        %c1 = constant {value = 1} : i32
        %other = local_alloc : memdesc<256xf32, smem, num=1>
        %s = storage_alias_spec {size = 32768} : alias_spec
        %qk = local_alloc reuse=%s {alias = [0, 16384]} : memdesc<64x64xf32, smem, num=2>
        %p = local_alloc reuse=%s {alias = [0, 8192]} : memdesc<64x64xf16, smem, num=4>
        %al = local_alloc reuse=%s {alias = [12288, 16384]} : memdesc<64x1xf32, smem, num=2>
"""


def test_aliases_sit_at_the_specs_offset_plus_their_placement() -> None:
    m, plan = _plan(SPEC + """        %vo = local_view %other, %c0 : memdesc<256xf32, smem>
        %vp = local_view %p, %c1 : memdesc<64x64xf16, smem>
        %va = local_view %al, %c1 : memdesc<64x1xf32, smem>
        %vq = local_view %qk, %c0 : memdesc<64x64xf32, smem>
        local_store %vp, %t
        local_store %va, %u
        %x = local_load %vq : tile<64x64xf32>
        %y = local_load %vo : tile<256xf32>
        return
    """, T)
    ops = {op.result.name_hint: op for op in m.walk() if op.NAME in ("local_alloc", "storage_alias_spec")}
    spec = plan.allocation(ops["s"])
    assert spec.size == 32768 and spec.align == 1024 and spec.offset % 1024 == 0  # swizzled members
    assert [plan.offset_of(ops[k]) - spec.offset for k in ("qk", "p", "al")] == [0, 0, 12288]
    other = plan.allocation(ops["other"])
    assert other.offset >= spec.offset + spec.size or other.offset + other.size <= spec.offset
    views = {op.result.name_hint: op.result for op in m.walk() if op.NAME == "local_view"}
    assert plan.index_step(ops["p"].result, None) == 8192
    assert plan.ranges(views["vp"]) == [(spec.offset + 8192, spec.offset + 16384)]
    assert plan.ranges(views["va"]) == [(spec.offset + 12288 + 16384, spec.offset + 12288 + 16384 + 256)]
    assert "storage_alias_spec" in plan.table()


def test_membar_separates_overlapping_aliases_only() -> None:
    body = SPEC + """        %vp = local_view %p, %cP : memdesc<64x64xf16, smem>
        %va = local_view %al, %c0 : memdesc<64x1xf32, smem>
        local_store %vp, %t
        %x = local_load %va : tile<64x1xf32>
        return
    """
    # p[0] is bytes [0, 8192), p[1] [8192, 16384); alpha[0] is [12288, 12544)
    for index, overlaps in (("%c0", False), ("%c1", True)):
        m = _layouts(body.replace("%cP", index), T)
        smem_alloc.run(m, OPTS)
        membar.run(m, OPTS)
        verify(m)
        assert ("B" in _barriers(m).split()) == overlaps, _barriers(m)


def test_a_misaligned_swizzled_alias_is_refused() -> None:
    m = _layouts("""
        %s = storage_alias_spec {size = 8448} : alias_spec
        %al = local_alloc reuse=%s {alias = [0, 256]} : memdesc<64x1xf32, smem, num=1> loc(3:8)
        %p = local_alloc reuse=%s {alias = [256, 8192]} : memdesc<64x64xf16, smem, num=1> loc(4:8)
        return
    """, T)
    with pytest.raises(CompilationError, match="not a multiple of the 1024 bytes") as info:
        from tlxc.ir.passes import smem_alloc

        smem_alloc.plan(m.funcs[0])
    assert info.value.line == 4


@pytest.mark.parametrize("body,message", [
    ("%s = storage_alias_spec {size = 1024} : alias_spec\n"
     "%a = local_alloc reuse=%s {alias = [0, 1024]} : memdesc<16x16xf32, smem, num=2>",
     "overflows the spec's 1024 bytes"),
    ("%s = storage_alias_spec {size = 4096} : alias_spec\n"
     "%a = local_alloc reuse=%s : memdesc<16x16xf32, smem, num=2>", "needs alias = \\[offset, step\\]"),
    ("%a = local_alloc {alias = [0, 1024]} : memdesc<16x16xf32, smem, num=2>", "alias placements are for"),
    ("%s = storage_alias_spec {storage = \"tmem\", size = 4096} : alias_spec\n"
     "%a = local_alloc reuse=%s {alias = [0, 1024]} : memdesc<16x16xf32, smem, num=2>", "same storage"),
])
def test_the_verifier_checks_placements(body: str, message: str) -> None:
    with pytest.raises(VerificationError, match=message):
        verify(parse(kernel(body + "\nreturn", T)))


def test_alias_ir_round_trips() -> None:
    text = print_ir(parse(kernel(SPEC + "        return", T)))
    assert "storage_alias_spec {size = 32768} : alias_spec" in text
    assert "local_alloc reuse=%s {alias = [12288, 16384]}" in text
    assert print_ir(parse_ir(text)) == text


def test_pinned_layouts_are_kept_and_views_derive_from_them() -> None:
    pin = swizzled_shared((64, 64), 4, 2, 4, (1, 0))
    m = _layouts(f"""
        %c1 = constant {{value = 1}} : i32
        %a = local_alloc {{pinned = true}} : memdesc<64x64xf16, smem, num=2, {pin}>
        %v = local_view %a, %c1 : memdesc<64x64xf16, smem>
        %tr = local_trans %v {{perm = [1, 0]}} : memdesc<64x64xf16, smem>
        %x = local_load %tr : tile<64x64xf16>
        return
    """, T)
    alloc, view = (op for op in m.walk() if op.NAME in ("local_alloc", "local_view"))
    assert alloc.result.type.layout == pin and view.result.type.layout == pin
    from tlxc.ir.passes.buffer_layouts import trans_view

    (tr,) = (op for op in m.walk() if op.NAME == "local_trans")
    assert tr.result.type.layout == trans_view(pin, (1, 0))
