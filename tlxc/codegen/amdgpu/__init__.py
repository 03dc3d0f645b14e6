"""The AMDGPU back end for gfx942, gfx950 and gfx1250.

- :mod:`.pipeline`: the passes that lower the tile IR for these targets.
- :mod:`.compile` and :mod:`.emitter`: the IR as the pipeline leaves it -> LLVM IR
  (``llvmlite.ir``), one ``lower_*`` module per family of ops (``@lowers`` rules, loaded
  by :mod:`.target_info`).
- :mod:`.isa`: the target facts as data (wave size, LDS size and allocation granule,
  VGPR/AGPR/SGPR limits, MFMA or WMMA, scaled MMA, fp8 flavour), with their sources.
- :mod:`.toolchain`: ``compile_llvm_ir(llvm_ir, arch)`` parses, verifies, optimizes and
  compiles LLVM IR with llvmlite's AMDGPU target into assembly and a relocatable object
  (code object v5) and reads back each kernel's VGPR / AGPR / SGPR / LDS / scratch
  figures; ``link_hsaco(obj)`` links the object into a code object with ``ld.lld -shared``.
"""
