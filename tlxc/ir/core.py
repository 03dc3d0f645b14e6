"""The SSA core of the tile IR: values, operations, blocks and regions.

An ``Operation`` has operands (``Value``), results (``OpResult``), attributes (plain
Python data: int, float, bool, str, ``Type``, tuples of those) and regions. A
``Region`` holds one ``Block``; a block has arguments and a list of operations whose last
one is a terminator when the region needs one. Concrete operations are small subclasses
declared in ``tlxc.ir.ops`` (one place, grouped by area); each states its operand names,
attribute names and how many results and regions it has, and checks itself in
``verify()``.

Nothing here knows about Python kernels or targets: the frontend builds this IR, the
passes rewrite it, the interpreter runs it and the code generators lower it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Sequence

from .accessors import field_errors
from .effects import Memory, Sync
from .types import MemDescType, Type


@dataclass(frozen=True)
class Location:
    """Where an op comes from in the user's source (1-based line, 0-based column)."""

    file: str
    line: int
    col: int
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


UNKNOWN_LOC = Location("<unknown>", 0, 0)


class VerificationError(Exception):
    """The IR breaks one of its own rules (an op's ``verify`` failed)."""

    def __init__(self, message: str, op: "Operation | None" = None) -> None:
        where = f" at {op.loc}" if op is not None and op.loc is not None else ""
        name = f"'{op.name}'" if op is not None else "IR"
        super().__init__(f"{name}{where}: {message}")
        self.op = op


class _Edits:
    """How many structural edits (ops added, removed, operands or uses replaced) the IR
    has seen in this process: the pass pipeline compares it before and after a round of
    canonicalization to know whether the round changed anything."""

    count = 0


def edit_count() -> int:
    return _Edits.count


class Value:
    """An SSA value: an op result or a block argument."""

    __slots__ = ("type", "uses", "name_hint")

    def __init__(self, type: Type, name_hint: str | None = None) -> None:
        self.type = type
        self.uses: list[Operation] = []
        self.name_hint = name_hint

    def replace_all_uses_with(self, new: "Value") -> None:
        if new is self:
            return
        if self.uses:
            _Edits.count += 1
        for user in list(self.uses):
            for i, v in enumerate(user.operands):
                if v is self:
                    user.operands[i] = new
                    new.uses.append(user)
        self.uses = []

    @property
    def owner(self) -> "Operation | Block | None":
        return None

    def __repr__(self) -> str:
        return f"<Value {self.type}>"


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type: Type, op: "Operation", index: int) -> None:
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def owner(self) -> "Operation":
        return self.op


class BlockArgument(Value):
    __slots__ = ("block", "index")

    def __init__(self, type: Type, block: "Block", index: int, name_hint: str | None = None) -> None:
        super().__init__(type, name_hint)
        self.block = block
        self.index = index

    @property
    def owner(self) -> "Block":
        return self.block


class Block:
    """A list of operations with typed arguments."""

    def __init__(self, arg_types: Sequence[Type] = (), arg_names: Sequence[str | None] | None = None) -> None:
        names = list(arg_names) if arg_names is not None else [None] * len(arg_types)
        self.args: list[BlockArgument] = [
            BlockArgument(t, self, i, n) for i, (t, n) in enumerate(zip(arg_types, names))
        ]
        self.ops: list[Operation] = []
        self.parent: Region | None = None

    def add_arg(self, type: Type, name_hint: str | None = None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), name_hint)
        self.args.append(arg)
        return arg

    def append(self, op: "Operation") -> "Operation":
        _Edits.count += 1
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: "Operation") -> "Operation":
        _Edits.count += 1
        op.parent = self
        self.ops.insert(index, op)
        return op

    def remove(self, op: "Operation") -> None:
        _Edits.count += 1
        self.ops.remove(op)
        op.parent = None

    @property
    def terminator(self) -> "Operation | None":
        if self.ops and self.ops[-1].IS_TERMINATOR:
            return self.ops[-1]
        return None

    @property
    def parent_op(self) -> "Operation | None":
        return self.parent.parent if self.parent is not None else None


class Region:
    """A region of an op; tile IR regions have exactly one block."""

    def __init__(self, block: Block | None = None) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        if block is not None:
            self.add_block(block)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        return self.blocks[0]


class Operation:
    """Base class of every op.

    Subclasses set:
      NAME        -- the printed op name;
      OPERANDS    -- names of the fixed operands, in order; a trailing ``"*name"`` takes
                     the remaining operands (variadic); a leading ``"?"`` marks an optional
                     operand, printed as ``name=%v`` and absent when not given;
      ATTRS       -- attribute names with their defaults (``REQUIRED`` if none);
      NUM_RESULTS -- an int, or None when variadic;
      NUM_REGIONS -- how many regions it owns;
      IS_TERMINATOR, PURE -- traits used by the verifier and the passes; PURE (no side
                     effects: CSE may merge it, DCE may drop it) must be declared, so
                     an op with effects is never removed by mistake;
      MEMORY, SYNC, RETIRES, RETIRES_ALL_AT_ZERO -- its effects on buffers and barriers
                     (``tlxc.ir.effects``), read through ``memory_effects()`` and
                     ``sync_effects()``;
      ``value_flow()`` -- for an op with regions, which values flow into and out of them.

    and declares one typed field per operand and attribute name (``buf = Operand()``,
    ``pendings = Attr[int]()``, see ``tlxc.ir.accessors``), which passes read instead
    of ``operands[i]`` and ``attrs["..."]``.
    """

    NAME: ClassVar[str] = ""
    OPERANDS: ClassVar[tuple[str, ...]] = ()
    ATTRS: ClassVar[dict[str, Any]] = {}
    NUM_RESULTS: ClassVar[int | None] = 1
    NUM_REGIONS: ClassVar[int] = 0
    IS_TERMINATOR: ClassVar[bool] = False
    PURE: ClassVar[bool] = False
    MEMORY: ClassVar[tuple[Memory, ...]] = ()
    SYNC: ClassVar[tuple[Sync, ...]] = ()
    RETIRES: ClassVar[tuple[str, ...]] = ()
    RETIRES_ALL_AT_ZERO: ClassVar[bool] = False
    REQUIRED: ClassVar[object] = object()

    def __init__(
        self,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attrs: dict[str, Any] | None = None,
        regions: Sequence[Region] = (),
        loc: Location | None = None,
        optional: dict[str, Value | None] | None = None,
    ) -> None:
        self.parent: Block | None = None
        self.loc = loc
        self.attrs: dict[str, Any] = {}
        given = dict(attrs or {})
        for key, default in self.ATTRS.items():
            if key in given:
                self.attrs[key] = given.pop(key)
            elif default is Operation.REQUIRED:
                raise VerificationError(f"missing attribute '{key}'", self)
            else:
                self.attrs[key] = default
        if given:
            raise VerificationError(f"unknown attributes {sorted(given)}", self)
        # optional operands are kept in the order OPERANDS declares them, after the fixed ones
        self.present: dict[str, bool] = {}
        ops = list(operands)
        for spec in self.OPERANDS:
            if spec.startswith("?"):
                v = (optional or {}).get(spec[1:])
                self.present[spec[1:]] = v is not None
                if v is not None:
                    ops.append(v)
        self.operands: list[Value] = []
        for v in ops:
            self._add_operand(v)
        self.results: list[OpResult] = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.regions: list[Region] = []
        for r in regions:
            r.parent = self
            self.regions.append(r)

    def _add_operand(self, v: Value) -> None:
        if not isinstance(v, Value):
            raise TypeError(f"operand of {self.NAME} is not an IR value: {v!r}")
        self.operands.append(v)
        v.uses.append(self)

    # -- access by name ------------------------------------------------------------------
    def operand(self, name: str) -> Value | None:
        """The operand called ``name`` in OPERANDS (None for an absent optional one)."""
        i = 0
        for spec in self.OPERANDS:
            if spec.startswith("*"):
                break
            if spec.startswith("?"):
                continue
            if spec == name:
                return self.operands[i]
            i += 1
        fixed = i
        n_var = len(self.operands) - fixed - sum(self.present.values())
        j = fixed + max(n_var, 0)
        for spec in self.OPERANDS:
            if spec.startswith("?"):
                if self.present.get(spec[1:]):
                    if spec[1:] == name:
                        return self.operands[j]
                    j += 1
                elif spec[1:] == name:
                    return None
        raise KeyError(name)

    @property
    def variadic_operands(self) -> list[Value]:
        fixed = sum(1 for s in self.OPERANDS if not s.startswith(("?", "*")))
        n_opt = sum(self.present.values())
        return self.operands[fixed: len(self.operands) - n_opt]

    def __getattr__(self, name: str) -> Any:
        # attributes and named operands of a class that declares no typed fields
        # (``tlxc.ir.accessors``) still read as fields, untyped: op.axis, op.mask
        if name.startswith("_") or name in ("attrs", "present", "operands"):
            raise AttributeError(name)
        attrs = self.__dict__.get("attrs", {})
        if name in attrs:
            return attrs[name]
        specs = type(self).OPERANDS
        if name in specs or "?" + name in specs:
            return self.operand(name)
        raise AttributeError(f"{type(self).__name__} has no field '{name}'")

    @property
    def name(self) -> str:
        return self.NAME

    # -- effects (``tlxc.ir.effects``) ----------------------------------------------------
    def memory_effects(self) -> list[tuple[Memory, "Value"]]:
        """The op's ``MEMORY`` effects with the buffer each one touches; an effect whose
        operand is absent or is not a buffer (a register operand) does not count."""
        out = []
        for effect in self.MEMORY:
            v = self.operand(effect.operand)
            if v is not None and isinstance(v.type, MemDescType):
                out.append((effect, v))
        return out

    def sync_effects(self) -> tuple[Sync, ...]:
        """The synchronization the op performs (its class's ``SYNC``)."""
        return self.SYNC

    def value_flow(self) -> list[tuple["Value", "Value"]]:
        """``(from, to)`` pairs: the value ``to`` (a block argument of one of the op's
        regions, or one of its results) may be the value ``from``. Ops with regions that
        carry values declare it."""
        return []

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise ValueError(f"{self.NAME} has {len(self.results)} results")
        return self.results[0]

    # -- structure -----------------------------------------------------------------------
    def walk(self) -> Iterator["Operation"]:
        """Pre-order walk over this op and every op nested in its regions."""
        yield self
        for r in self.regions:
            for b in r.blocks:
                for op in list(b.ops):
                    yield from op.walk()

    def erase(self) -> None:
        """Remove this op from its block and drop its uses of its operands."""
        for v in self.operands:
            if self in v.uses:
                v.uses.remove(self)
        for r in self.regions:
            for b in r.blocks:
                for op in list(b.ops):
                    op.erase()
        if self.parent is not None:
            self.parent.remove(self)

    def set_operand(self, index: int, value: Value) -> None:
        old = self.operands[index]
        _Edits.count += 1
        if self in old.uses:
            old.uses.remove(self)
        self.operands[index] = value
        value.uses.append(self)

    def verify(self) -> None:
        """Check the op's own rules; raise VerificationError. Subclasses extend this."""
        if self.NUM_RESULTS is not None and len(self.results) != self.NUM_RESULTS:
            raise VerificationError(f"expects {self.NUM_RESULTS} results, has {len(self.results)}", self)
        if len(self.regions) != self.NUM_REGIONS:
            raise VerificationError(f"expects {self.NUM_REGIONS} regions, has {len(self.regions)}", self)
        fixed = [s for s in self.OPERANDS if not s.startswith(("?", "*"))]
        has_var = any(s.startswith("*") for s in self.OPERANDS)
        n = len(self.operands) - sum(self.present.values())
        if (n < len(fixed)) if has_var else (n != len(fixed)):
            raise VerificationError(f"expects operands {self.OPERANDS}, has {len(self.operands)}", self)

    def __repr__(self) -> str:
        return f"<{self.NAME} at {self.loc}>"


OP_REGISTRY: dict[str, type[Operation]] = {}


def register(cls: type[Operation]) -> type[Operation]:
    """Class decorator: make an op known to the parser under its NAME. Its typed fields
    (``tlxc.ir.accessors``), if it declares any, must agree with OPERANDS and ATTRS."""
    if cls.NAME in OP_REGISTRY:
        raise ValueError(f"op {cls.NAME} declared twice")
    errors = field_errors(cls)
    if errors:
        raise TypeError(f"op class {cls.__name__}: " + "; ".join(errors))
    OP_REGISTRY[cls.NAME] = cls
    return cls
