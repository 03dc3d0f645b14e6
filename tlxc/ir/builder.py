"""Building IR: an insertion point and a current source location."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence, TypeVar

from .core import Block, Location, Operation, Region, Value
from .types import Type

O = TypeVar("O", bound=Operation)


class Builder:
    """Creates ops at an insertion point (the end of ``block`` by default).

    ``loc`` is stamped on every op created; the frontend updates it as it walks the
    user's source.
    """

    def __init__(self, block: Block | None = None, loc: Location | None = None) -> None:
        self.block = block
        self.index: int | None = None
        self.loc = loc
        # every op created while it is a list (see ``journal_of``)
        self.journal: list[Operation] | None = None

    @classmethod
    def at(cls, op: Operation, after: bool = False) -> "Builder":
        """A builder that inserts right before ``op`` (``after``: right after it), with
        ``op``'s location, for good (``before`` is the scoped form)."""
        block = op.parent
        assert block is not None
        b = cls(block, op.loc)
        b.index = block.ops.index(op) + after
        return b

    def create(
        self,
        cls: type[O],
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attrs: dict[str, Any] | None = None,
        regions: Sequence[Region] = (),
        optional: dict[str, Value | None] | None = None,
        loc: Location | None = None,
    ) -> O:
        return self.place(cls(operands, result_types, attrs, regions, loc or self.loc, optional))

    def place(self, op: O) -> O:
        """Put ``op`` (made elsewhere, not in a block) at the insertion point."""
        if self.journal is not None:
            self.journal.append(op)
        if self.block is not None:
            if self.index is None:
                self.block.append(op)
            else:
                self.block.insert(self.index, op)
                self.index += 1
        return op

    def value(self, cls: type[Operation], operands: Sequence[Value], result_type: Type,
              optional: dict[str, Value | None] | None = None, **attrs: Any) -> Value:
        """Create a one-result op and return its result."""
        return self.create(cls, operands, [result_type], attrs, optional=optional).result

    @contextmanager
    def journal_of(self) -> Iterator[list[Operation]]:
        """The ops created inside the ``with``, also those in blocks not (yet) part of an
        op, so that a caller who gives up what it built can erase all of it. Journals nest:
        an inner one's ops are also in the outer one."""
        outer, self.journal = self.journal, []
        try:
            yield self.journal
        finally:
            inner, self.journal = self.journal, outer
            if outer is not None:
                outer.extend(inner)

    @contextmanager
    def at_end(self, block: Block) -> Iterator["Builder"]:
        saved = (self.block, self.index)
        self.block, self.index = block, None
        try:
            yield self
        finally:
            self.block, self.index = saved

    @contextmanager
    def before(self, op: Operation) -> Iterator["Builder"]:
        saved = (self.block, self.index)
        assert op.parent is not None
        self.block, self.index = op.parent, op.parent.ops.index(op)
        try:
            yield self
        finally:
            self.block, self.index = saved
