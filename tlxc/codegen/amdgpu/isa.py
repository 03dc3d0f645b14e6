"""Hardware facts of the AMDGPU targets, as data.

Sources:

- LLVM "User Guide for AMDGPU Backend" (https://llvm.org/docs/AMDGPUUsage.html):
  the "AMDGPU Processors" table (gfx942 and gfx950 are GFX9 / CDNA3 and CDNA4 with
  wave64 only; gfx1250 is GFX12.5 with wave32), the LDS allocation granularity column of
  the ``compute_pgm_rsrc2`` table ("GFX950: roundup(lds-size / (320 * 4))", "GFX125*:
  roundup(lds-size / (512 * 4))"), the DWARF register mapping (VGPR512-VGPR1023 "second
  block of vector general purpose registers" in wave32 on gfx1250), and "Code Object V5
  Metadata" for the figures that :mod:`.toolchain` reads back.
- LLVM's ``AMDGPUBaseInfo.cpp``: ``getAddressableLocalMemorySize`` (327680 bytes for
  gfx1250, 163840 for gfx950, 65536 for the other GFX7+ chips),
  ``getAddressableNumSGPRs`` (102 on GFX8-GFX9, 106 on GFX10+), ``getTotalNumVGPRs``
  (512 unified ArchVGPR + AccVGPR on gfx90a and later CDNA chips, of which at most 256 of
  each kind); the ``has1024AddressableVGPRs`` subtarget feature of gfx1250 (LLVM PR
  157531), which also has no AccVGPRs (its matrix cores are WMMA, not MFMA).
- The fp8 flavours: gfx942's fp8 MFMA and conversion instructions use the "fnuz"
  encodings (``float8_e4m3fnuz`` / ``float8_e5m2fnuz``: no negative zero, NaN is 0x80,
  exponent bias one larger; AMD CDNA3 ISA guide, "Data Types"), gfx950 and gfx1250 the
  OCP ones (``float8_e4m3fn`` / ``float8_e5m2``; CDNA4 ISA guide). Triton's AMD backend
  makes the same split (fp8e4b8/fp8e5b16 on gfx942, fp8e4nv/fp8e5 from gfx950 on).

Checked against llvmlite 0.50 (LLVM 22.1): the SGPR limits by clobbering ``s101``/``s105``
in inline assembly (LLVM refuses ``s105`` on gfx942 and accepts it on gfx1250), the AGPRs
by clobbering ``a255`` (``.agpr_count: 256`` on gfx942).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Fp8Flavour = Literal["fnuz", "ocp"]

#: The LLVM target triple of every AMDGPU kernel tlxc builds (HSA runtime, ROCm).
TRIPLE = "amdgcn-amd-amdhsa"

#: Code object version tlxc emits. LLVM 22's default is 6, which only adds the
#: "generic" processors (gfx9-4-generic, ...) that tlxc does not target; 5 is clang's and
#: ROCm's default and links with any ld.lld from LLVM 15 on (6 needs LLD 18, 4 any).
DEFAULT_CODE_OBJECT_VERSION = 5

#: The ELF ``e_ident[EI_ABIVERSION]`` byte of each code object version
#: (ELFABIVERSION_AMDGPU_HSA_V4 = 2, V5 = 3, V6 = 4) and the oldest LLD that links it.
ABI_VERSION_OF_CODE_OBJECT = {4: 2, 5: 3, 6: 4}
MIN_LLD_FOR_CODE_OBJECT = {4: 7, 5: 15, 6: 18}

#: ELF machine number of AMDGPU code objects (``EM_AMDGPU``).
EM_AMDGPU = 224


@dataclass(frozen=True)
class AmdTarget:
    arch: str                    # "gfx942"
    family: str                  # "CDNA3"
    wave_size: int               # lanes per wavefront
    lds_bytes: int               # LDS a work-group may address
    lds_granule_bytes: int       # LDS is allocated in blocks of this size
    max_vgprs: int               # addressable VGPRs per lane (unified ArchVGPR+AccVGPR where AGPRs exist)
    max_arch_vgprs: int          # ArchVGPRs one instruction can name
    max_agprs: int               # AccVGPRs (0: the chip has none)
    max_sgprs: int               # addressable SGPRs, VCC excluded
    has_mfma: bool
    has_wmma: bool
    has_scaled_mma: bool         # v_mfma_scale_* (gfx950) / v_wmma_scale_* (gfx1250)
    fp8: Fp8Flavour
    lds_banks: int = 32
    lds_bank_bytes: int = 4
    max_threads_per_block: int = 1024
    # DPP ``row_xmask`` (lane ^ n within a row of 16): GFX10+ only; LLVM refuses it on GFX9
    # ("row_share and row_xmask are not supported before GFX10"), see ``cross_lane``.
    dpp_row_xmask: bool = False
    # waves a SIMD holds at most: the range of the "amdgpu-waves-per-eu" kernel attribute
    # (LLVM's AMDGPUBaseInfo getMaxWavesPerEU: 8 on the gfx90a family, gfx942 and gfx950
    # included; 16 on GFX10.3 and later). LLVM 22 ignores a larger request without a word
    # (checked: "9" on gfx950 leaves the register budget as it is, "8" caps it at 64).
    max_waves_per_eu: int = 8

    @property
    def fp8_dtypes(self) -> tuple[str, str]:
        """The (e4m3, e5m2) dtype names of the chip's fp8 flavour, as tlxc spells them."""
        if self.fp8 == "fnuz":
            return ("fp8e4b8", "fp8e5b16")
        return ("fp8e4nv", "fp8e5")


TARGETS: dict[str, AmdTarget] = {
    # CDNA3 (MI300): 64 KiB LDS, MFMA v3, fnuz fp8.
    "gfx942": AmdTarget("gfx942", "CDNA3", 64, 64 * 1024, 128 * 4, 512, 256, 256, 102,
                        has_mfma=True, has_wmma=False, has_scaled_mma=False, fp8="fnuz"),
    # CDNA4 (MI350): 160 KiB LDS in 64 banks (Triton's AMD back end: numBanks = 64 on
    # gfx950, 32 elsewhere), MFMA v4 with scaled MFMA (mx formats), OCP fp8.
    "gfx950": AmdTarget("gfx950", "CDNA4", 64, 160 * 1024, 320 * 4, 512, 256, 256, 102,
                        has_mfma=True, has_wmma=False, has_scaled_mma=True, fp8="ocp", lds_banks=64),
    # GFX12.5: wave32, 320 KiB LDS in 64 banks (composable_kernel, ck_tile/core/arch/arch.hpp:
    # get_n_lds_banks is 64 for gfx950 and gfx125x, 32 elsewhere), WMMA (16x16xK, scaled
    # variants), 1024 VGPRs, no AGPRs; GFX10+ DPP (row_xmask).
    "gfx1250": AmdTarget("gfx1250", "GFX12.5", 32, 320 * 1024, 512 * 4, 1024, 256, 0, 106,
                         has_mfma=False, has_wmma=True, has_scaled_mma=True, fp8="ocp", lds_banks=64,
                         dpp_row_xmask=True, max_waves_per_eu=16),
}
