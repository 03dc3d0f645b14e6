"""``LaunchSpec`` (runtime/spec.py): what code generation tells the runtime, from the
compiled variant's metadata to the loader's launch (cluster dims reach cuLaunchKernelEx)."""

from __future__ import annotations

import pytest
from tlxc.runtime import AmdLoadedKernel, LaunchError, LaunchSpec, LoadedKernel

import tlxc
import tlxc.language as tl


@tlxc.jit
def _copy(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


def test_spec_from_a_compiled_variant() -> None:
    ck = _copy.compile("*fp32:16,*fp32:16,i32", {"BLOCK": 128}, arch="sm_90a", num_warps=2)
    spec = ck.launch_spec
    assert spec.name == ck.metadata["name"] and spec.arch == "sm_90a"
    assert spec.signature == ("*fp32:16", "*fp32:16", "i32") and spec.arg_names == ("x", "y", "n")
    assert spec.num_warps == 2 and spec.block == (64, 1, 1) and spec.shared_bytes == ck.metadata["shared"]
    assert spec.cluster_dims is None and not spec.cooperative and spec.scratch_bytes == 0
    assert spec.params == tuple(ck.metadata["params"])
    assert LaunchSpec.from_json(spec.to_json()) == spec


def test_spec_of_an_amd_variant_carries_the_kernarg_layout() -> None:
    ck = _copy.compile("*fp32:16,*fp32:16,i32", {"BLOCK": 128}, arch="gfx942", num_warps=4)
    spec = ck.launch_spec
    assert spec.warp_size == 64 and spec.block == (256, 1, 1) and spec.kernarg is not None
    assert spec.kernarg["offsets"][:3] == [0, 8, 16] and spec.kernarg["sizes"][:3] == [8, 8, 4]


def test_cluster_dims_reach_the_loader_and_the_launch(fake_driver) -> None:
    spec = LaunchSpec("k", "sm_90a", ("*fp32", "i32"), ("x", "n"), 4, cluster_dims=(2, 1, 1))
    lk = LoadedKernel.from_spec(".version 8.0", spec)
    assert lk.cluster_dims == (2, 1, 1) and lk.block == (128, 1, 1)
    lk((4,), (0, 7))
    assert fake_driver.launches[-1][0] == (4, 1, 1)
    lk.load()
    assert "_cu_launch_ex" not in lk.launch_source and "cfg" in lk.launch_source  # the config path of launch_code
    with pytest.raises(LaunchError, match="multiple of the cluster dims"):
        lk((3,), (0, 7))


def test_plain_cluster_spelling_is_no_cluster() -> None:
    assert LaunchSpec("k", "sm_90a", (), (), 4, cluster_dims=(1, 1, 1)).cluster_dims is None
    with pytest.raises(ValueError, match="three positive ints"):
        LaunchSpec("k", "sm_90a", (), (), 4, cluster_dims=(0, 1, 1))


def test_amd_loader_refuses_clusters() -> None:
    spec = LaunchSpec("k", "gfx942", ("i32",), ("n",), 4, warp_size=64, cluster_dims=(2, 1, 1))
    with pytest.raises(LaunchError, match="clusters"):
        LoadedKernel.from_spec(b"\x7fELF", spec)
    ok = LaunchSpec("k", "gfx942", ("i32",), ("n",), 4, warp_size=64)
    assert isinstance(LoadedKernel.from_spec(b"\x7fELF", ok), AmdLoadedKernel)
