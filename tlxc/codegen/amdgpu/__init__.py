"""The AMDGPU back end for gfx942, gfx950 and gfx1250 (issue 5).

What exists so far is the toolchain under the future code generator:

- :mod:`.isa`: the target facts as data (wave size, LDS size and allocation granule,
  VGPR/AGPR/SGPR limits, MFMA or WMMA, scaled MMA, fp8 flavour), with their sources.
- :mod:`.toolchain`: ``compile_llvm_ir(llvm_ir, arch)`` parses, verifies, optimizes and
  compiles LLVM IR with llvmlite's AMDGPU target (LLVM 22) into assembly and a
  relocatable object (code object v5) and reads back each kernel's VGPR / AGPR / SGPR /
  LDS / scratch figures; ``link_hsaco(obj)`` links the object into a code object with
  ``ld.lld -shared`` (LLD 15 or newer).

The LLVM IR builder that lowers the tile IR, and its wiring into ``kernel.compile``, are
not written yet: compiling a kernel for a gfx target still stops before code generation.
"""
