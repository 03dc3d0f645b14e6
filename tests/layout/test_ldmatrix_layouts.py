"""``ldmatrix`` as linear layouts (tlxc/ir/layout/nvidia.py): the fragment and row layouts
against the PTX ISA's table, written out here from the manual's words rather than from
the constructors, and ``ldmatrix_address`` against the definition it must satisfy --
the lane that addresses a row holds, in the address layout, exactly the elements the
fragment hands to the receiving threads.

PTX ISA, "ldmatrix": lane ``8*i + j`` gives the address of row ``j`` of matrix ``i``;
for ``.b16`` thread ``t`` receives in destination register ``i`` row ``t // 4``, elements
``2*(t % 4)`` and ``2*(t % 4) + 1`` (``.trans``: column ``t // 4`` of rows
``2*(t % 4)`` and ``2*(t % 4) + 1``). Other element widths move the same bytes.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlxc.ir.layout import LANE, REGISTER, WARP, LayoutError, MmaV2
from tlxc.ir.layout.nvidia import ldmatrix_address, ldmatrix_fragment, ldmatrix_rows


def manual_fragment(elem_bits: int, trans: bool, reg: int, lane: int) -> tuple[int, int, int]:
    """(col, row, matrix) in elements, straight from the manual's sentence."""
    word = 32 // elem_bits
    matrix, within = reg // word, reg % word
    if trans:
        return lane // 4, 2 * (lane % 4) + within, matrix
    return word * (lane % 4) + within, lane // 4, matrix


@pytest.mark.parametrize("elem_bits,trans", [(16, False), (16, True), (8, False), (32, False)])
@pytest.mark.parametrize("matrices", [1, 2, 4])
def test_fragment_matches_the_manual(elem_bits: int, trans: bool, matrices: int) -> None:
    f = ldmatrix_fragment(elem_bits, trans, matrices)
    assert f.in_dim_size(REGISTER) == matrices * 32 // elem_bits and f.in_dim_size(LANE) == 32
    assert f.is_bijective()
    for reg in range(f.in_dim_size(REGISTER)):
        for lane in range(32):
            got = f.apply(register=reg, lane=lane)
            assert (got["col"], got["row"], got["matrix"]) == manual_fragment(elem_bits, trans, reg, lane)


@pytest.mark.parametrize("elem_bits", [8, 16, 32])
@pytest.mark.parametrize("matrices", [1, 2, 4])
def test_rows_match_the_manual(elem_bits: int, matrices: int) -> None:
    a = ldmatrix_rows(elem_bits, matrices)
    for reg in range(128 // elem_bits):
        for lane in range(32):
            got = a.apply(register=reg, lane=lane)
            # lanes past 8 * matrices give addresses that are not read: any repeat will do
            assert (got["col"], got["row"], got["matrix"]) == (reg, lane % 8, (lane // 8) % matrices)


def test_trans_is_16_bit_only() -> None:
    with pytest.raises(LayoutError):
        ldmatrix_fragment(8, True, 4)
    with pytest.raises(LayoutError):
        ldmatrix_fragment(32, True, 4)


def _element(layout, **coords) -> tuple[int, ...]:
    return tuple(layout.apply(**coords).values())


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(16, False), (16, True), (8, False), (32, False)]), st.sampled_from([0, 1]),
       st.sampled_from([(1, 1), (2, 1), (1, 2), (4, 1), (2, 2), (1, 4)]), st.integers(0, 2), st.integers(0, 2),
       st.integers(0, 1))
def test_address_layout_addresses_what_the_fragment_delivers(kind: tuple[int, bool], op_idx: int,
                                                             warps: tuple[int, int], mrep: int, nrep: int,
                                                             krep: int) -> None:
    """For every instruction, matrix, row and element: the element that lane ``8*i + j``'s
    row holds at column ``c`` (address layout) is the one the fragment gives the thread
    that receives (matrix i, row j, column c) -- in the operand layout, at the register
    ``dst_register`` names."""
    elem_bits, trans = kind
    word = 32 // elem_bits
    m, n, k = 16 * warps[0] << mrep, 8 * warps[1] << nrep, (256 // elem_bits) << krep
    shape = (m, k) if op_idx == 0 else (k, n)
    dst = MmaV2(warps).operand(shape, op_idx, word)
    regs = dst.in_dim_bits(REGISTER)
    w = word.bit_length() - 1
    for bits in [(), (w,), (w, w + 1), (regs - 1, w)]:
        if any(b >= regs for b in bits) or len(set(bits)) != len(bits):
            continue
        a = ldmatrix_address(dst, elem_bits=elem_bits, trans=trans, matrix_bits=bits)
        # the receiving thread and register of each (col, row, matrix), by the manual
        receiver = {manual_fragment(elem_bits, trans, r, t): (t, r)
                    for t in range(32) for r in range(word * a.matrices)}
        for instruction in range(1 << len(a.rest_bits)):
            for lane in range(8 * a.matrices):
                for c in range(1 << a.row_bits):
                    held = _element(a.layout, register=(instruction << a.row_bits) | c, lane=lane)
                    t, r = receiver[(c, lane % 8, lane // 8)]
                    reg = a.dst_register(instruction, r // word, r % word)
                    assert _element(dst, register=reg, lane=t) == held
                    assert a.instruction_of(reg) == instruction
        for warp in range(dst.in_dim_size(WARP)):
            assert _element(a.layout, warp=warp) == _element(dst, warp=warp)
