// Elementwise values: math functions, unary and binary expressions, casts and the rounding
// of 16-bit float results.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "codegen/cuda_emitter.hpp"
#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "ir/host_eval.hpp"
#include "passes/default_config.hpp"
#include "passes/loop_knobs.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

static std::string round_to(DType t, const std::string& e) {
  if (t == DType::f16) return "ts::round_f16(" + e + ")";
  if (t == DType::bf16) return "ts::round_bf16(" + e + ")";
  if (t == DType::f8e4m3) return "ts::round_f8e4m3(" + e + ")";
  if (t == DType::f8e5m2) return "ts::round_f8e5m2(" + e + ")";
  // C++ computes i8 arithmetic in int: back to i8, wrapping modulo 2^8 as PyTorch.
  if (t == DType::i8) return "(signed char)(" + e + ")";
  return e;
}

static std::string math_fn(const char* base, DType t) {
  return t == DType::f64 ? std::string(base) : std::string(base) + "f";
}

static std::string unary_expr(ir::UnaryFn fn, DType t, const std::string& a) {
  switch (fn) {
    case ir::UnaryFn::neg:
      return "-" + a;
    case ir::UnaryFn::abs:
      return is_float(t) ? math_fn("fabs", t) + "(" + a + ")" : "ts::abs_(" + a + ")";
    case ir::UnaryFn::logical_not:
      return "!" + a;
    case ir::UnaryFn::bit_not:
      return "~" + a;
    case ir::UnaryFn::exp:
      return "ts::exp_(" + a + ")";
    case ir::UnaryFn::log:
      return math_fn("log", t) + "(" + a + ")";
    case ir::UnaryFn::sqrt:
      return math_fn("sqrt", t) + "(" + a + ")";
    case ir::UnaryFn::rsqrt:
      return math_fn("rsqrt", t) + "(" + a + ")";
    case ir::UnaryFn::sin:
      return math_fn("sin", t) + "(" + a + ")";
    case ir::UnaryFn::cos:
      return math_fn("cos", t) + "(" + a + ")";
    case ir::UnaryFn::tanh:
      return math_fn("tanh", t) + "(" + a + ")";
    case ir::UnaryFn::sigmoid:
      return "ts::sigmoid(" + a + ")";
    case ir::UnaryFn::exp2:
      return "ts::exp2_(" + a + ")";
    case ir::UnaryFn::log2:
      return math_fn("log2", t) + "(" + a + ")";
    case ir::UnaryFn::floor:
      return math_fn("floor", t) + "(" + a + ")";
    case ir::UnaryFn::ceil:
      return math_fn("ceil", t) + "(" + a + ")";
    case ir::UnaryFn::erf:
      return math_fn("erf", t) + "(" + a + ")";
    case ir::UnaryFn::tf32:
      return "ts::truncate_tf32(" + a + ")";
  }
  return a;
}

static std::string binary_expr(ir::BinaryFn fn, DType t, const std::string& a,
                               const std::string& b) {
  switch (fn) {
    case ir::BinaryFn::add:
      return a + " + " + b;
    case ir::BinaryFn::sub:
      return a + " - " + b;
    case ir::BinaryFn::mul:
      return a + " * " + b;
    case ir::BinaryFn::div:
      return a + " / " + b;
    case ir::BinaryFn::floordiv:
      return "ts::floordiv(" + a + ", " + b + ")";
    case ir::BinaryFn::mod:
      return "ts::mod(" + a + ", " + b + ")";
    case ir::BinaryFn::pow:
      return is_float(t) ? math_fn("pow", t) + "(" + a + ", " + b + ")"
                         : "ts::ipow(" + a + ", " + b + ")";
    case ir::BinaryFn::maximum:
      return "ts::maximum(" + a + ", " + b + ")";
    case ir::BinaryFn::minimum:
      return "ts::minimum(" + a + ", " + b + ")";
    case ir::BinaryFn::lt:
      return a + " < " + b;
    case ir::BinaryFn::le:
      return a + " <= " + b;
    case ir::BinaryFn::gt:
      return a + " > " + b;
    case ir::BinaryFn::ge:
      return a + " >= " + b;
    case ir::BinaryFn::eq:
      return a + " == " + b;
    case ir::BinaryFn::ne:
      return a + " != " + b;
    case ir::BinaryFn::logical_and:
      return a + " && " + b;
    case ir::BinaryFn::logical_or:
      return a + " || " + b;
    case ir::BinaryFn::bit_and:
      return a + " & " + b;
    case ir::BinaryFn::bit_or:
      return a + " | " + b;
    case ir::BinaryFn::bit_xor:
      return a + " ^ " + b;
    case ir::BinaryFn::shl:
      return a + " << " + b;
    case ir::BinaryFn::shr:
      return a + " >> " + b;
  }
  return a;
}

static std::string elem_expr(Emitter& e, const Node* n, const std::string& r) {
  switch (n->op) {
    case Op::Unary:
      return e.rounded(n, unary_expr(n->ufn(), n->dtype, e.at(n->args[0], r)));
    case Op::Binary: {
      if (e.tile_index_always_in_bounds(n)) return "true";
      DType t = n->args[0]->dtype;
      std::string x = binary_expr(n->bfn(), t, e.at(n->args[0], r), e.at(n->args[1], r));
      if (t == DType::i32 && ir::binary_kind(n->bfn()) == 'a') x = "(int)(" + x + ")";
      return e.rounded(n, x);
    }
    case Op::Where:
      return fmt::format("{} ? {} : {}", e.at(n->args[0], r), e.at(n->args[1], r),
                         e.at(n->args[2], r));
    case Op::Cast: {
      const Node* a = n->args[0];
      std::string x = e.at(a, r);
      if (n->dtype == DType::boolean) return "(" + x + " != 0)";
      if (is_float(a->dtype) &&
          !is_float(n->dtype))  // truncation toward zero, saturating, NaN -> 0
        return fmt::format("ts::to_{}({})", dtype_name(n->dtype), x);
      return e.rounded(n, "(" + reg_type(n->dtype) + ")(" + x + ")");
    }
    case Op::Full:
      return e.scalar(n->args[0]);
    // Not elementwise values: emit_node lowers them, or the CUDA backend cannot.
    case Op::Arg:
    case Op::Size:
    case Op::Stride:
    case Op::Alloc:
    case Op::DeviceScalar:
    case Op::ShapeCheck:
    case Op::Return:
    case Op::Const:
    case Op::Arange:
    case Op::Permute:
    case Op::View:
    case Op::Reduce:
    case Op::Load:
    case Op::Store:
    case Op::Atomic:
    case Op::Signal:
    case Op::Wait:
    case Op::Multicast:
    case Op::Loop:
    case Op::LoopIndex:
    case Op::TileIndex:
    case Op::TileBegin:
    case Op::TileEnd:
    case Op::TileBlock:
    case Op::TileId:
    case Op::ProgramId:
    case Op::Carried:
    case Op::Yield:
    case Op::LoopResult:
      break;
  }
  e.unsupported(n, std::string("op ") + ir::op_name(n->op));
}

void Emitter::emit_node(const Node* n) {
  if (!live_.count(n)) return;
  if (staged_.count(n) && !in_factor_) return;  // emitted by its contraction's sum
  if (summed_into_.count(n)) return;            // the accumulator its contraction summed into
  if (unused_inits_.count(n)) return;  // zeros a wgmma accumulator starts from without reading
  if (const passes::Contraction* c = contraction_of(n)) {
    emit_contraction(*c);
    return;
  }
  // A value (or store target) with two dimensions in one register slot would hold only
  // their diagonal: refused (the interpreter computes it).
  std::vector<const ir::Sym*> syms(n->shape.begin(), n->shape.end());
  if (n->op == Op::Store) {  // (an atomic's shape is its indexed shape)
    for (const ir::Sym* s : ir::stack_shape(n)) syms.push_back(s);
    for (const ir::IndexInfo& i : n->access) syms.push_back(i.sym);
  }
  for (size_t i = 0; i < syms.size(); ++i)
    for (size_t j = i + 1; j < syms.size(); ++j)
      if (syms[i] && syms[j] && slot(syms[i]) == slot(syms[j]))
        unsupported(
            n, fmt::format("a value with dimensions {} and {} in one register slot (the same tile "
                           "twice, e.g. an outer product of a tile with itself, or a "
                           "ts::register_block_size dimension with a tile of a loop using it)",
                           ir::sym_name(syms[i]), ir::sym_name(syms[j])));
  switch (n->op) {
    case Op::Const:
    case Op::Arg:
    case Op::Size:
    case Op::Stride:
    case Op::DeviceScalar:
    case Op::Carried:
    case Op::LoopResult:
    case Op::Multicast:  // addressed by its loads and stores (emit_memory.cpp, plan_access)
      return;
    case Op::Loop:
      if (nir_.barrier_before.count(n)) emit_barrier(n);
      emit_loop(n);
      return;
    case Op::Load:
      if (nir_.barrier_before.count(n)) emit_barrier(n);
      emit_load(n);
      return;
    case Op::Store:
      if (nir_.barrier_before.count(n)) emit_barrier(n);
      emit_store(n);
      return;
    case Op::Atomic:
    case Op::Signal:
    case Op::Wait:
      if (nir_.barrier_before.count(n)) emit_barrier(n);
      emit_atomic(n);
      return;
    case Op::Reduce:
      emit_reduce(n);
      return;
    case Op::Yield: {
      const Node* loop = n->args.empty()              ? nullptr
                         : n->args[0]->op == Op::Loop ? n->args[0]
                                                      : nullptr;
      (void)loop;
      return;  // handled by emit_loop
    }
    case Op::Permute:  // each element keeps its coordinates: the same registers
    case Op::View:
      if (is_array(n) != is_array(n->args[0]))
        unsupported(n, "a view that changes scalar/tile form");
      names_[n] = is_array(n) ? names_.at(n->args[0]) : scalar(n->args[0]);
      return;
    case Op::LoopIndex: {
      const DimVars& dv = dims.at({n->args[0], static_cast<int>(n->ival)});
      line(fmt::format("const {} = ({}){};", declare(n), reg_type(n->dtype), dv.tb), n);
      return;
    }
    case Op::TileBegin:
    case Op::TileEnd:
    case Op::TileBlock:
    case Op::TileId: {
      const DimVars& dv = dims.at({n->args[0], static_cast<int>(n->ival)});
      std::string v = n->op == Op::TileBegin ? dv.tb
                      : n->op == Op::TileEnd ? dv.te
                      : n->op == Op::TileBlock
                          ? std::to_string(dv.block)
                          : fmt::format("({} - {}) / {}", dv.tb, dv.lb, dv.block);
      line(fmt::format("const {} = ({})({});", declare(n), reg_type(n->dtype), v), n);
      return;
    }
    case Op::TileIndex: {
      const DimVars& dv = dims.at({n->args[0], static_cast<int>(n->ival)});
      line(declare(n), n);
      line(fmt::format("TS_FOR(r) {}[r] = ({})({} + {});", names_.at(n), reg_type(n->dtype), dv.tb,
                       coord(n->shape[0], "r")));
      return;
    }
    case Op::ProgramId:
      line(fmt::format("const {} = ({})blockIdx.x;", declare(n), reg_type(n->dtype)), n);
      return;
    case Op::Arange:
      line(declare(n), n);
      line(fmt::format("TS_FOR(r) {}[r] = ({}){};", names_.at(n), reg_type(n->dtype),
                       coord(n->shape[0], "r")));
      return;
    // Host ops (never in a loop body) and elementwise values (elem_expr, below).
    case Op::Alloc:
    case Op::ShapeCheck:
    case Op::Return:
    case Op::Unary:
    case Op::Binary:
    case Op::Where:
    case Op::Cast:
    case Op::Full:
      break;
  }
  if (ir::host_computable(n)) return;  // a kernel parameter
  if (is_array(n)) {
    line(declare(n), n);
    line(fmt::format("TS_FOR(r) {}[r] = {};", names_.at(n), elem_expr(*this, n, "r")));
  } else {
    std::string d = declare(n);
    line(fmt::format("{} = {};", d, elem_expr(*this, n, "0")), n);
  }
}

std::string Emitter::rounded(const Node* n, const std::string& e) const {
  return nir_.rounded_by_store.count(n) ? e : round_to(n->dtype, e);
}

void Emitter::emit_block(const ir::Block& b) {
  for (const Node* n : b) emit_node(n);
}

}  // namespace tessel::codegen
