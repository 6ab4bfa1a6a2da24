// Kernel parameters: tensor pointers, sizes and strides (folded to constants where the
// specialization knows them), host scalars, and value declarations.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "codegen/cuda_emitter.hpp"
#include "codegen/emitter_state.hpp"
#include "codegen/fold.hpp"
#include "ir/host_eval.hpp"
#include "passes/default_config.hpp"
#include "passes/key_facts.hpp"
#include "passes/loop_knobs.hpp"

namespace tessel::codegen {

using ir::Node;
using ir::Op;

static std::string dedupe(std::map<std::string, std::string>& m, const std::string& key,
                          const std::string& name, bool& fresh) {
  auto it = m.find(key);
  fresh = it == m.end();
  if (fresh) m[key] = name;
  return m[key];
}

std::string Emitter::tensor_param(const Node* t) {
  std::string nm = ids_.tensor(t);
  bool fresh;
  std::string r = dedupe(param_names_, "T" + std::to_string(t->id), nm, fresh);
  if (fresh) out_.params.push_back({Param::tensor_ptr, t, t->dtype});
  return r;
}

std::string Emitter::tensor_map_param(const Node* n) {
  const Node* t = ir::addressed_tensor(n);
  bool fresh;
  std::string r = dedupe(param_names_, "M" + std::to_string(n->id),
                         ids_.of_tensor(t, fmt::format("map{}", n->id)), fresh);
  if (fresh) {
    Param p{Param::tensor_map, n, t->dtype};
    p.tma_dims = nir_.access(n).tma.dims;
    p.tma_box = nir_.access(n).tma.box;
    p.tma_swizzle = nir_.access(n).tma.swizzle;
    out_.params.push_back(p);
    // The program's mbarriers are made once, before its first tile (the prologue).
    uses_tma_ = true;
  }
  return r;
}

static const ir::ArgFacts* facts(const ir::Graph& g, const Node* t) {
  if (t->op != Op::Arg) return nullptr;
  size_t i = static_cast<size_t>(t->ival);
  return i < g.arg_facts.size() ? &g.arg_facts[i] : nullptr;
}

int64_t Emitter::known_size(const Node* t, int dim) const {
  // Static shapes (or a size the key fixes): the exact size.
  if (const ir::ArgFacts* f = facts(g_, t); f && static_cast<size_t>(dim) < f->known_sizes.size())
    return f->known_sizes[static_cast<size_t>(dim)];
  if (t->op == Op::Alloc) {
    // An allocation's size is a constant or another tensor's size (empty_like(x)).
    const Node* d = t->args.at(static_cast<size_t>(dim));
    if (d->op == Op::Const) return d->ival;
    if (d->op == Op::Size && d->args[0]->is_tensor())
      return known_size(d->args[0], static_cast<int>(d->ival));
  }
  return -1;
}

std::string Emitter::size_param(const Node* t, int dim) {
  // A known size is a constant of the generated code.
  if (int64_t n = known_size(t, dim); n >= 0) return literal(g_.index_dtype, 0, n);
  if (t->op == Op::Alloc) {
    // An allocation whose size is another tensor's size: its parameter (one per value).
    const Node* d = t->args.at(static_cast<size_t>(dim));
    if (d->op == Op::Size && d->args[0]->is_tensor())
      return size_param(d->args[0], static_cast<int>(d->ival));
  }
  return dim_param(Param::tensor_size, t, dim);
}

std::string Emitter::stride_param(const Node* t, int dim) {
  if (dim == ir::unit_stride_dim(g_, t)) return "1";
  return dim_param(Param::tensor_stride, t, dim);
}

std::string Emitter::dim_param(Param::Kind kind, const Node* t, int dim) {
  const bool size = kind == Param::tensor_size;
  bool fresh;
  std::string r =
      dedupe(param_names_, fmt::format("{}{}_{}", size ? 'S' : 'D', t->id, dim),
             ids_.of_tensor(t, fmt::format("{}{}", size ? "size" : "stride", dim)), fresh);
  if (fresh) {
    Param p{kind, t, g_.index_dtype};
    p.dim = dim;
    out_.params.push_back(p);
  }
  return r;
}

std::string Emitter::host_param(const Node* n) {
  bool fresh;
  std::string r = dedupe(param_names_, "H" + std::to_string(n->id), ids_.value(n, "s"), fresh);
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
  // A size the key fixes is a constant; another one is the tensor's size parameter (one
  // parameter per size, in the index dtype: widened where the IR's i64 is wider).
  if (n->op == Op::Size && n->dtype == DType::i64) {
    if (std::optional<int64_t> v = passes::known_int(g_, n)) return literal(DType::i64, 0, *v);
    if (n->args[0]->is_tensor()) {
      std::string p = size_param(n->args[0], static_cast<int>(n->ival));
      return idx_t_ == "long long" ? p : "(long long)" + p;
    }
  }
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
    std::string p = dedupe(param_names_, "P" + std::to_string(n->id), ids_.value(n, "ptr"), fresh);
    if (fresh) out_.params.push_back({Param::device_ptr, n, n->dtype});
    std::string nm = ids_.value(n, "ds");
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
  std::string nm = ids_.value(n) + suffix;
  names_[n] = nm;
  if (is_array(n)) return fmt::format("{} {}[TS_N];", reg_type(n->dtype), nm);
  return fmt::format("{} {}", reg_type(n->dtype), nm);
}

}  // namespace tessel::codegen
