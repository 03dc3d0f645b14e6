"""Checking a whole IR tree: what no single op's ``verify()`` can see.

Each op checks its own rules (operand types, shapes, attributes) in ``verify()``; this
module runs those for every op and adds the rules that need the surroundings:

* dominance: an operand's definition comes before its use, in the same block or in a
  block that encloses the use (values flow into nested regions, never out of them or
  between sibling regions);
* terminators: a terminator is the last op of its block, and every block of an op other
  than a plain container (``module``) ends in one;
* types: results and block arguments have well-formed ``tlxc.ir.types`` types;
* structure: parent links agree and every region holds exactly one block.

Passes run it after every rewrite under pytest: a pass that breaks
one of these rules fails next to the pass, not later in code generation.
"""

from __future__ import annotations

from .core import Block, BlockArgument, Operation, OpResult, Value, VerificationError
from .types import DType, PointerType, TileType, Type

__all__ = ["verify", "NO_TERMINATOR"]

# Ops whose regions are plain lists of ops and take no terminator. A trait on the op class
# would say this better; it can move there once core.Operation grows traits.
NO_TERMINATOR = frozenset({"module"})


def verify(op: Operation) -> None:
    """Raise ``VerificationError`` for the first broken rule in ``op`` or nested in it.

    ``op`` may sit inside a larger tree (verifying one ``for`` after a loop pass): values
    defined above it in the enclosing blocks count as defined. The operands of a detached
    ``op`` are not checked, since nothing says where they come from.
    """
    visible, blocks = _visible_at(op)
    _Verifier(visible, blocks).op(op, check_operands=op.parent is not None)


def _visible_at(op: Operation) -> tuple[set[Value], list[Block]]:
    """The values that dominate ``op``'s position, and the blocks enclosing it (outermost first)."""
    visible: set[Value] = set()
    blocks: list[Block] = []
    child, block = op, op.parent
    while block is not None:
        blocks.append(block)
        visible.update(block.args)
        for earlier in block.ops:
            if earlier is child:
                break
            visible.update(earlier.results)
        parent_op = block.parent_op
        if parent_op is None:
            break
        child, block = parent_op, parent_op.parent
    blocks.reverse()
    return visible, blocks


def _type_problem(t: object) -> str | None:
    """Why ``t`` is not a well-formed IR type, or None."""
    if not isinstance(t, Type):
        return f"{t!r} is not an IR type (tlxc.ir.types)"
    if isinstance(t, PointerType):
        if not isinstance(t.pointee, (DType, PointerType)):
            return f"pointer to {t.pointee!r}: pointers point to scalars or pointers"
        return _type_problem(t.pointee)
    if isinstance(t, TileType):
        if not t.tile_shape or any(not isinstance(d, int) or d <= 0 for d in t.tile_shape):
            return f"tile shape {t.tile_shape} must be a non-empty tuple of positive integers"
        if not isinstance(t.element, (DType, PointerType)):
            return f"tile of {t.element!r}: tile elements are scalars or pointers"
        return _type_problem(t.element)
    return None


def _describe(v: Value) -> str:
    hint = f" '%{v.name_hint}'" if v.name_hint else ""
    if isinstance(v, OpResult):
        at = f" at {v.op.loc}" if v.op.loc is not None else ""
        return f"result #{v.index}{hint} of '{v.op.name}'{at}"
    owner = v.owner.parent_op if isinstance(v.owner, Block) else None
    where = f" of '{owner.name}'" if owner is not None else ""
    return f"block argument{hint}{where}"


class _Verifier:
    def __init__(self, visible: set[Value], blocks: list[Block]) -> None:
        self.visible = visible  # values whose definitions dominate the current point
        self.blocks = blocks  # the blocks enclosing the current point, outermost first

    def op(self, op: Operation, check_operands: bool = True) -> None:
        self.structure(op)
        if check_operands:
            for i, v in enumerate(op.operands):
                if v not in self.visible:
                    raise VerificationError(f"operand #{i}, {_describe(v)}, {self.why_not_visible(v, op)}", op)
        for region in op.regions:
            self.terminator_placement(region.block)
        try:
            op.verify()
        except VerificationError:
            raise
        except Exception as e:  # a bug in the op's verify(), or IR it did not expect
            raise VerificationError(f"verify() raised {type(e).__name__}: {e}", op) from e
        for region in op.regions:
            self.block(op, region.block)

    def structure(self, op: Operation) -> None:
        for r in op.results:
            if r.op is not op:
                raise VerificationError(f"result #{r.index} belongs to another op", op)
            problem = _type_problem(r.type)
            if problem:
                raise VerificationError(f"result #{r.index}: {problem}", op)
        for i, region in enumerate(op.regions):
            if region.parent is not op:
                raise VerificationError(f"region {i} has a wrong parent link", op)
            if len(region.blocks) != 1:
                raise VerificationError(f"region {i} has {len(region.blocks)} blocks; regions hold exactly one", op)
            block = region.block
            if block.parent is not region:
                raise VerificationError(f"the block of region {i} has a wrong parent link", op)
            for arg in block.args:
                problem = _type_problem(arg.type)
                if problem:
                    raise VerificationError(f"block argument #{arg.index} of region {i}: {problem}", op)

    def why_not_visible(self, v: Value, user: Operation) -> str:
        if isinstance(v, OpResult):
            if any(v.op is b.parent_op for b in self.blocks) or v.op is user:
                return "is used inside the op that defines it"
            home = v.op.parent
        elif isinstance(v, BlockArgument):
            home = v.block
            if not any(v is a for a in home.args):
                return "is no longer an argument of its block"
        else:
            return "is neither an op result nor a block argument"
        if home is None:
            return "is not defined in the IR (its op was erased or never inserted)"
        if any(home is b for b in self.blocks):
            return "is used before its definition"
        return "is defined in a region that does not enclose this use"

    def terminator_placement(self, block: Block) -> None:
        for op, after in zip(block.ops, block.ops[1:]):
            if op.IS_TERMINATOR:
                raise VerificationError(f"'{op.name}' must be the last op of its block, but '{after.name}' "
                                        "follows it", op)

    def terminator_presence(self, owner: Operation, block: Block) -> None:
        last = block.ops[-1] if block.ops else None
        if owner.NAME in NO_TERMINATOR:
            if last is not None and last.IS_TERMINATOR:
                raise VerificationError(f"the body of '{owner.name}' takes no terminator", last)
        elif last is None or not last.IS_TERMINATOR:
            raise VerificationError("a region does not end in a terminator", owner)

    def block(self, owner: Operation, block: Block) -> None:
        self.terminator_presence(owner, block)
        defined: list[Value] = list(block.args)
        self.visible.update(block.args)
        self.blocks.append(block)
        for op in block.ops:
            if op.parent is not block:
                raise VerificationError("op has a wrong parent link (it is listed in another block)", op)
            self.op(op)
            self.visible.update(op.results)
            defined.extend(op.results)
        self.blocks.pop()
        self.visible.difference_update(defined)
