"""Skipping a test that links an AMDGPU code object where no ld.lld can link it: the
machines without one (the GPU test machine has none) skip with the reason; CI installs
LLD, so the tests run there."""

from __future__ import annotations

import pytest


def skip_without_ld_lld(obj: bytes) -> None:
    """Skip unless an ld.lld new enough for the code object version of ``obj`` (an
    AMDGPU relocatable object, ``CompiledKernel._amd_object``) is installed."""
    from tlxc.codegen.amdgpu import toolchain

    need = toolchain.MIN_LLD_FOR_CODE_OBJECT[toolchain.code_object_version_of(obj)]
    if toolchain.find_ld_lld(need) is None:
        pytest.skip(f"no ld.lld {need} or newer here to link the AMDGPU code object (CI installs lld)")
