"""Round-trip texts of the register-layout, MFMA-scheduling and scaled-dot ops
(``tlxc.ir.ops.amd``), merged into ``ROUNDTRIP`` by ``test_roundtrip.py``. Layouts the
user chose are dict attributes; they print and parse back as written."""

from __future__ import annotations

import textwrap

AMD_ARGS = ("%n: i32, %a: tile<64x16xbf16>, %b: tile<16x64xbf16>, %acc: tile<64x64xf32>, "
            "%x: tile<64x64xf16>, %q: tile<64x32xu8>, %r: tile<32x64xu8>, %s: tile<64x2xu8>, %t: tile<64x2xu8>, "
            "%e: tile<64x64xf8e4m3>")

MFMA = ('{kind = "amd_mfma", version = 4, instr_shape = [32, 32, 16], transposed = true, '
        "warps_per_cta = [2, 2], element_bitwidth = 32, tiles_per_warp = none}")
DOT_B = f'{{kind = "amd_dot_operand", operand_index = 1, parent = {MFMA}, k_width = 8}}'
WMMA = ('{kind = "amd_wmma", version = 3, transposed = true, warp_bases = [[0, 2], [2, 0]], '
        "reg_bases = [[0, 1], [1, 0]], instr_shape = [16, 16, 128]}")


def amd_kernel(body: str) -> str:
    ops = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return (f'module {{source = "k.py"}} {{\n^():\n  func {{sym_name = "k"}} {{\n  ^({AMD_ARGS}):\n'
            f"{ops}\n    return loc(30:4)\n  }}\n}}\n")


AMD_ROUNDTRIP: dict[str, str] = {
    "zeros": amd_kernel(f"%z = zeros {{layout = {MFMA}}} : tile<64x64xf32> loc(3:10)"),
    "require_layout": amd_kernel(
        f"%p = require_layout %b {{layout = {DOT_B}, pin = false}} : tile<16x64xbf16> loc(4:8)\n"
        f"%w = require_layout %acc {{layout = {WMMA}, late_address_compute = true}} : tile<64x64xf32>"),
    "release_layout": amd_kernel("%f = release_layout %acc : tile<64x64xf32>"),
    "extract_slice": amd_kernel("%h = extract_slice %b {offsets = [0, 32]} : tile<16x32xbf16> loc(5:8)"),
    "rematerialized_range": amd_kernel(
        "%i = rematerialized_range {start = 0, end = 64, identity = 2} : tile<64xi32>\n"
        "%j = rematerialized_range placement=%n {start = 64, end = 128, identity = 3} : tile<64xi32>"),
    "amd_sched_barrier": amd_kernel("amd_sched_barrier\namd_sched_barrier {mask = 6} loc(7:4)"),
    "amd_register_resident": amd_kernel(
        '%l = amd_register_resident %b {registers_per_group = 4} : tile<16x64xbf16>\n'
        '%v = amd_register_resident %acc {register_class = "vgpr"} : tile<64x64xf32>'),
    "amd_register_class_anchor": amd_kernel(
        '%k = amd_register_class_anchor %x : tile<64x64xf16>\n'
        '%g = amd_register_class_anchor %acc {register_class = "agpr"} : tile<64x64xf32>'),
    "amd_scheduled_mfma": amd_kernel(
        '%c = amd_scheduled_mfma %a, %b, %acc {accumulator_role = "transient"} : tile<64x64xf32> loc(9:10)\n'
        '%d = amd_scheduled_mfma %a, %b, %c {accumulator_role = "persistent", resident_operand = "rhs", '
        'accumulator_register_class = "vgpr", initialize = true} : tile<64x64xf32>'),
    "amd_mfma_commit": amd_kernel(
        "%c = amd_mfma_commit %acc : tile<64x64xf32>\n"
        "%c2, %c3, %bl = amd_mfma_commit %acc, %c, %b {preserve = true} : tile<64x64xf32>, tile<64x64xf32>, "
        "tile<16x64xbf16>"),
    "dot_scaled": amd_kernel(
        '%m = dot_scaled %q, %r, %acc, a_scale=%s, b_scale=%t {a_format = "e2m1", b_format = "e2m1"} : '
        "tile<64x64xf32>\n"
        '%o = dot_scaled %e, %e, %m, b_scale=%t {a_format = "e4m3", b_format = "e4m3", fast_math = true, '
        "tiles_per_warp = [2, 2]} : tile<64x64xf32> loc(11:8)"),
}

# op name -> (module text in which that op breaks a rule, fragment of the verifier's message),
# merged into ``INVALID`` by ``test_verifier.py``
AMD_INVALID: dict[str, tuple[str, str]] = {
    "zeros": (amd_kernel('%z = zeros {layout = {kind = "blocked"}} : tile<64x64xf32>'),
              "layout must be a dict with kind one of"),
    "require_layout": (amd_kernel(f"%p = require_layout %b {{layout = {MFMA}}} : tile<16x32xbf16>"),
                       "result must be a tile like"),
    "release_layout": (amd_kernel("%f = release_layout %acc : tile<64x64xf16>"), "result must be a tile like"),
    "extract_slice": (amd_kernel("%h = extract_slice %b {offsets = [0, 48]} : tile<16x32xbf16>"),
                      "slice [48, 48 + 32) of dimension 1 is outside x's 64"),
    "rematerialized_range": (amd_kernel("%i = rematerialized_range {start = 0, end = 64, identity = 0} : "
                                        "tile<32xi32>"), "result must be tile<64xi32>"),
    "amd_sched_barrier": (amd_kernel("amd_sched_barrier {mask = 4096}"), "mask must use bits 0..11 only"),
    "amd_register_resident": (amd_kernel("%l = amd_register_resident %b {registers_per_group = 3} : "
                                         "tile<16x64xbf16>"), "registers_per_group must be one of"),
    "amd_register_class_anchor": (amd_kernel('%k = amd_register_class_anchor %x {register_class = "sgpr"} : '
                                             "tile<64x64xf16>"), "register_class must be one of"),
    "amd_scheduled_mfma": (amd_kernel('%c = amd_scheduled_mfma %a, %b, %x {accumulator_role = "transient"} : '
                                      "tile<64x64xf16>"), "acc must be f32"),
    "amd_mfma_commit": (amd_kernel("%c, %d = amd_mfma_commit %acc, %x : tile<64x64xf32>, tile<64x64xf16>"),
                        "the committed values must be f32 tiles"),
    "dot_scaled": (amd_kernel('%m = dot_scaled %q, %r, %acc, a_scale=%s {a_format = "e2m1", b_format = "e4m3"} : '
                              "tile<64x64xf32>"), "do not hold the same number of K values"),
}
