"""Round-trip and verifier texts of the cluster ops, merged into ``ROUNDTRIP`` and
``INVALID`` by ``test_roundtrip.py`` and ``test_verifier.py``."""

from __future__ import annotations

from roundtrip_tlx import BARS, tlx_kernel

ROW = "%a = local_alloc : memdesc<128xf32, smem, num=1> loc(3:8)\n%v = local_view %a, %n : memdesc<128xf32, smem>"
TILE = "%f = constant {value = 1.0} : f32\n%u = splat %f : tile<128xf32>"

CLUSTER_ROUNDTRIP: dict[str, str] = {
    "cluster_cta_rank": tlx_kernel("%r = cluster_cta_rank : i32"),
    "cluster_size": tlx_kernel("%s = cluster_size : i32"),
    "cluster_barrier": tlx_kernel("cluster_barrier loc(4:4)"),
    "remote_store": tlx_kernel(ROW + "\n" + TILE + "\nremote_store %v, %u, %n"),
    "async_remote_store": tlx_kernel(ROW + "\n" + TILE + "\n" + BARS + "\nasync_remote_store %v, %u, %n, %b0"),
    "async_remote_copy": tlx_kernel(ROW + "\n" + BARS + "\nasync_remote_copy %v, %v, %n, %b0"),
}

CLUSTER_INVALID: dict[str, tuple[str, str]] = {
    "cluster_cta_rank": (tlx_kernel("%r = cluster_cta_rank : i64"), "gives an i32"),
    "cluster_size": (tlx_kernel("%s = cluster_size : f32"), "gives an i32"),
    "cluster_barrier": (tlx_kernel("%x = cluster_barrier : i32"), "expects 0 results"),
    "remote_store": (tlx_kernel(ROW + "\n%f = constant {value = 1.0} : f32\n%u = splat %f : tile<64xf32>\n"
                                "remote_store %v, %u, %n"),
                     "does not fill the buffer"),
    "async_remote_store": (tlx_kernel(ROW + "\n" + TILE + "\n" + BARS + "\nasync_remote_store %v, %u, %c, %b0"),
                           "the peer's rank must be an integer scalar"),
    "async_remote_copy": (tlx_kernel(ROW + "\n%w = local_alloc : memdesc<64xf32, smem, num=1>\n%w0 = local_view %w, "
                                     "%n : memdesc<64xf32, smem>\n" + BARS + "\nasync_remote_copy %w0, %v, %n, %b0"),
                          "differ in size"),
}
