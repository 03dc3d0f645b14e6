"""The typed fields of the op classes (``tlxc.ir.accessors``) against OPERANDS / ATTRS."""

from __future__ import annotations

import pytest
from roundtrip_tlx import BARS, VIEW, tlx_kernel  # tests/ir/roundtrip_tlx.py

from tlxc.ir import ops
from tlxc.ir.accessors import Attr, Operand, OptionalOperand, VariadicOperands, field_errors, fields, missing_fields
from tlxc.ir.core import OP_REGISTRY, Operation, Value, register
from tlxc.ir.parser import parse_ir
from tlxc.ir.types import TileType, float32, int1, int32, pointer, tile


def test_every_op_class_declares_a_field_per_operand_and_attribute():
    missing = {cls.__name__: missing_fields(cls) for cls in OP_REGISTRY.values() if missing_fields(cls)}
    assert missing == {}


def test_every_field_names_an_operand_or_attribute():
    # register() already refuses a class whose fields disagree; this covers subclasses
    # that change OPERANDS / ATTRS after the fact
    wrong = {cls.__name__: field_errors(cls) for cls in OP_REGISTRY.values() if field_errors(cls)}
    assert wrong == {}
    extra = {cls.__name__: sorted(set(fields(cls)) - {s.lstrip("?*") for s in cls.OPERANDS} - set(cls.ATTRS))
             for cls in OP_REGISTRY.values()}
    assert {k: v for k, v in extra.items() if v} == {}


def test_field_kinds_follow_the_operand_specs():
    f = fields(ops.TmaLoadOp)
    assert [type(f[n]) for n in ("desc", "buf", "bar", "coords", "pred", "eviction")] == [
        Operand, Operand, Operand, VariadicOperands, OptionalOperand, Attr]
    assert [f[n].index for n in ("desc", "buf", "bar")] == [0, 1, 2]  # type: ignore[attr-defined]
    assert fields(ops.AddOp).keys() == {"lhs", "rhs"}  # inherited from the elementwise base


def _ptr_tile() -> Value:
    return Value(tile((16,), pointer(float32)))


def test_fields_read_the_operands_by_name_with_optional_ones_absent_or_present():
    ptr, mask, other = _ptr_tile(), Value(tile((16,), int1)), Value(tile((16,), float32))
    only_other = ops.LoadOp([ptr], [tile((16,), float32)], optional={"other": other})
    assert only_other.ptr is ptr and only_other.mask is None and only_other.other is other
    both = ops.LoadOp([ptr], [tile((16,), float32)], optional={"mask": mask, "other": other})
    assert (both.ptr, both.mask, both.other) == (ptr, mask, other)
    assert (both.cache, both.eviction, both.volatile) == ("", "", False)


def test_variadic_fields_exclude_the_fixed_and_optional_operands():
    module = parse_ir(tlx_kernel(VIEW + "\n" + BARS + "\ntma_load %d, %v, %b0, %n, %n, pred=%c"))
    load = next(op for op in module.walk() if isinstance(op, ops.TmaLoadOp))
    n, c, d = (module.funcs[0].body.args[i] for i in (0, 1, 5))  # see TLX_ARGS
    assert load.desc is d and load.coords == [n, n] and load.pred is c
    assert load.bar.type == load.operands[2].type and len(load.operands) == 6
    assert load.buf.type == load.operands[1].type and load.eviction == ""


def test_attribute_fields_write_through_to_attrs():
    op = ops.BarrierAllocOp([], [], {"count": 2})
    assert op.smem_offset == -1
    op.smem_offset = 128
    assert op.attrs["smem_offset"] == 128 and op.count == 2


def test_a_plain_operand_field_assigns_through_set_operand():
    x, y = Value(tile((4,), int32)), Value(tile((4,), int32))
    op = ops.AddOp([x, x], [tile((4,), int32)])
    op.rhs = y
    assert op.operands == [x, y] and op in y.uses and x.uses.count(op) == 1


def test_optional_and_variadic_fields_cannot_be_assigned():
    op = ops.YieldOp([Value(int32)], [])
    with pytest.raises(AttributeError, match="variadic"):
        op.values = []  # type: ignore[misc,assignment]
    load = ops.LoadOp([_ptr_tile()], [tile((16,), float32)])
    with pytest.raises(AttributeError, match="optional"):
        load.mask = None  # type: ignore[misc,assignment]


def test_register_refuses_fields_that_disagree_with_the_declaration():
    class Wrong(Operation):
        NAME = "test_wrong_fields"
        OPERANDS = ("a", "?b")
        ATTRS = {"k": 0}
        b = VariadicOperands()
        j = Attr[int]()

    with pytest.raises(TypeError, match=r"operand field '\*b' is not in OPERANDS.*attribute field 'j' is not in"):
        register(Wrong)
    assert "test_wrong_fields" not in OP_REGISTRY
    assert missing_fields(Wrong) == ["a", "?b", "k"]


def test_a_plain_field_must_name_a_plain_operand():
    # Python < 3.12 wraps an error of __set_name__ in a RuntimeError
    with pytest.raises((RuntimeError, TypeError)) as info:
        class Bad(Operation):  # noqa: F841
            OPERANDS = ("?b",)
            b = Operand()
    assert "has no plain operand 'b'" in str(info.value.__cause__ or info.value)


def test_a_class_without_fields_still_reads_its_names_untyped():
    class Plain(Operation):
        NAME = "test_plain_fields"
        OPERANDS = ("x", "?m")
        ATTRS = {"k": 3}

    x = Value(int32)
    op = Plain([x], [])
    assert (op.x, op.m, op.k) == (x, None, 3)
    assert missing_fields(Plain) == ["x", "?m", "k"]


def test_result_types_are_untouched_by_fields():
    op = ops.ConstantOp([], [tile((8,), int32)], {"value": 7})
    assert op.value == 7 and isinstance(op.result.type, TileType)


MYPY_SNIPPET = """
from tlxc.ir import ops
def f(load: ops.LoadOp, tma: ops.TmaLoadOp, w: ops.AsyncDotWaitOp, fo: ops.ForOp) -> None:
    reveal_type(load.ptr)
    reveal_type(load.mask)
    reveal_type(tma.coords)
    reveal_type(w.pendings)
    reveal_type(fo.num_stages)
    w.pendings = "two"
"""


def test_mypy_sees_the_field_types(tmp_path):
    api = pytest.importorskip("mypy.api")
    config = tmp_path / "mypy.ini"  # not pyproject.toml's, whose ``files`` excludes ``-c``
    config.write_text("[mypy]\nfollow_imports = silent\n")
    out, err, status = api.run(["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
                                "--no-error-summary", "-c", MYPY_SNIPPET])
    revealed = [line.split("Revealed type is ")[1] for line in out.splitlines() if "Revealed type" in line]
    assert revealed == ['"tlxc.ir.core.Value"', '"tlxc.ir.core.Value | None"', '"list[tlxc.ir.core.Value]"',
                        '"int"', '"int | None"']
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in out
    assert status == 1, err


def test_narrow_returns_the_type_or_raises_naming_both():
    from tlxc.ir.types import MemDescType, narrow

    t = tile((4,), int32)
    assert narrow(t, TileType) is t
    with pytest.raises(TypeError, match=r"expected a MemDescType, got tile<4xi32>"):
        narrow(t, MemDescType)
