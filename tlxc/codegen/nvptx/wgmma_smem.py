"""How ``wgmma.mma_async`` reads an operand from a shared buffer: the matrix descriptor's
fields (leading / stride byte offsets, swizzle mode) and each instruction's start address,
found from the buffer's ``LinearLayout``.

Sources: PTX ISA, "Shared Memory Matrix Layout" (the canonical layouts and swizzle atoms,
``mma_table.PTX_ISA`` + ``#asynchronous-warpgroup-level-matrix-shared-memory-layout``),
"Strides" (``#asynchronous-warpgroup-level-leading-dimension-byte-offset`` and
``#asynchronous-warpgroup-level-stride-dimension-byte-offset``) and "Matrix Descriptor
Format" (``mma_table.DESCRIPTOR_SECTION``); CUTLASS's ``make_gmma_desc`` writes the same
canonical layouts out.

``wgmma_smem_operand`` finds the descriptor fields by applying the layout's inverse at the
probe elements the PTX definitions name (the next 8-row group, the next swizzle atom, ...),
then replays the hardware's address computation for every element of every instruction and
compares it with the layout. Nothing is assumed about how the layout was built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...ir.layout.common import OFFSET
from ...ir.layout.linear import LayoutError, LinearLayout
from ...ir.layout.wgmma import operand_major, per_cta_offsets
from .mma_table import SWIZZLE_MODE, UNUSED_STRIDE, encode_descriptor


@dataclass(frozen=True)
class WgmmaSmemOperand:
    """How wgmma reads one operand from a shared buffer.

    The descriptor of instruction ``(mn_rep, k_step)`` of warpgroup ``g`` is
    ``template + ((base + warpgroup_offsets[g] + offsets[mn_rep][k_step]) >> 4)`` with
    ``base`` the buffer's shared-window address (a multiple of ``base_alignment``, so that
    the swizzle pattern starts with the buffer and the base-offset field stays 0).
    ``mn_rep`` counts instructions along M (A) or N (B) of one warpgroup; ``g`` is the
    warpgroup's index among those splitting this operand's M (A) or N (B) dim, with
    row / column ``instr_mn * (mn_rep * warpgroups + g)`` as in ``wgmma_accumulator``.
    """

    operand: str  # "A" or "B"
    major: str  # "K" or "MN"
    trans: int  # imm-trans-a / imm-trans-b
    elem_bits: int
    swizzle_bytes: int
    lbo: int
    sbo: int
    instr_mn: int
    instr_k: int
    offsets: tuple[tuple[int, ...], ...]
    warpgroup_offsets: tuple[int, ...]
    base_alignment: int

    @property
    def swizzle_mode(self) -> int:
        return SWIZZLE_MODE[self.swizzle_bytes]

    @property
    def mn_reps(self) -> int:
        return len(self.offsets)

    @property
    def k_steps(self) -> int:
        return len(self.offsets[0])

    @property
    def template(self) -> int:
        """The descriptor with start address 0: add ``address >> 4`` for a real one."""
        return encode_descriptor(0, self.lbo, self.sbo, self.swizzle_bytes)

    def descriptor(self, base_address: int, mn_rep: int = 0, k_step: int = 0, warpgroup: int = 0) -> int:
        if base_address % self.base_alignment:
            raise LayoutError(f"buffer address {base_address:#x} is not aligned to {self.base_alignment} bytes, "
                              f"as the {self.swizzle_bytes}-byte swizzle pattern needs")
        start = base_address + self.warpgroup_offsets[warpgroup] + self.offsets[mn_rep][k_step]
        return encode_descriptor(start, self.lbo, self.sbo, self.swizzle_bytes)



def wgmma_smem_operand(layout: LinearLayout, *, elem_bits: int, operand: str, instr_mn: int, instr_k: int,
                       warpgroups: int = 1, tile: Sequence[int] | None = None) -> WgmmaSmemOperand:
    """The descriptor fields and per-instruction offsets for reading ``tile`` (default: the
    whole buffer; an ``[M, K]`` A or ``[K, N]`` B at the buffer's origin) with wgmma
    instructions of ``instr_mn`` x ``instr_k`` (64 x K for A, K x N for B), the tile's
    M (A) or N (B) split among ``warpgroups`` warpgroups. Raises LayoutError naming the
    layouts wgmma can read when none of the four swizzle modes reproduces the buffer."""
    return _smem_operand(layout, elem_bits, operand, instr_mn, instr_k, warpgroups,
                         tuple(tile) if tile is not None else None)


@lru_cache(maxsize=256)
def _smem_operand(layout: LinearLayout, elem_bits: int, operand: str, instr_mn: int, instr_k: int,
                  warpgroups: int, tile: tuple[int, ...] | None) -> WgmmaSmemOperand:
    major = operand_major(layout, operand)
    if elem_bits not in (8, 16, 32):
        raise LayoutError(f"wgmma reads 8-, 16- or 32-bit elements from shared memory, not {elem_bits}-bit ones")
    if major == "MN" and elem_bits != 16:
        raise LayoutError(f"this {operand} buffer is MN-major, but only 16-bit operands may be: {elem_bits}-bit "
                          f"wgmma operands must be K-major (contiguous along K). Build the buffer "
                          f"{'without' if operand == 'A' else 'with'} transposed=True, or local_trans a "
                          "K-major buffer", layout)
    off = per_cta_offsets(layout)
    shape = tile or off.out_shape
    if len(shape) != 2 or any(s > f for s, f in zip(shape, off.out_shape)):
        raise LayoutError(f"tile {tuple(shape)} does not fit in the buffer {off.out_shape}", layout)
    mn_ext, k_ext = (shape[0], shape[1]) if operand == "A" else (shape[1], shape[0])
    if mn_ext % (instr_mn * warpgroups) or k_ext % instr_k or instr_k * elem_bits != 256:
        raise LayoutError(f"{operand} tile {tuple(shape)} is not a whole number of {instr_mn}x{instr_k} "
                          f"instructions for {warpgroups} warpgroup(s) (one instruction reads 32 bytes of K)")
    plan = _Plan(off, elem_bits, operand, major, instr_mn, instr_k)
    reps, steps = mn_ext // (instr_mn * warpgroups), k_ext // instr_k
    failures = []
    for swizzle in (128, 64, 32, 0):
        found = plan.try_swizzle(swizzle, reps, steps, warpgroups)
        if isinstance(found, WgmmaSmemOperand):
            return found
        failures.append(f"{swizzle}-byte swizzle: {found}" if swizzle else f"no swizzle: {found}")
    rows = "M" if operand == "A" else "N"
    transposed = (operand == "B") == (major == "K")
    raise LayoutError(
        f"wgmma cannot read this {elem_bits}-bit {major}-major {operand} buffer with any matrix descriptor. It "
        f"reads NVMMA layouts: nvmma_shared(shape, {elem_bits}, swizzle_bytes, transposed={transposed}) with "
        f"swizzle_bytes 128, 64 or 32 (a contiguous dim of at least that many bytes and >= 8 rows), or 0 when the "
        f"contiguous dim is exactly 16 bytes; K-major for every type, {rows}-major for 16-bit types only. "
        + "; ".join(failures), layout)


class _Plan:
    """Descriptor search for one buffer: probes the layout and replays the hardware's
    addressing (PTX ISA, "Shared Memory Matrix Layout" and "Strides"; in 16-byte units
    ``T = 128 / elem_bits`` elements, ``W = swizzle / 16`` chunks per swizzled row)::

        K-major,  swizzled:   ((8, m), (T, 2)) : ((W*T, SBO), (1, T))       LBO unused
        K-major,  none:       ((8, m), (T, 2)) : ((T,   SBO), (1, LBO))
        MN-major, swizzled:   ((T, W, m), (8, 2)) : ((1, T, LBO), (W*T, SBO))
        MN-major, none:       ((T, m), (8, 2))    : ((1, SBO), (T, LBO))

    (``(mn, k)`` coordinates on the left, element strides on the right), and the swizzle
    XORs byte-address bits ``[4, 4+b)`` with bits ``[7, 7+b)``, ``b = log2(W)``.
    """

    def __init__(self, off: LinearLayout, elem_bits: int, operand: str, major: str, instr_mn: int,
                 instr_k: int) -> None:
        self.elem_bits, self.operand, self.major = elem_bits, operand, major
        self.instr_mn, self.instr_k = instr_mn, instr_k
        self.shape = off.out_shape
        inv = off.invert()
        # the layout is linear: element (x, y) sits at offset row[x] ^ col[y]
        self._rows = [inv.apply(dim0=x)[OFFSET] for x in range(self.shape[0])]
        self._cols = [inv.apply(dim1=y)[OFFSET] for y in range(self.shape[1])]

    def addr(self, mn: int, k: int) -> int | None:
        """Byte address of operand element ``(mn, k)`` in the buffer, None outside it."""
        x, y = (mn, k) if self.operand == "A" else (k, mn)
        if x >= self.shape[0] or y >= self.shape[1]:
            return None
        return (self._rows[x] ^ self._cols[y]) * self.elem_bits // 8

    def _name(self, mn: int, k: int) -> str:
        return f"[m={mn}, k={k}] of A" if self.operand == "A" else f"[k={k}, n={mn}] of B"

    def _stride(self, mn: int, k: int, needed: bool) -> int | str:
        if not needed:
            return UNUSED_STRIDE
        a = self.addr(mn, k)
        if a is None or a <= 0 or a % 16 or a >= 1 << 18:
            return f"element {self._name(mn, k)} is at byte {a}, not a stride a descriptor can hold"
        return a

    def try_swizzle(self, swizzle: int, reps: int, steps: int, warpgroups: int) -> WgmmaSmemOperand | str:
        t = 128 // self.elem_bits
        w = max(1, swizzle // 16)
        if self.major == "K":
            sbo = self._stride(8, 0, self.instr_mn > 8)
            lbo = self._stride(0, t, not swizzle)
        elif swizzle:
            lbo = self._stride(t * w, 0, self.instr_mn > t * w)
            sbo = self._stride(0, 8, True)
        else:
            sbo = self._stride(t, 0, self.instr_mn > t)
            lbo = self._stride(0, 8, True)
        for v in (lbo, sbo):
            if isinstance(v, str):
                return v
        assert isinstance(lbo, int) and isinstance(sbo, int)
        starts = {}
        for g in range(warpgroups):
            for i in range(reps):
                for j in range(steps):
                    s = self.addr(self.instr_mn * (i * warpgroups + g), self.instr_k * j)
                    assert s is not None
                    if swizzle and (s >> 7) & (w - 1):
                        return f"instruction ({i}, {j}) would start inside a swizzle pattern (byte {s})"
                    err = self._replay(swizzle, lbo, sbo, s, self.instr_mn * (i * warpgroups + g), self.instr_k * j)
                    if err:
                        return err
                    starts[g, i, j] = s
        offsets = tuple(tuple(starts[0, i, j] for j in range(steps)) for i in range(reps))
        wg = tuple(starts[g, 0, 0] - starts[0, 0, 0] for g in range(warpgroups))
        for (g, i, j), s in starts.items():
            if s != wg[g] + offsets[i][j]:
                return f"warpgroup {g}'s instruction ({i}, {j}) is not at a fixed distance from warpgroup 0's"
        return WgmmaSmemOperand(self.operand, self.major, int(self.major == "MN"), self.elem_bits, swizzle, lbo, sbo,
                                self.instr_mn, self.instr_k, offsets, wg, max(16, 8 * swizzle))

    def _replay(self, swizzle: int, lbo: int, sbo: int, start: int, mn0: int, k0: int) -> str | None:
        """Compare the hardware's address of every element of one instruction with the layout."""
        eb = self.elem_bits // 8
        w = swizzle // 16
        mask = (w - 1) if swizzle else 0
        for mn in range(self.instr_mn):
            for k in range(self.instr_k):
                if self.major == "K":
                    kb = k * eb
                    row = (mn % 8) * (swizzle or 16) + (mn // 8) * sbo
                    pre = row + (kb if swizzle else (kb // 16) * lbo + kb % 16)
                else:
                    mb = mn * eb
                    if swizzle:
                        pre = mb % swizzle + (mb // swizzle) * lbo + (k % 8) * swizzle + (k // 8) * sbo
                    else:
                        pre = mb % 16 + (mb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
                a = start + pre
                a ^= ((a >> 7) & mask) << 4
                want = self.addr(mn0 + mn, k0 + k)
                if a != want:
                    return (f"element {self._name(mn0 + mn, k0 + k)} is at byte {want}, "
                            f"the descriptor (LBO {lbo}, SBO {sbo}) would read byte {a}")
        return None
