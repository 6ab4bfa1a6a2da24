// The CUDA driver API and NVRTC, loaded with dlopen so that tessel builds and runs (on
// the interpreter) where no GPU or CUDA driver exists. Internal to tessel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/error.hpp"

namespace tessel::rt {

/// True when libcuda loads, cuInit succeeds and at least one GPU is present.
bool cuda_available();
/// Why cuda_available() is false ("libcuda.so.1 not found", "no CUDA device", ...).
std::string cuda_unavailable_reason();
/// Throws RuntimeError("tessel: no CUDA driver/GPU: <reason>. Run on CPU Buffers (the
/// interpreter) or on a machine with an NVIDIA GPU.") when cuda_available() is false.
void require_cuda();

/// Makes the primary context of `device` current on this thread (retained once per
/// device for the process lifetime).
void set_device(int device);
int device_count();
int sm_count(int device);
/// Compute capability as major*10+minor, e.g. 90 for an H100/H200.
int compute_capability(int device);
std::string device_name(int device);
/// The compute capability tessel lowers kernels for (codegen::PipelineOptions::arch; the
/// tensor-core instructions and copies it may use: passes::has_wgmma, ...): the value of
/// TESSEL_TARGET_ARCH when set ("80" or "sm_80": an sm_90 GPU then runs code lowered for
/// an sm_80 one, as the tests of that lowering do), else GPU 0's, else passes::kDefaultArch
/// (no GPU). Read on every call. Errors: UserError for a TESSEL_TARGET_ARCH that is not a
/// compute capability NVRTC compiles for (nvrtc_archs; from 70 to 129 without NVRTC), naming
/// `kernel` and the call at `loc` when given.
int target_arch(const std::string& kernel = "", SourceLoc loc = {});
/// TESSEL_TARGET_ARCH's compute capability, none when it is unset or blank; errors as
/// target_arch's.
std::optional<int> target_arch_override(const std::string& kernel = "", SourceLoc loc = {});
/// Maximum dynamic shared memory per block with opt-in (bytes).
int max_shared_memory_per_block(int device);

/// Memory. `stream` is a CUstream (nullptr = the legacy default stream).
/// Allocation is stream-ordered (cuMemAllocAsync) so it is legal during graph capture.
/// Blocks of up to 8 MiB on the legacy default stream freed with their size (`nbytes`, as
/// allocated; -1: unknown) are kept for the next allocation of their size class on that
/// device (driver/block_cache.hpp), up to 256 MiB per device; an allocation that runs out
/// of memory frees them and tries again.
void* device_alloc(int64_t nbytes, int device, void* stream = nullptr);
void device_free(void* ptr, int device, void* stream = nullptr, int64_t nbytes = -1);
/// Bytes of freed blocks kept for `device`, and freeing them (as torch.cuda.empty_cache).
int64_t cached_block_bytes(int device);
void release_cached_blocks(int device);
void memcpy_htod(void* dst, const void* src, int64_t nbytes, void* stream = nullptr);
void memcpy_dtoh(void* dst, const void* src, int64_t nbytes, void* stream = nullptr);
void memcpy_dtod(void* dst, const void* src, int64_t nbytes, void* stream = nullptr);
void memset_d8(void* dst, uint8_t value, int64_t nbytes, void* stream = nullptr);
void stream_synchronize(void* stream = nullptr);

/// Streams (CUstream handles, non-blocking) and CUDA graphs. graph_begin_capture starts a
/// capture in global mode (any host-synchronizing CUDA call fails the capture);
/// graph_end_capture instantiates the graph with auto-free-on-launch (memory the graph
/// allocated and did not free is freed when it is launched again) and returns the
/// executable graph (CUgraphExec). Errors: RuntimeError with the driver's message.
void* stream_create();
void stream_destroy(void* stream);
void graph_begin_capture(void* stream);
void* graph_end_capture(void* stream);
void graph_launch(void* exec, void* stream);
void graph_destroy(void* exec);

/// CUDA events for timing (CUevent handles). event_elapsed_ms waits for `end` and returns
/// the milliseconds between the two records.
void* event_create();
void event_record(void* event, void* stream = nullptr);
float event_elapsed_ms(void* start, void* end);
void event_destroy(void* event);
/// Copies between two devices (peer copy, staged by the driver when peer access is off).
/// Ordered on `stream` of the current context; callers synchronize before reading.
void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, int64_t nbytes,
                 void* stream = nullptr);
/// Device memory another process can map through CUDA IPC (cuMemAlloc: IPC does not
/// work on stream-ordered allocations). Not stream-ordered; at least 1 byte is
/// allocated. RuntimeError when the allocation fails. Free with device_free_shareable.
void* device_alloc_shareable(int64_t nbytes, int device);
void device_free_shareable(void* ptr, int device);
/// The CUDA IPC handle (an opaque 64-byte string) of memory from device_alloc_shareable.
/// RuntimeError when the driver refuses (e.g. IPC unsupported on this system).
std::string ipc_handle(void* ptr, int device);
/// Maps another process's IPC handle into this process on `device`; RuntimeError on
/// failure. Unmap with ipc_close.
void* ipc_open(const std::string& handle, int device);
void ipc_close(void* ptr, int device);
/// Lets kernels on `device` access memory allocated with cuMemAlloc on `peer` (e.g.
/// device_alloc_shareable): cuCtxEnablePeerAccess, once per pair (enabling it again is no
/// error). False when the hardware cannot (cuDeviceCanAccessPeer); RuntimeError otherwise.
bool enable_peer_access(int device, int peer);
/// Waits for all work on `device`.
void device_synchronize(int device);
/// The driver's CUDA version as 1000*major + 10*minor (e.g. 12040), 0 without a driver.
int driver_version();

/// A loaded kernel function (CUfunction) with its module. A module belongs to the context
/// it was loaded in (the device's primary context, or an SM partition's green context):
/// `context` is that context's id (current_context_id).
struct Function {
  void* fn = nullptr;  // CUfunction
  int device = 0;
  uint64_t context = 0;
};

/// The fields of a tiled CUtensorMap (a TMA tensor descriptor), in TMA dim order (dim 0
/// contiguous): per dim its size (elements), its stride (bytes; dims 1 and up: multiples
/// of 16) and the box the TMA copies (elements, at most 256).
struct TensorMapSpec {
  int elem_bytes = 4;  // 1, 2, 4 or 8: copied as unsigned integers of that size
  int rank = 1;
  void* base = nullptr;  // 16-byte aligned
  uint64_t sizes[5] = {}, strides[5] = {};
  uint32_t box[5] = {};
  int swizzle = 0;  // bytes: 0 (none) or 128 (CU_TENSOR_MAP_SWIZZLE_128B)
};
/// Encodes `spec` into the 128 bytes at `out` (cuTensorMapEncodeTiled: no interleave,
/// out-of-bounds elements read as zeros). Errors: RuntimeError from the driver.
void encode_tensor_map(const TensorMapSpec& spec, void* out);

/// Launches `fn` with the given grid and block sizes, dynamic shared memory (bytes),
/// stream and kernel parameters (an array of pointers to each parameter's value).
void launch(const Function& fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
            int shared_bytes, void* stream, void** params);

/// How many programs (CTAs) of `fn` with `threads` threads and `shared_bytes` of dynamic
/// shared memory fit on one SM at once (the occupancy calculator); at least 1.
int max_active_programs(const Function& fn, int threads, int shared_bytes);

// ---- SM partitions (green contexts, CUDA driver API "Green Contexts", 12.4+) ----

/// True when the driver offers every green-context entry point tessel uses (resolved
/// optionally: a driver without them still runs everything else) and a GPU exists.
bool green_contexts_available();
/// Why green_contexts_available() is false; "" when it is true.
std::string green_contexts_unavailable_reason();

/// A green context holding a partition of one device's SMs, with one non-blocking stream.
struct Partition {
  void* green = nullptr;    // CUgreenCtx
  void* context = nullptr;  // CUcontext (cuCtxFromGreenCtx)
  void* stream = nullptr;   // CUstream (cuGreenCtxStreamCreate)
  int device = 0;
  int sms = 0;      // SMs the partition holds (after the driver's rounding)
  uint64_t id = 0;  // unique per partition for the process (never reused)
};

/// Creates a green context on `device` holding at least `min_sms` SMs: the driver rounds
/// the count up to its partition granularity (cuDevSmResourceSplitByCount; sm_90: a
/// multiple of 8, at least 8), and when the rounded count exceeds the device the
/// partition is the whole device. Precondition: 1 <= min_sms <= sm_count(device).
/// Errors: RuntimeError without a GPU, without green contexts in the driver, or when the
/// driver refuses.
Partition partition_create(int device, int min_sms);
/// Waits for the partition's stream, unloads the modules loaded in it, destroys its stream
/// and green context. Never throws. Buffers whose stream-ordered free was to run on the
/// partition's stream are freed on the legacy default stream afterwards.
void partition_destroy(const Partition& p);
/// The partition whose stream is `stream`, or false when `stream` is no partition's (a
/// hash lookup, skipped while no partition exists).
bool stream_partition(void* stream, Partition* out);

/// While alive, makes the green context of `stream` current on this thread when `stream`
/// is a partition's stream (pushed on the context stack, popped by the destructor), so
/// module loads, allocations, launches and graph calls on that stream run in the
/// partition; and set_device(p.device) keeps that context. Does nothing for any other
/// stream, or when that context is already active. Errors: RuntimeError from the driver.
class ContextScope {
 public:
  explicit ContextScope(void* stream);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  /// The device of the partition of `stream`; -1 when `stream` is no partition's.
  int device() const { return device_; }

 private:
  bool pushed_ = false;
  int device_ = -1;
  Partition saved_active_;      // the thread's active partition before (context null: none)
  void* saved_last_ = nullptr;  // the context set_device last made current on this thread
};

/// Id of the context launches on `device` use on this thread now: the active partition's
/// id (ContextScope), else the primary context's (device + 1). Cheap, no driver call.
uint64_t current_context_id(int device);
/// SMs that launches on `device` can use on this thread now: the active partition's
/// count, else sm_count(device).
int current_sm_count(int device);

/// NVRTC, found through CUDA_HOME when set (only there), else /usr/local/cuda, else the
/// loader path.
bool nvrtc_available();
/// "13.0" etc.; throws RuntimeError when NVRTC is missing.
std::string nvrtc_version();
/// The compute capabilities NVRTC compiles for (nvrtcGetSupportedArchs: 75, 80, ... 121 for
/// CUDA 13.0), ascending; throws RuntimeError when NVRTC is missing.
std::vector<int> nvrtc_archs();
/// The CUDA include directories NVRTC needs ($CUDA_HOME/include and .../include/cccl).
std::vector<std::string> cuda_include_dirs();

struct CompileOptions {
  int arch = 90;                   // sm_XX
  std::vector<std::string> extra;  // extra NVRTC options
  /// Embedded headers: name as #include'd -> text.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Compiles CUDA C++ `source` to a cubin with NVRTC (options: --gpu-architecture=sm_XX,
/// -default-device, -std=c++17 unless `extra` has a -std, -I for cuda_include_dirs(),
/// then `extra`). Needs no GPU. Callable from several threads. With `ptx`, also returns
/// the PTX NVRTC generated on the way (nvrtcGetPTX; TESSEL_DUMP_DIR). On failure throws
/// CompileError holding the NVRTC log; RuntimeError when NVRTC is missing.
std::string compile_cuda(const std::string& source, const std::string& program_name,
                         const CompileOptions& options, std::string* ptx = nullptr);

/// Loads `cubin` in the current context of `device` (current_context_id: the primary
/// context, or the green context of an active ContextScope), cached by content hash, so a
/// cubin is loaded once per context, and returns the function named `kernel_name`.
Function load_function(const std::string& cubin, const std::string& kernel_name, int device);

/// Identifies the NVRTC library compile_cuda uses (its resolved path, size and
/// modification time), without loading it: cheap, for cache keys. Computed once.
std::string nvrtc_identity();

/// Number of NVRTC compilations so far in this process (tests use it to check that a
/// call did not recompile).
int64_t compile_count();

/// NVRTC rejected a program. `log` is NVRTC's log; `source` the program.
class CompileError : public RuntimeError {
 public:
  CompileError(const std::string& what, std::string log_, std::string source_)
      : RuntimeError(what), log(std::move(log_)), source(std::move(source_)) {}
  std::string log, source;
};
}  // namespace tessel::rt
