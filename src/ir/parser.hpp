// Reads the text form of the IR (ir::print) back into a Graph, so that a pass can be tested
// on a small program written as text (Triton's and MLIR's lit tests; tests/ir_check_util.hpp).
// print(*parse(print(g))) == print(g) for every graph g, and the parsed graph holds what g
// holds that a pass, the interpreter or code generation reads: node and Sym ids (the
// printed %N, tN, rN, bN), kinds, dtypes, shapes, operands, accesses, loops, carried values,
// the header's facts; with names, also the user's names and source locations.
//
// Grammar (one statement per line; `//` to the end of a line is a name, see below):
//
//   program   := comment-line* 'kernel' (IDENT | STRING) header* stmt*
//   header    := 'index_dtype' DTYPE ['forced']      Graph::index_dtype(_forced)
//              | 'check_bounds'                       Graph::check_bounds
//              | 'loads' INT                          Graph::num_loads
//              | 'block_size' I ['hint' INT] ['range' INT '..' INT]   one per block id, 0, 1, ...
//              | 'tunable' STRING '[' INT,* ']'       Graph::tunables, in order
//              | 'arg_facts' I ['contiguous'] ['base_aligned'] ['stride_aligned' BITS]
//                  ['size_div16' BITS] ['known_sizes' INTS] ['alias' INT]   one per argument
//              | 'file' 'f'I STRING                   source file I of locations, 0, 1, ...
//              | 'sym' SYM ['loop' VAL 'dim' INT] ['block' INT] ['extent' VAL]
//                  ['pow2' INT] ['trace' INT] [NAME]
//              | 'reduction_dims' SYM,*               Graph::reduction_syms
//   stmt      := VAL '=' OP operands [':' TYPE] ['{'] [LOC] [NAME]     a node with a value
//              | [VAL ':'] OP operands [':' TYPE] [LOC] [NAME]        store, wait, return,
//              | '}'                                                     yield, shape_check
//   VAL       := '%' INT                 a node, by id (defined once, used after)
//   SYM       := ('t' | 'r' | 'b') INT   a Sym by id: tile, extent (ts::all, arange), block
//   TYPE      := DTYPE ['[' (SYM | '1'),* ']'] | DTYPE 'tensor' 'rank' INT
//   LOC       := '@f' I ':' LINE ':' COLUMN   (file I of the header)
//   NAME      := '//' text to the end of the line, `\\` and `\n` escaped: Node::name / Sym::name
//   INDEX     := 'newaxis' | ('tile' | 'all') VAL 'as' SYM | ['gather'] VAL   (Node::access)
//
// Operands per op (TESSEL_IR_OPS): `arg I`, `const VALUE [ival I] [fval X]` (VALUE read in
// the dtype of the type), `size|stride VAL dim I`, `alloc VAL,* [fill X] [like VAL]
// [strided]`, `device_scalar VAL,*`, `shape_check VAL, VAL (eq|ge) [STRING]`, `return VAL,*`,
// `unary FN VAL`, `binary FN VAL, VAL`, `reduce FN VAL dim I [keepdim]`, `load VAL[INDEX,*]
// [#LOAD_ID]`, `store VAL[INDEX,*] = VAL`, `atomic FN VAL[INDEX,*], VAL,* SEM SCOPE`,
// `signal|wait VAL[INDEX,*], VAL,* SEM SCOPE`, `loop [persistent] ((tile|grid)(VAL..VAL)
// [as SYM] [block I] [fixed N])+ (carry VAL = VAL)* {` then the body and `}`, where the body
// starts with one `VAL = carried LOOP : TYPE` line per carried value, `loop_result LOOP
// carry I`, `loop_index|tile_index|tile_begin|tile_end|tile_block|tile_id LOOP dim I`, and
// `where|cast|full|arange|view|multicast_like|program_id|yield VAL,*`. Indentation is not
// significant; blank lines and lines holding only a `//` comment are skipped.
//
// What the text leaves out is derived: node depth from nesting, an argument's kind from its
// type, Graph::args (the first `arg I` of each position) and outputs (the `return`), loop
// results, a multicast tensor's rank, a store's dtype, a signal's function (cas with a
// wait_for operand, else xchg), the Sym of a tile dim without a `sym` line (its loop and
// block). A statement written without its `%N:` gets an id after every printed one.
#pragma once

#include <memory>
#include <string>

#include "ir/ir.hpp"

namespace tessel::ir {

/// Text that is not a program of the grammar above. The message reads
/// `tessel: IR text line L, column C: expected WHAT, found 'TOKEN'` (or what is wrong),
/// followed by the line and a caret under the column.
class ParseError : public UserError {
 public:
  ParseError(int line, int column, const std::string& what, const std::string& text_line);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

/// The graph whose ir::print is `text`. Throws ParseError (line and column, 1-based) for
/// text that is not a program of the grammar, or that uses a value or Sym it never defines,
/// uses a value outside the block that defines it, or gives an op what a pass would index
/// without checking: a wrong number of operands or indices, a memory op on a value that is
/// not a tensor, a dim, axis or carried position out of range, a tile index of a value that
/// is not a loop, a loop with carried values whose body does not end in their yield. Types
/// are not checked (a pass test may give any dtype and shape).
std::unique_ptr<Graph> parse(const std::string& text);

}  // namespace tessel::ir
