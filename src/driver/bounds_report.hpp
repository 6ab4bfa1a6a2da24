// Bounds-checking mode (Settings::check_bounds, TESSEL_CHECK_BOUNDS=1): the error an
// out-of-range index raises, and the device record through which a GPU kernel reports
// one. The interpreter throws at the first violation it meets; generated code records
// the first violation any thread meets (ts::report_oob in device/tessel.cuh, an atomicCAS
// on the record's first word) and the runtime reads the record back after the call.
#pragma once

#include <array>
#include <cstdint>

#include "ir/ir.hpp"
#include "tessel/error.hpp"

namespace tessel::rt {

/// The device record, four int64 words: [0] the access (Load/Store node id + 1; 0 = no
/// violation), [1] the tensor dimension (counting the tensor's dims, from 0), [2] the
/// index value, [3] the dimension's size. ts::report_oob writes it. A wait (Wait, or a
/// Signal with wait_for) that gave up (ts::wait_for, device/atomics.cuh) writes [1] = -1,
/// [2] the element's offset from the pad's data pointer, [3] the value it held.
using BoundsRecord = std::array<int64_t, 4>;

/// Polls after which a wait gives up under Settings::check_bounds (ts::kWaitPolls of
/// device/atomics.cuh: the same number).
inline constexpr int64_t kWaitPolls = int64_t{1} << 22;

/// The UserError of index `index` outside [0, extent) along dimension `dim` of the
/// tensor Load/Store `access` of `g` addresses: names the kernel, the access's source
/// line, the tensor (argument position or allocation line), the dimension, the index and
/// the size. The same text on the interpreter and on the GPU. `on_every_call`: an index
/// the host computes, checked on every call (runtime/host_indices.hpp), whose hint says so.
UserError bounds_error(const ir::Graph& g, const ir::Node* access, int dim, int64_t index,
                       int64_t extent, bool on_every_call = false);

/// Throws bounds_error for a record a kernel of `g` wrote, or the UserError of a wait that
/// gave up (naming the kernel, the line, the pad, the element's offset, the values waited
/// for and held); returns when it holds no violation. InternalError for a record that
/// names no access of `g`.
void raise_bounds_record(const ir::Graph& g, const BoundsRecord& record);

}  // namespace tessel::rt
