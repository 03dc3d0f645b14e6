"""Deep copies of IR: ``clone(op)`` gives an op with the same structure, types,
attributes, locations and value names, whose values are all new (values defined outside
``op`` stay shared). Code generators rewrite the IR (layouts, staging); they work on a
clone so that the compiled kernel's own module stays as the frontend built it -- a
clone costs a small fraction of printing and re-parsing the text."""

from __future__ import annotations

from .core import Block, Operation, OpResult, Region, Value


def clone(op: Operation, mapping: dict[int, Value] | None = None) -> Operation:
    """A deep copy of ``op`` and everything nested in it. ``mapping`` (``id`` of a value ->
    value) gives replacements for values defined outside ``op``; the copies of the values
    defined inside it are added to it."""
    return _clone(op, {} if mapping is None else mapping)


def _clone(op: Operation, mapping: dict[int, Value]) -> Operation:
    new = object.__new__(type(op))
    new.parent = None
    new.loc = op.loc
    new.attrs = dict(op.attrs)
    new.present = dict(op.present)
    new.operands = []
    for v in op.operands:
        new._add_operand(mapping.get(id(v), v))
    new.results = []
    for r in op.results:
        nr = OpResult(r.type, new, r.index)
        nr.name_hint = r.name_hint
        new.results.append(nr)
        mapping[id(r)] = nr
    new.regions = []
    for region in op.regions:
        nreg = Region()
        nreg.parent = new
        for block in region.blocks:
            nb = Block([a.type for a in block.args], [a.name_hint for a in block.args])
            for a, na in zip(block.args, nb.args):
                mapping[id(a)] = na
            nreg.add_block(nb)
            for inner in block.ops:
                nb.append(_clone(inner, mapping))
        new.regions.append(nreg)
    return new
