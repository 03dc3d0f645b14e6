"""LLVM IR and code objects for gfx942, gfx950 and gfx1250: the AMDGPU code generator (issue 5)."""
