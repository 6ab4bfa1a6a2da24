#include "fuzz/print_cpp.hpp"

#include <fmt/format.h>

#include <cmath>

#include "fuzz/build.hpp"
#include "fuzz/naive.hpp"
#include "fuzz/walk.hpp"

namespace fuzz {

namespace {

std::string number(double x) {
  if (std::isnan(x)) return "NAN";
  if (std::isinf(x)) return x > 0 ? "INFINITY" : "-INFINITY";
  return fmt::format("{}", x);
}

std::string list(const std::vector<double>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + number(v[k]);
  return "{" + s + "}";
}

std::string dims(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += fmt::format("{}{}", k ? ", " : "", v[k]);
  return "{" + s + "}";
}

// Writes each step of walk() as a line of C++.
struct TextSink {
  const Program& p;
  std::string out;
  int depth = 4;

  void line(const std::string& s) {
    out += std::string(static_cast<size_t>(2 * depth), ' ') + s + "\n";
  }

  std::string extent(bool rows) const {
    if (rows) return "out0.size(0)";
    for (size_t o = 0; o < p.outputs.size(); ++o)
      if (p.outputs[o].shape == Shape::full) return fmt::format("out{}.size(1)", o);
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      if (p.inputs[i].shape == Shape::full) return fmt::format("in{}.size(1)", i);
      if (p.inputs[i].shape == Shape::col) return fmt::format("in{}.size(0)", i);
    }
    return fmt::format("ts::Value({})", p.N);
  }

  std::string bound(const LoopBound& b, bool rows) const {
    switch (b.kind) {
      case BoundKind::size:
        return extent(rows);
      case BoundKind::literal:
        return fmt::format("{}", b.end);
      case BoundKind::symbolic:
        return rows ? "m" : "n";
      case BoundKind::device:
        return rows ? "rows_end" : "cols_end";
      case BoundKind::range:
        return fmt::format("ts::Bound{{{}, {}}}", b.begin, extent(rows));
    }
    return "";
  }

  template <class F>
  void open(const std::string& head, F body) {
    line(head + " {");
    ++depth;
    body();
    --depth;
    line("}");
  }

  template <class F>
  void top_loop(F body) {
    std::string rb = bound(p.rows, true);
    switch (p.form) {
      case Form::tile_all:
      case Form::tile_nested:
        return open(fmt::format("for (auto tm : ts::tile({}))", rb), body);
      case Form::tile_2d:
        return open(fmt::format("for (auto [tm, tn] : ts::tile({}, {}))", rb, bound(p.cols, false)),
                    body);
      case Form::grid_2d:
        return open(fmt::format("for (auto [i, j] : ts::grid({}, {}))", rb, bound(p.cols, false)),
                    body);
      default:
        return open(fmt::format("for (auto i : ts::grid({}))", rb), body);
    }
  }

  template <class F>
  void inner_loop(F body) {
    open(fmt::format("for (auto tn : ts::tile({}))", bound(p.cols, false)), body);
  }

  std::string rix() const { return tiled_rows(p.form) ? "tm" : "i"; }
  std::string cix() const {
    return tiled_cols(p.form) ? "tn" : p.form == Form::grid_2d ? "j" : "ts::all";
  }

  std::string at(const std::string& t, Shape s) const {
    if (s == Shape::full) return fmt::format("{}({}, {})", t, rix(), cix());
    if (s == Shape::tile) return fmt::format("{}(tm.id())", t);
    return fmt::format("{}({})", t, s == Shape::row ? rix() : cix());
  }

  std::string operand(int o, Shape result) const {
    const Node& x = p.nodes[o];
    if (x.op == Op::literal) {
      if (x.dtype == DType::f32)
        return x.lit == std::floor(x.lit) ? fmt::format("{:.1f}", x.lit) : number(x.lit);
      return fmt::format("int64_t{{{}}}", static_cast<int64_t>(x.lit));
    }
    if (tiled_rows(p.form) && x.shape == Shape::row && result != Shape::row)
      return fmt::format("v{}(ts::all, ts::newaxis)", o);
    return fmt::format("v{}", o);
  }

  static std::string call(Op op, const std::string& a, const std::string& b = "") {
    switch (op) {
      case Op::neg:
        return "-" + a;
      case Op::logical_not:
        return "!" + a;
      case Op::bit_not:
        return "~" + a;
      case Op::add:
        return fmt::format("({} + {})", a, b);
      case Op::sub:
        return fmt::format("({} - {})", a, b);
      case Op::mul:
        return fmt::format("({} * {})", a, b);
      case Op::div:
        return fmt::format("({} / {})", a, b);
      case Op::mod:
        return fmt::format("({} % {})", a, b);
      case Op::lt:
        return fmt::format("({} < {})", a, b);
      case Op::le:
        return fmt::format("({} <= {})", a, b);
      case Op::gt:
        return fmt::format("({} > {})", a, b);
      case Op::ge:
        return fmt::format("({} >= {})", a, b);
      case Op::eq:
        return fmt::format("({} == {})", a, b);
      case Op::ne:
        return fmt::format("({} != {})", a, b);
      case Op::logical_and:
        return fmt::format("({} && {})", a, b);
      case Op::logical_or:
        return fmt::format("({} || {})", a, b);
      case Op::bit_and:
        return fmt::format("({} & {})", a, b);
      case Op::bit_or:
        return fmt::format("({} | {})", a, b);
      case Op::bit_xor:
        return fmt::format("({} ^ {})", a, b);
      case Op::all:
        return fmt::format("ts::all_of({}, -1)", a);
      default:
        break;
    }
    if (is_reduce(op)) return fmt::format("ts::{}({}, -1)", op_name(op), a);
    if (b.empty()) return fmt::format("ts::{}({})", op_name(op), a);
    return fmt::format("ts::{}({}, {})", op_name(op), a, b);
  }

  void value(int i, const std::string& e) { line(fmt::format("ts::Value v{} = {};", i, e)); }

  void node(int i) {
    const Node& x = p.nodes[i];
    const Shape s = x.shape;
    switch (x.op) {
      case Op::load:
        return value(i, at(fmt::format("in{}", x.input), s));
      case Op::reload:
        return value(i, at(fmt::format("out{}", x.input), s));
      case Op::row_index:
        return value(i, tiled_rows(p.form) ? "tm.index()" : "i");
      case Op::extent:
        return value(i, fmt::format("ts::cast({}, ts::i64)", extent(x.lit == 0)));
      case Op::tile_attr: {
        static const char* attrs[] = {"tm.begin()", "tm.end()", "tm.id()", "tm.block_size()"};
        return value(i, attrs[static_cast<int>(x.lit)]);
      }
      case Op::col_index:
        return value(i, tiled_cols(p.form) ? "tn.index()"
                        : p.form == Form::grid_2d
                            ? "j"
                            : fmt::format("ts::arange({}, {})", extent(false), dtype_cpp(x.dtype)));
      case Op::gather:
        return value(i, fmt::format("in{}({}, v{})", x.input, rix(), x.a));
      case Op::store:
        return line(fmt::format("{} {}= {};", at(fmt::format("out{}", x.input), s),
                                x.lit == 1   ? "+"
                                : x.lit == 2 ? "-"
                                : x.lit == 3 ? "*"
                                             : "",
                                operand(x.a, s)));
      case Op::cast:
        return value(i, fmt::format("ts::cast({}, {})", operand(x.a, s), dtype_cpp(x.dtype)));
      case Op::where:
        return value(i, fmt::format("ts::where({}, {}, {})", operand(x.a, s), operand(x.b, s),
                                    operand(x.c, s)));
      default:
        break;
    }
    if (is_unary(x.op)) return value(i, call(x.op, operand(x.a, s)));
    if (is_binary(x.op)) return value(i, call(x.op, operand(x.a, s), operand(x.b, s)));
    value(i, call(x.op, operand(x.a, p.nodes[x.a].shape)));
  }

  void acc_init(int i) {
    const Node& x = p.nodes[i];
    const double v = accumulator_init(x.op, x.dtype);
    std::string init = std::isinf(v) ? number(v) : fmt::format("{:.1f}", v);
    if (tiled_rows(p.form))
      line(fmt::format("ts::Value acc{} = ts::full({{tm}}, {}, {});", i, init, dtype_cpp(x.dtype)));
    else if (floating(x.dtype))
      line(fmt::format("ts::Value acc{} = ts::cast(ts::Value({}), {});", i, init,
                       dtype_cpp(x.dtype)));
    else
      line(fmt::format("ts::Value acc{} = ts::cast(ts::Value(int64_t{{{}}}), {});", i,
                       static_cast<int64_t>(v), dtype_cpp(x.dtype)));
  }

  void acc_step(int i) {
    const Node& x = p.nodes[i];
    std::string part = call(x.op, operand(x.a, Shape::full)), acc = fmt::format("acc{}", i);
    Op c = x.op == Op::sum    ? Op::add
           : x.op == Op::prod ? Op::mul
           : x.op == Op::max  ? Op::maximum
           : x.op == Op::min  ? Op::minimum
           : x.op == Op::any  ? Op::logical_or
                              : Op::logical_and;
    line(fmt::format("{} = {};", acc, call(c, acc, part)));
  }

  void acc_final(int i) { value(i, fmt::format("acc{}", i)); }
};

}  // namespace

std::string print_cpp(const Program& p) {
  const HostData data = make_data(p);
  const std::vector<std::vector<double>> want = evaluate(p, data);
  std::string params, args, buffers;
  auto param = [&](const std::string& type, const std::string& name) {
    params += (params.empty() ? "" : ", ") + type + " " + name;
    args += (args.empty() ? "" : ", ") + name;
  };
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    param("ts::Tensor", fmt::format("in{}", i));
    const Input& in = p.inputs[i];
    if (in.alias >= 0) {
      buffers += fmt::format("  ts::Buffer in{} = in{};  // the same tensor twice\n", i, in.alias);
      continue;
    }
    BaseBuffer b = base_buffer(in, data.inputs[i], p.M, p.N);
    std::string view;
    if (in.view == View::transposed) view = ".transpose(0, 1)";
    if (in.view == View::strided) {
      std::vector<int64_t> shape = b.shape;
      shape.back() /= 2;
      view = fmt::format(".view_as_strided({}, {}, 0)", dims(shape), dims(b.strides));
    }
    buffers += fmt::format("  ts::Buffer in{} = ts::Buffer::from_vector({}, {}, {}){};\n", i,
                           list(b.values), dims(b.shape), dtype_cpp(in.dtype), view);
  }
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    param("ts::Tensor", fmt::format("out{}", o));
    const Output& out = p.outputs[o];
    if (out.inplace >= 0) {
      buffers += fmt::format("  ts::Buffer out{} = in{};  // written in place\n", o, out.inplace);
      continue;
    }
    std::vector<int64_t> shape =
        out.shape == Shape::full ? std::vector<int64_t>{p.M, p.N} : std::vector<int64_t>{p.M};
    buffers += fmt::format("  ts::Buffer out{} = ts::Buffer::zeros({}, {});\n", o, dims(shape),
                           dtype_cpp(out.dtype));
  }
  auto scalar = [&](const LoopBound& b, const std::string& tname, const std::string& vname) {
    if (b.kind == BoundKind::device) {
      param("ts::Tensor", tname);
      buffers += fmt::format("  ts::Buffer {} = ts::Buffer::scalar({}, ts::i64);\n", tname, b.end);
    }
    if (b.kind == BoundKind::symbolic) {
      params += std::string(params.empty() ? "" : ", ") + "ts::Value " + vname;
      args += fmt::format(", int64_t{{{}}}", b.end);
    }
  };
  scalar(p.rows, "rows_end", "m");
  if (looped_cols(p.form)) scalar(p.cols, "cols_end", "n");

  TextSink sink{p};
  walk(p, sink);
  if (p.relaunch_src >= 0) {
    const bool full = p.outputs[p.relaunch_src].shape == Shape::full;
    sink.line(fmt::format("for (auto t : ts::tile(out{}.size(0))) out{}(t{}) = out{}(t{});",
                          p.relaunch_dst, p.relaunch_dst, full ? ", ts::all" : "", p.relaunch_src,
                          full ? ", ts::all" : ""));
  }
  std::string settings = "ts::Settings{";
  if (p.index_dtype) settings += fmt::format(".index_dtype = {}, ", dtype_cpp(*p.index_dtype));
  settings += ".config = " + p.config.to_cpp() + "}";

  std::string checks;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const bool fuzzy = output_fuzzy(p, static_cast<int>(o));
    checks += fmt::format("  expect_near(out{}.to_vector(), {}, {});\n", o, list(want[o]),
                          fuzzy && floating(p.outputs[o].dtype) ? "1e-2" : "0");
  }
  return fmt::format(R"(// Found by tessel_fuzz (seed {seed}): {M} rows, {N} columns.
#include <gtest/gtest.h>

#include <cmath>
#include <tessel/tessel.hpp>

namespace ts = tessel;

namespace {{

// Element k of `got` equals `want` (NaN matches NaN), or is within tol * max(1, |want|).
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {{
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {{
    if (std::isnan(want[k]) || std::isnan(got[k])) {{
      EXPECT_TRUE(std::isnan(want[k]) && std::isnan(got[k])) << "element " << k << ": " << got[k];
    }} else if (got[k] != want[k]) {{
      EXPECT_NEAR(got[k], want[k], tol * std::fmax(1.0, std::fabs(want[k]))) << "element " << k;
    }}
  }}
}}

}}  // namespace

TEST(FuzzRegression, Seed{seed}) {{
  auto k = ts::kernel(
      "fuzz_{seed}",
      []({params}) {{
{body}      }},
      {settings});
{buffers}  k({args});
{checks}}}
)",
                     fmt::arg("seed", p.seed), fmt::arg("M", p.M), fmt::arg("N", p.N),
                     fmt::arg("params", params), fmt::arg("body", sink.out),
                     fmt::arg("settings", settings), fmt::arg("buffers", buffers),
                     fmt::arg("args", args), fmt::arg("checks", checks));
}

}  // namespace fuzz
