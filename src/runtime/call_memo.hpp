// A thread's memo of the specializations of its recent kernel calls, by their arguments'
// exact signature (write_exact_signature): a call whose signature matches one skips the
// key, its lookup (a lock, a hash) and the argument checks that the signature decides.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/specialization.hpp"
#include "tessel/kernel.hpp"

namespace tessel::detail {

/// Entries name their kernel by its serial (never reused): a memoized Specialization is
/// owned by its kernel's map, which keeps every traced one while the kernel lives.
class CallMemo {
 public:
  /// This thread's memo.
  static CallMemo& of_thread();
  /// The specialization remembered for kernel `kernel` and `args` (of parameters `params`)
  /// in the call mode `flags`, ready for it (its GPU program made where `on_gpu`, else its
  /// interpreted code shown); null when there is none, or when a guard of it or of the key's
  /// own specialization reads a number argument.
  Specialization* find(uint64_t kernel, CallArgs args, const std::vector<ParamKind>& params,
                       int64_t flags, bool on_gpu);
  /// Remembers `spec`, found for `args` through the key's own specialization `base`, in
  /// place of the oldest entry; nothing where a guard of either reads a number argument.
  void remember(uint64_t kernel, CallArgs args, const std::vector<ParamKind>& params, int64_t flags,
                Specialization* base, Specialization* spec);

 private:
  struct Entry {
    uint64_t kernel = 0;  // 0: empty
    std::vector<int64_t> signature;
    Specialization* spec = nullptr;
    Specialization* base = nullptr;  // the key's own, whose guards chose `spec`
  };
  std::array<Entry, 8> entries_;
  unsigned next_ = 0;  // the entry replaced next (round robin)
  std::vector<int64_t> scratch_;
};

}  // namespace tessel::detail
