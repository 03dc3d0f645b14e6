"""Layouts: where each element of a tile lives, as linear maps over GF(2).

One type, ``LinearLayout`` (``linear.py``, which opens with a worked example), describes
every layout: distributed ones (inputs ``register``, ``lane``, ``warp``, ``block``) and
shared-memory ones (inputs ``offset``, ``block``), onto the tile's dims ``dim0..``.
Named constructors build the layouts that programmers and hardware documents talk
about; everything else -- conversions, vector widths, swizzles, bank conflicts -- is
computed from the maps, never special-cased per pair of layouts.

Modules:

* ``linear``     -- ``LinearLayout`` and its algebra (apply, product, compose, invert,
  invert_and_compose, reshape, transpose, sublayout, free variables, str/parse, table).
* ``gf2``        -- the bit-vector linear algebra underneath.
* ``common``     -- target-independent constructors: ``blocked``, ``slice_layout``,
  ``swizzled_shared``, ``CTALayout``, and the shape-fitting rules they share.
* ``nvidia``     -- ``mma_v2_accumulator``, ``dot_operand``, ``nvmma_shared``; its
  docstring says where tcgen05 (TMEM) and AMD MFMA / WMMA layouts will go.
* ``wgmma``      -- Hopper warpgroup MMA: accumulator and A-register fragments (with the
  register -> instruction slot maps), shared-memory matrix descriptors derived from a
  buffer's layout, the default NVMMA swizzle, and the legal instruction shapes.
* ``shape_ops``  -- layouts of trans / reshape / expand_dims / join / split results.
* ``conversion`` -- classify a conversion (registers / shuffle / shared memory) and
  plan the shared-memory path with a conflict-free swizzle; bank-conflict counting.
* ``vectorize``  -- widest per-thread global access for a layout and pointer facts.
* ``target``     -- ``LayoutTarget``: the hardware facts the planners take as input.

Nothing here names a GPU architecture: hardware facts arrive as parameters.
"""

from .amd import AmdMfma, AmdWmma, mfma_dot_operand_layout, mfma_layout, wmma_dot_operand_layout, wmma_layout
from .amd_lds import PaddedShared, mfma_operand_shared, padded_shared, wmma_operand_shared
from .common import (
    BLOCK,
    DISTRIBUTED_INS,
    LANE,
    OFFSET,
    REGISTER,
    WARP,
    CTALayout,
    blocked,
    dim_names,
    fit_to_shape,
    identity_standard,
    slice_layout,
    swizzled_shared,
)
from .conversion import (
    BankCost,
    ConversionKind,
    ConversionPlan,
    SharedConversion,
    bank_conflicts,
    bank_cost,
    bank_wavefronts,
    classify_conversion,
    conversion_map,
    plan_conversion,
    plan_shared_conversion,
)
from .linear import LayoutError, LinearLayout
from .nvidia import MmaV2, choose_nvmma_swizzle, dot_operand, mma_v2_accumulator, nvmma_shared
from .shape_ops import expand_dims, join, permute, reshape, split
from .target import LayoutTarget
from .vectorize import Vectorization, contiguous_register_bits, max_register_vector, vector_width, vectorize
from .wgmma import (
    FragmentSlot,
    instruction_operands,
    nvmma_default,
    operand_major,
    per_cta_offsets,
    smem_byte_offset,
    tma_swizzle_of,
    wgmma_accumulator,
    wgmma_accumulator_slots,
    wgmma_operand_a,
    wgmma_operand_a_slots,
)

__all__ = [
    "AmdMfma", "AmdWmma", "mfma_layout", "mfma_dot_operand_layout", "wmma_layout", "wmma_dot_operand_layout",
    "PaddedShared", "padded_shared", "mfma_operand_shared", "wmma_operand_shared",
    "BLOCK", "DISTRIBUTED_INS", "LANE", "OFFSET", "REGISTER", "WARP",
    "BankCost", "CTALayout", "ConversionKind", "ConversionPlan", "LayoutError", "LayoutTarget", "LinearLayout",
    "MmaV2", "SharedConversion", "Vectorization",
    "bank_conflicts", "bank_cost", "bank_wavefronts", "blocked", "classify_conversion", "contiguous_register_bits",
    "conversion_map", "dim_names", "dot_operand", "expand_dims", "fit_to_shape", "identity_standard", "join",
    "max_register_vector", "mma_v2_accumulator", "nvmma_shared", "permute", "plan_conversion",
    "plan_shared_conversion", "reshape", "slice_layout", "split", "swizzled_shared", "vector_width", "vectorize",
    # wgmma register layouts and NVMMA shared-layout queries (the wgmma instruction facts --
    # shapes, descriptors -- are the NVIDIA code generator's: codegen/nvptx/mma_table.py)
    "FragmentSlot", "choose_nvmma_swizzle", "instruction_operands", "nvmma_default", "operand_major",
    "per_cta_offsets", "smem_byte_offset", "tma_swizzle_of", "wgmma_accumulator", "wgmma_accumulator_slots",
    "wgmma_operand_a", "wgmma_operand_a_slots",
]
