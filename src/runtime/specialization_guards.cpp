// A specialization's guards (specialization.hpp): the host values its key does not hold,
// which select among the specializations of one key on each call.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "common/pow2.hpp"
#include "common/preserve_format.hpp"
#include "driver/host_env.hpp"
#include "runtime/specialization.hpp"

namespace tessel::detail {

namespace {

// Whether host expression `n` reads the value of a number argument, not only tensors'
// sizes and strides (which a call's exact signature holds).
bool reads_number_argument(const ir::Node* n) {
  std::vector<const ir::Node*> todo{n};
  std::set<const ir::Node*> seen;
  while (!todo.empty()) {
    const ir::Node* m = todo.back();
    todo.pop_back();
    if (!seen.insert(m).second || m->op == ir::Op::Size || m->op == ir::Op::Stride) continue;
    if (m->op == ir::Op::Arg) return true;
    todo.insert(todo.end(), m->args.begin(), m->args.end());
  }
  return false;
}

// Appends the decimal digits of v (no allocation; this runs on every call).
void append_int(std::string& k, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  k.append(buf, r.ptr);
}

// The index_32 guards of a 32-bit graph `g`: its allocations, and the integers its loops
// and extents use that the key does not fix (sizes of arguments it holds; constants
// within 32 bits).
void collect_index_guards(const ir::Graph& g, std::vector<Specialization::Guard>& out) {
  auto add = [&](const ir::Node* n) {
    if (!n || (n->op != ir::Op::Alloc && (!is_integer(n->dtype) || !ir::host_computable(n))))
      return;
    if ((n->op == ir::Op::Size || n->op == ir::Op::Stride) && n->args.at(0)->op == ir::Op::Arg)
      return;
    if (n->op == ir::Op::Const && n->ival >= INT32_MIN && n->ival <= INT32_MAX) return;
    for (const Specialization::Guard& gd : out)
      if (gd.node == n) return;
    out.push_back({n, Specialization::Guard::index_32});
  };
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Alloc) add(n);
  ir::walk(g.host, [&](const ir::Node* n) {
    if (n->op != ir::Op::Loop) return;
    for (const ir::LoopDim& d : n->dims) {
      add(d.begin);
      add(d.end);
    }
  });
  for (const auto& sym : g.syms())
    if (sym->kind == ir::Sym::extent_k) add(sym->extent);
}

// The padded_extent guards of `g`: extents of ts::all, arange and the tile constructors
// computed on the host from what the key does not fix (products of sizes, integer
// arguments, allocation sizes so computed). The key holds each argument size's next power
// of two, and constants are fixed; any other extent's power of two is checked per call.
void collect_extent_guards(const ir::Graph& g, std::vector<Specialization::Guard>& out) {
  for (const auto& sym : g.syms()) {
    const ir::Node* n = sym->kind == ir::Sym::extent_k ? sym->extent : nullptr;
    if (!n || n->op == ir::Op::Const) continue;
    if (n->op == ir::Op::Size && n->args.at(0)->op == ir::Op::Arg) continue;
    bool seen = false;
    for (const Specialization::Guard& gd : out) seen |= gd.node == n;
    if (!seen) out.push_back({n, Specialization::Guard::padded_extent});
  }
}

// The alloc_layout guards of `g`: its allocations like an argument.
void collect_layout_guards(const ir::Graph& g, std::vector<Specialization::Guard>& out) {
  for (const ir::Node* n : g.host)
    if (n->op == ir::Op::Alloc && n->like) out.push_back({n, Specialization::Guard::alloc_layout});
}

// An alloc_layout guard's value on the call of `vals`.
char alloc_layout_value(const ir::Node* alloc, std::span<const ir::ArgValue> vals) {
  const ir::ArgValue& a = vals[static_cast<size_t>(alloc->like->ival)];
  // A row-major argument gives its own strides (no allocation on the common call).
  bool row_major = row_major_strides(*a.shape, *a.strides) ||
                   row_major_strides(*a.shape, preserve_format_strides(*a.shape, *a.strides));
  return row_major ? 'R' : 'S';
}

// Why index_32 guard node `n` does not fit 32-bit index arithmetic on the call of `vals`
// ("" when it fits): an allocation of 2^31 elements or more (or with such a size), or a
// host integer outside int32.
std::string index_guard_failure(const ir::Node* n, std::span<const ir::ArgValue> vals) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (n->op == ir::Op::Alloc) {
    int64_t numel = 1;
    bool big = false;
    for (const ir::Node* e : n->args) {  // runs on every call: no allocation
      int64_t v = ir::eval_host_int(e, vals);
      big |= v >= kLimit;
      if (numel > 0 && __builtin_mul_overflow(numel, std::max<int64_t>(v, 0), &numel))
        numel = INT64_MAX;
    }
    if (!big && numel < kLimit) return "";
    std::vector<int64_t> shape;
    for (const ir::Node* e : n->args) shape.push_back(ir::eval_host_int(e, vals));
    return fmt::format("{} has shape [{}] ({} elements)", ir::describe_tensor(n),
                       fmt::join(shape, ", "),
                       numel == INT64_MAX ? std::string("2^63 or more") : std::to_string(numel));
  }
  int64_t v = ir::eval_host_int(n, vals);
  if (v >= INT32_MIN && v <= INT32_MAX) return "";
  return fmt::format("a loop bound or extent computed in host code is {}", v);
}

// write_guard_values; `assume_fits`: every index_32 guard fits (I), unchecked.
void write_values(const Specialization& s, std::span<const ir::ArgValue> vals, bool assume_fits,
                  std::string& out, std::string& wide, const ir::Node*& where) {
  bool index_guards = false;
  for (const Specialization::Guard& gd : s.guards) {
    if (gd.kind == Specialization::Guard::padded_extent) {
      append_int(out, next_pow2(ir::eval_host_int(gd.node, vals)));
      out += ',';
    } else if (gd.kind == Specialization::Guard::alloc_layout) {
      out += alloc_layout_value(gd.node, vals);
    } else {
      index_guards = true;
      if (!assume_fits && wide.empty()) {
        wide = index_guard_failure(gd.node, vals);
        where = gd.node;
      }
    }
  }
  if (index_guards) out += wide.empty() ? 'I' : 'L';
}

}  // namespace

void set_guards(Specialization& s, CallArgs args) {
  s.guards.clear();
  s.host_indices = rt::collect_host_indices(s.graph);
  collect_extent_guards(s.graph, s.guards);
  collect_layout_guards(s.graph, s.guards);
  if (s.graph.index_dtype == DType::i32) collect_index_guards(s.graph, s.guards);
  s.guards_read_numbers = false;
  for (const Specialization::Guard& g : s.guards)
    if (g.kind != Specialization::Guard::alloc_layout && reads_number_argument(g.node))
      s.guards_read_numbers = true;
  s.guard_values.clear();
  std::vector<ir::ArgValue> vals(args.size());
  rt::arg_values(args, vals);
  std::string wide;
  const ir::Node* where = nullptr;
  write_values(s, vals, /*assume_fits=*/true, s.guard_values, wide, where);
}

void write_guard_values(const Specialization& s, std::span<const ir::ArgValue> vals,
                        std::string& out, std::string& wide, const ir::Node*& where) {
  write_values(s, vals, /*assume_fits=*/false, out, wide, where);
}

}  // namespace tessel::detail
