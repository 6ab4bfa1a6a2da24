// Messages between the autotuner and its timing worker (tessel_bench_worker), over a
// Unix stream socket: a JSON header plus binary blobs (IPC handles, cubins).
//
// Frame: the 4 bytes "TSW1", a little-endian u32 header length, the header (JSON text),
// a u32 blob count, then per blob a u64 length and its bytes.
//
// Parent -> worker (header "op"):
//   setup {device, flush_bytes, buffers: [{handle: blob index, bytes, restore}]}
//       maps the shared tensors (CUDA IPC), snapshots those with restore = true, and
//       allocates the L2 flush buffer. Reply: ready | error.
//   run {id, launches: [{cubin: blob index, kernel, grid: [x, y, z], threads, shared,
//        params: [{v: u64} | {buf, off}]}]}
//       loads the kernels, restores the snapshots, runs the launches once and waits.
//       Reply: ran {id, ms} | error {id, message, fatal}.
//   time {id, reps}: `reps` times: restore, flush L2, launches between two CUDA events.
//       Reply: timed {id, ms: [per rep]} | error {id, message, fatal}.
//   quit.
// After an error with fatal = true (the CUDA context is unusable: a sticky error such
// as an illegal address) the worker exits; the parent starts a new one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessel::autotune {

struct Message {
  nlohmann::json header;
  std::vector<std::string> blobs;
};

/// Writes `m` to socket `fd` (blocking). Returns false when the peer is gone (no
/// SIGPIPE is raised) or the write fails.
bool send_message(int fd, const Message& m);

enum class ReadStatus { ok, timeout, closed, malformed };

/// Reads one message from `fd` into `out`, waiting at most `timeout_s` seconds in all
/// (negative: no limit). closed: the peer closed the socket (or died).
ReadStatus receive_message(int fd, double timeout_s, Message& out);

}  // namespace tessel::autotune
