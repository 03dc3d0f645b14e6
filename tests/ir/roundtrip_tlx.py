"""Round-trip texts of the TLX ops (buffers, barriers, async copies, TMA, wgmma), merged
into ``ROUNDTRIP`` by ``test_roundtrip.py``."""

from __future__ import annotations

import textwrap

TLX_ARGS = ("%n: i32, %c: i1, %q: tile<64x16xptr<f16>>, %m: tile<64x16xi1>, %t: tile<64x16xf16>, "
            "%d: tensordesc<64x16xf16>, %p: ptr<f16>, %acc: tile<64x64xf32>")


def tlx_kernel(body: str) -> str:
    ops = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return (f'module {{source = "k.py"}} {{\n^():\n  func {{sym_name = "k"}} {{\n  ^({TLX_ARGS}):\n'
            f"{ops}\n    return loc(30:4)\n  }}\n}}\n")


ALLOC = "%a = local_alloc : memdesc<64x16xf16, smem, num=2> loc(3:8)"
VIEW = ALLOC + "\n%v = local_view %a, %n : memdesc<64x16xf16, smem>"
BARS = "%b = barrier_alloc {count = 1} : mbarrier<2>\n%b0 = barrier_view %b, %n : mbarrier<0>"
SLOTS = "%sp = tensordesc_alloc : tensordesc_ptr<2>\n%s1 = tensordesc_ptr_index %sp, %n : tensordesc_ptr<1>"

TLX_ROUNDTRIP: dict[str, str] = {
    "local_alloc": tlx_kernel(ALLOC + "\n%r = local_alloc reuse=%a : memdesc<32x16xf32, smem, num=1>"),
    "storage_alias_spec": tlx_kernel(
        '%s = storage_alias_spec {size = 16384, fixed = true} : alias_spec\n'
        "%al = local_alloc reuse=%s {alias = [4096, 8192]} : memdesc<32x32xf32, smem, num=2>"),
    "local_view": tlx_kernel(VIEW),
    "local_slice": tlx_kernel(VIEW + "\n%s = local_slice %v, %n, %n : memdesc<16x16xf16, smem>"),
    "local_trans": tlx_kernel(VIEW + "\n%s = local_trans %v {perm = [1, 0]} : memdesc<16x64xf16, smem>"),
    "local_reinterpret": tlx_kernel(VIEW + "\n%s = local_reinterpret %v : memdesc<16x32xi8, smem>"),
    "local_load": tlx_kernel(VIEW + "\n%x = local_load %v : tile<64x16xf16>"),
    "local_store": tlx_kernel(VIEW + "\nlocal_store %v, %t"),
    "thread_id": tlx_kernel("%0 = thread_id {axis = 0} : i32"),
    "clock64": tlx_kernel("%0 = clock64 : i64"),
    "special_register": tlx_kernel('%0 = special_register {register = "smid"} : i32\n'
                                   '%1 = special_register {register = "globaltimer"} : i64'),
    "barrier_alloc": tlx_kernel("%b = barrier_alloc {count = 128} : mbarrier<4, warp>"),
    "barrier_view": tlx_kernel(BARS),
    "barrier_expect": tlx_kernel(BARS + "\nbarrier_expect %b0, pred=%c {bytes = 2048}"),
    "barrier_wait": tlx_kernel(BARS + "\nbarrier_wait %b0, %n"),
    "barrier_arrive": tlx_kernel(BARS + "\nbarrier_arrive %b0 {count = 2}"),
    "named_barrier_wait": tlx_kernel("named_barrier_wait {bar_id = 9, threads = 256}"),
    "named_barrier_arrive": tlx_kernel("named_barrier_arrive {bar_id = 9, threads = 256}"),
    "fence": tlx_kernel('fence {scope = "async_shared"}'),
    "async_load": tlx_kernel(VIEW + "\n%k = async_load %q, %v, mask=%m, other=%t : token"),
    "async_commit_group": tlx_kernel(VIEW + "\n%k = async_load %q, %v : token\n"
                                     "%g = async_commit_group %k : token"),
    "async_wait_group": tlx_kernel("%g = async_commit_group : token\n"
                                   "%w = async_wait_group %g {pendings = 1} : token"),
    "make_tensor_descriptor": tlx_kernel("%d2 = make_tensor_descriptor %p, %n, %n, %n, %n : "
                                         "tensordesc<64x16xf16, swizzle=32>\n" + SLOTS + "\n"
                                         "%d3 = make_tensor_descriptor %p, %n, %n, %n, %n, desc_ptr=%s1 "
                                         '{padding = "nan"} : tensordesc<64x16xf16>'),
    "unpack_tensor_descriptor": tlx_kernel("%b, %s0, %s1, %t0, %t1 = unpack_tensor_descriptor %d : "
                                           "ptr<f16>, i32, i32, i32, i32"),
    "tensordesc_alloc": tlx_kernel("%sp = tensordesc_alloc : tensordesc_ptr<3>"),
    "tensordesc_ptr_index": tlx_kernel(SLOTS),
    "reinterpret_tensor_descriptor": tlx_kernel(SLOTS + "\n%d2 = reinterpret_tensor_descriptor %s1 : "
                                                "tensordesc<64x16xf16, swizzle=128>"),
    "tma_load": tlx_kernel(VIEW + "\n" + BARS + "\ntma_load %d, %v, %b0, %n, %n, pred=%c"),
    "tma_store": tlx_kernel(VIEW + '\ntma_store %d, %v, %n, %n {reduce = "add"}'),
    "tma_store_wait": tlx_kernel("tma_store_wait {pendings = 0}"),
    "descriptor_load": tlx_kernel("%x = descriptor_load %d, %n, %n : tile<64x16xf16>"),
    "descriptor_store": tlx_kernel("descriptor_store %d, %t, %n, %n"),
    "async_dot": tlx_kernel(
        "%a = local_alloc : memdesc<64x16xf16, smem, num=1>\n%v = local_view %a, %n : memdesc<64x16xf16, smem>\n"
        "%b = local_alloc : memdesc<16x64xf16, smem, num=1>\n%w = local_view %b, %n : memdesc<16x64xf16, smem>\n"
        "%x = async_dot %v, %w, acc=%acc, use_acc=%c : tile<64x64xf32>\n"
        "%y = async_dot %t, %w : tile<64x64xf32>"),
    "async_dot_wait": tlx_kernel("%x, %y = async_dot_wait %acc, %t {pendings = 0} : tile<64x64xf32>, "
                                 "tile<64x16xf16>"),
}


# -- one invalid use per op, with a fragment of the verifier's message --------------------
TLX_INVALID: dict[str, tuple[str, str]] = {
    "storage_alias_spec": (tlx_kernel('%s = storage_alias_spec {storage = "gmem", size = 64} : alias_spec'),
                           "unknown storage 'gmem'"),
    "local_alloc": (tlx_kernel("%a = local_alloc : memdesc<64x16xf16, smem>"), "must be an array of buffers"),
    "local_view": (tlx_kernel(VIEW + "\n%w = local_view %v, %n : memdesc<64x16xf16, smem>"),
                   "must be an array of buffers"),
    "local_slice": (tlx_kernel(VIEW + "\n%s = local_slice %v, %n, %n : memdesc<128x16xf16, smem>"),
                    "does not fit"),
    "local_trans": (tlx_kernel(VIEW + "\n%s = local_trans %v {perm = [0, 0]} : memdesc<16x64xf16, smem>"),
                    "is not a permutation"),
    "local_reinterpret": (tlx_kernel(VIEW + "\n%s = local_reinterpret %v : memdesc<64x32xf32, smem>"),
                          "does not fit in the bytes"),
    "local_load": (tlx_kernel(VIEW + "\n%x = local_load %v : tile<64x16xf32>"), "result must be a tile of f16"),
    "local_store": (tlx_kernel(ALLOC + "\nlocal_store %a, %t"), "must be one buffer"),
    "thread_id": (tlx_kernel("%0 = thread_id {axis = 3} : i32"), "axis 0, 1 or 2"),
    "clock64": (tlx_kernel("%0 = clock64 : i32"), "clock64 gives an i64"),
    "special_register": (tlx_kernel('%0 = special_register {register = "globaltimer"} : i32'),
                         "globaltimer gives an i64"),
    "barrier_alloc": (tlx_kernel("%b = barrier_alloc {count = 0} : mbarrier<4>"), "must be a positive integer"),
    "barrier_view": (tlx_kernel(BARS + "\n%b1 = barrier_view %b0, %n : mbarrier<0>"),
                     "must be an array of mbarriers"),
    "barrier_expect": (tlx_kernel(BARS + "\nbarrier_expect %b {bytes = 4}"), "must be one mbarrier"),
    "barrier_wait": (tlx_kernel(BARS + "\nbarrier_wait %b0, %c"), "phase must be an integer scalar"),
    "barrier_arrive": (tlx_kernel(BARS + "\nbarrier_arrive %b0 {count = 0}"), "must be a positive integer"),
    "named_barrier_wait": (tlx_kernel("named_barrier_wait {bar_id = 9, threads = 100}"), "multiple of 32"),
    "named_barrier_arrive": (tlx_kernel("named_barrier_arrive {bar_id = 16, threads = 64}"), "ids are 0..15"),
    "fence": (tlx_kernel('fence {scope = "cta"}'), "fence scope must be one of"),
    "async_load": (tlx_kernel(VIEW + "\n%k = async_load %t, %v : token"), "needs a tile of pointers"),
    "async_commit_group": (tlx_kernel("%g = async_commit_group %n : token"), "operands must be tokens"),
    "async_wait_group": (tlx_kernel("%w = async_wait_group {pendings = -1} : token"), "non-negative"),
    "unpack_tensor_descriptor": (tlx_kernel("%b, %s0, %s1 = unpack_tensor_descriptor %d : ptr<f16>, i32, i32"),
                                 "a base pointer, 2 sizes and 2 strides"),
    "make_tensor_descriptor": (tlx_kernel("%d2 = make_tensor_descriptor %p, %n : tensordesc<64x16xf16>"),
                               "needs 2 sizes and strides"),
    "tensordesc_alloc": (tlx_kernel("%sp = tensordesc_alloc : i32"), "expected a tensordesc_ptr"),
    "tensordesc_ptr_index": (tlx_kernel("%sp = tensordesc_alloc : tensordesc_ptr<2>\n"
                                        "%s1 = tensordesc_ptr_index %sp, %n : tensordesc_ptr<2>"),
                             "the result is one descriptor"),
    "reinterpret_tensor_descriptor": (tlx_kernel("%d2 = reinterpret_tensor_descriptor %n : tensordesc<64x16xf16>"),
                                      "expected a tensordesc_ptr"),
    "tma_load": (tlx_kernel(VIEW + "\n" + BARS + "\ntma_load %d, %v, %b0, %n"), "needs 2 coordinates"),
    "tma_store": (tlx_kernel(VIEW + '\ntma_store %d, %v, %n, %n {reduce = "mul"}'), "unknown store reduction"),
    "tma_store_wait": (tlx_kernel("tma_store_wait {pendings = -2}"), "non-negative"),
    "descriptor_load": (tlx_kernel("%x = descriptor_load %d, %n, %n : tile<16x64xf16>"),
                        "result must be a tile of f16 of shape (64, 16)"),
    "descriptor_store": (tlx_kernel("descriptor_store %d, %acc, %n, %n"), "value must be a tile of f16"),
    "async_dot": (tlx_kernel("%x = async_dot %t, %t : tile<64x16xf32>"), "b must be a rank-2 buffer"),
    "async_dot_wait": (tlx_kernel("%x = async_dot_wait %acc {pendings = 0} : tile<64x64xf16>"),
                       "results must have the operands' types"),
}
