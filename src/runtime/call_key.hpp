// The specialization key of a kernel call's arguments (the part KernelImpl::key builds
// from them on every call), and the facts of a tensor argument that the key guarantees
// to the generated code (ir::ArgFacts): kept in one file so that they stay in step.
#pragma once

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"
#include "tessel/kernel.hpp"

namespace tessel::detail {

/// A specialization key being written (KernelImpl::key): characters stored through an
/// index into a buffer reused by the thread's calls, which grows when an argument may not
/// fit (a call builds its key every time). Runs of characters are written through a
/// cursor (`begin`, then `end`): a local pointer, which stores of characters do not
/// make the compiler reload as they would a member.
class KeyText {
 public:
  explicit KeyText(std::string& buf) : buf_(buf) {}
  /// Room for `m` more characters: where to write them.
  char* begin(size_t m) {
    if (n_ + m > buf_.size()) [[unlikely]]
      grow(n_ + m);
    return buf_.data() + n_;
  }
  /// The characters up to `p` (from begin's cursor) are written.
  void end(const char* p) { n_ = static_cast<size_t>(p - buf_.data()); }
  /// Writes the decimal digits of v at p (at most kIntChars): past them.
  static char* put_int(char* p, int64_t v) { return std::to_chars(p, p + kIntChars, v).ptr; }
  static constexpr size_t kIntChars = 20;  // "-9223372036854775808"
  void put(std::string_view t) {
    char* p = begin(t.size());
    for (char c : t) *p++ = c;
    end(p);
  }
  std::string_view view() const { return {buf_.data(), n_}; }

 private:
  [[gnu::noinline]] void grow(size_t need) { buf_.resize(std::max(2 * buf_.size(), need + 64)); }
  std::string& buf_;
  size_t n_ = 0;
};

/// std::hash of a key, for lookups by std::string_view.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
};

/// Appends the key of `args` to `k`: per tensor its dtype, rank, size buckets (exact sizes
/// under `exact`, Settings::static_shapes), divisibility by 16, stride alignment and
/// classes, unit-stride dim, base alignment, alias group and device (`on_gpu`); per
/// number its value (specialized `params`) or its kind and whether it needs 64 bits; then
/// the index width and `check_bounds`.
void write_argument_key(CallArgs args, const std::vector<ParamKind>& params, bool exact,
                        bool on_gpu, bool check_bounds, KeyText& k);

/// The exact signature of a call's arguments, for a thread's memo of the specializations of
/// its recent calls (KernelImpl::call): `flags` (the call's mode), then per tensor its
/// dtype, device, base alignment, shape and strides, per number its value (specialized
/// `params`) or its kind and whether it needs 64 bits. Calls of equal signatures have equal
/// keys (write_argument_key) and pass the same argument checks, where no two tensors share
/// memory (their alias groups would depend on the addresses): false where two do or a
/// Buffer is undefined (the call takes the key's path).
bool write_exact_signature(CallArgs args, const std::vector<ParamKind>& params, int64_t flags,
                           std::vector<int64_t>& out);

/// The facts of tensor argument `b` that write_argument_key records.
ir::ArgFacts arg_facts(const Buffer& b, bool exact);

/// The Buffer of each argument (nullptr for numbers), for rt::alias_groups: a vector
/// reused by the thread's calls (the key is built on every call).
const std::vector<const Buffer*>& tensor_args(CallArgs args);

}  // namespace tessel::detail
