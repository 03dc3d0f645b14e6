"""How a distributed register layout reads or writes a shared-memory buffer.

A buffer's layout ``S`` maps an element ``offset`` to tile coordinates; a register tile's
layout ``D`` maps ``(register, lane, warp)`` to the same coordinates. The element that
thread ``t`` keeps in register ``r`` lives at offset ``S⁻¹(D(r, t))``. Both maps are
linear over GF(2), so that offset is ``S⁻¹(D(r, 0)) XOR S⁻¹(D(0, t))``: a constant per
register XOR one value per thread -- the per-thread part is computed once (from the bits
of ``%tid.x``: the lane's bits, then the warp's) and every access adds a constant.

Worked example: a 4x4 tile of one warp of 8 toy lanes, two registers per lane along
dim1 (``D``: register -> (0,1), lanes -> (0,2), (1,0), (2,0)), stored in a row-major
buffer (``S``: offset bits -> (0,1), (0,2), (1,0), (2,0)). ``S⁻¹`` is the row-major
index, so register 1 of lane 5 is at ``1 XOR S⁻¹(D(0, 5)) = 1 XOR S⁻¹(2, 2) = 1 XOR 10
= 11``. Register bit 0 steps offset 1: each thread holds two consecutive elements, one
vector access of 2. Transposing the buffer (``S`` bits -> (1,0), (2,0), (0,1), (0,2))
sends register bit 0 to offset 4: no vector, two scalar accesses.

``plan_shared_access`` returns those constants and the widest vector -- ``2**k``
elements when offset bits ``0..k-1`` are stepped by register bits (each thread holds
the whole aligned run) and no thread bit moves inside a run. Buffer layouts may have
*holes* (offset bits whose basis is zero: a slice view skips the bytes of its parent it
does not cover); ``S⁻¹`` never sets them, so addresses stay inside the view.

Nothing here emits code: the tests evaluate the plan for every thread and register and
compare it with the layouts; the NVIDIA lowering turns it into ``ld.shared`` /
``st.shared`` / ``cp.async``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .common import BLOCK, LANE, OFFSET, REGISTER, WARP
from .linear import LayoutError, LinearLayout


@dataclass(frozen=True)
class SharedAccess:
    """Register ``r`` of thread ``tid`` is at element offset ``offsets[r] ^
    thread_at(tid)`` of the buffer. ``thread[i]`` is the XOR term of bit ``i`` of
    ``%tid.x`` (lane bits first, then warp bits). Accesses move ``vec`` elements that
    are consecutive in the buffer; ``vector_bits[i]`` is the register bit that steps
    offset ``2**i``. Threads with a bit of ``copies`` set hold only elements that threads
    without it also hold (a store may skip them)."""

    vec: int
    offsets: tuple[int, ...]
    thread: tuple[int, ...]
    copies: int
    vector_bits: tuple[int, ...]

    def thread_at(self, tid: int) -> int:
        v = 0
        for i, t in enumerate(self.thread):
            if (tid >> i) & 1:
                v ^= t
        return v

    def offset(self, register: int, tid: int) -> int:
        return self.offsets[register] ^ self.thread_at(tid)

    @property
    def thread_mask(self) -> int:
        """Every offset bit the thread part can flip."""
        m = 0
        for t in self.thread:
            m |= t
        return m

    def groups(self) -> list[tuple[int, int, tuple[int, ...]]]:
        """The vector accesses as ``(runtime, immediate, registers)``: the access covers
        offsets ``(runtime ^ thread_at(tid)) + immediate + i`` for ``i < vec`` and slot
        ``i`` holds register ``registers[i]`` (the register whose ``vector_bits`` spell ``i``
    over the group's first). ``runtime`` keeps the constant's bits the
        thread part can flip (they must be XORed at run time); the others never meet a
        thread bit, so XOR is addition there and they become the instruction's immediate.
        A register holding an element a second time is left out (``first_of`` says which
        register it repeats)."""
        by_base: dict[int, list[int | None]] = {}
        for r, c in enumerate(self.offsets):
            slots = by_base.setdefault(c & ~(self.vec - 1), [None] * self.vec)
            if slots[c & (self.vec - 1)] is None:
                slots[c & (self.vec - 1)] = r
        mt = self.thread_mask
        out = []
        for base, slots in by_base.items():
            if any(s is None for s in slots):  # pragma: no cover - excluded by the plan
                raise LayoutError(f"internal: vector of {self.vec} at offset {base} is not held by one thread")
            out.append((base & mt, base & ~mt, tuple(s for s in slots if s is not None)))
        return out

    def first_of(self) -> tuple[int, ...]:
        """For each register, the first register at the same offset (itself if none)."""
        seen: dict[int, int] = {}
        return tuple(seen.setdefault(c, r) for r, c in enumerate(self.offsets))


def plan_shared_access(dist: LinearLayout, shared: LinearLayout, *, elem_bits: int, max_vector_bytes: int,
                       warp_size: int = 32, max_vec: int | None = None) -> SharedAccess:
    """The addresses of ``dist``'s registers in a buffer laid out by ``shared`` (see the
    module doc). ``max_vec`` caps the vector (elements); accesses never exceed
    ``max_vector_bytes``. Raises ``LayoutError`` when the layouts cover different tiles
    or ``dist`` is not a one-CTA layout of whole warps."""
    if list(dist.out_sizes.items()) != list(shared.out_sizes.items()):
        raise LayoutError(f"shared access: register tile {dist.out_sizes} and buffer {shared.out_sizes} differ",
                          dist, shared)
    if tuple(dist.in_dims) != (REGISTER, LANE, WARP, BLOCK) or dist.in_dim_size(BLOCK) != 1:
        raise LayoutError("shared access needs a one-CTA distributed layout (register, lane, warp)", dist)
    if dist.in_dim_size(LANE) != warp_size:
        raise LayoutError(f"shared access needs a whole warp of {warp_size} lanes", dist)
    if shared.in_dims[0] != OFFSET or not shared.is_surjective():
        raise LayoutError("shared access needs a buffer layout that holds every element", shared)
    inv = shared.invert()
    bits = shared.in_dim_bits(OFFSET)
    mask = (1 << bits) - 1

    def offset(x: int) -> int:
        return inv.apply_flat(dist.apply_flat(x)) & mask

    nreg = dist.in_dim_bits(REGISTER)
    offsets = tuple(offset(r) for r in range(1 << nreg))
    nthread = dist.in_dim_bits(LANE) + dist.in_dim_bits(WARP)
    thread = tuple(offset(1 << (nreg + i)) for i in range(nthread))
    free = dist.free_variable_masks()
    copies = free[LANE] | (free[WARP] << dist.in_dim_bits(LANE))
    cap = max(1, max_vector_bytes * 8 // max(8, elem_bits))
    if max_vec is not None:
        cap = min(cap, max_vec)
    vector_bits: list[int] = []
    tmask = 0
    for t in thread:
        tmask |= t
    while (1 << (len(vector_bits) + 1)) <= cap:
        want = 1 << len(vector_bits)
        if tmask & want:
            break
        hit = [i for i in range(nreg) if offsets[1 << i] == want]
        if not hit:
            break
        vector_bits.append(hit[0])
    # every other register bit must keep a vector's slots in order (no bit inside a run)
    while vector_bits and any(offsets[1 << i] & ((1 << len(vector_bits)) - 1)
                              for i in range(nreg) if i not in vector_bits):
        vector_bits.pop()
    return SharedAccess(1 << len(vector_bits), offsets, thread, copies, tuple(vector_bits))


def check_access(dist: LinearLayout, shared: LinearLayout, access: SharedAccess, num_threads: int) -> None:
    """Brute-force check (tests): every register of every thread is at the offset whose
    element it holds."""
    nreg = dist.in_dim_bits(REGISTER)
    bits = shared.in_dim_bits(OFFSET)
    for tid in range(num_threads):
        for r in range(1 << nreg):
            want = dist.apply_flat(r | (tid << nreg))
            got = shared.apply_flat(access.offset(r, tid) & ((1 << bits) - 1))
            if got != want:
                raise LayoutError(f"register {r} of thread {tid}: offset {access.offset(r, tid)} holds "
                                  f"{shared.decode_out(got)}, not {dist.decode_out(want)}", dist, shared)
