"""``convert_layout`` on NVIDIA (tlxc/codegen/nvptx/lower_convert.py).

Three levels, for one list of layout pairs (``PAIRS``: blocked layouts with other
orders and vectors, the mma.sync accumulator and operands, slices, transposes,
broadcasting layouts, and hand-made lane and register permutations):

* the plan (``plan_move``), evaluated in pure Python for every thread and register: the
  registers / shuffle rounds / shared-memory offsets it names deliver exactly the
  elements the destination layout says, the two sides of a shared-memory round trip
  agree on which element lives at which offset, and every warp-wide access of the
  planned buffer is free of bank conflicts -- counted from the addresses the lowering
  computes, not from the planner's own figures;
* the PTX: a small kernel per pair (load, convert to the pair's source, then to its
  destination, store) compiles, ptxas accepts it, and the conversion emits what its
  kind promises (no barrier for register renames, ``shfl.sync`` for in-warp moves,
  vector ``ld.shared`` / ``st.shared`` for a shared-memory trip);
* on a GPU (``-m gpu``), the same kernels copy their input unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest
from codegen_helpers import NVIDIA_ARCHS, ptxas_or_skip

from tlxc.codegen.nvptx.compile import generate
from tlxc.codegen.nvptx.lower_convert import (
    ELEM_BITS,
    NoMove,
    RegisterMove,
    SharedMove,
    SharedSide,
    ShuffleMove,
    ThreadXor,
    plan_move,
)
from tlxc.codegen.nvptx.target_info import target_info
from tlxc.codegen.nvptx.toolchain import ptxas
from tlxc.ir.layout import (
    LANE,
    REGISTER,
    WARP,
    CTALayout,
    LinearLayout,
    MmaV2,
    blocked,
    dot_operand,
    mma_v2_accumulator,
    permute,
    plan_conversion,
    slice_layout,
)
from tlxc.ir.parser import parse_ir

TARGET = target_info("sm_90a").layout_target


def _swap_lanes(layout: LinearLayout, i: int, j: int) -> LinearLayout:
    lanes = list(layout.in_bases(LANE))
    lanes[i], lanes[j] = lanes[j], lanes[i]
    return layout.with_in_bases(LANE, lanes)


def _reverse_registers(layout: LinearLayout) -> LinearLayout:
    return layout.with_in_bases(REGISTER, list(reversed(layout.in_bases(REGISTER))))


def _lane_xor_register(layout: LinearLayout, lane: int, reg: int) -> LinearLayout:
    """Lane bit ``lane`` also steps register ``reg``'s way: every thread holds the same
    elements, in an order that depends on its lane."""
    lanes = list(layout.in_bases(LANE))
    r = layout.basis(REGISTER, reg)
    lanes[lane] = tuple(a ^ b for a, b in zip(lanes[lane], r))
    return layout.with_in_bases(LANE, lanes)


B64_ROW4 = blocked((64, 64), (1, 4), (4, 8), (4, 1), (1, 0))
B64_COL4 = blocked((64, 64), (4, 1), (8, 4), (1, 4), (0, 1))
B64_ROW8 = blocked((64, 64), (1, 8), (8, 4), (4, 1), (1, 0))
B64_ROW1 = blocked((64, 64), (1, 1), (1, 32), (4, 1), (1, 0))
B64_2X2 = blocked((64, 64), (2, 2), (8, 4), (2, 2), (1, 0))
MMA64 = mma_v2_accumulator([64, 64], [2, 2])
MMA64_41 = mma_v2_accumulator([64, 64], [4, 1])
B32_ROW4 = blocked((32, 32), (1, 4), (4, 8), (4, 1), (1, 0))
B32_ROW1 = blocked((32, 32), (1, 1), (4, 8), (4, 1), (1, 0))
B3264 = blocked((32, 64), (1, 4), (2, 16), (4, 1), (1, 0))
B6432 = blocked((64, 32), (1, 4), (4, 8), (4, 1), (1, 0))
B8_SMALL = blocked((8, 8), (1, 1), (4, 8), (4, 1), (1, 0))  # lanes and warps beyond the tile broadcast
B8_VEC = blocked((8, 8), (1, 2), (8, 4), (1, 4), (1, 0))
B1D_16 = blocked((16,), (1,), (32,), (4,), (0,))
B1D_16V = blocked((16,), (4,), (32,), (4,), (0,))


@dataclass(frozen=True)
class Pair:
    name: str
    src: LinearLayout
    dst: LinearLayout
    kind: str  # "none", "registers", "shuffle", "shared"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.src.out_shape


PAIRS = [
    Pair("same", B64_ROW4, B64_ROW4, "none"),
    Pair("blocked-rows-to-cols", B64_ROW4, B64_COL4, "shared"),
    Pair("blocked-cols-to-rows", B64_COL4, B64_ROW4, "shared"),
    Pair("blocked-vec8-to-vec1", B64_ROW8, B64_ROW1, "shared"),
    Pair("blocked-to-2x2", B64_ROW1, B64_2X2, "shared"),
    Pair("blocked-to-mma", B64_ROW4, MMA64, "shared"),
    Pair("mma-to-blocked", MMA64, B64_ROW4, "shared"),
    Pair("mma-2x2-to-4x1", MMA64, MMA64_41, "shared"),
    Pair("blocked-to-dot-a", B64_ROW4, dot_operand([64, 64], MmaV2((2, 2)), 0, 2), "shared"),
    Pair("blocked-to-dot-b", B64_ROW8, dot_operand([64, 64], MmaV2((2, 2)), 1, 2), "shared"),
    Pair("slice-rows-to-cols", slice_layout(B64_ROW4, 1), slice_layout(B64_ROW4, 0), "shared"),
    Pair("slice-mma-to-blocked", slice_layout(MMA64, 1), blocked((64,), (1,), (32,), (4,), (0,)), "shared"),
    Pair("transpose", permute(B3264, [1, 0]), B6432, "shared"),
    Pair("broadcast-small-tile", B8_SMALL, B8_VEC, "shared"),
    Pair("broadcast-1d", B1D_16, B1D_16V, "shuffle"),
    Pair("register-lane-transpose", B32_ROW4, B32_ROW1, "shuffle"),
    Pair("register-lane-transpose-back", B32_ROW1, B32_ROW4, "shuffle"),
    Pair("lane-permutation", B64_ROW4, _swap_lanes(B64_ROW4, 0, 3), "shuffle"),
    Pair("register-permutation", B64_2X2, _reverse_registers(B64_2X2), "registers"),
    Pair("register-order-by-lane", B64_2X2, _lane_xor_register(B64_2X2, 2, 0), "registers"),
]
KIND = {"none": NoMove, "registers": RegisterMove, "shuffle": ShuffleMove, "shared": SharedMove}
ELEMS = ("f32", "f16", "i1", "i8", "i64", "f64")
CLASS = {"f32": "f32", "f16": "b16", "i1": "pred", "i8": "b16", "i64": "b64", "f64": "f64"}


def _id(p: Pair) -> str:
    return p.name


# -- the plan, simulated ------------------------------------------------------------------------
def _element(layout: LinearLayout, reg: int, tid: int) -> int:
    return layout.apply_flat(layout.encode_in({REGISTER: reg, LANE: tid & 31, WARP: tid >> 5}))


def _threads(layout: LinearLayout) -> range:
    return range(32 * layout.in_dim_size(WARP))


def simulate(move: object, src: LinearLayout, dst: LinearLayout) -> None:
    """Check, for every thread and destination register, that the move delivers the
    element ``dst`` puts there."""
    nregs = dst.in_dim_size(REGISTER)
    if isinstance(move, NoMove):
        assert src == dst
    elif isinstance(move, RegisterMove):
        for tid in _threads(dst):
            for r in range(nregs):
                assert _element(src, move.sources[r] ^ move.thread.at(tid), tid) == _element(dst, r, tid)
    elif isinstance(move, ShuffleMove):
        for tid in _threads(dst):
            for r in range(nregs):
                k = r ^ move.place_thread.at(tid)
                lane = move.lane[k] ^ move.lane_thread.at(tid)
                sender = (tid & ~31) | lane
                reg = move.send[k] ^ move.send_thread.at(sender)
                assert _element(src, reg, sender) == _element(dst, r, tid), (tid, r)
    elif isinstance(move, SharedMove):
        memory: dict[int, int] = {}
        for tid in _threads(src):
            if tid & move.copies:
                continue
            for off, regs in _accesses(move.store, tid):
                for i, r in enumerate(regs):
                    elem = _element(src, r, tid)
                    assert memory.setdefault(off + i, elem) == elem, "two elements at one offset"
        assert len(memory) == move.size, "the store side does not fill the buffer"
        for tid in _threads(dst):
            loaded = {}
            for off, regs in _accesses(move.load, tid):
                for i, r in enumerate(regs):
                    loaded[r] = memory[off + i]
            for r in range(nregs):
                # a register holding an element twice takes the first copy's value
                c = move.load.offsets[r]
                first = next(q for q in loaded if move.load.offsets[q] == c)
                assert loaded[first] == _element(dst, r, tid)
    else:
        raise AssertionError(f"no plan: {move}")


def _accesses(side: SharedSide, tid: int) -> list[tuple[int, tuple[int, ...]]]:
    """(first element offset, registers in offset order) of each vector access of thread
    ``tid``, computed the way the lowering computes them: the runtime part XOR the
    thread's part, plus the immediate; registers permuted by the thread's slot part."""
    out = []
    slot = side.slot_thread.at(tid)
    for runtime, imm, regs in side.groups():
        off = (runtime ^ side.address_thread.at(tid)) + imm
        assert off % side.vec == 0, "misaligned vector"
        in_order = tuple(regs[i ^ slot] for i in range(len(regs)))
        for i, r in enumerate(in_order):
            assert off + i == side.offsets[r] ^ side.thread.at(tid)
        out.append((off, in_order))
    return out


def wavefronts(side: SharedSide, elem_bits: int, warp: int) -> tuple[int, int]:
    """(wavefronts, ideal) of one warp's accesses of ``side``, per instruction, from the
    byte addresses: lanes are served in phases of one 128-byte bank line's worth of
    accesses; within a phase, a bank serves one distinct 4-byte word per wavefront."""
    nbytes = side.vec * elem_bits // 8
    phase = max(1, min(32, 128 // max(nbytes, 4)))
    worst = (0, 1)
    for runtime, imm, _ in side.groups():
        total = ideal = 0
        for start in range(0, 32, phase):
            words: set[int] = set()
            for lane in range(start, start + phase):
                byte = ((runtime ^ side.address_thread.at(warp * 32 + lane)) + imm) * elem_bits // 8
                words.update(range(byte // 4, (byte + max(nbytes, 1) - 1) // 4 + 1))
            banks: dict[int, int] = {}
            for w in words:
                banks[w % 32] = banks.get(w % 32, 0) + 1
            total += max(banks.values())
            ideal += -(-len(words) // 32)
        worst = max(worst, (total, ideal), key=lambda t: t[0] / t[1])
    return worst


@pytest.mark.parametrize("elem_bits", [8, 16, 32, 64])
@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_plan_delivers_every_element(pair: Pair, elem_bits: int) -> None:
    move = plan_move(pair.src, pair.dst, elem_bits=elem_bits, target=TARGET)
    assert isinstance(move, KIND[pair.kind]), f"{pair.name}: planned {type(move).__name__}"
    simulate(move, pair.src, pair.dst)


@pytest.mark.parametrize("elem_bits", [8, 16, 32, 64])
@pytest.mark.parametrize("pair", [p for p in PAIRS if p.kind == "shared"], ids=_id)
def test_shared_accesses_are_conflict_free(pair: Pair, elem_bits: int) -> None:
    move = plan_move(pair.src, pair.dst, elem_bits=elem_bits, target=TARGET)
    assert isinstance(move, SharedMove)
    plan = plan_conversion(pair.src, pair.dst, elem_bits=elem_bits, target=TARGET).shared
    assert plan is not None
    # the lowering uses the planner's vectors
    assert (move.store.vec, move.load.vec) == (plan.store_vec, plan.load_vec)
    for side, layout in ((move.store, pair.src), (move.load, pair.dst)):
        for warp in range(layout.in_dim_size(WARP)):
            total, ideal = wavefronts(side, elem_bits, warp)
            assert total == ideal, f"warp {warp}: {total} wavefronts where {ideal} would do"


def test_vectors_follow_the_planner() -> None:
    # f32 blocked(1x4) -> mma: 16-byte accesses on both sides (the buffer keeps an mma
    # thread's 2 columns of rows r and r+8 together)
    move = plan_move(B64_ROW4, MMA64, elem_bits=32, target=TARGET)
    assert isinstance(move, SharedMove)
    assert (move.store.vec, move.load.vec) == (4, 4)
    # f16 rows of 8 -> columns: 16-byte stores
    move = plan_move(B64_ROW8, B64_COL4, elem_bits=16, target=TARGET)
    assert isinstance(move, SharedMove) and move.store.vec == 8


def test_thread_xor_selects() -> None:
    tx = ThreadXor((0, 3, 0, 1, 2, 3, 0))
    gens, masks = tx.selects()
    assert len(gens) == 2
    for tid in range(128):
        v = 0
        for g, m in zip(gens, masks):
            if bin(tid & m).count("1") % 2:
                v ^= g
        assert v == tx.at(tid)


def test_cross_cta_layouts_take_the_fallback() -> None:
    two = CTALayout((2, 1), (2, 1), (1, 0))
    a = blocked((64, 64), (1, 4), (4, 8), (4, 1), (1, 0), two)
    b = blocked((64, 64), (4, 1), (8, 4), (1, 4), (0, 1), two)
    assert plan_move(a, b, elem_bits=32, target=TARGET) is None


# -- PTX ----------------------------------------------------------------------------------------
def _tile(shape: tuple[int, ...], elem: str, layout: LinearLayout | None = None) -> str:
    dims = "x".join(str(d) for d in shape)
    return f"tile<{dims}x{elem}" + (f", {layout}" if layout is not None else "") + ">"


CONVERT_LINE = 20  # the loc of the conversion under test


def kernel_ir(pair: Pair, elem: str, num_warps: int = 4) -> str:
    """``dst[i] = src[i]`` over the pair's tile, with the data taken to ``pair.src``
    and then (the op at line ``CONVERT_LINE``) to ``pair.dst``. Layout assignment adds
    the conversions from the load's layout and to the store's."""
    shape = pair.shape
    n = int(np.prod(shape))
    mem = "i8" if elem == "i1" else elem
    ptr = f"ptr<{mem}>"
    lines = [f"%o = arange {{start = 0, end = {n}}} : {_tile((n,), 'i32')}"]
    off = "%o"
    if len(shape) > 1:
        lines.append(f"%o2 = reshape %o : {_tile(shape, 'i32')}")
        off = "%o2"
    lines += [f"%pi = splat %src : {_tile(shape, ptr)}",
              f"%qi = addptr %pi, {off} : {_tile(shape, ptr)}",
              f"%x = load %qi : {_tile(shape, mem)}"]
    cur = "%x"
    if elem == "i1":
        lines += [f"%z = constant {{value = 0}} : {_tile(shape, 'i8')}",
                  f"%one = constant {{value = 1}} : {_tile(shape, 'i8')}",
                  f'%m = cmp %x, %z {{predicate = "ne"}} : {_tile(shape, "i1")}']
        cur = "%m"
    lines.append(f"%a = convert_layout {cur} : {_tile(shape, elem, pair.src)}")
    lines.append(f"%b = convert_layout %a : {_tile(shape, elem, pair.dst)} loc({CONVERT_LINE}:0)")
    cur = "%b"
    if elem == "i1":
        lines.append(f"%y = select %b, %one, %z : {_tile(shape, 'i8')}")
        cur = "%y"
    lines += [f"%po = splat %dst : {_tile(shape, ptr)}",
              f"%qo = addptr %po, {off} : {_tile(shape, ptr)}",
              f"store %qo, {cur}"]
    body = "".join(f"    {line}{'' if 'loc(' in line else f' loc({i + 1}:0)'}\n" for i, line in enumerate(lines))
    return (f'module {{source = "convert.py"}} {{\n^():\n  func {{sym_name = "convert", num_warps = {num_warps}}} {{\n'
            f"  ^(%src: {ptr}, %dst: {ptr}):\n{body}    return loc(30:0)\n  }}\n}}\n")


def compile_pair(pair: Pair, elem: str, arch: str = "sm_90a"):
    return generate(parse_ir(kernel_ir(pair, elem)), arch)


def conversion_ptx(ptx: str) -> list[str]:
    """The instructions emitted for the op at line ``CONVERT_LINE``."""
    out, inside = [], False
    for line in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s+\d+", line)
        if m:
            inside = int(m.group(1)) == CONVERT_LINE
        elif inside and line.strip():
            out.append(line.strip())
    return out


def _count(lines: list[str], prefix: str) -> int:
    return sum(1 for line in lines if re.sub(r"^@!?%p\d+\s+", "", line).startswith(prefix))


@pytest.mark.parametrize("elem", ELEMS)
@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_ptx_assembles_and_uses_the_planned_instructions(pair: Pair, elem: str) -> None:
    ptxas_or_skip()
    kernel = compile_pair(pair, elem)
    ptxas(kernel.ptx, "sm_90a")
    lines = conversion_ptx(kernel.ptx)
    move = plan_move(pair.src, pair.dst, elem_bits=ELEM_BITS[CLASS[elem]], target=TARGET)
    shared = _count(lines, "ld.shared") + _count(lines, "st.shared")
    if pair.kind in ("none", "registers"):
        assert _count(lines, "bar.sync") == 0 and _count(lines, "shfl.sync") == 0 and shared == 0, lines
    if pair.kind == "none":
        assert lines == []
    if pair.kind == "shuffle":
        assert isinstance(move, ShuffleMove)
        assert _count(lines, "bar.sync") == 0 and shared == 0, lines
        rounds = len(set(zip(move.send, move.lane)))
        per_word = {"pred": 32, "b16": 2}.get(CLASS[elem], 1)
        words = 2 if elem in ("i64", "f64") else 1
        assert rounds * words // per_word <= _count(lines, "shfl.sync.idx.b32") <= rounds * words
    if pair.kind == "shared":
        assert isinstance(move, SharedMove)
        assert _count(lines, "bar.sync") == 2
        assert _count(lines, "st.shared") == len(move.store.groups())
        assert _count(lines, "ld.shared") == len(move.load.groups())
        for side, op in ((move.store, "st.shared"), (move.load, "ld.shared")):
            units = side.vec * ELEM_BITS[CLASS[elem]] // (64 if elem in ("i64", "f64") else 32)
            if units >= 2:
                assert _count(lines, f"{op}.v{units}") > 0, lines


def test_f16_pairs_share_a_shuffle() -> None:
    pair = next(p for p in PAIRS if p.name == "register-lane-transpose")
    lines = conversion_ptx(compile_pair(pair, "f16").ptx)
    f32 = conversion_ptx(compile_pair(pair, "f32").ptx)
    assert 0 < _count(lines, "shfl.sync") * 2 == _count(f32, "shfl.sync")


def test_vectorized_f16_round_trip() -> None:
    lines = conversion_ptx(compile_pair(Pair("rows-to-cols", B64_ROW8, B64_COL4, "shared"), "f16").ptx)
    assert _count(lines, "st.shared.v4.b32") == 4  # 32 f16 per thread, 8 per 16-byte store
    assert _count(lines, "ld.shared.b16") == 32 or _count(lines, "ld.shared.v") > 0


def test_threads_holding_copies_do_not_store() -> None:
    # a row slice of blocked(4x8 lanes): the 8 lanes along the sliced dim hold copies
    pair = next(p for p in PAIRS if p.name == "slice-rows-to-cols")
    move = plan_move(pair.src, pair.dst, elem_bits=32, target=TARGET)
    assert isinstance(move, SharedMove) and move.copies == 0b00111
    lines = conversion_ptx(compile_pair(pair, "f32").ptx)
    stores = [line for line in lines if "st.shared" in line]
    assert stores and all(re.match(r"@%p\d+ st\.shared", line) for line in stores), stores


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_every_arch_assembles(arch: str) -> None:
    ptxas_or_skip()
    for pair in PAIRS[:8]:
        ptxas(compile_pair(pair, "f16", arch).ptx, arch)


# -- on the GPU ---------------------------------------------------------------------------------
_NP = {"f32": np.float32, "f16": np.float16, "i1": np.int8, "i8": np.int8, "i64": np.int64, "f64": np.float64}
_SIG = {"f32": "*fp32", "f16": "*fp16", "i1": "*i8", "i8": "*i8", "i64": "*i64", "f64": "*fp64"}


@pytest.mark.gpu
@pytest.mark.parametrize("pair", PAIRS, ids=_id)
def test_conversion_on_gpu(pair: Pair) -> None:
    from tlxc.runtime import DeviceArray, LoadedKernel, synchronize

    rng = np.random.default_rng(0)
    for elem in ELEMS:
        kernel = compile_pair(pair, elem)
        n = int(np.prod(pair.shape))
        if elem == "i1":
            x = rng.integers(0, 2, n).astype(np.int8)
        elif elem.startswith("i"):
            x = rng.integers(-100, 100, n).astype(_NP[elem])
        else:
            x = rng.standard_normal(n).astype(_NP[elem])
        src, dst = DeviceArray.from_numpy(x), DeviceArray.from_numpy(np.zeros_like(x))
        lk = LoadedKernel(ptxas(kernel.ptx, "sm_90a").cubin, kernel.name, [_SIG[elem]] * 2,
                          num_warps=kernel.num_warps, shared_bytes=kernel.shared_bytes)
        lk((1,), (src.data_ptr(), dst.data_ptr()))
        synchronize()
        np.testing.assert_array_equal(dst.numpy(), x, err_msg=f"{pair.name} {elem}")
