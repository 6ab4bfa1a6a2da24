// Memory order and scope of atomics, signals and waits (ts::atomic_*, ts::signal,
// ts::wait in tessel/language.hpp), as Helion's `sem` and `scope` strings and the CUDA
// memory model (PTX ISA, "Memory Consistency Model") define them.
#pragma once

#include <cstdint>

namespace tessel {

/// The ordering an atomic gives the program's other memory accesses (Helion's `sem`):
/// relaxed (none), acquire (later accesses stay after it), release (earlier accesses stay
/// before it), acq_rel (both). cuda::std::memory_order of the same names.
enum class Sem : uint8_t { relaxed, acquire, release, acq_rel };

/// Which threads an atomic is atomic and ordered with (Helion's `scope`): the program's
/// own threads (cta), every program on the GPU (gpu), or every GPU and the host (sys).
/// cuda::thread_scope_block, _device and _system.
enum class Scope : uint8_t { cta, gpu, sys };

const char* sem_name(Sem s);
const char* scope_name(Scope s);

}  // namespace tessel
