// Linear layouts over GF(2): construction, application, composition, products and
// (pseudo-)inverses, by Gaussian elimination on the layout's bit matrix.
#include "layout/linear_layout.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <set>

#include "common/pow2.hpp"
#include "tessel/error.hpp"

namespace tessel::layout {
namespace {

/// The bits of each dim of `dims` (log2 of its size).
template <class Dim>
int bits_of(const Dim& d) {
  if constexpr (requires { d.size; })
    return log2_exact(d.size, "size of dim '" + d.name + "'");
  else
    return static_cast<int>(d.bases.size());
}

template <class Dim>
int total_bits(const std::vector<Dim>& dims) {
  int n = 0;
  for (const Dim& d : dims) n += bits_of(d);
  return n;
}

/// Coordinates (one per dim of `dims`) of the bit set `bits` over the dims' bits, the
/// first dim's bits lowest.
std::vector<int32_t> split_bits(uint64_t bits, const std::vector<LinearLayout::OutDim>& dims) {
  std::vector<int32_t> coords;
  for (const auto& d : dims) {
    int n = bits_of(d);
    coords.push_back(static_cast<int32_t>(bits & ((uint64_t{1} << n) - 1)));
    bits >>= n;
  }
  return coords;
}

/// The bit set of coordinates `coords` (one per dim of `dims`): split_bits' inverse.
uint64_t join_bits(const std::vector<int32_t>& coords,
                   const std::vector<LinearLayout::OutDim>& dims) {
  uint64_t bits = 0;
  int shift = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    bits |= static_cast<uint64_t>(coords[i]) << shift;
    shift += bits_of(dims[i]);
  }
  return bits;
}

/// The layout from dims `ins` to dims `outs` whose input bit j flips output bits cols[j].
LinearLayout from_columns(const std::vector<LinearLayout::OutDim>& ins,
                          const std::vector<LinearLayout::OutDim>& outs,
                          const std::vector<uint64_t>& cols) {
  std::vector<LinearLayout::InDim> in_dims;
  size_t j = 0;
  for (const auto& d : ins) {
    LinearLayout::InDim in{d.name, {}};
    for (int b = 0; b < bits_of(d); ++b) in.bases.push_back(split_bits(cols[j++], outs));
    in_dims.push_back(std::move(in));
  }
  return LinearLayout(std::move(in_dims), outs);
}

/// An echelon basis of a subspace of GF(2)^64, each vector with the input combination
/// (a bit set) that produces it: row[b] has highest bit b.
class XorBasis {
 public:
  /// Adds `vec`, produced by `combo`; false when `vec` is already in the span.
  bool insert(uint64_t vec, uint64_t combo) {
    for (int b = 63; b >= 0; --b) {
      if (!(vec >> b & 1)) continue;
      if (!rows_[b]) {
        rows_[b] = {vec, combo};
        ++rank_;
        return true;
      }
      vec ^= rows_[b]->first;
      combo ^= rows_[b]->second;
    }
    return false;
  }
  /// The combination producing `vec`, or nullopt when `vec` is outside the span.
  std::optional<uint64_t> solve(uint64_t vec) const {
    uint64_t combo = 0;
    for (int b = 63; b >= 0; --b) {
      if (!(vec >> b & 1)) continue;
      if (!rows_[b]) return std::nullopt;
      vec ^= rows_[b]->first;
      combo ^= rows_[b]->second;
    }
    return combo;
  }
  int rank() const { return rank_; }

 private:
  std::array<std::optional<std::pair<uint64_t, uint64_t>>, 64> rows_{};
  int rank_ = 0;
};

/// The columns of `layout` inserted in order, input bit j producing 1 << j: later columns
/// that depend on earlier ones are left out, so solutions use the lowest input bits.
XorBasis column_basis(const LinearLayout& layout) {
  XorBasis basis;
  std::vector<uint64_t> cols = layout.columns();
  for (size_t j = 0; j < cols.size(); ++j) basis.insert(cols[j], uint64_t{1} << j);
  return basis;
}

std::vector<LinearLayout::OutDim> sizes_of(const std::vector<LinearLayout::InDim>& dims) {
  std::vector<LinearLayout::OutDim> sizes;
  for (const auto& d : dims) sizes.push_back({d.name, int32_t{1} << d.bases.size()});
  return sizes;
}

std::string coords_str(const std::vector<int32_t>& c) {
  std::string s = "(";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? ", " : "") + std::to_string(c[i]);
  return s + ")";
}

}  // namespace

void layout_error(const std::string& what) { throw InternalError("linear layout: " + what); }

void check_permutation(const std::vector<int>& order, size_t n, const std::string& what) {
  std::vector<int> sorted(order);
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == n;
  for (size_t i = 0; permutation && i < n; ++i) permutation = sorted[i] == static_cast<int>(i);
  if (!permutation) layout_error(what + " is not a permutation of 0 .. " + std::to_string(n - 1));
}

int log2_exact(int64_t v, const std::string& what) {
  if (v < 1 || (v & (v - 1)) != 0)
    layout_error(what + " is " + std::to_string(v) + ", not a power of two");
  return ceil_log2(v);
}

std::string tensor_dim(int i) { return "dim" + std::to_string(i); }

LinearLayout::LinearLayout(std::vector<InDim> in_dims, std::vector<OutDim> out_dims)
    : in_dims_(std::move(in_dims)), out_dims_(std::move(out_dims)) {
  std::set<std::string> names;
  for (const OutDim& d : out_dims_) {
    if (!names.insert(d.name).second) layout_error("output dim '" + d.name + "' appears twice");
    if (bits_of(d) > 30) layout_error("output dim '" + d.name + "' is larger than 2^30");
  }
  names.clear();
  for (const InDim& d : in_dims_) {
    if (!names.insert(d.name).second) layout_error("input dim '" + d.name + "' appears twice");
    if (d.bases.size() > 30) layout_error("input dim '" + d.name + "' is larger than 2^30");
    for (const Basis& b : d.bases) {
      if (b.size() != out_dims_.size())
        layout_error("a basis of input dim '" + d.name + "' has " + std::to_string(b.size()) +
                     " coordinates for " + std::to_string(out_dims_.size()) + " output dims");
      for (size_t k = 0; k < b.size(); ++k)
        if (b[k] < 0 || b[k] >= out_dims_[k].size)
          layout_error("basis " + coords_str(b) + " of input dim '" + d.name +
                       "' is outside output dim '" + out_dims_[k].name + "' of size " +
                       std::to_string(out_dims_[k].size));
    }
  }
  if (total_bits(in_dims_) > 64 || total_bits(out_dims_) > 64)
    layout_error("more than 64 input or output bits");
}

LinearLayout LinearLayout::identity_1d(int32_t size, const std::string& in_dim,
                                       const std::string& out_dim) {
  InDim in{in_dim, {}};
  for (int i = 0; i < log2_exact(size, "size of '" + in_dim + "'"); ++i)
    in.bases.push_back({int32_t{1} << i});
  return LinearLayout({in}, {{out_dim, size}});
}

LinearLayout LinearLayout::zeros_1d(int32_t size, const std::string& in_dim,
                                    const std::string& out_dim) {
  InDim in{in_dim, {}};
  in.bases.assign(log2_exact(size, "size of '" + in_dim + "'"), Basis{0});
  return LinearLayout({in}, {{out_dim, 1}});
}

int32_t LinearLayout::in_dim_size(const std::string& name) const {
  for (const InDim& d : in_dims_)
    if (d.name == name) return int32_t{1} << d.bases.size();
  layout_error("no input dim '" + name + "' in\n" + to_string());
}

int32_t LinearLayout::out_dim_size(const std::string& name) const {
  for (const OutDim& d : out_dims_)
    if (d.name == name) return d.size;
  layout_error("no output dim '" + name + "' in\n" + to_string());
}

int LinearLayout::num_in_bits() const { return total_bits(in_dims_); }
int LinearLayout::num_out_bits() const { return total_bits(out_dims_); }

std::vector<uint64_t> LinearLayout::columns() const {
  std::vector<uint64_t> cols;
  for (const InDim& d : in_dims_)
    for (const Basis& b : d.bases) cols.push_back(join_bits(b, out_dims_));
  return cols;
}

LinearLayout::Basis LinearLayout::unflatten_outs(uint64_t bits) const {
  return split_bits(bits, out_dims_);
}

uint64_t LinearLayout::flatten_outs(const Basis& coords) const {
  return join_bits(coords, out_dims_);
}

Coords LinearLayout::apply(const Coords& inputs) const {
  if (inputs.size() != in_dims_.size())
    layout_error("apply got " + std::to_string(inputs.size()) + " inputs for " +
                 std::to_string(in_dims_.size()) + " input dims of\n" + to_string());
  Basis out(out_dims_.size(), 0);
  for (const InDim& d : in_dims_) {
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](const auto& in) { return in.first == d.name; });
    if (it == inputs.end()) layout_error("apply has no value for input dim '" + d.name + "'");
    if (it->second < 0 || it->second >= (int64_t{1} << d.bases.size()))
      layout_error("input " + std::to_string(it->second) + " is outside dim '" + d.name +
                   "' of size " + std::to_string(int64_t{1} << d.bases.size()));
    for (size_t i = 0; i < d.bases.size(); ++i)
      if (it->second >> i & 1)
        for (size_t k = 0; k < out.size(); ++k) out[k] ^= d.bases[i][k];
  }
  Coords result;
  for (size_t k = 0; k < out.size(); ++k) result.emplace_back(out_dims_[k].name, out[k]);
  return result;
}

LinearLayout LinearLayout::compose(const LinearLayout& outer) const {
  if (outer.in_dims_.size() != out_dims_.size())
    layout_error("compose: the outer layout's input dims are not this layout's output dims:\n" +
                 outer.to_string() + "\nafter\n" + to_string());
  for (const OutDim& d : out_dims_)
    if (outer.in_dim_size(d.name) < d.size)
      layout_error("compose: output dim '" + d.name + "' (size " + std::to_string(d.size) +
                   ") is larger than the outer layout's input dim");
  std::vector<InDim> in_dims;
  for (const InDim& d : in_dims_) {
    InDim in{d.name, {}};
    for (const Basis& b : d.bases) {
      Coords named;
      for (size_t k = 0; k < b.size(); ++k) named.emplace_back(out_dims_[k].name, b[k]);
      Basis out;
      for (const auto& [name, v] : outer.apply(named)) out.push_back(v);
      in.bases.push_back(std::move(out));
    }
    in_dims.push_back(std::move(in));
  }
  return LinearLayout(std::move(in_dims), outer.out_dims_);
}

bool LinearLayout::is_surjective() const { return column_basis(*this).rank() == num_out_bits(); }

bool LinearLayout::is_injective() const { return column_basis(*this).rank() == num_in_bits(); }

LinearLayout LinearLayout::inverse() const {
  if (!is_surjective() || !is_injective())
    layout_error("inverse of a layout that is not a bijection (use pseudo_inverse):\n" +
                 to_string());
  return pseudo_inverse();
}

LinearLayout LinearLayout::pseudo_inverse() const {
  XorBasis basis = column_basis(*this);
  bool surjective = basis.rank() == num_out_bits();
  if (!surjective && basis.rank() != num_in_bits())
    layout_error("pseudo_inverse of a layout that is neither surjective nor injective:\n" +
                 to_string());
  // An injective layout's image is completed to the whole space by unit vectors that map
  // to input 0, which makes every output solvable.
  for (int k = 0; k < num_out_bits(); ++k) basis.insert(uint64_t{1} << k, 0);
  std::vector<uint64_t> cols;
  for (int k = 0; k < num_out_bits(); ++k) cols.push_back(*basis.solve(uint64_t{1} << k));
  return from_columns(out_dims_, sizes_of(in_dims_), cols);
}

LinearLayout LinearLayout::invert_and_compose(const LinearLayout& outer) const {
  if (outer.out_dims_.size() != out_dims_.size())
    layout_error("invert_and_compose: the layouts have different output dims:\n" + to_string() +
                 "\nand\n" + outer.to_string());
  for (const OutDim& d : out_dims_)
    if (outer.out_dim_size(d.name) < d.size)
      layout_error("invert_and_compose: output dim '" + d.name + "' is smaller in\n" +
                   outer.to_string());
  XorBasis basis = column_basis(outer);
  std::vector<uint64_t> cols;
  for (const InDim& d : in_dims_) {
    for (const Basis& b : d.bases) {
      Basis in_outer(outer.out_dims_.size(), 0);
      for (size_t k = 0; k < b.size(); ++k)
        for (size_t m = 0; m < outer.out_dims_.size(); ++m)
          if (outer.out_dims_[m].name == out_dims_[k].name) in_outer[m] = b[k];
      std::optional<uint64_t> combo = basis.solve(outer.flatten_outs(in_outer));
      if (!combo)
        layout_error("invert_and_compose: element " + coords_str(b) + " (of input dim '" + d.name +
                     "') is not held by the destination layout\n" + outer.to_string());
      cols.push_back(*combo);
    }
  }
  return from_columns(sizes_of(in_dims_), sizes_of(outer.in_dims_), cols);
}

LinearLayout LinearLayout::reshape_outs(const std::vector<OutDim>& out_dims) const {
  if (total_bits(out_dims) != num_out_bits())
    layout_error("reshape_outs to dims of " + std::to_string(total_bits(out_dims)) + " bits from " +
                 std::to_string(num_out_bits()) + " bits:\n" + to_string());
  // Row-major flat index: the last dim's bits lowest, so the dims are joined reversed.
  std::vector<OutDim> old_rev(out_dims_.rbegin(), out_dims_.rend());
  std::vector<OutDim> new_rev(out_dims.rbegin(), out_dims.rend());
  std::vector<uint64_t> cols;
  for (const InDim& d : in_dims_)
    for (const Basis& b : d.bases) {
      std::vector<int32_t> flat =
          split_bits(join_bits(Basis(b.rbegin(), b.rend()), old_rev), new_rev);
      cols.push_back(join_bits(Basis(flat.rbegin(), flat.rend()), out_dims));
    }
  return from_columns(sizes_of(in_dims_), out_dims, cols);
}

LinearLayout LinearLayout::transpose_outs(const std::vector<int>& order) const {
  check_permutation(order, out_dims_.size(), "transpose_outs: order");
  std::vector<OutDim> outs;
  for (size_t i = 0; i < order.size(); ++i)
    outs.push_back({out_dims_[i].name, out_dims_[order[i]].size});
  std::vector<InDim> in_dims = in_dims_;
  for (InDim& d : in_dims)
    for (Basis& b : d.bases) {
      Basis permuted;
      for (int k : order) permuted.push_back(b[k]);
      b = std::move(permuted);
    }
  return LinearLayout(std::move(in_dims), std::move(outs));
}

std::string LinearLayout::to_string() const {
  std::string s;
  for (const InDim& d : in_dims_) {
    s += d.name + "[" + std::to_string(int64_t{1} << d.bases.size()) + "]:";
    for (const Basis& b : d.bases) s += " " + coords_str(b);
    s += "\n";
  }
  s += "->";
  for (size_t k = 0; k < out_dims_.size(); ++k)
    s += (k ? ", " : " ") + out_dims_[k].name + "[" + std::to_string(out_dims_[k].size) + "]";
  return s;
}

LinearLayout operator*(const LinearLayout& a, const LinearLayout& b) {
  using OutDim = LinearLayout::OutDim;
  std::vector<OutDim> outs = a.out_dims();
  for (const OutDim& d : b.out_dims()) {
    auto it = std::find_if(outs.begin(), outs.end(), [&](auto& o) { return o.name == d.name; });
    if (it == outs.end())
      outs.push_back(d);
    else
      it->size *= d.size;
  }
  // A basis of `from` (a or b) in the product's output dims, scaled by `scale` per name.
  auto widen = [&](const LinearLayout& from, const LinearLayout::Basis& basis, bool scale) {
    LinearLayout::Basis wide(outs.size(), 0);
    for (size_t k = 0; k < from.out_dims().size(); ++k) {
      const std::string& name = from.out_dims()[k].name;
      size_t m = std::find_if(outs.begin(), outs.end(), [&](auto& o) { return o.name == name; }) -
                 outs.begin();
      bool shared = scale && std::any_of(a.out_dims().begin(), a.out_dims().end(),
                                         [&](auto& o) { return o.name == name; });
      wide[m] = basis[k] * (shared ? a.out_dim_size(name) : 1);
    }
    return wide;
  };
  std::vector<LinearLayout::InDim> ins;
  for (const auto& d : a.in_dims()) {
    ins.push_back({d.name, {}});
    for (const auto& basis : d.bases) ins.back().bases.push_back(widen(a, basis, false));
  }
  for (const auto& d : b.in_dims()) {
    auto it = std::find_if(ins.begin(), ins.end(), [&](auto& i) { return i.name == d.name; });
    if (it == ins.end()) it = ins.insert(ins.end(), LinearLayout::InDim{d.name, {}});
    for (const auto& basis : d.bases) it->bases.push_back(widen(b, basis, true));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

std::optional<std::pair<int, int>> held_bit(const LinearLayout::Basis& b) {
  std::pair<int, int> h{-1, -1};
  for (size_t k = 0; k < b.size(); ++k) {
    if (b[k] == 0) continue;
    if (h.first >= 0 || (b[k] & (b[k] - 1)) != 0) return std::nullopt;
    h = {static_cast<int>(k), std::countr_zero(static_cast<uint32_t>(b[k]))};
  }
  return h;
}

}  // namespace tessel::layout
