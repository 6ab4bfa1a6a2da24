#include "fuzz/build.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "autotune/config_space.hpp"
#include "fuzz/walk.hpp"
#include "runtime/kernel_tuning.hpp"

namespace fuzz {

namespace {

using Tensors = std::array<ts::Tensor, kTensors>;

// Calls the DSL for each step of walk().
struct DslSink {
  const Program& p;
  const Tensors& T;
  const ts::Value& m;
  const ts::Value& n;
  std::optional<ts::Tile> tm, tn;
  std::optional<ts::Value> gi, gj;
  std::vector<std::optional<ts::Value>> vals, accs;

  DslSink(const Program& prog, const Tensors& t, const ts::Value& m_, const ts::Value& n_)
      : p(prog), T(t), m(m_), n(n_), vals(prog.nodes.size()), accs(prog.nodes.size()) {}

  // A host value equal to M (rows) or N (columns): a size of a tensor with that extent.
  ts::Value extent(bool rows) const {
    if (rows) return T[kInputs].size(0);  // output 0 is a row or full tensor
    for (size_t o = 0; o < p.outputs.size(); ++o)
      if (p.outputs[o].shape == Shape::full) return T[kInputs + o].size(1);
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      if (p.inputs[i].shape == Shape::full) return T[i].size(1);
      if (p.inputs[i].shape == Shape::col) return T[i].size(0);
    }
    return ts::Value(p.N);
  }

  ts::Bound bound(const LoopBound& b, bool rows) const {
    switch (b.kind) {
      case BoundKind::size:
        return ts::Bound(extent(rows));
      case BoundKind::literal:
        return ts::Bound(b.end);
      case BoundKind::symbolic:
        return ts::Bound(rows ? m : n);
      case BoundKind::device:
        return ts::Bound(T[rows ? kRowBound : kColBound]);
      case BoundKind::range:
        return ts::Bound(ts::Operand(b.begin), ts::Operand(extent(rows)));
    }
    return ts::Bound(b.end);
  }

  template <class F>
  void top_loop(F body) {
    ts::Bound rb = bound(p.rows, true);
    switch (p.form) {
      case Form::tile_all:
      case Form::tile_nested:
        for (auto t : ts::tile(rb)) {
          tm.emplace(t);
          body();
        }
        break;
      case Form::tile_2d:
        for (auto [a, b] : ts::tile(rb, bound(p.cols, false))) {
          tm.emplace(a);
          tn.emplace(b);
          body();
        }
        break;
      case Form::grid_all:
      case Form::grid_nested:
        for (auto i : ts::grid(rb)) {
          gi.emplace(i);
          body();
        }
        break;
      case Form::grid_2d:
        for (auto [i, j] : ts::grid(rb, bound(p.cols, false))) {
          gi.emplace(i);
          gj.emplace(j);
          body();
        }
        break;
    }
  }

  template <class F>
  void inner_loop(F body) {
    for (auto t : ts::tile(bound(p.cols, false))) {
      tn.emplace(t);
      body();
    }
  }

  ts::Index rix() const { return tm ? ts::Index(*tm) : ts::Index(*gi); }
  ts::Index cix() const { return tn ? ts::Index(*tn) : gj ? ts::Index(*gj) : ts::Index(ts::all); }

  ts::TensorRef at(const ts::Tensor& t, Shape s) const {
    if (s == Shape::full) return t(rix(), cix());
    if (s == Shape::tile) return t(tm->id());
    return s == Shape::row ? t(rix()) : t(cix());
  }

  // Operand o of a node of shape `result`: a row value of a tile broadcasts against
  // columns as [tm, 1].
  ts::Operand operand(int o, Shape result) const {
    const Node& x = p.nodes[o];
    if (x.op == Op::literal) {
      if (x.dtype == DType::f32) return ts::Operand(x.lit);
      return ts::Operand(static_cast<int64_t>(x.lit));
    }
    const ts::Value& v = *vals[o];
    if (tiled_rows(p.form) && x.shape == Shape::row && result != Shape::row)
      return v(ts::all, ts::newaxis);
    return v;
  }

  ts::Value reduce(Op op, const ts::Operand& a) const {
    switch (op) {
      case Op::sum:
        return ts::sum(a, -1);
      case Op::mean:
        return ts::mean(a, -1);
      case Op::max:
        return ts::max(a, -1);
      case Op::min:
        return ts::min(a, -1);
      case Op::prod:
        return ts::prod(a, -1);
      case Op::argmax:
        return ts::argmax(a, -1);
      case Op::argmin:
        return ts::argmin(a, -1);
      case Op::any:
        return ts::any(a, -1);
      default:
        return ts::all_of(a, -1);
    }
  }

  ts::Value unary(Op op, const ts::Operand& a) const {
    switch (op) {
      case Op::neg:
        return -a;
      case Op::abs:
        return ts::abs(a);
      case Op::exp:
        return ts::exp(a);
      case Op::exp2:
        return ts::exp2(a);
      case Op::log:
        return ts::log(a);
      case Op::log2:
        return ts::log2(a);
      case Op::sqrt:
        return ts::sqrt(a);
      case Op::rsqrt:
        return ts::rsqrt(a);
      case Op::sin:
        return ts::sin(a);
      case Op::cos:
        return ts::cos(a);
      case Op::tanh:
        return ts::tanh(a);
      case Op::sigmoid:
        return ts::sigmoid(a);
      case Op::erf:
        return ts::erf(a);
      case Op::floor:
        return ts::floor(a);
      case Op::ceil:
        return ts::ceil(a);
      case Op::logical_not:
        return !a;
      default:
        return ~a;
    }
  }

  ts::Value binary(Op op, const ts::Operand& a, const ts::Operand& b) const {
    switch (op) {
      case Op::add:
        return a + b;
      case Op::sub:
        return a - b;
      case Op::mul:
        return a * b;
      case Op::div:
        return a / b;
      case Op::mod:
        return a % b;
      case Op::floordiv:
        return ts::floordiv(a, b);
      case Op::maximum:
        return ts::maximum(a, b);
      case Op::minimum:
        return ts::minimum(a, b);
      case Op::pow:
        return ts::pow(a, b);
      case Op::lt:
        return a < b;
      case Op::le:
        return a <= b;
      case Op::gt:
        return a > b;
      case Op::ge:
        return a >= b;
      case Op::eq:
        return a == b;
      case Op::ne:
        return a != b;
      case Op::logical_and:
        return a && b;
      case Op::logical_or:
        return a || b;
      case Op::bit_and:
        return a & b;
      case Op::bit_or:
        return a | b;
      default:
        return a ^ b;
    }
  }

  int rank(Shape s) const {
    if (p.form == Form::grid_2d || s == Shape::tile) return 0;
    if (s == Shape::full) return tiled_rows(p.form) ? 2 : 1;
    if (s == Shape::col) return 1;
    return tiled_rows(p.form) ? 1 : 0;
  }

  void check(int i, const ts::Value& v) const {
    const Node& x = p.nodes[i];
    if (v.dtype() != x.dtype || v.dim() != rank(x.shape))
      throw CheckFailure(fmt::format("v{} ({}): traced as {} of rank {}, expected {} of rank {}", i,
                                     op_name(x.op), ts::dtype_name(v.dtype()), v.dim(),
                                     ts::dtype_name(x.dtype), rank(x.shape)));
  }

  void set(int i, ts::Value v) {
    check(i, v);
    vals[i].emplace(v);
  }

  void node(int i) {
    const Node& x = p.nodes[i];
    const Shape s = x.shape;
    switch (x.op) {
      case Op::load:
        return set(i, ts::Value(at(T[x.input], s)));
      case Op::reload:
        return set(i, ts::Value(at(T[kInputs + x.input], s)));
      case Op::row_index:
        return set(i, tm ? tm->index() : *gi);
      case Op::extent:
        return set(i, ts::cast(extent(x.lit == 0), DType::i64));  // not weak if a literal
      case Op::tile_attr: {
        const int k = static_cast<int>(x.lit);
        return set(i, k == 0   ? tm->begin()
                      : k == 1 ? tm->end()
                      : k == 2 ? tm->id()
                               : tm->block_size());
      }
      case Op::col_index:
        return set(i, tn ? tn->index() : gj ? *gj : ts::arange(extent(false), x.dtype));
      case Op::gather:
        return set(i, ts::Value(T[x.input](rix(), ts::Index(*vals[x.a]))));
      case Op::store: {
        ts::TensorRef target = at(T[kInputs + x.input], s);
        if (x.lit == 1)
          target += operand(x.a, s);
        else if (x.lit == 2)
          target -= operand(x.a, s);
        else if (x.lit == 3)
          target *= operand(x.a, s);
        else
          target = operand(x.a, s);
        return;
      }
      case Op::cast:
        return set(i, ts::cast(operand(x.a, s), x.dtype));
      case Op::where:
        return set(i, ts::where(operand(x.a, s), operand(x.b, s), operand(x.c, s)));
      default:
        break;
    }
    if (is_unary(x.op)) return set(i, unary(x.op, operand(x.a, s)));
    if (is_binary(x.op)) return set(i, binary(x.op, operand(x.a, s), operand(x.b, s)));
    set(i, reduce(x.op, operand(x.a, p.nodes[x.a].shape)));
  }

  void acc_init(int i) {
    const Node& x = p.nodes[i];
    double v = accumulator_init(x.op, x.dtype);
    if (tm)
      accs[i].emplace(ts::full({*tm}, v, x.dtype));
    else if (floating(x.dtype))
      accs[i].emplace(ts::cast(ts::Value(v), x.dtype));
    else  // an integer literal: a float one is an f32, which rounds the extremes
      accs[i].emplace(ts::cast(ts::Value(static_cast<int64_t>(v)), x.dtype));
  }

  void acc_step(int i) {
    const Node& x = p.nodes[i];
    ts::Value part = reduce(x.op, operand(x.a, Shape::full));
    ts::Value& acc = *accs[i];
    switch (x.op) {
      case Op::sum:
        acc = acc + part;
        break;
      case Op::prod:
        acc = acc * part;
        break;
      case Op::max:
        acc = ts::maximum(acc, part);
        break;
      case Op::min:
        acc = ts::minimum(acc, part);
        break;
      case Op::any:
        acc = acc || part;
        break;
      default:
        acc = acc && part;
        break;
    }
  }

  void acc_final(int i) { set(i, *accs[i]); }
};

template <size_t... I>
FuzzKernel kernel_of(std::shared_ptr<const Program> p, ts::Settings s, std::index_sequence<I...>) {
  s.static_captures = true;  // the captured description never changes
  return ts::kernel(
      fmt::format("fuzz_{}", p->seed),
      [p](TensorParam<I>... t, ts::Value m, ts::Value n) {
        Tensors T{t...};
        DslSink sink(*p, T, m, n);
        walk(*p, sink);
        if (p->relaunch_src >= 0) {
          const ts::Tensor &src = T[kInputs + p->relaunch_src], &dst = T[kInputs + p->relaunch_dst];
          for (auto t : ts::tile(dst.size(0))) {
            if (p->outputs[p->relaunch_src].shape == Shape::full)
              dst(t, ts::all) = src(t, ts::all);
            else
              dst(t) = src(t);
          }
        }
      },
      std::move(s));
}

ts::Buffer input_buffer(const Input& in, const std::vector<double>& v, int64_t M, int64_t N,
                        ts::Device dev) {
  BaseBuffer b = base_buffer(in, v, M, N);
  ts::Buffer base = ts::Buffer::from_vector(b.values, b.shape, in.dtype, dev);
  if (in.view == View::transposed) return base.transpose(0, 1);
  if (in.view == View::strided) {
    std::vector<int64_t> shape = b.shape;
    shape.back() /= 2;
    return base.view_as_strided(shape, b.strides, 0);
  }
  return base;
}

}  // namespace

BaseBuffer base_buffer(const Input& in, const std::vector<double>& v, int64_t M, int64_t N) {
  const int64_t L = in.shape == Shape::row ? M : N;
  const double garbage = in.dtype == DType::boolean ? 1 : 77;
  BaseBuffer b;
  switch (in.view) {
    case View::contiguous:
      b.values = v;
      b.shape = in.shape == Shape::full ? std::vector<int64_t>{M, N} : std::vector<int64_t>{L};
      break;
    case View::transposed:
      b.values.resize(v.size());
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) b.values[c * M + r] = v[r * N + c];
      b.shape = {N, M};
      break;
    case View::strided:
      if (in.shape == Shape::full) {
        b.values.assign(static_cast<size_t>(M * 2 * N), garbage);
        for (int64_t r = 0; r < M; ++r)
          for (int64_t c = 0; c < N; ++c) b.values[r * 2 * N + 2 * c] = v[r * N + c];
        b.shape = {M, 2 * N};
        b.strides = {2 * N, 2};
      } else {
        b.values.assign(static_cast<size_t>(2 * L), garbage);
        for (int64_t k = 0; k < L; ++k) b.values[2 * k] = v[k];
        b.shape = {2 * L};
        b.strides = {2};
      }
      break;
  }
  return b;
}

FuzzKernel make_kernel(const Program& p, ts::Settings s) {
  return kernel_of(std::make_shared<const Program>(p), std::move(s),
                   std::make_index_sequence<kTensors>{});
}

ts::Settings settings_of(const Program& p) {
  return ts::Settings{.index_dtype = p.index_dtype, .config = p.config};
}

Call make_call(const Program& p, const HostData& data, ts::Device device) {
  Call c;
  ts::Buffer dummy = ts::Buffer::zeros({1}, DType::f32, device);
  std::vector<ts::Buffer> t(kTensors, dummy);
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const Input& in = p.inputs[i];
    t[i] = in.alias >= 0 ? t[in.alias] : input_buffer(in, data.inputs[i], p.M, p.N, device);
  }
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const Output& out = p.outputs[o];
    if (out.inplace >= 0) {
      t[kInputs + o] = t[out.inplace];
    } else {
      std::vector<int64_t> shape =
          out.shape == Shape::full ? std::vector<int64_t>{p.M, p.N} : std::vector<int64_t>{p.M};
      t[kInputs + o] = ts::Buffer::from_vector(data.outputs[o], shape, out.dtype, device);
    }
    c.outputs.push_back(t[kInputs + o]);
  }
  if (p.rows.kind == BoundKind::device)
    t[kRowBound] = ts::Buffer::scalar(static_cast<double>(p.rows.end), DType::i64, device);
  if (p.cols.kind == BoundKind::device)
    t[kColBound] = ts::Buffer::scalar(static_cast<double>(p.cols.end), DType::i64, device);
  c.tensors = t;
  for (const ts::Buffer& b : c.tensors) c.args.emplace_back(&b);
  c.args.emplace_back(p.rows.end);
  c.args.emplace_back(p.cols.end);
  return c;
}

ts::Config draw_config(const Program& p, const HostData& data, std::mt19937_64& rng) {
  FuzzKernel k = make_kernel(p, ts::Settings{.index_dtype = p.index_dtype});
  Call c = make_call(p, data, ts::cpu());
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), c.args);
  ts::autotune::ConfigSpace space(g, {}, fmt::format("fuzz_{}", p.seed));
  return space.config(space.random_point(rng));
}

std::vector<std::vector<double>> run(const FuzzKernel& k, const Call& call) {
  ts::detail::call_kernel(k.impl(), call.args, nullptr, {});
  std::vector<std::vector<double>> out;
  for (const ts::Buffer& b : call.outputs) out.push_back(b.to_vector());
  return out;
}

std::vector<std::string> compile_cuda(const FuzzKernel& k, const Call& call) {
  return ts::detail::kernel_cuda(k.impl(), call.args, true, {});
}

}  // namespace fuzz
