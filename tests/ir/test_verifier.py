"""The verifier rejects invalid IR, and says what is wrong.

``INVALID`` holds, for every registered op, a module in which that op breaks a rule, and a
fragment of the expected message; a new op without an entry fails
``test_every_op_has_a_negative_test``. The parser builds them (it never verifies), so most
are text; what text cannot express (a use before its definition, a foreign type object)
is made by editing parsed IR.
"""

from __future__ import annotations

import textwrap

import pytest
from roundtrip_amd import AMD_INVALID  # tests/ir/roundtrip_amd.py
from roundtrip_cluster import CLUSTER_INVALID  # tests/ir/roundtrip_cluster.py
from roundtrip_tasks import TASKS_INVALID  # tests/ir/roundtrip_tasks.py
from roundtrip_tlx import TLX_INVALID  # tests/ir/roundtrip_tlx.py
from roundtrip_warp import WARP_INVALID, WARP_MORE_INVALID  # tests/ir/roundtrip_warp.py

from tlxc.ir import Block, Region, VerificationError
from tlxc.ir import types as T
from tlxc.ir.core import OP_REGISTRY, Operation
from tlxc.ir.parser import parse_ir
from tlxc.ir.verifier import verify

ARGS = ("%p: ptr<f32>, %n: i32, %x: f32, %y: f32, %c: i1, %t: tile<16xf32>, %m: tile<16xi1>, "
        "%q: tile<16xptr<f32>>, %i: tile<16xi32>")


def kernel(body: str, args: str = ARGS) -> str:
    """A module with one kernel ``k(args)`` whose ops are ``body`` followed by ``return``."""
    ops = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    ops = ops + "\n" if ops else ""
    return (f'module {{source = "k.py"}} {{\n^():\n  func {{sym_name = "k"}} {{\n  ^({args}):\n'
            f"{ops}    return loc(30:4)\n  }}\n}}\n")


def rejects(text_or_op: str | Operation, message: str) -> VerificationError:
    op = parse_ir(text_or_op) if isinstance(text_or_op, str) else text_or_op
    with pytest.raises(VerificationError) as info:
        verify(op)
    assert message in str(info.value)
    return info.value


def test_print_takes_at_most_32_values() -> None:
    rejects(kernel("print " + ", ".join(["%n"] * 33)), "prints at most 32 values, got 33")
    verify(parse_ir(kernel("print " + ", ".join(["%n"] * 32))))


def find(module: Operation, name: str, nth: int = 0) -> Operation:
    return [op for op in module.walk() if op.name == name][nth]


WHILE = """
    %0 = while %n : i32 {{
    ^(%1: {before}):
      condition {cond}, %1
    }} {{
    ^(%2: i32):
      yield %2
    }}
"""

# op name -> (module text, fragment of the error message)
INVALID: dict[str, tuple[str, str]] = {
    "module": ("%0 = module : i32 {\n^():\n}\n", "expects 0 results, has 1"),
    "func": (kernel("").replace('{sym_name = "k"}', '{sym_name = "k", arg_divisibility = [16]}'),
             "arg_divisibility has 1 entries for 9 arguments"),
    "return": (kernel("return\n%0 = add %n, %n : i32"), "'return' must be the last op of its block"),
    "yield": (kernel("""
        %0 = if %c : i32 {
        ^():
          yield %n
          yield %n
        } {
        ^():
          yield %n
        }
    """), "'yield' must be the last op of its block"),
    "condition": (kernel(WHILE.format(before="i32", cond="%n")), "condition must be a scalar i1, got i32"),
    "while": (kernel(WHILE.format(before="f32", cond="%c")), "before-region arguments must have the init types"),
    "for": (kernel("""
        %0 = for %n, %n, %n, %x : f32 {
        ^(%1: i32, %2: f32):
          %3 = convert %2 : f16
          yield %3
        }
    """), "loop-carried values cannot change type"),
    "if": (kernel("if %n {\n^():\n  yield\n} {\n^():\n  yield\n}"), "condition must be a scalar i1, got i32"),
    "constant": (kernel('%0 = constant {value = "a"} : i32'), "integer constant needs an integer"),
    "add": (kernel("%0 = add %n, %x : i32"), "operands must have the same type, got i32, f32"),
    "sub": (kernel("%0 = sub %q, %q : tile<16xptr<f32>>"), "pointer operands are not allowed"),
    "mul": (kernel("%0 = mul %n, %n : i64"), "result type i64 differs from operand type i32"),
    "div": (kernel("%0 = div %n, %n : i32"), "needs floating-point operands, got i32"),
    "idiv": (kernel("%0 = idiv %x, %x : f32"), "needs integer operands, got f32"),
    "rem": (kernel("%0 = rem %p, %p : ptr<f32>"), "pointer operands are not allowed"),
    "and": (kernel("%0 = and %x, %x : f32"), "needs integer operands, got f32"),
    "or": (kernel("%0 = or %t, %t : tile<16xf32>"), "needs integer operands"),
    "xor": (kernel("%0 = xor %c, %n : i1"), "operands must have the same type"),
    "shl": (kernel("%0 = shl %y, %y : f32"), "needs integer operands"),
    "shr": (kernel("%0 = shr %n, %n : u32"), "result type u32 differs"),
    "minimum": (kernel("%0 = minimum %x, %t : f32"), "operands must have the same type"),
    "maximum": (kernel("%0 = maximum %t, %t : f32"), "differs from operand type tile<16xf32>"),
    "cmp": (kernel('%0 = cmp %n, %n {predicate = "lte"} : i1'), "unknown predicate 'lte'"),
    "select": (kernel("%0 = select %i, %t, %t : tile<16xf32>"), "condition must be i1 of shape (16,)"),
    "neg": (kernel("%0 = neg %p : ptr<f32>"), "needs a number, got a pointer"),
    "not": (kernel("%0 = not %x : f32"), "needs an integer operand, got f32"),
    "abs": (kernel("%0 = abs %x : f64"), "result type f64 differs from operand type f32"),
    "exp": (kernel("%0 = exp %n : i32"), "needs a floating-point operand, got i32"),
    "exp2": (kernel("%0 = exp2 %i : tile<16xi32>"), "needs a floating-point operand"),
    "log": (kernel("%0 = log %c : i1"), "needs a floating-point operand"),
    "log2": (kernel("%0 = log2 %p : ptr<f32>"), "needs a floating-point operand"),
    "sqrt": (kernel("%0 = sqrt %x : f16"), "differs from operand type"),
    "rsqrt": (kernel("%0 = rsqrt %n : i32"), "needs a floating-point operand"),
    "sin": (kernel("%0 = sin %t : tile<8xf32>"), "differs from operand type"),
    "cos": (kernel("%0 = cos %n : i32"), "needs a floating-point operand"),
    "tan": (kernel("%0 = tan %x, %y : f32"), "expects operands ('x',), has 2"),
    "tanh": (kernel("%0 = tanh %i : tile<16xi32>"), "needs a floating-point operand"),
    "floor": (kernel("%0 = floor %n : i32"), "needs a floating-point operand"),
    "ceil": (kernel("%0 = ceil %x : i32"), "differs from operand type"),
    "erf": (kernel("%0 = erf %n : i32"), "needs a floating-point operand"),
    "trunc": (kernel("%0 = trunc %n : i32"), "needs a floating-point operand"),
    "round": (kernel("%0, %1 = round %x : f32, f32"), "expects 1 results, has 2"),
    "fma": (kernel("%0 = fma %n, %n, %n : i32"), "fma needs floating-point operands"),
    "convert": (kernel("%0 = convert %t : f32"), "convert keeps the shape"),
    "bitcast": (kernel("%0 = bitcast %x : f16"), "bitcast needs equal widths"),
    "ptrtoint": (kernel("%0 = ptrtoint %q : i64"), "ptrtoint keeps the shape"),
    "inttoptr": (kernel("%0 = inttoptr %x : ptr<f32>"), "inttoptr takes an integer and gives a pointer"),
    "addptr": (kernel("%0 = addptr %q, %t : tile<16xptr<f32>>"), "offset must be an integer of shape (16,)"),
    "load": (kernel("%0 = constant {value = true} : tile<8xi1>\n%1 = load %q, mask=%0 : tile<16xf32>"),
             "mask must be i1 of shape (16,), got tile<8xi1>"),
    "store": (kernel("store %q, %x"), "value must be f32 of shape (16,), got f32"),
    "atomic_rmw": (kernel('%0 = atomic_rmw %q, %t {kind = "xor"} : tile<16xf32>'), "atomic_xor does not support f32"),
    "atomic_cas": (kernel('%0 = atomic_cas %p, %x, %x {sem = "seq_cst"} : f32'), "unknown sem 'seq_cst'"),
    "program_id": (kernel("%0 = program_id {axis = 3} : i32"), "axis must be 0, 1 or 2, got 3"),
    "num_programs": (kernel("%0 = num_programs {axis = 0} : i64"), "result must be a scalar i32"),
    "assert": (kernel('assert %t {message = "no"}'), "assert needs an i1 condition, got tile<16xf32>"),
    "assume": (kernel("assume %n"), "assume needs an i1 condition, got i32"),
    "print": (kernel('%0 = constant {value = 1.0} : tile<4xf8e4m3>\nprint %t, %0 {prefix = " x: "}'),
              "cannot print a value of type tile<4xf8e4m3>"),
    "multiple_of": (kernel("%0 = multiple_of %i {values = [16, 1]} : tile<16xi32>"),
                    "needs one value per dimension (1), got 2"),
    "max_contiguous": (kernel("%0 = max_contiguous %i {values = [0]} : tile<16xi32>"),
                       "values must be positive integers"),
    "max_constancy": (kernel("%0 = max_constancy %i {values = [4, 4]} : tile<16xi32>"),
                      "needs one value per dimension (1), got 2"),
    "reduce": (kernel('%0 = reduce %t {axis = 1, kind = "sum"} : f32'), "axis 1 out of range for shape (16,)"),
    "reduce_combine": (kernel("""
        %0 = reduce_combine %t {axis = 0} : f32 {
        ^(%u: f32, %v: f32):
          %1 = cmp %u, %v {predicate = "gt"} : i1
          yield %1
        }
    """), "the combine region must yield [f32], got [i1]"),
    "scan": (kernel("""
        %0 = scan %t {axis = 0} : tile<16xf32> {
        ^(%a: f32, %b: f32):
          %1 = add %a, %b : f32
          %2 = convert %1 : f64
          yield %2
        }
    """), "the combine region must yield ['f32'], got ['f64']"),
    "histogram": (kernel("%0 = histogram %t : tile<8xi32>"), "histogram needs integers, got tile<16xf32>"),
    "gather": (kernel("""
        %0 = constant {value = 1} : tile<4x16xi32>
        %1 = constant {value = 1.0} : tile<4x8xf32>
        %2 = gather %1, %0 {axis = 0} : tile<4x16xf32>
    """), "index shape (4, 16) differs from src shape (4, 8) in dim 1 (not the axis)"),
    "dot": (kernel("""
        %0 = constant {value = 1.0} : tile<16x32xf16>
        %1 = constant {value = 1.0} : tile<16x16xf16>
        %2 = constant {value = 0.0} : tile<16x16xf32>
        %3 = dot %0, %1, %2 : tile<16x16xf32>
    """), "inner dimensions differ: (16, 32) x (16, 16)"),
    "arange": (kernel("%0 = arange {start = 0, end = 12} : tile<12xi32>"), "arange length 12 is not a power of two"),
    "splat": (kernel("%0 = splat %t : tile<16xf32>"), "splat takes a scalar and gives a tile"),
    "convert_layout": (kernel("%0 = convert_layout %t : tile<16xf16, ll(register=[(1),(2),(4),(8)], lane=[], "
                              "warp=[], block=[]; dim0=16)>"), "convert_layout keeps shape and element type"),
    "broadcast": (kernel("%0 = broadcast %t : tile<32xf32>"), "cannot broadcast (16,) to (32,)"),
    "expand_dims": (kernel("%0 = expand_dims %t {axis = 2} : tile<16x1xf32>"), "axis 2 out of range for rank 1"),
    "reshape": (kernel("%0 = reshape %t : tile<4x8xf32>"), "reshape keeps the element count and type"),
    "trans": (kernel("%0 = reshape %t : tile<2x8xf32>\n%1 = trans %0 {order = [0, 0]} : tile<2x2xf32>"),
              "order (0, 0) is not a permutation of rank 2"),
    "join": (kernel("%0 = join %t, %i : tile<16x2xf32>"), "join needs equal types"),
    "split": (kernel("%0, %1 = split %t : f32, f32"), "split needs a last dimension of 2, got shape (16,)"),
    "inline_asm": (kernel('%0 = inline_asm %t {asm = "mov.b32 $0, $1;", constraints = "=r,r,r", pure = true} : '
                          'tile<16xi32>'), "name 1 outputs and 2 inputs; the op has 1 results and 1 operands"),
}
INVALID.update(TLX_INVALID)
INVALID.update(AMD_INVALID)
INVALID["async_tasks"] = TASKS_INVALID["two defaults"]
INVALID.update(CLUSTER_INVALID)
INVALID.update(WARP_INVALID)


def test_every_op_has_a_negative_test() -> None:
    missing = sorted(set(OP_REGISTRY) - set(INVALID))
    assert not missing, f"ops without a negative verifier test in INVALID: {missing}"


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid(name: str) -> None:
    text, message = INVALID[name]
    error = rejects(text, message)
    assert error.op is not None and error.op.name == name


@pytest.mark.parametrize("text,message", WARP_MORE_INVALID)
def test_warp_op_rules(text: str, message: str) -> None:
    rejects(text, message)


INDEXING_INVALID = [
    (kernel("%0 = histogram %i : tile<12xi32>"), "result must be a 1-D i32 tile of a power-of-two size"),
    (kernel("%0 = histogram %i : tile<8xi64>"), "result must be a 1-D i32 tile of a power-of-two size"),
    (kernel("%0 = histogram %i, mask=%i : tile<8xi32>"), "mask must be i1 of shape (16,), got tile<16xi32>"),
    (kernel("%0 = constant {value = 1} : tile<4x4xi32>\n%1 = histogram %0 : tile<8xi32>"),
     "histogram needs a 1-D tile, got tile<4x4xi32>"),
    (kernel("%0 = gather %t, %t {axis = 0} : tile<16xf32>"), "index must be an integer tile, got tile<16xf32>"),
    (kernel("%0 = gather %t, %m {axis = 0} : tile<16xf32>"), "index must be an integer tile, got tile<16xi1>"),
    (kernel("%0 = gather %t, %i {axis = 1} : tile<16xf32>"), "axis 1 out of range for rank 1"),
    (kernel("%0 = gather %t, %i {axis = 0} : tile<16xf16>"), "result must be f32 of shape (16,), got tile<16xf16>"),
    (kernel("%0 = reshape %i : tile<4x4xi32>\n%1 = gather %t, %0 {axis = 0} : tile<4x4xf32>"),
     "index has rank 2, src has rank 1"),
]


@pytest.mark.parametrize("text,message", INDEXING_INVALID)
def test_gather_and_histogram_rules(text: str, message: str) -> None:
    rejects(text, message)


# -- bugs found in op verify() methods ---------------------------------------------------
def test_dot_batch_dimensions_must_agree() -> None:
    rejects(kernel("""
        %0 = constant {value = 1.0} : tile<2x16x16xf16>
        %1 = constant {value = 1.0} : tile<3x16x16xf16>
        %2 = constant {value = 0.0} : tile<2x16x16xf32>
        %3 = dot %0, %1, %2 : tile<2x16x16xf32>
    """), "batch dimensions differ")


def test_inttoptr_keeps_the_shape() -> None:
    rejects(kernel("%0 = inttoptr %i : ptr<f32>"), "inttoptr keeps the shape")


# -- dominance -----------------------------------------------------------------------------
def test_use_before_definition_in_the_same_block() -> None:
    module = parse_ir(kernel("%0 = add %n, %n : i32\n%1 = add %0, %0 : i32"))
    block = find(module, "func").regions[0].block
    block.ops[0], block.ops[1] = block.ops[1], block.ops[0]
    error = rejects(module, "is used before its definition")
    assert "operand #0, result #0 of 'add'" in str(error)


def test_value_defined_later_in_an_enclosing_block() -> None:
    module = parse_ir(kernel("""
        if %c {
        ^():
          yield
        } {
        ^():
          yield
        }
        %0 = add %n, %n : i32
        assume %c
    """))
    inner = find(module, "if").regions[0].block
    assume = find(module, "assume")
    inner.insert(0, assume.parent.ops.pop(assume.parent.ops.index(assume)))
    assume.set_operand(0, find(module, "add").result)
    rejects(module, "is used before its definition")


def test_value_from_a_sibling_region() -> None:
    module = parse_ir(kernel("""
        %0 = if %c : i32 {
        ^():
          %v = add %n, %n : i32
          yield %v
        } {
        ^():
          yield %n
        }
    """))
    else_yield = find(module, "yield", 1)
    else_yield.set_operand(0, find(module, "add").result)
    error = rejects(module, "is defined in a region that does not enclose this use")
    assert "'%v'" in str(error) and "'yield'" in str(error)


def test_value_from_an_inner_region() -> None:
    module = parse_ir(kernel("""
        for %n, %n, %n {
        ^(%0: i32):
          %1 = add %0, %0 : i32
          yield
        }
        %2 = mul %n, %n : i32
    """))
    find(module, "mul").set_operand(1, find(module, "add").result)
    rejects(module, "is defined in a region that does not enclose this use")


def test_block_argument_of_another_region() -> None:
    module = parse_ir(kernel("""
        for %n, %n, %n {
        ^(%iv: i32):
          yield
        }
        %0 = mul %n, %n : i32
    """))
    find(module, "mul").set_operand(0, find(module, "for").regions[0].block.args[0])
    rejects(module, "block argument '%iv' of 'for', is defined in a region that does not enclose")


def test_result_used_inside_its_own_region() -> None:
    module = parse_ir(kernel("""
        %0 = for %n, %n, %n, %n : i32 {
        ^(%1: i32, %2: i32):
          yield %2
        }
    """))
    loop = find(module, "for")
    find(module, "yield").set_operand(0, loop.result)
    rejects(module, "is used inside the op that defines it")


def test_value_of_an_erased_op() -> None:
    module = parse_ir(kernel("%0 = add %n, %n : i32\n%1 = mul %0, %0 : i32"))
    add = find(module, "add")
    add.parent.remove(add)
    rejects(module, "is not defined in the IR")


def test_a_nested_op_sees_the_values_above_it() -> None:
    """Verifying one op of a larger tree: values defined above it count as defined."""
    module = parse_ir(kernel("""
        %0 = add %n, %n : i32
        %1 = for %n, %0, %n, %0 : i32 {
        ^(%2: i32, %3: i32):
          %4 = add %3, %0 : i32
          yield %4
        }
    """))
    verify(find(module, "for"))
    verify(find(module, "add", 1))


# -- terminators -------------------------------------------------------------------------
def test_for_without_yield() -> None:
    rejects(kernel("for %n, %n, %n {\n^(%0: i32):\n  %1 = add %0, %0 : i32\n}"), "region 0 must end in 'yield'")


def test_func_without_return() -> None:
    rejects(kernel("").replace("    return loc(30:4)\n", ""), "region 0 must end in 'return'")


class _Box(Operation):
    """An op with a region and no verify() of its own (deliberately not registered)."""

    NAME = "test.box"
    NUM_RESULTS = 0
    NUM_REGIONS = 1


def test_region_without_terminator_is_caught_for_any_op() -> None:
    module = parse_ir(kernel(""))
    body = find(module, "func").regions[0].block
    body.insert(0, _Box([], [], {}, [Region(Block())]))
    rejects(module, "a region does not end in a terminator")


def test_terminator_in_a_module_body() -> None:
    rejects("module {\n^():\n  return\n}\n", "the body of 'module' takes no terminator")


# -- types and structure -----------------------------------------------------------------
def test_result_type_that_is_not_an_ir_type() -> None:
    module = parse_ir(kernel("%0 = add %n, %n : i32"))
    find(module, "add").results[0].type = "i32"  # type: ignore[assignment]
    rejects(module, "result #0: 'i32' is not an IR type")


def test_malformed_tile_type() -> None:
    module = parse_ir(kernel("%0 = splat %x : tile<16xf32>"))
    find(module, "splat").results[0].type = T.TileType((0, 16), T.float32)
    rejects(module, "must be a non-empty tuple of positive integers")


def test_block_argument_type() -> None:
    module = parse_ir(kernel(""))
    find(module, "func").regions[0].block.args[1].type = T.pointer(T.tile([4], T.float32))  # type: ignore[arg-type]
    rejects(module, "block argument #1 of region 0: pointer to")


def test_region_with_two_blocks() -> None:
    module = parse_ir(kernel(""))
    find(module, "func").regions[0].add_block(Block())
    rejects(module, "region 0 has 2 blocks")


def test_exception_in_an_op_verify_is_wrapped() -> None:
    error = rejects(kernel('%0 = reduce %t {axis = "a", kind = "sum"} : f32'), "verify() raised TypeError")
    assert error.op is not None and error.op.name == "reduce"
    assert str(error).startswith("'reduce'")


def test_error_names_the_location() -> None:
    error = rejects(kernel("%0 = add %n, %x : i32 loc(5:10)"), "operands must have the same type")
    assert "k.py:5:11" in str(error)


def test_removed_block_argument() -> None:
    func = find(parse_ir(kernel("%0 = add %n, %n : i32")), "func")
    func.regions[0].block.args.pop(1)
    rejects(func, "is no longer an argument of its block")


REDUCE_COMBINE_INVALID = [
    (kernel("""
        %0, %1 = reduce_combine %t, %i {axis = 0} : f32, i32 {
        ^(%u: f32, %v: f32):
          yield %u, %v
        }
    """), "block arguments must be two sets of the operands' element types [f32, i32]"),
    (kernel("""
        %0 = constant {value = 1.0} : tile<4x16xf32>
        %1, %2 = reduce_combine %0, %i {axis = 0} : tile<16xf32>, i32 {
        ^(%a: f32, %ai: i32, %b: f32, %bi: i32):
          yield %a, %ai
        }
    """), "operands must have one shape, got [(4, 16), (16,)]"),
    (kernel("""
        %0 = reduce_combine %t {axis = 0} : tile<1xf32> {
        ^(%u: f32, %v: f32):
          yield %u
        }
    """), "result types must be the operands' element types of shape ()"),
    (kernel("""
        %0 = reduce_combine %t {axis = 0} : f32 {
        ^(%u: f32, %v: f32):
          %1 = splat %u : tile<16xf32>
          yield %u
        }
    """), "the combine region computes scalars only, but 'splat' makes a tile"),
    (kernel("""
        %0 = reduce_combine %t {axis = 0} : f32 {
        ^(%u: f32, %v: f32):
          %1 = add %u, %v : f32
        }
    """), "the combine region must end in 'yield'"),
]


@pytest.mark.parametrize("text,message", REDUCE_COMBINE_INVALID)
def test_reduce_combine_rules(text: str, message: str) -> None:
    rejects(text, message)
SCAN_REGION = """
        ^(%a: f32, %b: f32):
          %1 = add %a, %b : f32
          yield %1
        }"""


@pytest.mark.parametrize("head,message", [
    ("%0 = scan %t {axis = 1} : tile<16xf32> {", "axis 1 out of range for shape (16,)"),
    ("%0 = scan %x {axis = 0} : f32 {", "scan inputs must be tiles of numbers, got f32"),
    ("%0 = scan %t {axis = 0} : tile<16xi32> {", "results must have the input types"),
    ("%0 = scan %t {axis = 0, reverse = 1} : tile<16xf32> {", "reverse must be a bool, got 1"),
])
def test_scan_rules(head: str, message: str) -> None:
    rejects(kernel(head + SCAN_REGION), message)


def test_scan_region_arguments() -> None:
    text = kernel("""
        %0 = scan %t {axis = 0} : tile<16xf32> {
        ^(%a: f32):
          yield %a
        }
    """)
    rejects(text, "the combine region takes ['f32', 'f32'], got ['f32']")
