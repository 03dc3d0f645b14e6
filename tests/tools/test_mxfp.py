"""``tlxc.tools.mxfp`` (Triton's ``triton.tools.mxfp``): E2M1 and E8M0 codes against values
worked out by hand from the formats' definitions, packing, and the seeded draws."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tlxc.tools.mxfp import MXFP4Tensor, MXScaleTensor  # noqa: E402

NAN = float("nan")
INF = float("inf")


def test_every_e2m1_code_decodes_to_its_value() -> None:
    # code = sign << 3 | exponent << 1 | mantissa; exponent 0 is subnormal (m * 0.5),
    # otherwise (1 + m/2) * 2**(e - 1)
    t = MXFP4Tensor(size=16)
    t.data = torch.arange(16, dtype=torch.uint8)
    v = t.to(torch.float32)
    assert v.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
    assert torch.signbit(v[8]).item()  # code 8 is -0
    assert v.dtype == torch.float32


def test_e2m1_rounds_to_nearest_even_and_saturates() -> None:
    x = torch.tensor([0.0, -0.0, 0.25, 0.2500001, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.0001, 6.5, 100.0,
                      -2.9, -0.3, INF, -INF, 0.1])
    t = MXFP4Tensor(x)
    # ties: 0.25 -> 0 (code 0 even), 0.75 -> 1.0 (code 2), 1.25 -> 1.0 (2), 1.75 -> 2.0 (4),
    # 2.5 -> 2.0 (4), 3.5 -> 4.0 (6), 5 -> 4.0 (6); just above 0.25: 0.5 (code 1)
    assert t.data.tolist() == [0, 8, 0, 1, 2, 2, 4, 4, 6, 6, 7, 7, 7, 13, 9, 7, 15, 0]
    assert t.to(torch.float32).tolist() == [0.0, -0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, 6.0,
                                            -3.0, -0.5, 6.0, -6.0, 0.0]
    assert t.data.dtype == torch.uint8 and t.device == x.device
    assert MXFP4Tensor(torch.tensor([NAN])).data.tolist() == [7]  # no NaN in E2M1: the largest magnitude
    assert x[2].item() == 0.25  # the input is left alone


def test_e2m1_round_trips_every_value() -> None:
    values = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    both = torch.cat([values, -values])
    assert MXFP4Tensor(both).data.tolist() == list(range(16))


def test_packing_puts_the_even_element_in_the_low_nibble() -> None:
    t = MXFP4Tensor(size=(2, 3))
    t.data = torch.tensor([[1, 2, 3], [0xA, 0xB, 0xC]], dtype=torch.uint8)
    along_k = t.to_packed_tensor(dim=1)  # odd length: a zero code pads each row
    assert along_k.tolist() == [[0x21, 0x03], [0xBA, 0x0C]]
    assert t.unpack_packed_tensor(along_k, 1, (2, 3)).tolist() == t.data.tolist()
    along_m = t.to_packed_tensor(dim=0)
    assert along_m.tolist() == [[0xA1, 0xB2, 0xC3]]
    assert t.unpack_packed_tensor(along_m, 0, (2, 3)).tolist() == t.data.tolist()
    with pytest.raises(ValueError, match="dim 2"):
        t.to_packed_tensor(dim=2)


def test_e8m0_codes() -> None:
    s = MXScaleTensor(torch.tensor([1.0, 3.0, 0.75, 2.0 ** -127, 2.0 ** -140, 2.0 ** 127 * 1.5, 0.0, -4.0, NAN, INF,
                                    7.9999995]))
    # 1 -> 127; 3 -> floor(log2 3) = 1 -> 128; 0.75 -> -1 -> 126; tiny -> clamped to 0;
    # the largest finite power -> 254; zero, negatives, NaN, Inf -> 255; just under 8 -> 2**2
    assert s.data.tolist() == [127, 128, 126, 0, 0, 254, 255, 255, 255, 255, 129]
    v = s.to(torch.float32)
    assert v[:3].tolist() == [1.0, 2.0, 0.5] and v[3].item() == 2.0 ** -127 and v[5].item() == 2.0 ** 127
    assert torch.isnan(v[6:10]).all()
    with pytest.raises(ValueError, match="float32"):
        s.to(torch.float16)


def test_random_draws_are_seeded_and_in_range() -> None:
    torch.manual_seed(3)
    a = MXFP4Tensor(size=(4, 8)).random().data
    torch.manual_seed(3)  # the draws: signs, then exponents, then mantissas, as Triton's helper
    sign = torch.randint(0, 2, (4, 8), dtype=torch.uint8)
    exponent = torch.randint(0, 4, (4, 8), dtype=torch.uint8)
    mantissa = torch.randint(0, 2, (4, 8), dtype=torch.uint8)
    assert torch.equal(a, sign << 3 | exponent << 1 | mantissa)
    s = MXScaleTensor(size=1000).random(low=0.5, high=4.0).data
    assert s.min().item() == 126 and s.max().item() == 129  # 2**-1 .. 2**2
    assert MXScaleTensor(size=(2, 3)).random().data.shape == (2, 3)
    with pytest.raises(ValueError, match="low=8"):
        MXScaleTensor(size=4).random(low=8.0, high=2.0)
    with pytest.raises(ValueError, match="give data"):
        MXScaleTensor()
