// Elementwise utilities on Buffers that run on the GPU for cuda Buffers (fill, dtype
// conversion with strides, random numbers, arange, mismatch counting), through a small
// CUDA module compiled once per architecture with NVRTC, and the host side of the same
// random number generator. Internal to tessel.
//
// GPU functions are enqueued on the legacy default stream and return without waiting,
// except gpu_count_mismatches, which returns a count and so synchronizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/buffer.hpp"

namespace tessel::rt {

/// At most this many dimensions remain after merging adjacent ones for a GPU kernel
/// (a contiguous tensor of any rank merges to one).
inline constexpr int kMaxGpuRank = 6;

/// Sets every element of the cuda Buffer `dst` (any strides) to `value` converted to its
/// dtype as write_element does. UserError when the view has more than kMaxGpuRank
/// dimensions that cannot be merged.
void gpu_fill(const Buffer& dst, double value, void* stream = nullptr);
/// Copies `src` into `dst`: same shape, both on the same cuda device, any dtypes and
/// strides. Conversions follow the host's (common/element.hpp): integer to integer
/// without going through double, anything else through double.
void gpu_copy(const Buffer& dst, const Buffer& src);
/// Fills the contiguous float cuda Buffer `dst` with rand() (uniform) or randn() (normal)
/// values of `seed`, element i from counter i as random_uniform/random_normal do.
void gpu_random(const Buffer& dst, uint64_t seed, bool normal);
/// Writes 0, 1, 2, ... into the contiguous cuda Buffer `dst`.
void gpu_arange(const Buffer& dst);
/// Number of elements where |a - (e + add)| > atol + rtol * |e + add| (see
/// tessel/testing.hpp). `a` and `e`: same shape, same cuda device, any dtypes and strides.
/// Synchronizes with the GPU.
int64_t gpu_count_mismatches(const Buffer& a, const Buffer& e, double atol, double rtol,
                             double add);

/// The CUDA source of utility kernel `name` ("tessel_copy_<src dtype>_<dst dtype>" with
/// dtypes as their enum values, "tessel_fill_<bytes>", "tessel_random", "tessel_arange",
/// "tessel_count_mismatches"); each is compiled on first use. InternalError for another
/// name. Tests compile these without a GPU.
std::string kernel_source(const std::string& name);

/// The counter-based generator behind rand/randn on the CPU and the GPU: 64 random bits
/// for (seed, counter), splitmix64's mixing of a Weyl sequence keyed by the seed.
uint64_t random_bits(uint64_t seed, uint64_t counter);
/// rand()'s value of element `index` for float dtype `t`: the top k bits of
/// random_bits(seed, index) scaled to [0, 1), k = 53, 24, 11, 8 for f64, f32, f16, bf16,
/// so the value is exact in `t` and the same on the CPU and the GPU.
double random_uniform(uint64_t seed, uint64_t index, DType t);
/// randn()'s value of element `index`: Box-Muller from counters 2*index and 2*index+1, in
/// double. The GPU's log/cos differ from the host's by a few ulps of double, so values in
/// f64 may differ in their last bits between CPU and GPU (f32 and narrower almost never).
double random_normal(uint64_t seed, uint64_t index);

/// Walks the elements of a shape in row-major order, keeping the element offsets of up
/// to two stride sets (in elements). Usage: for (StridedWalker w(shape, s0, s1);
/// !w.done(); w.next()) use(w.offset(0), w.offset(1));
class StridedWalker {
 public:
  StridedWalker(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides0,
                const std::vector<int64_t>& strides1 = {})
      : shape_(shape),
        s0_(strides0),
        s1_(strides1.empty() ? strides0 : strides1),
        index_(shape.size(), 0) {
    for (int64_t n : shape)
      if (n == 0) done_ = true;
  }
  bool done() const { return done_; }
  int64_t offset(int which) const { return which == 0 ? off0_ : off1_; }
  void next() {
    for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
      off0_ += s0_[d];
      off1_ += s1_[d];
      if (++index_[d] < shape_[d]) return;
      off0_ -= s0_[d] * shape_[d];
      off1_ -= s1_[d] * shape_[d];
      index_[d] = 0;
    }
    done_ = true;
  }

 private:
  std::vector<int64_t> shape_, s0_, s1_, index_;
  int64_t off0_ = 0, off1_ = 0;
  bool done_ = false;
};

/// Merges adjacent dimensions of `shape` that are contiguous with respect to every stride
/// set in `strides` and drops size-1 dimensions. Returns the merged shape and strides,
/// outermost first (at least one dimension).
struct MergedDims {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;
};
MergedDims merge_dims(const std::vector<int64_t>& shape,
                      const std::vector<std::vector<int64_t>>& strides);

}  // namespace tessel::rt
