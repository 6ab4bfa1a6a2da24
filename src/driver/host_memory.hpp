// The live host memory of tessel Buffers (allocated by tessel, or wrapped with
// Buffer::from_blob / DLPack), by address range: where the interpreter may dereference an
// address it did not get from a Buffer argument (a multicast tensor's dev_ptrs).
#pragma once

#include <cstdint>
#include <utility>

namespace tessel::rt {

/// Records / forgets host memory [ptr, ptr + nbytes) of one Storage (thread-safe; a range
/// recorded twice, e.g. two from_blob Buffers over one array, is forgotten twice).
void register_host_memory(const void* ptr, int64_t nbytes);
void unregister_host_memory(const void* ptr, int64_t nbytes);

/// The live host range [lo, hi) holding all of bytes [p, p + nbytes), or {0, 0} when no
/// one range does (not memory of a live host Buffer).
std::pair<uintptr_t, uintptr_t> live_host_range(uintptr_t p, int64_t nbytes);

}  // namespace tessel::rt
