"""``tl.reduce`` with a combine function on the GPU gives the interpreter's numbers:
within a thread, across lanes and across warps (the cases of
tests/frontend/test_reduce_combine.py, launched)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: Any) -> Any:
    sys.path.insert(0, str(Path(__file__).parent.parent / "frontend"))
    from test_reduce_combine import KERNELS

    path = tmp_path_factory.mktemp("reduce_combine_gpu") / "_tlxc_reduce_combine_gpu.py"
    path.write_text("import tlxc\nimport tlxc.language as tl\n" + KERNELS)
    spec = importlib.util.spec_from_file_location("_tlxc_reduce_combine_gpu", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("m,n,axis,keep", [(16, 64, 1, False), (64, 16, 0, True), (128, 32, 0, False)])
def test_sum_by_a_custom_add(kernels: Any, m: int, n: int, axis: int, keep: bool) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.RandomState(1).randint(-100, 100, (m, n)).astype(np.int32)
    y = torch.zeros(x.shape[1 - axis], dtype=torch.int32, device="cuda")
    kernels.rows[(1,)](torch.from_numpy(x).cuda(), y, m, n, axis, keep)
    np.testing.assert_array_equal(y.cpu().numpy(), x.sum(axis=axis))


def test_product_of_everything(kernels: Any) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.RandomState(4).uniform(0.9, 1.1, (16, 64)).astype(np.float32)
    y = torch.zeros(1, device="cuda")
    kernels.product_all[(1,)](torch.from_numpy(x).cuda(), y, 16, 64)
    np.testing.assert_allclose(y.cpu().numpy()[0], np.prod(x.astype(np.float64)), rtol=1e-4)


@pytest.mark.parametrize("use_if", [False, True])
def test_argmax_as_a_tuple_reduction(kernels: Any, use_if: bool) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.RandomState(5).randint(0, 6, (16, 64)).astype(np.float32)
    v = torch.zeros(16, device="cuda")
    i = torch.full((16,), -1, dtype=torch.int32, device="cuda")
    kernels.argmax_rows[(1,)](torch.from_numpy(x).cuda(), v, i, 16, 64, use_if)
    np.testing.assert_array_equal(v.cpu().numpy(), x.max(axis=1))
    np.testing.assert_array_equal(i.cpu().numpy(), x.argmax(axis=1))
