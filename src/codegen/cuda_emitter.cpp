// The kernel skeleton (signature, program-to-tile mapping), device loops and
// elementwise values. Memory ops: emit_memory.cpp; reductions: emit_reduce.cpp.
#include "codegen/cuda_emitter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "codegen/emitter_state.hpp"
#include "ir/host_eval.hpp"
#include "passes/default_config.hpp"
#include "passes/loop_knobs.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

std::string reg_type(DType t) {
  switch (t) {
    case DType::boolean:
      return "bool";
    case DType::i32:
      return "int";
    case DType::i64:
      return "long long";
    case DType::u64:
      return "unsigned long long";
    case DType::f16:
    case DType::bf16:
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
  }
  return "float";
}

std::string literal(DType t, double f, int64_t i) {
  switch (t) {
    case DType::boolean:
      return i ? "true" : "false";
    case DType::i32:
      return i == INT32_MIN ? "(-2147483647 - 1)" : fmt::format("{}", static_cast<int32_t>(i));
    case DType::i64:
      return i == INT64_MIN ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", i);
    case DType::u64:
      return fmt::format("{}ULL", static_cast<uint64_t>(i));
    case DType::f64:
      if (std::isinf(f)) return f > 0 ? "(1.0/0.0)" : "(-1.0/0.0)";
      if (std::isnan(f)) return "(0.0/0.0)";
      return fmt::format("{:.17g}", f).find_first_of(".e") == std::string::npos
                 ? fmt::format("{:.17g}.0", f)
                 : fmt::format("{:.17g}", f);
    default: {
      float x = static_cast<float>(f);
      if (std::isinf(x)) return x > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
      if (std::isnan(x)) return "__int_as_float(0x7fc00000)";
      std::string s = fmt::format("{:.9g}", x);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s + "f";
    }
  }
}

static std::string round_to(DType t, const std::string& e) {
  if (t == DType::f16) return "ts::round_f16(" + e + ")";
  if (t == DType::bf16) return "ts::round_bf16(" + e + ")";
  return e;
}

Emitter::Emitter(const ir::Graph& g, const Node* loop, const Config& c, const passes::Layout& L,
                 CudaKernel& out)
    : g_(g), top_(loop), config_(c), L_(L), out_(out) {
  idx_t_ = g.index_dtype == DType::i64 ? "long long" : "int";
}

void Emitter::line(const std::string& s, const Node* at) {
  body_ << std::string(indent_ * 2, ' ') << s;
  if (at) body_ << "  " << loc_comment(at);
  body_ << "\n";
}
void Emitter::open(const std::string& s, const Node* at) {
  line(s + " {", at);
  ++indent_;
  ++region_;
  unrolled_.push_back(false);
}
void Emitter::open_unrolled(const std::string& s) {
  line(s + " {");
  ++indent_;
  unrolled_.push_back(true);
}
void Emitter::close() {
  --indent_;
  if (!unrolled_.back()) ++region_;
  unrolled_.pop_back();
  line("}");
}

std::string Emitter::loc_comment(const Node* n) const {
  if (!n || !n->loc.line) return "";
  return "// " + n->loc.str();
}

void Emitter::unsupported(const Node* n, const std::string& what) const {
  throw UserError(g_.kernel_name, n->loc, "the CUDA backend cannot lower this yet: " + what,
                  "run it on the interpreter (CPU Buffers or TESSEL_INTERPRET=1), or rewrite it");
}

std::string Emitter::slot_coord(const ir::Sym* s, const std::string& r) const {
  int k = L_.slot_of.at(s);
  return fmt::format("((TS_FLAT({}) >> {}) & {})", r, L_.slot_shift[k], L_.slot_block[k] - 1);
}

bool Emitter::flattened(const ir::Sym* s) const {
  if (s->kind != ir::Sym::tile) return false;
  auto it = dims.find({s->loop, s->loop_dim});
  return it != dims.end() && !it->second.flat.empty();
}

std::string Emitter::coord(const ir::Sym* s, const std::string& r) const {
  if (flattened(s)) return dims.at({s->loop, s->loop_dim}).flat + "[" + r + "]";
  return slot_coord(s, r);
}

std::string Emitter::active(const std::string& r) const {
  if (L_.all_threads_active()) return "true";
  return fmt::format("(TS_FLAT({}) < {})", r, L_.elems);
}

bool Emitter::valid_by_vector(const ir::Sym* s) const {
  if (L_.vec <= 1 || flattened(s)) return false;
  int k = slot(s);
  if (L_.slot_shift[k] != 0 || L_.slot_block[k] % L_.vec != 0)
    return false;  // not the vector lanes
  if (passes::sym_block(s, config_) % L_.vec != 0) return false;
  if (s->kind != ir::Sym::tile) return multiple_of_16(s->extent);
  const ir::LoopDim& ld = s->loop->dims.at(static_cast<size_t>(s->loop_dim));
  return multiple_of_16(ld.begin) && multiple_of_16(ld.end) &&
         passes::block_size(ld, config_) % 16 == 0;
}

std::string Emitter::sym_valid(const ir::Sym* s, const std::string& r_in) {
  if (s->kind == ir::Sym::block_k) return "true";  // every lane of a BlockSize's block is valid
  // Whole vectors are valid or not together: test each vector's first element, so the
  // test is shared by its registers (fewer live predicates).
  std::string r = valid_by_vector(s) ? fmt::format("(({}) & ~(TS_V - 1))", r_in) : r_in;
  std::string c = coord(s, r);
  std::string v;
  if (s->kind == ir::Sym::tile) {
    const DimVars& dv = dims.at({s->loop, s->loop_dim});
    v = fmt::format("({} + {} < {})", dv.tb, c, dv.te);
  } else {
    // A 32-bit compare when indices are 32-bit (extents are 64-bit host integers).
    std::string lim = scalar(s->extent);
    v = idx_t_ == "int" ? fmt::format("({} < ts::clamp_int({}))", c, lim)
                        : fmt::format("({} < {})", c, lim);
  }
  int64_t sb = passes::sym_block(s, config_);
  if (sb < L_.slot_block[slot(s)]) v += fmt::format(" && ({} < {})", slot_coord(s, r), sb);
  return v;
}

// ---- parameters ----

static std::string dedupe(std::map<std::string, std::string>& m, const std::string& key,
                          const std::string& name, bool& fresh) {
  auto it = m.find(key);
  fresh = it == m.end();
  if (fresh) m[key] = name;
  return m[key];
}

std::string Emitter::tensor_param(const Node* t) {
  std::string nm = t->op == Op::Arg ? fmt::format("arg{}", t->ival) : fmt::format("buf{}", t->id);
  bool fresh;
  std::string r = dedupe(param_names_, "T" + std::to_string(t->id), nm, fresh);
  if (fresh) out_.params.push_back({Param::tensor_ptr, t, t->dtype});
  return r;
}

static const ir::ArgFacts* facts(const ir::Graph& g, const Node* t) {
  if (t->op != Op::Arg) return nullptr;
  size_t i = static_cast<size_t>(t->ival);
  return i < g.arg_facts.size() ? &g.arg_facts[i] : nullptr;
}

// An allocation is row-major unless it takes a strided argument's layout (empty_like).
static bool row_major_alloc(const Node* t) {
  return t->op == Op::Alloc && t->fn == ir::alloc_row_major;
}

static bool contiguous_last(const ir::Graph& g, const Node* t) {
  if (t->op == Op::Alloc) return row_major_alloc(t);
  const ir::ArgFacts* f = facts(g, t);
  return f && f->contiguous;
}

bool Emitter::multiple_of_16(const Node* n) const {
  if (n->op == Op::Const) return n->ival % 16 == 0;
  if (n->op == Op::Size) return size_multiple_of_16(n->args[0], static_cast<int>(n->ival));
  return false;
}

std::optional<int64_t> Emitter::known_int(const Node* n) const {
  if (n->op == Op::Const && is_integer(n->dtype)) return n->ival;
  if (n->op != Op::Size) return std::nullopt;
  const Node* t = n->args[0];
  int dim = static_cast<int>(n->ival);
  if (t->op == Op::Alloc) return known_int(t->args.at(static_cast<size_t>(dim)));
  const ir::ArgFacts* f = facts(g_, t);
  if (f && static_cast<size_t>(dim) < f->known_sizes.size() &&
      f->known_sizes[static_cast<size_t>(dim)] >= 0)
    return f->known_sizes[static_cast<size_t>(dim)];
  return std::nullopt;
}

bool Emitter::size_multiple_of_16(const Node* t, int dim) const {
  if (t->op == Op::Alloc) return multiple_of_16(t->args.at(static_cast<size_t>(dim)));
  const ir::ArgFacts* f = facts(g_, t);
  if (!f) return false;
  if (static_cast<size_t>(dim) < f->known_sizes.size() &&
      f->known_sizes[static_cast<size_t>(dim)] >= 0)
    return f->known_sizes[static_cast<size_t>(dim)] % 16 == 0;
  return static_cast<size_t>(dim) < f->size_div16.size() && f->size_div16[static_cast<size_t>(dim)];
}

bool Emitter::outer_strides_aligned(const Node* t) const {
  if (t->op == Op::Alloc)  // row-major: outer strides are multiples of the last size
    return row_major_alloc(t) && (t->rank <= 1 || size_multiple_of_16(t, t->rank - 1));
  const ir::ArgFacts* f = facts(g_, t);
  if (!f || !f->base_aligned) return false;
  for (int d = 0; d + 1 < t->rank; ++d)
    if (!f->stride_aligned.at(static_cast<size_t>(d))) return false;
  return true;
}

std::string Emitter::size_param(const Node* t, int dim) {
  // Static shapes: the exact size is a constant of the generated code.
  if (const ir::ArgFacts* f = facts(g_, t); f && static_cast<size_t>(dim) < f->known_sizes.size() &&
                                            f->known_sizes[static_cast<size_t>(dim)] >= 0) {
    return fmt::format("(({}){})", idx_t_, f->known_sizes[static_cast<size_t>(dim)]);
  } else if (t->op == Op::Alloc && t->args.at(static_cast<size_t>(dim))->op == Op::Const) {
    return fmt::format("(({}){})", idx_t_, scalar(t->args[static_cast<size_t>(dim)]));
  }
  std::string base = t->op == Op::Arg ? fmt::format("arg{}", t->ival) : fmt::format("buf{}", t->id);
  bool fresh;
  std::string r = dedupe(param_names_, fmt::format("S{}_{}", t->id, dim),
                         fmt::format("{}_size{}", base, dim), fresh);
  if (fresh) {
    Param p{Param::tensor_size, t, g_.index_dtype};
    p.dim = dim;
    out_.params.push_back(p);
  }
  return r;
}

std::string Emitter::stride_param(const Node* t, int dim) {
  if (dim == t->rank - 1 && contiguous_last(g_, t)) return "1";
  std::string base = t->op == Op::Arg ? fmt::format("arg{}", t->ival) : fmt::format("buf{}", t->id);
  bool fresh;
  std::string r = dedupe(param_names_, fmt::format("D{}_{}", t->id, dim),
                         fmt::format("{}_stride{}", base, dim), fresh);
  if (fresh) {
    Param p{Param::tensor_stride, t, g_.index_dtype};
    p.dim = dim;
    out_.params.push_back(p);
  }
  return r;
}

std::string Emitter::host_param(const Node* n) {
  bool fresh;
  std::string r =
      dedupe(param_names_, "H" + std::to_string(n->id), fmt::format("s{}", n->id), fresh);
  if (fresh) {
    if (is_float(n->dtype))
      out_.params.push_back(
          {Param::host_float, n, n->dtype == DType::f64 ? DType::f64 : DType::f32});
    else
      out_.params.push_back({Param::host_int, n, n->dtype == DType::i32 ? DType::i32 : DType::i64});
  }
  return r;
}

std::string Emitter::scalar(const Node* n) {
  if (n->op == Op::Const) return literal(n->dtype, n->fval, n->ival);
  if (ir::host_computable(n)) {
    std::string p = host_param(n);
    if (is_float(n->dtype) && n->dtype != DType::f32 && n->dtype != DType::f64)
      return "(" + reg_type(n->dtype) + ")" + p;
    if (n->dtype == DType::boolean) return "(" + p + " != 0)";
    return p;
  }
  if (n->op == Op::DeviceScalar) {
    auto it = names_.find(n);
    if (it != names_.end()) return it->second;
    bool fresh;
    std::string p =
        dedupe(param_names_, "P" + std::to_string(n->id), fmt::format("ptr{}", n->id), fresh);
    if (fresh) out_.params.push_back({Param::device_ptr, n, n->dtype});
    std::string nm = fmt::format("ds{}", n->id);
    prologue_ << fmt::format("  const {} {} = ts::Mem<{}>::to_reg(*{});  {}\n", reg_type(n->dtype),
                             nm, dtype_cuda_storage(n->dtype), p, loc_comment(n));
    names_[n] = nm;
    return nm;
  }
  return names_.at(n);
}

std::string Emitter::at(const Node* n, const std::string& r) {
  if (!is_array(n)) return scalar(n);
  return names_.at(n) + "[" + r + "]";
}

std::string Emitter::declare(const Node* n, const std::string& suffix) {
  std::string nm = fmt::format("v{}{}", n->id, suffix);
  names_[n] = nm;
  if (is_array(n)) return fmt::format("{} {}[TS_N];", reg_type(n->dtype), nm);
  return fmt::format("{} {}", reg_type(n->dtype), nm);
}

// ---- elementwise ----

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
    default:
      break;
  }
  e.unsupported(n, std::string("op ") + ir::op_name(n->op));
}

void Emitter::emit_node(const Node* n) {
  if (!live_.count(n)) return;
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
      if (barrier_before_.count(n)) emit_barrier(n);
      emit_loop(n);
      return;
    case Op::Load:
      if (barrier_before_.count(n)) emit_barrier(n);
      emit_load(n);
      return;
    case Op::Store:
      if (barrier_before_.count(n)) emit_barrier(n);
      emit_store(n);
      return;
    case Op::Atomic:
    case Op::Signal:
    case Op::Wait:
      if (barrier_before_.count(n)) emit_barrier(n);
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
    default:
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
  return rounded_by_store_.count(n) ? e : round_to(n->dtype, e);
}

void Emitter::emit_block(const ir::Block& b) {
  for (const Node* n : b) emit_node(n);
}

// ---- loops ----

Emitter::DimVars Emitter::dim_vars(const Node* loop, int d) const {
  DimVars dv;
  dv.block = passes::block_size(loop->dims.at(d), config_);
  dv.lb = fmt::format("lb{}_{}", loop->id, d);
  dv.tb = fmt::format("tb{}_{}", loop->id, d);
  dv.te = fmt::format("te{}_{}", loop->id, d);
  return dv;
}

void Emitter::emit_loop(const Node* n) {
  // Loop-carried values live in variables declared before the loop; one that nothing
  // live reads (its result unused after the loop) is not computed at all.
  for (size_t i = 0; i < n->carried.size(); ++i) {
    const Node* c = n->carried[i];
    if (!live_.count(c)) continue;
    std::string nm = fmt::format("c{}", c->id);
    names_[c] = nm;
    if (is_array(c)) {
      line(fmt::format("{} {}[TS_N];", reg_type(c->dtype), nm), n);
      line(fmt::format("TS_FOR(r) {}[r] = {};", nm, at(n->inits[i], "r")));
    } else {
      line(fmt::format("{} {} = {};", reg_type(c->dtype), nm, scalar(n->inits[i])), n);
    }
    names_[n->results[i]] = nm;
  }
  int opened = 0;
  passes::LoopKnobs knobs = passes::loop_knobs(g_, n, config_);
  std::vector<const Node*> early = prefetchable_loads(n);  // num_stages >= 2
  if (!early.empty()) {
    line(fmt::format("const long long lb{}_0 = {}, le{}_0 = {};", n->id, scalar(n->dims[0].begin),
                     n->id, scalar(n->dims[0].end)),
         n);
    emit_prefetch_first(n, early);
  }
  if (knobs.flatten) {
    // One loop over the flattened index space, a tile of prod(block) elements per step.
    for (size_t d = 0; d < n->dims.size(); ++d)
      line(fmt::format("const long long lb{}_{} = {}, le{}_{} = {};", n->id, d,
                       scalar(n->dims[d].begin), n->id, d, scalar(n->dims[d].end)),
           n);
    std::string numel = emit_flat_extents(n, knobs.order);
    int64_t elems = 1;
    for (const ir::LoopDim& ld : n->dims) elems *= passes::block_size(ld, config_);
    std::string fb = fmt::format("fb{}", n->id);
    open(fmt::format("for (long long {} = 0; {} < {}; {} += {})", fb, fb, numel, fb, elems));
    emit_flat_coords(n, knobs.order, fb);
    ++opened;
  }
  // Per-dim loops, knobs.order[0] outermost (Helion's loop_orders for device loops).
  for (size_t k = 0; k < n->dims.size() && !knobs.flatten; ++k) {
    int d = knobs.order[k];
    const ir::LoopDim& ld = n->dims[d];
    DimVars dv = dim_vars(n, d);
    std::string le = fmt::format("le{}_{}", n->id, d);
    // Loop control in 64 bits (a bound near the index dtype's limit must not overflow);
    // the tile's begin and end, which are valid indices, in the index dtype.
    if (early.empty())  // else declared before the first tile's loads
      line(fmt::format("const long long {} = {}, {} = {};", dv.lb, scalar(ld.begin), le,
                       scalar(ld.end)),
           n);
    open(fmt::format("for (long long {}_ = {}; {}_ < {}; {}_ += {})", dv.tb, dv.lb, dv.tb, le,
                     dv.tb, dv.block));
    line(fmt::format("const {} {} = ({}){}_;", idx_t_, dv.tb, idx_t_, dv.tb));
    line(fmt::format("const {} {} = ({})min({}_ + {}, {});", idx_t_, dv.te, idx_t_, dv.tb, dv.block,
                     le));
    dims[{n, d}] = dv;
    ++opened;
  }
  if (!early.empty()) emit_prefetch_next(n, early);
  emit_block(n->body);
  if (!n->carried.empty()) {
    const Node* y = n->body.back();
    // Next values first (they may read the carried ones), then the update.
    for (size_t i = 0; i < n->carried.size(); ++i) {
      const Node* c = n->carried[i];
      if (!live_.count(c)) continue;
      if (is_array(c)) {
        line(fmt::format("{} y{}[TS_N];", reg_type(c->dtype), c->id));
        line(fmt::format("TS_FOR(r) y{}[r] = {};", c->id, at(y->args[i], "r")));
      } else {
        line(fmt::format("const {} y{} = {};", reg_type(c->dtype), c->id, scalar(y->args[i])));
      }
    }
    for (const Node* c : n->carried) {
      if (!live_.count(c)) continue;
      if (is_array(c))
        line(fmt::format("TS_FOR(r) c{}[r] = y{}[r];", c->id, c->id));
      else
        line(fmt::format("c{} = y{};", c->id, c->id));
    }
  }
  for (int i = 0; i < opened; ++i) close();
}

// ---- flattened loops (Helion's flatten_loops) ----
//
// A flattened loop of dims d0..dk-1 (slowest to fastest in `order`) with extents n_d
// iterates one index space of prod(n_d) elements in tiles of P = prod(block_d). Register
// r's element keeps its layout slots' bits c_d (as in any loop) and is element
// e = fb + sum_d c_d * W_d of the flat space (W: row-major weights of the blocks), at
// coordinate (e / S_d) % n_d along dim d (S: row-major strides of the extents; the
// slowest dim omits the modulo, so an element past the end is past its dim's end and
// masked there).

std::string Emitter::emit_flat_extents(const Node* n, const std::vector<int>& order) {
  std::string numel;
  for (int d : order) {
    line(fmt::format("const long long fn{}_{} = le{}_{} > lb{}_{} ? le{}_{} - lb{}_{} : 0;", n->id,
                     d, n->id, d, n->id, d, n->id, d, n->id, d));
    numel += fmt::format("{}fn{}_{}", numel.empty() ? "" : " * ", n->id, d);
  }
  return "(" + numel + ")";
}

void Emitter::emit_flat_coords(const Node* n, const std::vector<int>& order,
                               const std::string& fb) {
  std::string decl, local;
  bool in_layout = true;
  int64_t weight = 1;
  std::vector<std::string> stride(n->dims.size());
  std::string s = "1";
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int d = *it;
    const ir::Sym* sym = n->dims[d].sym;
    in_layout &= L_.slot_of.count(sym) > 0;
    if (in_layout) {
      std::string c = slot_coord(sym, "r");
      local = (weight == 1 ? c : fmt::format("{} * {}", c, weight)) +
              (local.empty() ? "" : " + " + local);
    }
    weight *= passes::block_size(n->dims[d], config_);
    stride[d] = s;
    s = s == "1" ? fmt::format("fn{}_{}", n->id, d) : fmt::format("fn{}_{} * {}", n->id, d, s);
    decl = fmt::format("fc{}_{}[TS_N]{}", n->id, d, decl.empty() ? "" : ", " + decl);
  }
  for (size_t d = 0; d < n->dims.size(); ++d) {
    DimVars dv = dim_vars(n, static_cast<int>(d));
    dv.flat = fmt::format("fc{}_{}", n->id, d);
    line(fmt::format("const {} {} = ({}){}, {} = ({})le{}_{};", idx_t_, dv.tb, idx_t_, dv.lb, dv.te,
                     idx_t_, n->id, d));
    dims[{n, static_cast<int>(d)}] = dv;
  }
  if (!in_layout) return;  // no value has the loop's dims: no coordinates are read
  line(fmt::format("{} {};  // flattened coordinates, dims {} (slowest first)", idx_t_, decl,
                   fmt::join(order, ", ")));
  open("TS_FOR(r)");
  line(fmt::format("const long long e = {} + {};", fb, local));
  for (size_t k = 0; k < order.size(); ++k) {
    int d = order[k];
    std::string q = stride[d] == "1"                           ? "e"
                    : stride[d].find('*') == std::string::npos ? fmt::format("e / {}", stride[d])
                                                               : fmt::format("e / ({})", stride[d]);
    if (k > 0) q = fmt::format("{} % fn{}_{}", q == "e" ? q : "(" + q + ")", n->id, d);
    line(fmt::format("fc{}_{}[r] = ({})({});", n->id, d, idx_t_, q));
  }
  close();
}

// ---- liveness: nodes that reach a store, a yield or a loop bound ----

static void mark(const Node* n, std::set<const Node*>& live) {
  if (!n || !live.insert(n).second) return;
  for (const Node* a : n->args) mark(a, live);
  if (n->op == Op::Loop) {
    for (const ir::LoopDim& d : n->dims) {
      mark(d.begin, live);
      mark(d.end, live);
    }
    for (const Node* i : n->inits) mark(i, live);
  }
  if (n->op == Op::Carried) {
    const Node* loop = n->args[0];
    for (size_t i = 0; i < loop->carried.size(); ++i)
      if (loop->carried[i] == n) {
        mark(loop->inits[i], live);
        mark(loop->body.back()->args[i], live);
      }
  }
  if (n->op == Op::LoopResult) mark(n->args[0]->carried.at(n->ival), live);
}

static void roots(const ir::Block& b, std::set<const Node*>& live) {
  for (const Node* n : b) {
    if (ir::writes_memory(n)) mark(n, live);
    if (n->op == Op::Loop) {
      roots(n->body, live);
      bool any = false;
      for (const Node* m : n->body) any |= live.count(m) > 0;
      if (any) mark(n, live);
    }
  }
}

// ---- the kernel ----

// Tile indices i<d> of the running program's tile (pid, or blockIdx with xyz), and the
// dims' DimVars. knobs.order[0] varies fastest across program ids (Helion's loop_orders);
// with knobs.l2_grouping G > 1, consecutive program ids walk G tiles along order[0] before
// moving along order[1] (Triton's grouped ordering, "GROUP_SIZE_M" in its matmul tutorial).
// xyz: the k-th dim of the order takes grid axis k.
void Emitter::emit_program_tiles(const passes::LoopKnobs& knobs,
                                 const std::vector<std::string>& counts, bool xyz) {
  const Node* n = top_;
  const std::vector<int>& o = knobs.order;
  const char* axes[] = {"x", "y", "z"};
  size_t first = 0;  // dims of the order decomposed from rem
  if (xyz) {
    for (size_t k = 0; k < o.size(); ++k) {
      line(fmt::format("const long long i{} = blockIdx.{};", o[k], axes[k]));
      line(fmt::format("if (i{} >= {}) return;", o[k], counts[o[k]]));
    }
    first = o.size();
  } else {
    line("long long rem = pid;");
  }
  if (!xyz && knobs.l2_grouping > 1) {
    const std::string &m = counts[o[0]], &nn = counts[o[1]];
    if (o.size() > 2) {
      line(fmt::format(
          "const long long p2 = rem % ({} * {});  // position in the grouped 2-D plane", m, nn));
      line(fmt::format("rem /= {} * {};", m, nn));
    } else {
      line("const long long p2 = rem;");
    }
    line(fmt::format(
        "const long long group = {}LL * {};  // programs per group of {} tiles along dim {}",
        knobs.l2_grouping, nn, knobs.l2_grouping, o[0]));
    line(fmt::format("const long long first = p2 / group * {}LL;", knobs.l2_grouping));
    line(fmt::format("const long long gsize = min({} - first, {}LL);", m, knobs.l2_grouping));
    line(fmt::format("const long long i{} = first + p2 % group % gsize;", o[0]));
    line(fmt::format("const long long i{} = p2 % group / gsize;", o[1]));
    first = 2;
  }
  for (size_t k = first; k < o.size(); ++k) {
    line(fmt::format("const long long i{} = rem % {};", o[k], counts[o[k]]));
    line(fmt::format("rem /= {};", counts[o[k]]));
  }
  for (size_t d = 0; d < n->dims.size(); ++d) {
    DimVars dv = dim_vars(n, static_cast<int>(d));
    std::string le = fmt::format("le{}_{}", n->id, d);
    line(fmt::format("const {} {} = ({})({} + i{} * {});", idx_t_, dv.tb, idx_t_, dv.lb, d,
                     dv.block));
    line(fmt::format("const {} {} = ({})min({} + i{} * {} + {}, {});", idx_t_, dv.te, idx_t_, dv.lb,
                     d, dv.block, dv.block, le));
    dims[{n, static_cast<int>(d)}] = dv;
  }
}

void Emitter::run() {
  roots(top_->body, live_);
  for (const Node* n : live_) {
    if (ir::writes_memory(n)) written_.insert(n->args[0]);
    multicast_ |= n->op == Op::Multicast;
  }
  find_values_rounded_by_stores();
  find_barriers();

  // Program -> tile mapping of the top-level loop.
  const Node* n = top_;
  passes::LoopKnobs knobs = passes::loop_knobs(g_, n, config_);
  std::vector<std::string> counts;
  for (size_t d = 0; d < n->dims.size(); ++d) {
    const ir::LoopDim& ld = n->dims[d];
    std::string lb = fmt::format("lb{}_{}", n->id, d), le = fmt::format("le{}_{}", n->id, d);
    line(fmt::format("const long long {} = {}, {} = {};", lb, scalar(ld.begin), le, scalar(ld.end)),
         n);
    if (knobs.flatten) continue;
    int64_t block = passes::block_size(ld, config_);
    std::string nt = fmt::format("nt{}", d);
    line(fmt::format("const long long {} = {} > {} ? ({} - {} + {}) / {} : 0;  // tiles of dim {}",
                     nt, le, lb, le, lb, block - 1, block, d));
    counts.push_back(nt);
  }
  int64_t flat_elems = 1;  // flattened: elements per tile
  if (knobs.flatten) {
    for (const ir::LoopDim& ld : n->dims) flat_elems *= passes::block_size(ld, config_);
    std::string numel = emit_flat_extents(n, knobs.order);
    line(fmt::format("const long long total = ({} + {}) / {};  // flattened tiles", numel,
                     flat_elems - 1, flat_elems));
  } else {
    std::string total = "1";
    for (const std::string& c : counts) total += " * " + c;
    line(fmt::format("const long long total = {};", total));
  }
  PidType pid = config_.pid_type.value_or(PidType::flat);
  // A flattened loop has one dimension: pid_type xyz launches it along x alone.
  bool xyz = pid == PidType::xyz && !n->persistent && !knobs.flatten;
  std::vector<const Node*> early = prefetchable_loads(n);  // num_stages >= 2, persistent
  if (pid == PidType::persistent_blocked) {
    line("const long long per = (total + gridDim.x - 1) / gridDim.x;");
    line("const long long pid_begin = (long long)blockIdx.x * per;");
    line("const long long pid_end = min(pid_begin + per, total);");
    if (!early.empty()) emit_program_prefetch_first(early, knobs, counts, "pid_begin", "pid_end");
    open("for (long long pid = pid_begin; pid < pid_end; ++pid)");
  } else if (pid == PidType::persistent_interleaved) {
    if (!early.empty())
      emit_program_prefetch_first(early, knobs, counts, "(long long)blockIdx.x", "total");
    open("for (long long pid = blockIdx.x; pid < total; pid += gridDim.x)");
  } else {
    open("");
    if (!xyz) {
      line("const long long pid = blockIdx.x;");
      line("if (pid >= total) return;");
    }
  }
  if (knobs.flatten) {
    std::string fb = fmt::format("fb{}", n->id);
    line(fmt::format("const long long {} = pid * {};  // first flat element of the tile", fb,
                     flat_elems));
    emit_flat_coords(n, knobs.order, fb);
  } else {
    emit_program_tiles(knobs, counts, xyz);
  }
  if (!early.empty())
    emit_program_prefetch_next(early, knobs, counts,
                               pid == PidType::persistent_blocked ? "pid + 1" : "pid + gridDim.x",
                               pid == PidType::persistent_blocked ? "pid_end" : "total");
  emit_block(n->body);
  close();

  // Assemble.
  std::ostringstream src;
  src << "// Generated by tessel for kernel '" << g_.kernel_name << "', loop at " << n->loc.str()
      << ".\n";
  src << "// config: " << config_.to_json() << "\n";
  src << "#include \"tessel/tessel.cuh\"\n";
  // <cuda/atomic> (libcu++) costs NVRTC time (docs/DECISIONS.md): only where used.
  if (uses_atomics_) src << "#include \"tessel/atomics.cuh\"\n";
  src << "\n";
  src << fmt::format(
      "#define TS_T {}\n#define TS_V {}\n#define TS_G {}\n#define TS_N (TS_G * TS_V)\n", L_.threads,
      L_.vec, L_.groups);
  src << "#define TS_FLAT(r) (((((r) / TS_V) * TS_T + tid) * TS_V) + (r) % TS_V)\n";
  src << "#define TS_FOR(r) _Pragma(\"unroll\") for (int r = 0; r < TS_N; ++r)\n\n";
  // __launch_bounds__ and __maxnreg__ exclude each other (nvcc/NVRTC); both set the
  // register budget, the first from the thread count, the second from Config::maxnreg.
  std::string bounds = config_.maxnreg ? fmt::format("__maxnreg__({})", *config_.maxnreg)
                                       : fmt::format("__launch_bounds__({})", L_.threads);
  src << fmt::format("extern \"C\" __global__ void {} {}(", bounds, out_.name);
  for (size_t i = 0; i < out_.params.size(); ++i) {
    const Param& p = out_.params[i];
    if (i) src << ",\n    ";
    switch (p.kind) {
      case Param::tensor_ptr: {
        bool ro = !written_.count(p.node);
        // __restrict__ promises no other pointer reaches this memory (and lets the compiler
        // use non-coherent loads): not so when another argument's bytes overlap these.
        // A multicast tensor's buffers may be any argument's memory.
        bool aliased = multicast_ || (p.node->op == Op::Arg &&
                                      static_cast<size_t>(p.node->ival) < g_.arg_facts.size() &&
                                      g_.arg_facts[p.node->ival].alias_group >= 0);
        src << fmt::format("{}{}*{} {}", ro ? "const " : "", dtype_cuda_storage(p.node->dtype),
                           ro && !aliased ? " __restrict__" : "",
                           param_names_.at("T" + std::to_string(p.node->id)));
        break;
      }
      case Param::tensor_size:
        src << idx_t_ << " " << param_names_.at(fmt::format("S{}_{}", p.node->id, p.dim));
        break;
      case Param::tensor_stride:
        src << idx_t_ << " " << param_names_.at(fmt::format("D{}_{}", p.node->id, p.dim));
        break;
      case Param::host_int:
        src << (p.dtype == DType::i32 ? "int " : "long long ")
            << param_names_.at("H" + std::to_string(p.node->id));
        break;
      case Param::host_float:
        src << (p.dtype == DType::f64 ? "double " : "float ")
            << param_names_.at("H" + std::to_string(p.node->id));
        break;
      case Param::device_ptr:
        src << "const " << dtype_cuda_storage(p.node->dtype) << "* "
            << param_names_.at("P" + std::to_string(p.node->id));
        break;
      case Param::check_record:
        src << "long long* ts_check";
        break;
    }
  }
  src << ") {\n";
  src << "  const int tid = threadIdx.x;\n";
  // Programs launch TS_T threads: with the range known, the compiler folds the masks of
  // register coordinates (TS_FLAT(r) & ...) and addresses registers by constant offsets.
  src << "  __builtin_assume(tid >= 0 && tid < TS_T);\n";
  if (shared_bytes_ > 0) src << "  extern __shared__ __align__(16) unsigned char ts_smem[];\n";
  src << prologue_.str() << body_.str() << "}\n";
  out_.source = src.str();
  out_.threads = L_.threads;
  out_.shared_bytes = shared_bytes_;
  if (uses_atomics_) out_.nvrtc_options.push_back("-pch");
}

void emit_kernel(const ir::Graph& g, const Node* loop, const Config& config,
                 const passes::Layout& layout, CudaKernel& out) {
  Emitter e(g, loop, config, layout, out);
  e.run();
}

}  // namespace tessel::codegen
