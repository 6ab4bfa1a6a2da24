// A thread's memo of recent calls' specializations (call_memo.hpp).
#include "runtime/call_memo.hpp"

#include "runtime/call_key.hpp"

namespace tessel::detail {

CallMemo& CallMemo::of_thread() {
  thread_local CallMemo memo;
  return memo;
}

Specialization* CallMemo::find(uint64_t kernel, CallArgs args, const std::vector<ParamKind>& params,
                               int64_t flags, bool on_gpu) {
  if (!write_exact_signature(args, params, flags, scratch_)) return nullptr;
  for (const Entry& e : entries_)
    if (e.kernel == kernel && e.signature == scratch_ && !e.base->guards_read_numbers &&
        !e.spec->guards_read_numbers &&
        (on_gpu ? e.spec->gpu_made : e.spec->code_shown).load(std::memory_order_acquire))
      return e.spec;
  return nullptr;
}

void CallMemo::remember(uint64_t kernel, CallArgs args, const std::vector<ParamKind>& params,
                        int64_t flags, Specialization* base, Specialization* spec) {
  if (base->guards_read_numbers || spec->guards_read_numbers) return;
  Entry& e = entries_[next_++ % entries_.size()];
  if (!write_exact_signature(args, params, flags, e.signature)) {
    e.kernel = 0;
    return;
  }
  e.kernel = kernel;
  e.spec = spec;
  e.base = base;
}

}  // namespace tessel::detail
