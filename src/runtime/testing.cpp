// count_mismatches and gpu_available (tessel/testing.hpp).
#include "tessel/testing.hpp"

#include <cmath>

#include "common/element.hpp"
#include "driver/cuda_api.hpp"
#include "runtime/device_utils.hpp"
#include "tessel/error.hpp"

namespace tessel {

int64_t count_mismatches(const Buffer& actual, const Buffer& expected, double atol, double rtol,
                         double add) {
  if (!actual.defined() || !expected.defined())
    throw UserError("", SourceLoc{}, "count_mismatches of an undefined Buffer");
  if (actual.shape() != expected.shape() || actual.device() != expected.device())
    throw UserError("", SourceLoc{},
                    "count_mismatches of " + actual.str() + " against " + expected.str(),
                    "Both need the same shape and device");
  if (actual.numel() == 0) return 0;
  if (actual.device().is_cuda()) {
    rt::set_device(actual.device().index);
    return rt::gpu_count_mismatches(actual, expected, atol, rtol, add);
  }
  int64_t as = dtype_size(actual.dtype()), es = dtype_size(expected.dtype());
  auto* ap = static_cast<const char*>(actual.data_ptr());
  auto* ep = static_cast<const char*>(expected.data_ptr());
  int64_t bad = 0;
  for (rt::StridedWalker w(actual.shape(), actual.strides(), expected.strides()); !w.done();
       w.next()) {
    double a = read_element(ap + w.offset(0) * as, actual.dtype());
    double x = read_element(ep + w.offset(1) * es, expected.dtype());
    if (add != 0) x = round_to(expected.dtype(), x + add);
    bool an = std::isnan(a), xn = std::isnan(x);
    bool mismatch;
    if (an || xn)
      mismatch = !(an && xn);
    else if (std::isinf(a) || std::isinf(x))
      mismatch = a != x;
    else
      mismatch = std::fabs(a - x) > atol + rtol * std::fabs(x);
    bad += mismatch;
  }
  return bad;
}

bool gpu_available() { return rt::cuda_available(); }

std::string gpu_unavailable_reason() { return rt::cuda_unavailable_reason(); }

std::string gpu_name(int device) {
  rt::require_cuda();
  return rt::device_name(device);
}

}  // namespace tessel
