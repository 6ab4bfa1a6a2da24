#include "interp/memory_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <type_traits>

#include "common/element.hpp"
#include "driver/bounds_report.hpp"
#include "driver/host_memory.hpp"
#include "frontend/trace.hpp"
#include "interp/unwritten.hpp"
#include "interp/write_log.hpp"

namespace tessel::interp {

using ir::IndexKind;
using ir::Node;

namespace {

constexpr int64_t kInvalid = std::numeric_limits<int64_t>::min();

/// The addressing of one access: the indexed extents, the element offset contributed by
/// each indexed dim (kInvalid where masked), and the gather / value cursors.
struct Addressing {
  Dims dims;
  int64_t base = 0;            // offset of the scalar indices
  bool dead = false;           // some scalar index is out of range: every element is masked
  std::vector<int64_t> table;  // concatenated per-dim offset tables
  std::array<int64_t, kMaxRank + 1> table_at{};  // start of dim r's table
  // Cursors: gathers first (index values read at the cursor), then the stored value.
  int ncursors = 0;
  int ngathers = 0;
  std::array<std::array<int64_t, kMaxRank>, kMaxRank + 1> cstride{};  // per cursor, per dim
  std::array<const TileValue*, kMaxRank> gvalue{};
  std::array<int64_t, kMaxRank> gstride{};  // tensor stride of the gathered dim
  std::array<int64_t, kMaxRank> gsize{};    // tensor size of the gathered dim
  std::array<int, kMaxRank> gdim{};         // tensor dim of the gathered dim
  // Settings::check_bounds: an out-of-range gather index of an element valid otherwise
  // throws (rt::bounds_error) instead of masking the element.
  const ir::Graph* check = nullptr;
  const Node* node = nullptr;
};

// The error of an element offset beyond the 32-bit index arithmetic of `g`: a UserError
// where Settings::index_dtype forced i32, else a tessel bug (its choice was wrong).
[[noreturn]] void offset_overflow(const ir::Graph& g, const Node* n, const Buffer& t,
                                  int64_t reach) {
  std::string what =
      fmt::format("an element offset of {} ({}) reaches {}, beyond 32-bit index arithmetic",
                  frontend::describe_tensor(n->args.at(0)), t.str(), reach);
  if (g.index_dtype_forced)
    throw UserError(g.kernel_name, n->loc, what + " (Settings::index_dtype = ts::i32)",
                    "leave Settings::index_dtype unset or set it to ts::i64");
  throw InternalError(
      fmt::format("interpreter: kernel '{}' at {}: {}, but tessel chose 32-bit indices",
                  g.kernel_name, n->loc.str(), what));
}

// Under 32-bit index arithmetic, the generated code sums index * stride in 32 bits
// (codegen/emit_memory.cpp): every term and partial sum of a valid element's offset must
// fit int32. Their magnitudes are at most the sum of each dim's largest valid term.
void check_offsets_fit_32_bits(Frame& f, const Node* n, const Buffer& t, const Addressing& a) {
  if (f.graph().index_dtype != DType::i32 || a.dead) return;
  int64_t reach = a.base < 0 ? -a.base : a.base;
  for (size_t r = 0; r < a.dims.size(); ++r) {
    int64_t m = 0;
    for (int64_t i = a.table_at[r]; i < a.table_at[r + 1]; ++i)
      if (a.table[i] != kInvalid) m = std::max(m, a.table[i] < 0 ? -a.table[i] : a.table[i]);
    reach += m;
  }
  for (int g = 0; g < a.ngathers; ++g) {
    int64_t m = 0;
    for (int64_t idx : a.gvalue[g]->i)
      if (idx >= 0 && idx < a.gsize[g]) m = std::max(m, idx);
    reach += m * (a.gstride[g] < 0 ? -a.gstride[g] : a.gstride[g]);
  }
  if (reach > INT32_MAX) offset_overflow(f.graph(), n, t, reach);
}

// Extents and Syms of the broadcast of the gather operands (right-aligned).
void gather_block(Frame& f, const Node* n, int first_operand, Dims& block,
                  std::vector<const ir::Sym*>& syms) {
  block.clear();
  syms.clear();
  int k = first_operand;
  for (const ir::IndexInfo& info : n->access) {
    if (info.kind == IndexKind::newaxis) continue;
    const Node* op = n->args.at(k++);
    if (info.kind != IndexKind::gather) continue;
    const Dims& d = f.value(op).dims;
    if (d.size() != op->shape.size())
      throw InternalError("interpreter: gather index rank mismatch");
    if (d.size() > block.size()) {
      size_t grow = d.size() - block.size();
      block.insert(block.begin(), grow, 1);
      syms.insert(syms.begin(), grow, nullptr);
    }
    for (size_t j = 0; j < d.size(); ++j) {
      size_t at = block.size() - d.size() + j;
      if (block[at] == 1)
        block[at] = d[j];
      else if (d[j] != 1 && d[j] != block[at])
        throw InternalError("interpreter: gather indices do not broadcast");
      if (!syms[at]) syms[at] = op->shape[j];
    }
  }
}

void push_dim(Addressing& a, int64_t extent) {
  a.table_at[a.dims.size()] = static_cast<int64_t>(a.table.size());
  a.dims.push_back(extent);
}

// Builds the addressing of Load/Store `n` whose first index operand is args[first].
void plan(Frame& f, const Node* n, int first, const Buffer& t, Addressing& a) {
  a.dims.clear();
  a.table.clear();
  a.base = 0;
  a.dead = false;
  a.ngathers = 0;
  a.check = f.graph().check_bounds ? &f.graph() : nullptr;
  a.node = n;
  thread_local Dims block;
  thread_local std::vector<const ir::Sym*> block_syms;
  gather_block(f, n, first, block, block_syms);
  // A gather dimension whose Sym is also a tile/all index of this access is that same
  // result dimension (x(tm, labels(tm)) has shape [tm]); the others are new dimensions
  // placed at the first gather index.
  std::array<int, kMaxRank> block_pos{};  // result dim of each gather block dim
  std::array<bool, kMaxRank> shared{};
  for (size_t j = 0; j < block.size(); ++j) {
    shared[j] = false;
    for (const ir::IndexInfo& info : n->access)
      if ((info.kind == IndexKind::tile || info.kind == IndexKind::all) && block_syms[j] &&
          info.sym == block_syms[j])
        shared[j] = true;
  }
  int gather_pos = -1;
  int k = first, td = 0;
  // Settings::check_bounds: the first tile index (in dim order) within its tile but outside
  // the tensor, reported where every other dim has a valid lane (emit_memory.cpp's order).
  struct {
    int dim = -1;
    int64_t index = 0, size = 0;
  } past_end;
  std::array<std::optional<bool>, kMaxRank> in_tile{};  // tile dims: whether a lane is in it
  std::array<int, kMaxRank> gather_rank{};
  for (const ir::IndexInfo& info : n->access) {
    if (a.dims.size() + block.size() > static_cast<size_t>(kMaxRank))
      throw InternalError("interpreter: access rank above 16");
    if (info.kind == IndexKind::newaxis) {
      push_dim(a, 1);
      a.table.push_back(0);
      continue;
    }
    const Node* op = n->args.at(k++);
    const int64_t size = t.size(td), stride = t.stride(td);
    ++td;
    switch (info.kind) {
      case IndexKind::scalar: {
        int64_t idx = f.scalar_int(op);
        if ((idx < 0 || idx >= size) && a.check)
          throw rt::bounds_error(*a.check, n, td - 1, idx, size);
        if (idx < 0 || idx >= size)
          a.dead = true;
        else
          a.base += idx * stride;
        break;
      }
      case IndexKind::tile: {
        const ir::Sym* s = info.sym;
        for (size_t j = 0; j < block.size(); ++j)
          if (shared[j] && block_syms[j] == s) block_pos[j] = static_cast<int>(a.dims.size());
        const LoopState& ls = f.loop(op);
        int64_t tb = ls.tile_begin.at(s->loop_dim), te = ls.tile_end.at(s->loop_dim);
        int64_t blk = f.extent(s);
        push_dim(a, blk);
        for (int64_t c = 0; c < blk; ++c) {
          int64_t idx = tb + c;
          a.table.push_back(idx < te && idx >= 0 && idx < size ? idx * stride : kInvalid);
          if (a.check && idx < te && (idx < 0 || idx >= size) && past_end.dim < 0)
            past_end = {td - 1, idx, size};
        }
        in_tile[a.dims.size() - 1] = te > tb;
        break;
      }
      case IndexKind::all: {
        for (size_t j = 0; j < block.size(); ++j)
          if (shared[j] && block_syms[j] == info.sym)
            block_pos[j] = static_cast<int>(a.dims.size());
        int64_t ext = f.extent(info.sym), valid = f.valid(info.sym);
        push_dim(a, ext);
        for (int64_t c = 0; c < ext; ++c)
          a.table.push_back(c < valid && c < size ? c * stride : kInvalid);
        break;
      }
      case IndexKind::gather: {
        if (gather_pos < 0) {
          gather_pos = static_cast<int>(a.dims.size());
          // Masked by the validity of their Syms (a tile's ragged edge), as Helion
          // masks every tile dimension of an access, however it is indexed.
          for (size_t j = 0; j < block.size(); ++j) {
            if (shared[j]) continue;
            block_pos[j] = static_cast<int>(a.dims.size());
            push_dim(a, block[j]);
            int64_t valid = f.valid(block_syms[j]);
            for (int64_t c = 0; c < block[j]; ++c) a.table.push_back(c < valid ? 0 : kInvalid);
          }
        }
        int g = a.ngathers++;
        const TileValue& v = f.value(op);
        if (v.is_float()) throw InternalError("interpreter: a float gather index");
        a.gvalue[g] = &v;
        a.gstride[g] = stride;
        a.gsize[g] = size;
        a.gdim[g] = td - 1;
        gather_rank[g] = static_cast<int>(v.dims.size());
        break;
      }
      case IndexKind::newaxis:
        break;
    }
  }
  a.table_at[a.dims.size()] = static_cast<int64_t>(a.table.size());
  if (past_end.dim >= 0) {
    bool some_element = true;
    for (size_t j = 0; j < a.dims.size(); ++j) {
      if (in_tile[j]) {
        some_element = some_element && *in_tile[j];
        continue;
      }
      const int64_t* row = a.table.data() + a.table_at[j];
      some_element = some_element &&
                     std::any_of(row, row + a.dims[j], [](int64_t t) { return t != kInvalid; });
    }
    if (some_element)
      throw rt::bounds_error(*a.check, n, past_end.dim, past_end.index, past_end.size);
  }
  // Gather cursors: operand dims right-aligned inside the gather block.
  const int gk = static_cast<int>(block.size());
  for (int g = 0; g < a.ngathers; ++g) {
    std::array<int64_t, kMaxRank>& st = a.cstride[g];
    st.fill(0);
    const Dims& d = a.gvalue[g]->dims;
    int64_t stride = 1;
    for (int j = gather_rank[g] - 1; j >= 0; --j) {
      int r = block_pos[gk - gather_rank[g] + j];
      st[r] = d[j] == 1 ? 0 : stride;
      stride *= d[j];
    }
  }
  a.ncursors = a.ngathers;
}

// One row of indexed elements: the coordinates along the last indexed dim, at fixed
// outer coordinates.
struct Row {
  int64_t linear;        // index (in the indexed shape) of the row's first element
  bool ok;               // the outer coordinates are valid
  int64_t off;           // element offset of the outer coordinates and scalar indices
  const int64_t* table;  // per coordinate: offset contribution or kInvalid
  int64_t n;             // coordinates in the row
  const int64_t* cur;    // cursors at coordinate 0
  const int64_t* step;   // cursor steps per coordinate
};

// Calls fn(row) for every row of the indexed shape, in row-major order.
template <class F>
void for_each_row(const Addressing& a, F&& fn) {
  static const int64_t kZero = 0;
  const int R = static_cast<int>(a.dims.size()), C = a.ncursors;
  std::array<int64_t, kMaxRank + 1> zeros{};
  if (R == 0) {
    fn(Row{0, !a.dead, a.base, &kZero, 1, zeros.data(), zeros.data()});
    return;
  }
  // Level q holds the offset, validity and cursors of dims < q at the current coords.
  std::array<int64_t, kMaxRank + 1> loff{}, coord{}, cur{}, step{};
  std::array<bool, kMaxRank + 1> lok{};
  std::array<std::array<int64_t, kMaxRank + 1>, kMaxRank + 1> lcur{};
  loff[0] = a.base;
  lok[0] = !a.dead;
  auto refresh = [&](int from) {
    for (int q = from; q < R - 1; ++q) {
      int64_t t = a.table[a.table_at[q] + coord[q]];
      lok[q + 1] = lok[q] && t != kInvalid;
      loff[q + 1] = loff[q] + (t == kInvalid ? 0 : t);
      for (int c = 0; c < C; ++c) lcur[c][q + 1] = lcur[c][q] + coord[q] * a.cstride[c][q];
    }
  };
  refresh(0);
  const int last = R - 1;
  for (int c = 0; c < C; ++c) step[c] = a.cstride[c][last];
  const int64_t* tl = a.table.data() + a.table_at[last];
  int64_t linear = 0;
  while (true) {
    for (int c = 0; c < C; ++c) cur[c] = lcur[c][last];
    fn(Row{linear, lok[last], loff[last], tl, a.dims[last], cur.data(), step.data()});
    linear += a.dims[last];
    int r = last - 1;
    for (; r >= 0; --r) {
      if (++coord[r] < a.dims[r]) break;
      coord[r] = 0;
    }
    if (r < 0) break;
    refresh(r);
  }
}

// Offset of coordinate c of `row` including the gather indices; false when masked.
bool element_offset(const Addressing& a, const Row& row, int64_t c, int64_t& off) {
  if (!row.ok || row.table[c] == kInvalid) return false;
  off = row.off + row.table[c];
  for (int g = 0; g < a.ngathers; ++g) {
    int64_t idx = a.gvalue[g]->i[row.cur[g] + c * row.step[g]];
    if (idx < 0 || idx >= a.gsize[g]) {
      if (a.check) throw rt::bounds_error(*a.check, a.node, a.gdim[g], idx, a.gsize[g]);
      return false;
    }
    off += idx * a.gstride[g];
  }
  return true;
}

// Calls fn(offset) for every valid element of `a`, in row-major order.
template <class F>
void for_each_offset(const Addressing& a, F&& fn) {
  for_each_row(a, [&](const Row& r) {
    for (int64_t c = 0; c < r.n; ++c) {
      int64_t off = 0;
      if (element_offset(a, r, c, off)) fn(off);
    }
  });
}

// The checks of the elements load `n` of `t` reads: the race check's read log
// (interp/write_log.hpp) and the unwritten ts::empty elements (interp/unwritten.hpp).
void check_reads(Frame& f, const Node* n, const Buffer& t, const Addressing& a) {
  WriteLog* log = f.write_log();
  if (log && log->begin_load(n, t)) for_each_offset(a, [&](int64_t off) { log->read(off); });
  UnwrittenMemory* u = f.unwritten();
  if (const std::vector<uint8_t>* w = u ? u->of(n->args[0]) : nullptr)
    for_each_offset(a, [&](int64_t off) { u->read(n, *w, t, off); });
}

// Calls f(T{}) with the C++ type a dtype is stored as, when it has one (not f16, bf16, f8).
template <class F>
bool with_native_type(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      f(float{});
      return true;
    case DType::f64:
      f(double{});
      return true;
    case DType::i32:
      f(int32_t{});
      return true;
    case DType::i8:
      f(int8_t{});
      return true;
    case DType::i64:
    case DType::u64:
      f(int64_t{});
      return true;
    case DType::boolean:
      f(uint8_t{});
      return true;
    case DType::f16:
    case DType::bf16:
    case DType::f8e4m3:
    case DType::f8e5m2:
      break;
  }
  return false;
}

Addressing& scratch() {
  thread_local Addressing a;
  return a;
}

template <class O>
void load_into(const Addressing& a, const Buffer& t, O* out) {
  const char* base = static_cast<const char*>(t.data_ptr());
  const DType dt = t.dtype();
  const bool native =
      a.ngathers == 0 && with_native_type(dt, [&](auto tag) {
        using T = decltype(tag);
        const T* p = reinterpret_cast<const T*>(base);
        for_each_row(a, [&](const Row& r) {
          O* o = out + r.linear;
          for (int64_t c = 0; c < r.n; ++c)
            o[c] = (r.ok && r.table[c] != kInvalid) ? static_cast<O>(p[r.off + r.table[c]]) : O(0);
        });
      });
  if (native) return;
  const int64_t es = dtype_size(dt);
  for_each_row(a, [&](const Row& r) {
    for (int64_t c = 0; c < r.n; ++c) {
      int64_t off = 0;
      O& o = out[r.linear + c];
      if (!element_offset(a, r, c, off))
        o = 0;
      else if constexpr (std::is_same_v<O, double>)
        o = read_element(base + off * es, dt);
      else
        o = read_element_int(base + off * es, dt);
    }
  });
}

// With a write log (the race check), every element written is logged first.
template <class V>
void store_from(const Addressing& a, const Buffer& t, const V* val, int vc, WriteLog* log) {
  char* base = static_cast<char*>(t.data_ptr());
  const DType dt = t.dtype();
  const bool native = a.ngathers == 0 && !(std::is_same_v<V, double> && !is_float(dt)) &&
                      with_native_type(dt, [&](auto tag) {
                        using T = decltype(tag);
                        T* p = reinterpret_cast<T*>(base);
                        for_each_row(a, [&](const Row& r) {
                          if (!r.ok) return;
                          const V* v = val + r.cur[vc];
                          const int64_t vs = r.step[vc];
                          for (int64_t c = 0; c < r.n; ++c) {
                            if (r.table[c] == kInvalid) continue;
                            const T x = static_cast<T>(v[c * vs]);
                            if (log) log->write(r.off + r.table[c], &x);
                            p[r.off + r.table[c]] = x;
                          }
                        });
                      });
  if (native) return;
  const int64_t es = dtype_size(dt);
  for_each_row(a, [&](const Row& r) {
    for (int64_t c = 0; c < r.n; ++c) {
      int64_t off = 0;
      if (!element_offset(a, r, c, off)) continue;
      V v = val[r.cur[vc] + c * r.step[vc]];
      auto put = [&](void* p) {
        if constexpr (std::is_same_v<V, double>)
          write_element(p, dt, v);
        else
          write_element_int(p, dt, v);
      };
      if (log) {
        alignas(8) char bytes[8];
        put(bytes);
        log->write(off, bytes);
      }
      put(base + off * es);
    }
  });
}

// The error of a multicast buffer address the interpreter cannot dereference.
[[noreturn]] void bad_address(Frame& f, const Node* n, int64_t s, uintptr_t p,
                              const std::string& why) {
  throw UserError(
      f.graph().kernel_name, n->loc,
      fmt::format("element {} of the dev_ptrs of {} is 0x{:x}, {}", s,
                  frontend::describe_tensor(n->args.at(0)), p, why),
      "on the CPU interpreter the addresses must be data pointers of live CPU Buffers, shaped like "
      "the example (ts::SymmetricBuffer on ts::cpu() gives them: dev_ptrs()); GPU addresses "
      "cannot be read on the CPU");
}

}  // namespace

void multicast_addresses(Frame& f, const Node* n, int first, MulticastAccess& out) {
  const Node* mc = n->args.at(0);
  const Buffer& like = f.env().tensor(mc->args.at(0));
  if (like.dim() > kMaxRank) throw InternalError("interpreter: tensor rank above 16");
  Addressing& a = scratch();
  plan(f, n, first, like, a);
  check_offsets_fit_32_bits(f, n, like, a);
  // Element offsets of the indexed elements in one buffer (kInvalid where masked).
  int64_t per = 1;
  for (int64_t d : a.dims) per *= d;
  thread_local std::vector<int64_t> offs;
  offs.assign(static_cast<size_t>(per), kInvalid);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for_each_row(a, [&](const Row& r) {
    for (int64_t c = 0; c < r.n; ++c) {
      int64_t off = 0;
      if (!element_offset(a, r, c, off)) continue;
      offs[static_cast<size_t>(r.linear + c)] = off;
      lo = std::min(lo, off);
      hi = std::max(hi, off);
    }
  });
  // Stack elements: masked where a dev_ptrs coordinate is past its Sym's valid extent (a
  // tile's ragged edge, a ts::all extent's padding).
  const Node* ptrs_node = mc->args.at(1);
  const TileValue& ptrs = f.value(ptrs_node);
  const Dims& pd = ptrs.dims;
  Dims want = pd;
  want.insert(want.end(), a.dims.begin(), a.dims.end());
  if (n->op != ir::Op::Store && want != f.dims(n))
    throw InternalError(
        fmt::format("interpreter: multicast access %{} addresses {} dims, its "
                    "shape has {}",
                    n->id, want.size(), f.dims(n).size()));
  std::vector<int64_t> valid(pd.size());
  for (size_t j = 0; j < pd.size(); ++j) valid[j] = f.valid(ptrs_node->shape.at(j));
  const int64_t es = dtype_size(like.dtype());
  const int64_t stacks = static_cast<int64_t>(ptrs.i.size());
  out.dims = want;
  out.per_buffer = per;
  out.elements.assign(static_cast<size_t>(stacks * per), MulticastElement{});
  std::vector<int64_t> coord(pd.size(), 0);
  for (int64_t s = 0; s < stacks; ++s) {
    bool ok = true;
    for (size_t j = 0; j < pd.size(); ++j) ok &= coord[j] < valid[j];
    for (size_t j = pd.size(); j-- > 0;) {
      if (++coord[j] < pd[j]) break;
      coord[j] = 0;
    }
    if (!ok || lo > hi) continue;  // a masked buffer, or no valid element
    const uintptr_t p = static_cast<uintptr_t>(ptrs.i[static_cast<size_t>(s)]);
    if (p % static_cast<uintptr_t>(es) != 0)
      bad_address(f, n, s, p, fmt::format("not aligned to its {}-byte elements", es));
    const uintptr_t first_byte = p + static_cast<uintptr_t>(lo * es);
    const std::pair<uintptr_t, uintptr_t> range =
        rt::live_host_range(first_byte, (hi - lo + 1) * es);
    if (range.first == range.second)
      bad_address(f, n, s, p,
                  fmt::format("where the elements it reaches (bytes [0x{:x}, 0x{:x})) are not "
                              "in the memory of a live host Buffer",
                              first_byte, first_byte + static_cast<uintptr_t>((hi - lo + 1) * es)));
    for (int64_t e = 0; e < per; ++e) {
      const int64_t off = offs[static_cast<size_t>(e)];
      if (off == kInvalid) continue;
      MulticastElement& m = out.elements[static_cast<size_t>(s * per + e)];
      m.ptr = reinterpret_cast<char*>(p + static_cast<uintptr_t>(off * es));
      m.offset = off;
      m.base = p;
      m.range = range;
    }
  }
}

namespace {

void exec_multicast_load(Frame& f, const Node* n, TileValue& out) {
  thread_local MulticastAccess m;
  multicast_addresses(f, n, 1, m);
  const DType dt = n->dtype;
  if (WriteLog* log = f.write_log()) {
    log->begin_multicast_load(n, f.env().tensor(n->args.at(0)->args.at(0)));
    int64_t targeted = -1;
    for (size_t k = 0; k < m.elements.size(); ++k) {
      const MulticastElement& e = m.elements[k];
      if (!e.ptr) continue;
      const int64_t buffer = static_cast<int64_t>(k) / m.per_buffer;
      if (buffer != targeted) log->target(e.base, e.range, buffer);
      targeted = buffer;
      log->read(e.offset);
    }
  }
  out.reset(dt, m.dims);
  for (size_t k = 0; k < m.elements.size(); ++k) {
    const char* p = m.elements[k].ptr;
    if (out.is_float())
      out.f[k] = p ? read_element(p, dt) : 0.0;
    else
      out.i[k] = p ? read_element_int(p, dt) : 0;
  }
  round_in_place(out);
}

void exec_multicast_store(Frame& f, const Node* n) {
  thread_local MulticastAccess m;
  multicast_addresses(f, n, 2, m);
  const TileValue& v = f.value(n->args.at(1));
  const DType dt = n->dtype;
  WriteLog* log = f.write_log();
  if (log) log->begin_multicast_store(n, f.env().tensor(n->args.at(0)->args.at(0)));
  // The value broadcasts to the full shape (dev_ptrs' dims, then the indexed dims).
  const std::array<int64_t, kMaxRank> st = broadcast_strides(m.dims, v.dims);
  const int R = static_cast<int>(m.dims.size());
  std::array<int64_t, kMaxRank> coord{};
  int64_t targeted = -1;
  for (size_t k = 0; k < m.elements.size(); ++k) {
    int64_t vi = 0;
    for (int r = 0; r < R; ++r) vi += coord[r] * st[r];
    for (int r = R; r-- > 0;) {
      if (++coord[r] < m.dims[r]) break;
      coord[r] = 0;
    }
    const MulticastElement& e = m.elements[k];
    if (!e.ptr) continue;
    alignas(8) char bytes[8];
    if (v.is_float())
      write_element(bytes, dt, v.f[static_cast<size_t>(vi)]);
    else
      write_element_int(bytes, dt, v.i[static_cast<size_t>(vi)]);
    if (log) {
      const int64_t buffer = static_cast<int64_t>(k) / m.per_buffer;
      if (buffer != targeted) log->target(e.base, e.range, buffer);
      targeted = buffer;
      log->write(e.offset, bytes);
    }
    std::memcpy(e.ptr, bytes, static_cast<size_t>(dtype_size(dt)));
  }
}

}  // namespace

const Buffer& host_tensor(Frame& f, const Node* n) {
  const Buffer& b = f.env().tensor(ir::addressed_tensor(n));
  if (b.device().is_cuda())
    throw InternalError("interpreter: a GPU buffer reached the interpreter (stage it to the host)");
  if (b.dim() > kMaxRank) throw InternalError("interpreter: tensor rank above 16");
  return b;
}

void for_each_element(
    Frame& f, const Node* n, const Buffer& t,
    const std::function<void(int64_t linear, char* element, int64_t offset)>& fn) {
  if (n->is_multicast_access()) {
    // The callback may run another access (a wait blocks): the addresses are this call's.
    MulticastAccess m;
    multicast_addresses(f, n, static_cast<int>(ir::first_index(n)), m);
    for (size_t k = 0; k < m.elements.size(); ++k)
      if (m.elements[k].ptr) fn(static_cast<int64_t>(k), m.elements[k].ptr, m.elements[k].offset);
    return;
  }
  Addressing& a = scratch();
  plan(f, n, static_cast<int>(ir::first_index(n)), t, a);
  check_offsets_fit_32_bits(f, n, t, a);
  char* base = static_cast<char*>(t.data_ptr());
  const int64_t es = dtype_size(t.dtype());
  // The callback may run another access (a wait blocks): copy the addressing first.
  const Addressing mine = a;
  for_each_row(mine, [&](const Row& r) {
    for (int64_t c = 0; c < r.n; ++c) {
      int64_t off = 0;
      if (element_offset(mine, r, c, off)) fn(r.linear + c, base + off * es, off);
    }
  });
}

void exec_load(Frame& f, const Node* n, TileValue& out) {
  if (n->is_multicast_access()) return exec_multicast_load(f, n, out);
  const Buffer& t = host_tensor(f, n);
  Addressing& a = scratch();
  plan(f, n, 1, t, a);
  check_offsets_fit_32_bits(f, n, t, a);
  const Dims& want = f.dims(n);
  if (a.dims != want)
    throw InternalError(fmt::format("interpreter: load %{} addresses {} dims, its shape has {}",
                                    n->id, a.dims.size(), want.size()));
  check_reads(f, n, t, a);
  out.reset(n->dtype, want);
  if (out.is_float())
    load_into(a, t, out.f.data());
  else
    load_into(a, t, out.i.data());
  round_in_place(out);
}

void exec_store(Frame& f, const Node* n) {
  if (n->is_multicast_access()) return exec_multicast_store(f, n);
  const Buffer& t = host_tensor(f, n);
  const TileValue& v = f.value(n->args.at(1));
  Addressing& a = scratch();
  plan(f, n, 2, t, a);
  check_offsets_fit_32_bits(f, n, t, a);
  // The stored value is one more cursor, broadcast into the indexed extents.
  a.cstride[a.ncursors] = broadcast_strides(a.dims, v.dims);
  const int vc = a.ncursors++;
  WriteLog* log = f.write_log();
  if (log) log->begin_store(n, t);
  if (v.is_float())
    store_from(a, t, v.f.data(), vc, log);
  else
    store_from(a, t, v.i.data(), vc, log);
  UnwrittenMemory* u = f.unwritten();
  if (std::vector<uint8_t>* w = u ? u->of(n->args[0]) : nullptr)
    for_each_offset(a, [&](int64_t off) { (*w)[static_cast<size_t>(off)] = 1; });
}

}  // namespace tessel::interp
