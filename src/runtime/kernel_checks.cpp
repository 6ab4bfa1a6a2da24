// A kernel call's argument checks (KernelImpl::check_args, check_written_overlaps): what
// a call refuses before it runs, each error at the caller's line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/count_text.hpp"
#include "common/element.hpp"
#include "common/internal_overlap.hpp"
#include "common/preserve_format.hpp"
#include "driver/alias_groups.hpp"
#include "driver/host_env.hpp"
#include "frontend/trace.hpp"
#include "runtime/kernel_impl.hpp"

namespace tessel::detail {

void KernelImpl::check_args(CallArgs args, bool& on_gpu, SourceLoc at) const {
  auto fail = [&](const std::string& what, const std::string& hint = "") {
    fail_at(at, what, hint);
  };
  // A kernel's lambda runs once per specialization, to trace: a kernel called from it
  // would run once instead of on every call (or, called recursively, wait on itself).
  if (frontend::TraceContext* ctx = frontend::TraceContext::current_or_null())
    fail(fmt::format("called while kernel '{}' is being traced", ctx->graph().kernel_name),
         "call kernels from host code outside any ts::kernel lambda (a lambda traces device code "
         "once "
         "per specialization)");
  if (args.size() != params_.size())
    fail(fmt::format("called with {}, the kernel takes {}",
                     count_of(static_cast<int64_t>(args.size()), "argument"),
                     static_cast<int64_t>(params_.size())));
  std::optional<Device> device;
  int first_tensor = -1;
  auto arg = [&](size_t i) { return arg_name(i); };
  for (size_t i = 0; i < args.size(); ++i) {
    bool is_buffer = std::holds_alternative<const Buffer*>(args[i]);
    if ((params_[i] == ParamKind::tensor) != is_buffer)
      fail(fmt::format(
          "{} is {}, the kernel's parameter takes {}", arg(i), is_buffer ? "a Buffer" : "a number",
          params_[i] == ParamKind::tensor ? "a ts::Tensor (pass a ts::Buffer)" : "a number"));
    if (params_[i] == ParamKind::specialized_int && !is_buffer) {
      const double* d = std::get_if<double>(&args[i]);
      if (d && *d != std::trunc(*d))
        fail(fmt::format("{} is {}, but the kernel's parameter is an integer", arg(i), *d),
             "pass an integer (or declare the parameter as a floating-point type)");
      const ParamRange& r = param_ranges_.at(i);
      // In doubles INT64_MAX rounds up to 2^63, which no int64_t holds.
      bool fits = d ? *d >= static_cast<double>(r.lo) &&
                          (r.hi == INT64_MAX ? *d < 0x1p63 : *d <= static_cast<double>(r.hi))
                    : std::get<int64_t>(args[i]) >= r.lo && std::get<int64_t>(args[i]) <= r.hi;
      if (!fits)
        fail(fmt::format("{} is {}, outside the range [{}, {}] of the kernel's integer parameter",
                         arg(i),
                         d ? fmt::format("{}", *d) : std::to_string(std::get<int64_t>(args[i])),
                         r.lo, r.hi),
             r.hi == INT64_MAX
                 ? "pass a value that fits (a kernel's integer parameters hold at most 2^63 - 1)"
                 : "pass a value that fits, or declare the parameter as int64_t");
    }
    // A C++ float parameter cannot hold a finite value beyond f32's range (its conversion
    // is undefined); a double or a ts::Value takes it (a weak float: where f32 values use
    // it, it rounds to inf, as torch's scalars do).
    // (A value that rounds to the largest float is held.)
    if (const double* d = std::get_if<double>(&args[i]);
        d && param_ranges_.at(i).f32 && std::isfinite(*d) && std::isinf(to_f32(*d)))
      fail(fmt::format("{} is {}, beyond the range of the kernel's float parameter (it would "
                       "round to infinity; the largest float is {:.9g})",
                       arg(i), *d, std::numeric_limits<float>::max()),
           "pass a value within float's range, or declare the parameter as double");
    if (!is_buffer) continue;
    const Buffer& b = *std::get<const Buffer*>(args[i]);
    if (!b.defined())
      fail(fmt::format("{} is an undefined Buffer (default-constructed or moved from)", arg(i)),
           "pass a Buffer that holds a tensor (ts::Buffer::empty, zeros, from_vector, ...)");
    if (!device) {
      device = b.device();
      first_tensor = static_cast<int>(i);
    } else if (!(b.device() == *device)) {
      fail(fmt::format("{} is on {} but {} is on {}", arg(i), b.device().str(),
                       arg(static_cast<size_t>(first_tensor)), device->str()),
           "a kernel's tensors must all be on one device: a CPU buffer cannot be passed with a "
           "GPU buffer; move them with Buffer::to()");
    }
  }
  // Checked wherever the call runs.
  const bool interpret = call_flag(CallVar::interpret, name_);
  on_gpu = device && device->is_cuda() && !interpret;
  if (rt::LaunchObserver* o = rt::launch_observer(); o && o->dry) on_gpu = true;
}

void KernelImpl::check_written_overlaps(CallArgs args, const Specialization& spec,
                                        SourceLoc at) const {
  // Several elements of a written tensor at one address would race on a GPU; the key does
  // not hold zero strides. A tensor without elements overlaps nothing.
  for (int i : spec.written_args) {
    const Buffer& b = *std::get<const Buffer*>(args[i]);
    const std::vector<int64_t>& shape = b.shape();
    const std::vector<int64_t>& strides = b.strides();
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) continue;
    for (size_t d = 0; d < shape.size(); ++d)
      if (strides[d] == 0 && shape[d] > 1)
        fail_at(
            at,
            fmt::format("tensor {} is written by the kernel but its dim {} has stride 0 (its {} "
                        "elements share one memory location)",
                        arg_name(static_cast<size_t>(i)), d, b.size(d)),
            "pass a tensor whose elements do not overlap (e.g. .contiguous())");
    if (non_overlapping_and_dense(shape, strides)) continue;
    bool decided = true;
    const auto both = overlapping_elements(shape, strides, &decided);
    auto coords = [&](int64_t flat) {  // row-major index -> "(i, j)"
      std::vector<int64_t> c(shape.size());
      for (size_t d = shape.size(); d-- > 0;) {
        c[d] = flat % shape[d];
        flat /= shape[d];
      }
      return fmt::format("({})", fmt::join(c, ", "));
    };
    if (both)
      fail_at(at,
              fmt::format("tensor {} is written by the kernel but its elements {} and {} share one "
                          "memory location (shape [{}], strides [{}]): programs would race on them",
                          arg_name(i), coords(both->first), coords(both->second),
                          fmt::join(shape, ", "), fmt::join(strides, ", ")),
              "pass a tensor whose elements do not overlap (e.g. .contiguous())");
    if (!decided)
      fail_at(at,
              fmt::format("tensor {} is written by the kernel and its strides [{}] interleave its "
                          "dims over {} elements: too many to tell whether two share one memory "
                          "location",
                          arg_name(i), fmt::join(strides, ", "), b.numel()),
              "pass a tensor whose dims do not interleave (e.g. .contiguous(), then copy back)");
  }
  // Another argument over some of a written tensor's bytes (only arguments in one alias
  // group can be; the key holds the groups): torch's overlap status, FULL where both are
  // the same view, PARTIAL where two dense views' byte ranges meet otherwise, too hard to
  // tell (allowed) where either is not dense, e.g. two column slices of one matrix.
  const std::vector<int>& groups = spec.alias_groups;
  auto group = [&](size_t i) { return i < groups.size() ? groups[i] : -1; };
  for (int w : spec.written_args) {
    if (group(w) < 0) continue;
    const Buffer& a = *std::get<const Buffer*>(args[w]);
    for (size_t j = 0; j < args.size(); ++j) {
      if (static_cast<int>(j) == w || group(j) != group(w)) continue;
      const Buffer& b = *std::get<const Buffer*>(args[j]);
      if (a.numel() == 0 || b.numel() == 0 || !non_overlapping_and_dense(a.shape(), a.strides()) ||
          !non_overlapping_and_dense(b.shape(), b.strides()))
        continue;
      const auto [a0, a1] = rt::byte_range(a);
      const auto [b0, b1] = rt::byte_range(b);
      const bool same = a0 == b0 && a1 == b1 && a.strides() == b.strides() &&
                        a.shape() == b.shape() && a.dtype() == b.dtype();
      if (same || a1 <= b0 || b1 <= a0) continue;
      fail_at(at,
              fmt::format("tensor {} is written by the kernel and overlaps tensor {} in part "
                          "({} and {}: their memory meets but they are not one view): programs "
                          "would race on the elements they share",
                          arg_name(w), arg_name(j), a.str(), b.str()),
              "pass tensors that do not overlap, or one tensor twice for in-place work "
              "(torch refuses a partial overlap too)");
    }
  }
}

}  // namespace tessel::detail
