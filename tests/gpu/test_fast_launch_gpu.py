"""``kernel[grid](...)`` with PyTorch tensors on the GPU, after the first launch: the fast
path's speculative key checks what ``LoadedKernel.launch`` checks (dtype, alignment,
``is_cuda``), and a hit launches through ``LoadedKernel.launch_trusted`` with the addresses
the key read. Each launch here is checked by its result, and each argument the key must
tell apart (a CPU tensor, another dtype, a misaligned view, a different stream, an int
that needs i64) either launches the right variant or gets the usual clear error."""

from __future__ import annotations

import pytest
import tlxc.runtime

import tlxc
import tlxc.language as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


@tlxc.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


def _run(x, y, out, a, n, stream=None):
    grid = ((n + 255) // 256,)
    if stream is None:
        axpy[grid](x, y, out, a, n, BLOCK=256)
    else:
        axpy[grid](x, y, out, a, n, BLOCK=256, stream=stream)


def _tensors(n, dtype=torch.float32, device="cuda"):
    g = torch.Generator(device="cpu").manual_seed(n)
    x = torch.randn(n, generator=g).to(device=device, dtype=dtype)
    y = torch.randn(n, generator=g).to(device=device, dtype=dtype)
    return x, y, torch.empty_like(x)


def test_repeated_launches_take_the_trusted_path_and_compute() -> None:
    x, y, out = _tensors(4096)
    _run(x, y, out, 2.0, 4096)  # the slow path: compiles, fills the table
    loaded = axpy.last_compiled._loaded
    calls = []
    real = loaded.launch_trusted
    loaded.launch_trusted = lambda *a: calls.append(a) or real(*a)
    try:
        for i in range(3):
            axpy._fast.hot[0] = None  # the key's way (a hit makes the variant hot again)
            out.zero_()
            _run(x, y, out, float(i), 4096)
            torch.cuda.synchronize()
            torch.testing.assert_close(out, i * x + y)
    finally:
        loaded.launch_trusted = real
    assert len(calls) == 3
    g3, stream, px, py, po, a, n = calls[-1]
    assert g3 == (16, 1, 1) and stream is None and (px, py, po) == (x.data_ptr(), y.data_ptr(), out.data_ptr())
    assert (a, n) == (2.0, 4096)


def test_repeated_launches_take_the_hot_variant_and_compute() -> None:
    """After a trusted launch its variant is hot: the next launches go through its native
    guarded launch, which reads the tensors itself."""
    x, y, out = _tensors(4096)
    _run(x, y, out, 2.0, 4096)
    _run(x, y, out, 2.0, 4096)
    ck = axpy.last_compiled
    real = axpy._fast.hot[0]
    assert real is not None
    answers = []
    axpy._fast.hot[0] = lambda *a: answers.append(real(*a)) or answers[-1]
    try:
        for i in range(3):
            out.zero_()
            _run(x, y, out, float(i) + 0.5, 4096)
            torch.cuda.synchronize()
            torch.testing.assert_close(out, (i + 0.5) * x + y)
    finally:
        axpy._fast.hot[0] = real
    assert answers == [ck] * 3


def test_every_argument_the_key_tells_apart() -> None:
    x, y, out = _tensors(1000)
    _run(x, y, out, 1.5, 1000)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 1.5 * x + y)
    # a misaligned view: a variant without the 16-byte assumption
    xs, ys, outs = x[1:], y[1:], torch.zeros(999, device="cuda")
    _run(xs, ys, outs, 1.5, 999)
    torch.cuda.synchronize()
    torch.testing.assert_close(outs, 1.5 * xs + ys)
    # another dtype: another variant
    xh, yh, oh = _tensors(1000, torch.float16)
    _run(xh, yh, oh, 1.5, 1000)
    torch.cuda.synchronize()
    torch.testing.assert_close(oh, (1.5 * xh.float() + yh.float()).half(), atol=1e-2, rtol=1e-2)
    # a CPU tensor after CUDA ones: the clear launch error, nothing launched
    xc = x.cpu()
    with pytest.raises(tlxc.runtime.LaunchError, match="not on the GPU"):
        _run(xc, y, out, 1.5, 1000)
    # a stream of its own
    s = torch.cuda.Stream()
    out.zero_()
    s.wait_stream(torch.cuda.current_stream())  # the zeros (default stream) before the launch on s
    _run(x, y, out, 3.0, 1000, stream=s)
    s.synchronize()
    torch.testing.assert_close(out, 3.0 * x + y)
    # PyTorch's current stream, when no stream is given
    out.zero_()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        _run(x, y, out, 4.0, 1000)
    s.synchronize()
    torch.testing.assert_close(out, 4.0 * x + y)


def test_a_grid_callable_takes_the_trusted_path() -> None:
    """A grid function's (n,) result reaches launch_trusted as it is (one int)."""
    x, y, out = _tensors(3000)
    grid = lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)  # noqa: E731
    for a in (1.0, 2.0, 3.0):
        out.zero_()
        axpy[grid](x, y, out, a, 3000, BLOCK=256)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, a * x + y)
    three = lambda meta: (12, 1, 1)  # noqa: E731
    out.zero_()
    axpy[three](x, y, out, 5.0, 3000, BLOCK=256)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 5.0 * x + y)


def test_an_empty_grid_runs_nothing() -> None:
    x, y, out = _tensors(256)
    _run(x, y, out, 1.0, 256)
    out.fill_(7.0)
    axpy[(0,)](x, y, out, 1.0, 256, BLOCK=256)
    torch.cuda.synchronize()
    assert bool((out == 7.0).all())
