#include "interp/frame.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/element.hpp"
#include "interp/eval_ops.hpp"
#include "interp/unwritten.hpp"
#include "passes/default_config.hpp"

namespace tessel::interp {

using ir::Node;
using ir::Op;

Frame::Frame(const ir::Graph& g, rt::HostEnv& env, const Config& config)
    : g_(g), env_(env), config_(config) {
  size_t n = g.nodes().size();
  vals_.resize(n);
  host_ready_.assign(n, 0);
  in_body_.assign(n, 0);
  dims_.resize(n);
  dims_ready_.assign(n, 0);
  extent_value_.assign(g.syms().size(), -1);
  loops_.resize(n);
}

void Frame::mark_body(const ir::Block& b) {
  for (const Node* n : b) {
    in_body_.at(n->id) = 1;
    if (n->op != Op::Loop) continue;
    for (const Node* c : n->carried) in_body_.at(c->id) = 1;
    mark_body(n->body);
  }
}

const TileValue& Frame::value(const Node* n) {
  TileValue& v = vals_.at(n->id);
  if (in_body_[n->id] || host_ready_[n->id]) return v;
  compute(n, v);
  host_ready_[n->id] = 1;
  return v;
}

const Dims& Frame::dims(const Node* n) {
  if (!dims_ready_.at(n->id)) {
    Dims& d = dims_[n->id];
    d.clear();
    for (const ir::Sym* s : n->shape) d.push_back(extent(s));
    dims_ready_[n->id] = 1;
  }
  return dims_[n->id];
}

int64_t Frame::extent(const ir::Sym* s) const { return passes::sym_block(s, config_); }

int64_t Frame::valid(const ir::Sym* s) {
  if (!s) return 1;
  if (s->kind == ir::Sym::block_k) return extent(s);  // every lane of a BlockSize's block
  if (s->kind == ir::Sym::tile) {
    const LoopState& ls = loops_.at(s->loop->id);
    if (static_cast<int>(ls.tile_begin.size()) <= s->loop_dim)
      throw InternalError(fmt::format("interpreter: tile t{} used outside its loop", s->id));
    return ls.tile_end[s->loop_dim] - ls.tile_begin[s->loop_dim];
  }
  int64_t& v = extent_value_.at(s->id);
  if (v < 0) {
    int64_t e = scalar_int(s->extent);
    if (e > s->extent_pow2)
      throw InternalError(fmt::format(
          "interpreter: extent {} ({}) is {} on this call but the kernel was specialized for at "
          "most {} elements (the specialization key does not cover this extent)",
          ir::sym_name(s), s->name, e, s->extent_pow2));
    v = std::max<int64_t>(e, 0);
  }
  return v;
}

void Frame::compute_leaf(const Node* n, TileValue& out) {
  if (n->op == Op::Const) {
    if (is_float(n->dtype))
      out.set_scalar_float(n->dtype, n->fval);
    else
      out.set_scalar_int(n->dtype, n->ival);
    return;
  }
  ir::HostScalar h = env_.eval(n);
  if (h.is_float)
    out.set_scalar_float(n->dtype, h.f);
  else
    out.set_scalar_int(n->dtype, h.i);
}

void Frame::read_device_scalar(const Node* n, TileValue& out) {
  const Buffer& b = env_.tensor(n->args.at(0));
  if (b.device().is_cuda())
    throw InternalError(
        "interpreter: a device scalar of a GPU buffer (stage it to the host first)");
  const int nidx = static_cast<int>(n->args.size()) - 1;
  if (nidx != b.dim() && !(nidx == 0 && b.numel() == 1))
    throw InternalError(fmt::format(
        "interpreter: device scalar with {} indices of a rank-{} tensor", nidx, b.dim()));
  int64_t offset = 0;
  for (int d = 0; d < nidx; ++d) {
    int64_t idx = scalar_int(n->args[d + 1]);
    if (idx < 0 || idx >= b.size(d))
      throw UserError(
          g_.kernel_name, n->loc,
          fmt::format("a device scalar reads index {} of dimension {} of {} ({}), "
                      "which has size {}",
                      idx, d, n->args[0]->name.empty() ? "a tensor" : n->args[0]->name, b.str(),
                      b.size(d)),
          "an element read in host code (`t(i)`, t.item(), ts::load(t)) must lie inside "
          "the tensor when the kernel runs");
    offset += idx * b.stride(d);
  }
  if (b.numel() == 0)
    throw UserError(
        g_.kernel_name, n->loc,
        fmt::format("a device scalar reads an element of an empty tensor ({})", b.str()),
        "pass a one-element tensor");
  if (unwritten_) unwritten_->access(n, b, offset, true, false);
  const char* p = static_cast<const char*>(b.data_ptr()) + offset * dtype_size(b.dtype());
  if (is_float(b.dtype()))
    out.set_scalar_float(n->dtype, read_element(p, b.dtype()));
  else
    out.set_scalar_int(n->dtype, read_element_int(p, b.dtype()));
}

void Frame::compute(const Node* n, TileValue& out) {
  switch (n->op) {
    case Op::Const:
    case Op::Arg:
    case Op::Size:
    case Op::Stride:
      compute_leaf(n, out);
      return;
    case Op::DeviceScalar:
      read_device_scalar(n, out);
      return;
    case Op::Unary: {
      const TileValue& a = value(n->args[0]);
      out.reset(n->dtype, dims(n));
      eval_unary(n->ufn(), a, out);
      return;
    }
    case Op::Binary: {
      const TileValue& a = value(n->args[0]);
      const TileValue& b = value(n->args[1]);
      out.reset(n->dtype, dims(n));
      eval_binary(n->bfn(), a, b, out);
      return;
    }
    case Op::Where: {
      const TileValue& c = value(n->args[0]);
      const TileValue& a = value(n->args[1]);
      const TileValue& b = value(n->args[2]);
      out.reset(n->dtype, dims(n));
      eval_where(c, a, b, out);
      return;
    }
    case Op::Cast: {
      const TileValue& a = value(n->args[0]);
      out.reset(n->dtype, dims(n));
      eval_cast(a, out);
      return;
    }
    case Op::Full: {
      const TileValue& a = value(n->args[0]);
      out.reset(n->dtype, dims(n));
      if (out.is_float())
        std::fill(out.f.begin(), out.f.end(), round_float(n->dtype, a.as_double(0)));
      else
        std::fill(out.i.begin(), out.i.end(), wrap_int(n->dtype, a.as_int(0)));
      return;
    }
    case Op::Arange: {
      out.reset(n->dtype, dims(n));
      for (int64_t k = 0; k < out.size(); ++k) {
        if (out.is_float())
          out.f[k] = static_cast<double>(k);
        else
          out.i[k] = k;
      }
      round_in_place(out);
      return;
    }
    case Op::View: {
      const TileValue& a = value(n->args[0]);
      out.reset(n->dtype, dims(n));
      if (a.size() != out.size() || a.is_float() != out.is_float())
        throw InternalError("interpreter: a view changes the number of elements");
      out.f = a.f;
      out.i = a.i;
      return;
    }
    case Op::Permute: {
      const TileValue& a = value(n->args[0]);
      out.reset(n->dtype, dims(n));
      const std::vector<int> perm = ir::permutation(n);
      const auto& od = out.dims;
      // Row-major strides of the source, taken in the result's dim order.
      std::vector<int64_t> src_stride(perm.size(), 1), stride(perm.size());
      for (int i = static_cast<int>(perm.size()) - 2; i >= 0; --i)
        src_stride[static_cast<size_t>(i)] =
            src_stride[static_cast<size_t>(i) + 1] * a.dims[static_cast<size_t>(i) + 1];
      for (size_t i = 0; i < perm.size(); ++i) stride[i] = src_stride[static_cast<size_t>(perm[i])];
      std::vector<int64_t> idx(perm.size(), 0);
      for (int64_t k = 0; k < out.size(); ++k) {
        int64_t from = 0;
        for (size_t i = 0; i < idx.size(); ++i) from += idx[i] * stride[i];
        if (out.is_float())
          out.f[k] = a.f[from];
        else
          out.i[k] = a.i[from];
        for (int i = static_cast<int>(idx.size()) - 1; i >= 0; --i) {
          if (++idx[static_cast<size_t>(i)] < od[static_cast<size_t>(i)]) break;
          idx[static_cast<size_t>(i)] = 0;
        }
      }
      return;
    }
    case Op::Reduce: {
      const Node* src = n->args[0];
      const TileValue& a = value(src);
      int axis = static_cast<int>(n->ival);
      int64_t nvalid = valid(src->shape.at(axis));
      out.reset(n->dtype, dims(n));
      eval_reduce(n->rfn(), a, axis, nvalid, out);
      return;
    }
    // Not values: the host program and the loop runner (interpreter.cpp) run them.
    case Op::Alloc:
    case Op::ShapeCheck:
    case Op::Return:
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
      throw InternalError(
          fmt::format("interpreter: cannot compute %{} ({}) here", n->id, ir::op_name(n->op)));
  }
}

}  // namespace tessel::interp
