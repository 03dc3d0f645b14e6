"""What shared passes may ask about the target they compile for.

A ``TargetInfo`` is the one object through which target behaviour reaches the IR passes:
hardware facts (warp size, shared-memory banks and limits), what the target has (TMA,
wgmma, tcgen05, clusters, mbarriers, ...), the layout choices that only the target can
make (the accumulator layout of a ``dot``, the shared-memory layout of a buffer), and
which ops its code generator lowers. Shared code never tests a target's name (a test
greps ``tlxc/ir`` for them); it asks this object.

The code generators subclass it (``codegen/nvptx/target_info.py``,
``codegen/amdgpu/target_info.py``) from their ISA tables; ``tlxc.codegen.targets``
gives the one for an arch name. The defaults here are those of a target that makes no
choice of its own: every layout question answers None (the pass picks its generic
layout) and nothing is lowered, which is what the IR-level tests build.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .layout.target import LayoutTarget

if TYPE_CHECKING:  # pragma: no cover
    from .core import Operation
    from .layout.linear import LinearLayout


@dataclass(frozen=True)
class Capabilities:
    """The hardware features a target has; a pass that needs one asks here."""

    tma: bool = False             # bulk tensor copies with a descriptor (cp.async.bulk.tensor)
    wgmma: bool = False           # warpgroup MMA reading shared memory (wgmma.mma_async)
    tcgen05: bool = False         # tensor-memory MMA (tcgen05.mma)
    tensor_memory: bool = False   # a tensor memory (TMEM) beside shared memory
    clusters: bool = False        # thread-block clusters and distributed shared memory
    mbarriers: bool = False       # transaction barriers in shared memory
    async_copy: bool = True       # global -> shared copies that complete later (cp.async / direct-to-LDS)
    named_barriers: bool = False  # barriers of a subset of the CTA's warps (bar.sync id, n)
    mfma: bool = False            # AMD matrix cores (v_mfma)
    wmma: bool = False            # AMD wave matrix instructions (v_wmma)
    scaled_mma: bool = False      # MMA with block scales (mx formats)
    vector_atomics: bool = False  # a float add over consecutive elements in one instruction (atom.global.v8.f16)


@dataclass(frozen=True)
class TargetInfo:
    """Facts and choices of one target (see the module doc).

    name                 -- the arch name, for messages only;
    family               -- "NVIDIA" or "AMDGPU", for messages only;
    warp_size            -- lanes per warp (wave);
    shared_banks, bank_bytes -- the shared-memory (LDS) banks;
    max_vector_bytes     -- the widest per-thread global or shared access;
    max_shared_bytes     -- shared memory (LDS) one program may use;
    max_threads          -- threads per program at most;
    has                  -- the target's ``Capabilities``;
    plain_async_copy_buffers -- asynchronous copies write their destination row-major
                            (AMD's direct-to-LDS loads put lane i's vector right after
                            lane i - 1's), so ``buffer_layouts`` keeps those buffers plain;
    pipelined_loads      -- how ``software-pipeline`` keeps the loads of a ``tl.dot`` loop
                            ahead: "async_copy" (a ring of ``num_stages`` shared buffers
                            filled by asynchronous copies) or "registers" (global loads one
                            iteration ahead into registers, stored into a double-buffered
                            LDS ring);
    lowered              -- the op classes the code generator has a lowering rule for.
    """

    name: str = "generic"
    family: str = "generic"
    warp_size: int = 32
    shared_banks: int = 32
    bank_bytes: int = 4
    max_vector_bytes: int = 16
    max_shared_bytes: int = 48 * 1024
    max_threads: int = 1024
    has: Capabilities = field(default_factory=Capabilities)
    plain_async_copy_buffers: bool = False
    pipelined_loads: str = "async_copy"
    lowered: frozenset[type] = frozenset()

    @property
    def layout_target(self) -> LayoutTarget:
        """The memory-system facts that layout planning works from."""
        return LayoutTarget(self.warp_size, self.shared_banks, self.bank_bytes, self.max_vector_bytes)

    def lowers(self, cls: type) -> bool:
        """Whether the code generator has a lowering rule for ops of class ``cls``."""
        return cls in self.lowered

    # -- layout choices (None: the pass picks its generic layout) ---------------------------
    def dot_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        """The accumulator layout of ``tl.dot`` ``op`` on the target's matrix instruction."""
        return None

    def dot_operand_layout(self, op: Operation, index: int, num_warps: int) -> LinearLayout | None:
        """The layout the matrix instruction reads operand ``index`` (0: A, 1: B) of dot
        ``op`` in; a ``local_load`` that only feeds that operand reads straight into it."""
        return None

    def async_dot_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        """The accumulator layout of an asynchronous (warpgroup) dot ``op``; None where
        the target cannot run it."""
        return None

    def async_dot_a_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        """The register layout an asynchronous dot's A operand must have when it comes
        from registers."""
        return None

    def wgmma_instr_k(self, element: str) -> int | None:
        """The K of one warpgroup MMA instruction on operands of dtype ``element`` (a
        dtype name such as "f16"), None where the target's wgmma does not take it."""
        return None

    def buffer_layout(self, shape: tuple[int, ...], bits: int) -> LinearLayout | None:
        """The layout of a rank >= 2 shared-memory buffer the user did not pin; None: the
        NVMMA swizzle that TMA and wgmma read."""
        return None

    def scheduled_mfma_layouts(self, op: Operation, num_warps: int) -> Any:
        """(accumulator, A, B) layouts of an explicitly scheduled MFMA, or None."""
        return None


GENERIC = TargetInfo()
