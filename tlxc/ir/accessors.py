"""Typed fields for the named operands and attributes of an op class.

An op class names its operands in ``OPERANDS`` and its attributes in ``ATTRS``; the
parser and the printer read those two. So that passes and code generators read
``op.buf`` instead of ``op.operands[1]`` and ``op.pendings`` instead of
``op.attrs["pendings"]``, and so that mypy knows what each one is, the class also
declares one field per name::

    @register
    class TmaLoadOp(Operation):
        OPERANDS = ("desc", "buf", "bar", "*coords", "?pred")
        ATTRS = {"eviction": ""}

        desc = Operand()              # Value
        buf = Operand()
        bar = Operand()
        coords = VariadicOperands()   # list[Value]
        pred = OptionalOperand()      # Value | None
        eviction = Attr[str]()        # str; ``op.eviction = "evict_last"`` writes the attribute

A field takes its name from the class attribute it is assigned to. ``OPERANDS`` and
``ATTRS`` stay the one description of the op's syntax: ``register`` refuses a class whose
fields name an operand or attribute that is not there, or with another kind (a plain
field for an optional operand, a wrong position). A class may declare no fields at all;
then ``Operation.__getattr__`` still reads its names, untyped. ``missing_fields`` says
which names of a class have no field (a test requires none for the catalog).

The type argument of ``Attr`` is what the op's ``verify()`` guarantees; before
verification an attribute may hold anything the builder was given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar, overload

if TYPE_CHECKING:
    from .core import Operation, Value

T = TypeVar("T")


class Field:
    """Base of the fields: the name is the class attribute the field is assigned to."""

    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def spec(self) -> str:
        """How the name is written in OPERANDS ("x", "?x", "*x"); attributes: the name."""
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _plain_index(specs: tuple[str, ...], name: str) -> int | None:
    """Position of the plain operand ``name`` among the operands (the plain ones come
    first, in order); None when it is not a plain operand before any variadic one."""
    i = 0
    for spec in specs:
        if spec.startswith("*"):
            return None
        if spec.startswith("?"):
            continue
        if spec == name:
            return i
        i += 1
    return None


class Operand(Field):
    """A plain operand: always present, at a fixed position."""

    __slots__ = ("index",)

    def __init__(self) -> None:
        super().__init__()
        self.index = -1

    def __set_name__(self, owner: type, name: str) -> None:
        super().__set_name__(owner, name)
        index = _plain_index(getattr(owner, "OPERANDS", ()), name)
        if index is None:
            raise TypeError(f"{owner.__name__}.{name}: OPERANDS {getattr(owner, 'OPERANDS', ())} has no plain "
                            f"operand '{name}' before the variadic one")
        self.index = index

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Operand: ...

    @overload
    def __get__(self, obj: Operation, owner: type | None = None) -> Value: ...

    def __get__(self, obj: Operation | None, owner: type | None = None) -> Operand | Value:
        if obj is None:
            return self
        return obj.operands[self.index]

    def __set__(self, obj: Operation, value: Value) -> None:
        obj.set_operand(self.index, value)


class OptionalOperand(Field):
    """An optional operand (``"?name"``): the value, or None when absent."""

    __slots__ = ()

    def spec(self) -> str:
        return "?" + self.name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> OptionalOperand: ...

    @overload
    def __get__(self, obj: Operation, owner: type | None = None) -> Value | None: ...

    def __get__(self, obj: Operation | None, owner: type | None = None) -> OptionalOperand | Value | None:
        if obj is None:
            return self
        return obj.operand(self.name)

    def __set__(self, obj: Operation, value: NoReturn) -> None:
        # adding or dropping an optional operand moves the others: rebuild the op instead.
        # (NoReturn: mypy refuses the assignment; without __set__ it would shadow the field.)
        raise AttributeError(f"{obj.NAME}.{self.name} is an optional operand and cannot be assigned")


class VariadicOperands(Field):
    """The variadic operands (``"*name"``), as a new list."""

    __slots__ = ()

    def spec(self) -> str:
        return "*" + self.name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> VariadicOperands: ...

    @overload
    def __get__(self, obj: Operation, owner: type | None = None) -> list[Value]: ...

    def __get__(self, obj: Operation | None, owner: type | None = None) -> VariadicOperands | list[Value]:
        if obj is None:
            return self
        return obj.variadic_operands

    def __set__(self, obj: Operation, value: NoReturn) -> None:
        raise AttributeError(f"{obj.NAME}.{self.name} are variadic operands and cannot be assigned")


class Attr(Field, Generic[T]):
    """An attribute of type ``T`` (``Attr[int]()``); assigning writes ``op.attrs``."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Attr[T]: ...

    @overload
    def __get__(self, obj: Operation, owner: type | None = None) -> T: ...

    def __get__(self, obj: Operation | None, owner: type | None = None) -> Attr[T] | T:
        if obj is None:
            return self
        value: T = obj.attrs[self.name]
        return value

    def __set__(self, obj: Operation, value: T) -> None:
        obj.attrs[self.name] = value


def fields(cls: type) -> dict[str, Field]:
    """The fields of an op class, its bases' included (a subclass's field wins)."""
    out: dict[str, Field] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Field):
                out[name] = value
            elif name in out:
                del out[name]  # a subclass replaced the field with something else
    return out


def field_errors(cls: type) -> list[str]:
    """What is wrong with the fields of ``cls`` against its OPERANDS and ATTRS."""
    operands: tuple[str, ...] = getattr(cls, "OPERANDS", ())
    attrs: dict[str, Any] = getattr(cls, "ATTRS", {})
    errors = []
    for name, f in fields(cls).items():
        if isinstance(f, Attr):
            if name not in attrs:
                errors.append(f"attribute field '{name}' is not in ATTRS {sorted(attrs)}")
        elif f.spec() not in operands:
            errors.append(f"operand field '{f.spec()}' is not in OPERANDS {operands}")
        elif isinstance(f, Operand) and f.index != _plain_index(operands, name):
            errors.append(f"operand field '{name}' reads position {f.index}, OPERANDS {operands} put it at "
                          f"{_plain_index(operands, name)}")
    return errors


def missing_fields(cls: type) -> list[str]:
    """The names in OPERANDS (as written there) and ATTRS that ``cls`` declares no field for."""
    have = fields(cls)
    missing = [spec for spec in getattr(cls, "OPERANDS", ()) if spec.lstrip("?*") not in have
               or have[spec.lstrip("?*")].spec() != spec]
    missing += [name for name in getattr(cls, "ATTRS", {}) if not isinstance(have.get(name), Attr)]
    return missing
