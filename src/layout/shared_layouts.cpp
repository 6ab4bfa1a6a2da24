// Swizzled shared-memory layouts (PTX ISA swizzling modes, CUTLASS Swizzle<B, 4, 3>).
#include "layout/shared_layouts.hpp"

namespace tessel::layout {
namespace {

[[noreturn]] void fail(const std::string& what) { layout_error("swizzled_shared: " + what); }

}  // namespace

LinearLayout swizzled_shared(const std::vector<int32_t>& shape, int element_bytes,
                             int swizzle_bytes, const std::vector<int>& order) {
  if (shape.size() != 2) fail("the tile needs 2 dims, not " + std::to_string(shape.size()));
  if (order != std::vector<int>{1, 0} && order != std::vector<int>{0, 1})
    fail("order must be {1, 0} or {0, 1}");
  int elem_bits = log2_exact(element_bytes, "element_bytes");
  if (element_bytes > 8) fail("element_bytes is " + std::to_string(element_bytes) + ", not 1 .. 8");
  if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
    fail("swizzle_bytes is " + std::to_string(swizzle_bytes) + ", not 0, 32, 64 or 128");
  int32_t inner = shape[order[0]], outer = shape[order[1]];
  int inner_bits = log2_exact(inner, "the contiguous dim's size");
  int outer_bits = log2_exact(outer, "the other dim's size");
  // Without a swizzle, one atom spans the whole contiguous dim.
  int32_t atom_cols = swizzle_bytes ? swizzle_bytes / element_bytes : inner;
  if (inner < atom_cols || (swizzle_bytes && outer < 8))
    fail("a " + std::to_string(outer) + " x " + std::to_string(inner) +
         " tile (contiguous dim last) is smaller than one atom of 8 x " +
         std::to_string(atom_cols) + " elements of " + std::to_string(element_bytes) + " bytes");
  int atom_bits = log2_exact(atom_cols, "the atom width");
  int swizzle_b = swizzle_bytes ? log2_exact(swizzle_bytes / 16, "swizzle") : 0;
  std::vector<LinearLayout::Basis> bases;
  for (int i = 0; i < inner_bits + outer_bits; ++i) {
    // Byte address of offset 2^i, unswizzled: the logical element stored there.
    int64_t byte = (int64_t{1} << i) << elem_bits;
    byte ^= ((byte >> 7) & ((int64_t{1} << swizzle_b) - 1)) << 4;
    int64_t e = byte >> elem_bits;
    int64_t col = (e & (atom_cols - 1)) | ((e >> (atom_bits + outer_bits)) << atom_bits);
    int64_t row = (e >> atom_bits) & (outer - 1);
    LinearLayout::Basis basis(2);
    basis[order[0]] = static_cast<int32_t>(col);
    basis[order[1]] = static_cast<int32_t>(row);
    bases.push_back(basis);
  }
  return LinearLayout({{kOffset, bases}}, {{tensor_dim(0), shape[0]}, {tensor_dim(1), shape[1]}});
}

}  // namespace tessel::layout
