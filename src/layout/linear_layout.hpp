// Linear layouts over GF(2): where each element of a tile lives in hardware (register,
// lane, warp, block) or in shared memory (offset), as a linear map on the bits of the
// indices. The concept is Triton's LinearLayout (Zhou, Lezcano et al., "Linear Layouts:
// Robust Code Generation of Efficient Tensor Computation Using F2", 2025).
//
// A layout maps named input dims, each of a power-of-two size, to named output dims (the
// tensor dims dim0 .. dim{r-1}, or for an inverse the hardware dims), each of a
// power-of-two size. Input bit i of dim `d` (the index value 2^i) has a basis vector: the
// output coordinates it contributes. An input is the XOR of the basis vectors of its set
// bits, per output dim:
//
//   register: (0, 1) (8, 0)            register 1 -> (0, 1), 2 -> (8, 0), 3 -> (8, 1)
//   lane: (0, 2) (0, 4) (1, 0) (2, 0) (4, 0)
//   -> dim0[16], dim1[8]               (the mma.sync m16n8 accumulator fragment)
//
// Blocked, sliced, mma, wgmma and swizzled shared-memory layouts are all such maps
// (src/layout/distributed_layouts.hpp, mma_layouts.hpp, shared_layouts.hpp), so a
// conversion between any two of them is computed (invert_and_compose), never special-cased.
// Invalid arguments throw tessel::InternalError: a layout is built by the compiler, so a
// bad one is a bug in tessel, not in the user's kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::layout {

/// Input dim names: a thread's registers, the lanes of a warp, the warps of a program
/// (CTA), the programs of a cluster; `offset`: an element's offset in shared memory (in
/// elements).
inline constexpr const char* kRegister = "register";
inline constexpr const char* kLane = "lane";
inline constexpr const char* kWarp = "warp";
inline constexpr const char* kBlock = "block";
inline constexpr const char* kOffset = "offset";

/// The name of tensor dim `i`: "dim0", "dim1", ...
std::string tensor_dim(int i);

/// Named coordinates, e.g. {{"register", 3}, {"lane", 17}}.
using Coords = std::vector<std::pair<std::string, int32_t>>;

class LinearLayout {
 public:
  /// One output coordinate per output dim, in the order of out_dims().
  using Basis = std::vector<int32_t>;
  /// An input dim: its name and the basis vector of each of its bits (low bit first);
  /// its size is 2^bases.size().
  struct InDim {
    std::string name;
    std::vector<Basis> bases;
    bool operator==(const InDim&) const = default;
  };
  /// An output dim: its name and its size (a power of two).
  struct OutDim {
    std::string name;
    int32_t size = 1;
    bool operator==(const OutDim&) const = default;
  };

  /// The layout with no input and no output dims (the unit of operator*).
  LinearLayout() = default;
  /// A layout from its bases. Throws InternalError on a repeated dim name, an output size
  /// that is not a power of two, a basis of the wrong length or a coordinate outside its
  /// output dim.
  LinearLayout(std::vector<InDim> in_dims, std::vector<OutDim> out_dims);

  /// in_dim[i] -> out_dim i, for i < size (a power of two).
  static LinearLayout identity_1d(int32_t size, const std::string& in_dim,
                                  const std::string& out_dim);
  /// in_dim (of `size`, a power of two) -> 0 in out_dim, of size 1: every input index
  /// holds the same element (a broadcast).
  static LinearLayout zeros_1d(int32_t size, const std::string& in_dim, const std::string& out_dim);

  const std::vector<InDim>& in_dims() const { return in_dims_; }
  const std::vector<OutDim>& out_dims() const { return out_dims_; }
  /// The size of input dim `name` (throws InternalError when there is none).
  int32_t in_dim_size(const std::string& name) const;
  /// The size of output dim `name` (throws InternalError when there is none).
  int32_t out_dim_size(const std::string& name) const;
  /// The bits of all input (output) dims together: log2 of the product of their sizes.
  int num_in_bits() const;
  int num_out_bits() const;

  /// The output coordinates of `inputs`, which name every input dim once (any order),
  /// each in [0, size). Result in the order of out_dims(). Throws InternalError otherwise.
  Coords apply(const Coords& inputs) const;

  /// outer ∘ this: this layout's outputs fed to `outer`'s inputs, matched by name. Every
  /// output dim of this layout must be an input dim of `outer` at least as large, and the
  /// other way round (throws InternalError otherwise).
  LinearLayout compose(const LinearLayout& outer) const;

  /// The inverse of a bijective layout: output dims become input dims and back. Throws
  /// InternalError when this layout is not bijective.
  LinearLayout inverse() const;
  /// For a surjective layout, a right inverse P (this(P(y)) = y for every output y; where
  /// several inputs hold y, the one built from the lowest input bits, registers before
  /// lanes before warps in the usual dim order, with the others' bits 0). For an injective
  /// layout, a left inverse P (P(this(x)) = x; outputs outside the image map to some
  /// input). Throws InternalError when the layout is neither.
  LinearLayout pseudo_inverse() const;
  /// The conversion map to layout `outer` of the same tensor: C with outer(C(x)) =
  /// this(x) for every input x of this layout, from this layout's input dims to outer's
  /// (for a register layout: for each register / lane / warp bit of this layout, where its
  /// element lives in `outer`). Where `outer` holds an element in several places, the one
  /// of the lowest input bits is chosen (as pseudo_inverse). Output dims are matched by
  /// name; throws InternalError when they differ or some element of this layout is not
  /// held by `outer`.
  LinearLayout invert_and_compose(const LinearLayout& outer) const;

  /// Every output is reached (the matrix has full row rank).
  bool is_surjective() const;
  /// No two inputs reach the same output (full column rank: no zero or repeated bases).
  bool is_injective() const;

  /// The layout of the tensor reshaped to `out_dims` (row-major, as torch.reshape: the
  /// last output dim varies fastest). The product of the sizes must not change.
  LinearLayout reshape_outs(const std::vector<OutDim>& out_dims) const;
  /// The layout of the tensor permuted as torch.permute(order): output dim i of the
  /// result holds output dim order[i] of this layout, and keeps the name and position of
  /// this layout's output dim i. `order` must be a permutation of the output dims.
  LinearLayout transpose_outs(const std::vector<int>& order) const;

  /// Same dims in the same order with the same sizes and bases.
  bool operator==(const LinearLayout&) const = default;
  /// One line per input dim with its size and bases, then the output dims:
  /// "register[4]: (0, 1) (8, 0)\nlane[32]: ...\n-> dim0[16], dim1[8]".
  std::string to_string() const;

  /// The matrix over GF(2): for each input bit (input dims in order, low bits first) the
  /// set of output bits it flips (output dims in order, low bits first). At most 64 input
  /// and 64 output bits.
  std::vector<uint64_t> columns() const;
  /// The output coordinates (in out_dims() order) of a set of output bits.
  Basis unflatten_outs(uint64_t bits) const;
  /// The output bits of output coordinates (in out_dims() order).
  uint64_t flatten_outs(const Basis& coords) const;

 private:
  std::vector<InDim> in_dims_;
  std::vector<OutDim> out_dims_;
};

/// The product of two layouts (Triton's operator*): input and output dims of both, `b`'s
/// bases above `a`'s. A dim in both is concatenated: an input dim's bits are a's then
/// b's, an output dim's size is the product, b's coordinates in it scaled by a's size (b
/// repeats a). A dim in one keeps its bases; the other's bases are 0 in it.
LinearLayout operator*(const LinearLayout& a, const LinearLayout& b);

/// Throws InternalError "linear layout: WHAT" (a layout the compiler asked for is
/// invalid).
[[noreturn]] void layout_error(const std::string& what);

/// Throws InternalError "WHAT is not a permutation of 0 .. n-1" unless `order` is one.
void check_permutation(const std::vector<int>& order, size_t n, const std::string& what);

/// The coordinate bit an input bit's basis holds: {output dim, bit} when the basis is one
/// bit of one output dim, {-1, -1} when it is zero (a broadcast bit), nullopt when it holds
/// several bits.
std::optional<std::pair<int, int>> held_bit(const LinearLayout::Basis& b);

/// log2 of `v`, a power of two >= 1; throws InternalError naming `what` otherwise.
int log2_exact(int64_t v, const std::string& what);

}  // namespace tessel::layout
