// The CUDA driver API through dlopen (NVRTC is in nvrtc.cpp). cuda.h is included for its
// types only: every driver function is resolved at run time through the versioned
// cuGetProcAddress, so tessel has no link-time dependency on libcuda.
#include "driver/cuda_api.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "driver/block_cache.hpp"
#include "passes/kernel_plan.hpp"

namespace tessel::rt {
namespace {

// The CUDA version whose ABI we ask cuGetProcAddress for: the signatures in cuda.h of
// every function below are those of CUDA 12.0, so drivers 12.0 and newer all work.
constexpr int kDriverAbi = 12000;

// X-macro of every driver function tessel uses.
// clang-format off
#define TESSEL_CU_FUNCTIONS(X) \
  X(cuGetErrorName) \
  X(cuGetErrorString) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuDeviceGetCount) \
  X(cuDeviceGet) \
  X(cuDeviceGetName) \
  X(cuDeviceGetAttribute) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuCtxSetCurrent) \
  X(cuCtxGetCurrent) \
  X(cuCtxSynchronize) \
  X(cuDeviceCanAccessPeer) \
  X(cuCtxEnablePeerAccess) \
  X(cuMemAllocAsync) \
  X(cuMemFreeAsync) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemcpyHtoDAsync) \
  X(cuMemcpyDtoHAsync) \
  X(cuMemcpyDtoDAsync) \
  X(cuMemcpyPeerAsync) \
  X(cuMemsetD8Async) \
  X(cuStreamSynchronize) \
  X(cuModuleLoadDataEx) \
  X(cuModuleGetFunction) \
  X(cuFuncSetAttribute) \
  X(cuLaunchKernel) \
  X(cuTensorMapEncodeTiled) \
  X(cuDeviceGetDefaultMemPool) \
  X(cuMemPoolSetAttribute) \
  X(cuEventCreate) \
  X(cuEventRecord) \
  X(cuEventSynchronize) \
  X(cuEventElapsedTime) \
  X(cuEventDestroy) \
  X(cuIpcGetMemHandle) \
  X(cuIpcOpenMemHandle) \
  X(cuIpcCloseMemHandle) \
  X(cuStreamCreate) \
  X(cuStreamDestroy) \
  X(cuStreamBeginCapture) \
  X(cuStreamEndCapture) \
  X(cuGraphInstantiateWithFlags) \
  X(cuGraphLaunch) \
  X(cuGraphExecDestroy) \
  X(cuGraphDestroy) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuCtxPushCurrent) \
  X(cuCtxPopCurrent) \
  X(cuModuleUnload)
// clang-format on

// Green contexts (SM partitions): resolved optionally, so a driver without them still
// loads. cuGreenCtxStreamCreate is the newest (CUDA 12.5); the others came in 12.4.
constexpr int kGreenAbi = 12050;
// clang-format off
#define TESSEL_CU_GREEN_FUNCTIONS(X) \
  X(cuDeviceGetDevResource) \
  X(cuDevSmResourceSplitByCount) \
  X(cuDevResourceGenerateDesc) \
  X(cuGreenCtxCreate) \
  X(cuGreenCtxDestroy) \
  X(cuCtxFromGreenCtx) \
  X(cuGreenCtxStreamCreate) \
  X(cuGreenCtxGetDevResource)
// clang-format on

// Per-device state, initialized once.
struct DeviceState {
  std::once_flag once;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  bool pools = false;  // stream-ordered allocation supported
  int sms = 0, cc = 0;
};

struct Driver {
  void* lib = nullptr;
  bool ok = false;
  std::string reason;
  int version = 0;
  int count = 0;
  std::vector<std::unique_ptr<DeviceState>> devices;
#define TESSEL_DECLARE(name) decltype(&::name) p_##name = nullptr;
  TESSEL_CU_FUNCTIONS(TESSEL_DECLARE)
  TESSEL_CU_GREEN_FUNCTIONS(TESSEL_DECLARE)
#undef TESSEL_DECLARE
  std::string green_missing;  // green-context entry points the driver lacks
};

std::string error_text(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.p_cuGetErrorName) d.p_cuGetErrorName(r, &name);
  if (d.p_cuGetErrorString) d.p_cuGetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(static_cast<int>(r));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void init_driver(Driver& d) {
  d.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d.lib) {
    const char* err = dlerror();
    d.reason = std::string("libcuda.so.1 could not be loaded (no NVIDIA driver installed?): ") +
               (err ? err : "unknown dlopen error");
    return;
  }
  using GetProc = decltype(&::cuGetProcAddress);  // the CUDA 12+ (_v2) signature
  auto get_proc = reinterpret_cast<GetProc>(dlsym(d.lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    d.reason =
        "the CUDA driver is older than 12.0 (cuGetProcAddress_v2 is missing); "
        "update the NVIDIA driver";
    return;
  }
  std::string missing;
  // `name` appears only under # and ## here: cuda.h #defines some names to versioned
  // ones (cuMemAlloc -> cuMemAlloc_v2), and cuGetProcAddress wants the base name.
  auto resolve = [&](const char* name, int abi, std::string& missing_list) -> void* {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(name, &fn, abi, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
    if (r == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && fn) return fn;
    missing_list += std::string(missing_list.empty() ? "" : ", ") + name;
    return nullptr;
  };
#define TESSEL_RESOLVE(name) \
  d.p_##name = reinterpret_cast<decltype(d.p_##name)>(resolve(#name, kDriverAbi, missing));
#define TESSEL_RESOLVE_GREEN(name) \
  d.p_##name = reinterpret_cast<decltype(d.p_##name)>(resolve(#name, kGreenAbi, d.green_missing));
  TESSEL_CU_FUNCTIONS(TESSEL_RESOLVE)
  TESSEL_CU_GREEN_FUNCTIONS(TESSEL_RESOLVE_GREEN)
#undef TESSEL_RESOLVE_GREEN
#undef TESSEL_RESOLVE
  if (!missing.empty()) {
    d.reason = "the CUDA driver lacks " + missing + " (driver too old?)";
    return;
  }
  CUresult r = d.p_cuInit(0);
  if (r != CUDA_SUCCESS) {
    d.reason = "cuInit failed: " + error_text(d, r);
    return;
  }
  d.p_cuDriverGetVersion(&d.version);
  r = d.p_cuDeviceGetCount(&d.count);
  if (r != CUDA_SUCCESS) {
    d.reason = "cuDeviceGetCount failed: " + error_text(d, r);
    return;
  }
  if (d.count <= 0) {
    d.reason = "the CUDA driver found no CUDA device";
    return;
  }
  for (int i = 0; i < d.count; ++i) d.devices.push_back(std::make_unique<DeviceState>());
  d.ok = true;
}

Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] { init_driver(d); });
  return d;
}

// Throws RuntimeError naming the call when `r` is an error.
void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  throw RuntimeError(std::string(call) + " failed: " + error_text(driver(), r));
}
#define TESSEL_CU(call, ...) check(d.p_##call(__VA_ARGS__), #call)

Driver& ready() {
  require_cuda();
  return driver();
}

DeviceState& device_state(int device) {
  Driver& d = ready();
  if (device < 0 || device >= d.count)
    throw RuntimeError("cuda:" + std::to_string(device) + " does not exist: this machine has " +
                       std::to_string(d.count) + " CUDA device(s)");
  DeviceState& s = *d.devices[device];
  std::call_once(s.once, [&] {
    TESSEL_CU(cuDeviceGet, &s.dev, device);
    TESSEL_CU(cuDevicePrimaryCtxRetain, &s.ctx, s.dev);
    int v = 0;
    TESSEL_CU(cuDeviceGetAttribute, &v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, s.dev);
    s.pools = v != 0;
    TESSEL_CU(cuDeviceGetAttribute, &s.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s.dev);
    int major = 0, minor = 0;
    TESSEL_CU(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s.dev);
    TESSEL_CU(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s.dev);
    s.cc = major * 10 + minor;
    if (s.pools) {
      // Keep freed memory in the pool instead of returning it to the OS at every
      // synchronization (what a caching allocator does).
      CUmemoryPool pool = nullptr;
      TESSEL_CU(cuDeviceGetDefaultMemPool, &pool, s.dev);
      cuuint64_t threshold = ~cuuint64_t{0};
      TESSEL_CU(cuMemPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
    }
  });
  return s;
}

// Makes sure some context is current on this thread (device 0's when none is).
void ensure_context() {
  Driver& d = ready();
  CUcontext cur = nullptr;
  TESSEL_CU(cuCtxGetCurrent, &cur);
  if (!cur) set_device(0);
}

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
CUstream cu_stream(void* s) { return static_cast<CUstream>(s); }

// The partition a ContextScope made active on this thread (context null: none), and the
// context set_device made current last (most calls then need no driver call; a caller
// that switches contexts with the driver API behind tessel's back is caught by the
// driver call below whenever the wanted context changes).
thread_local Partition t_active;
thread_local CUcontext t_last = nullptr;

// Partition streams -> partitions. `retired` holds the streams of destroyed partitions:
// a Buffer still holding one frees its memory on the legacy stream instead.
struct PartitionRegistry {
  std::shared_mutex mu;
  std::unordered_map<void*, Partition> live;
  std::unordered_set<void*> retired;
  std::atomic<int> count{0};     // live partitions: ContextScope looks nothing up at 0
  std::atomic<bool> any{false};  // a partition was ever created
  std::atomic<uint64_t> next_id{uint64_t{1} << 32};  // above every primary id (device + 1)
};
PartitionRegistry& partitions() {
  static PartitionRegistry r;
  return r;
}

bool retired_stream(void* stream) {
  PartitionRegistry& r = partitions();
  std::shared_lock lock(r.mu);
  return r.retired.count(stream) != 0;
}

}  // namespace

bool cuda_available() { return driver().ok; }

std::string cuda_unavailable_reason() { return driver().ok ? "" : driver().reason; }

void require_cuda() {
  if (!cuda_available())
    throw RuntimeError("no CUDA driver/GPU: " + driver().reason +
                       ". Run on CPU Buffers (the interpreter) or on a machine with an "
                       "NVIDIA GPU.");
}

int driver_version() { return driver().version; }

void set_device(int device) {
  DeviceState& s = device_state(device);
  // Inside a ContextScope of this device, its green context stands for the device.
  CUcontext want = t_active.context && t_active.device == device
                       ? static_cast<CUcontext>(t_active.context)
                       : s.ctx;
  if (t_last == want) return;
  Driver& d = driver();
  CUcontext cur = nullptr;
  TESSEL_CU(cuCtxGetCurrent, &cur);
  if (cur != want) TESSEL_CU(cuCtxSetCurrent, want);
  t_last = want;
}

int device_count() { return cuda_available() ? driver().count : 0; }
int sm_count(int device) { return device_state(device).sms; }
int compute_capability(int device) { return device_state(device).cc; }

std::optional<int> target_arch_override(const std::string& kernel, SourceLoc loc) {
  const char* v = std::getenv("TESSEL_TARGET_ARCH");
  std::string s = v ? v : "";
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  if (s.empty()) return std::nullopt;
  if (s.size() > 3 && (s[0] == 's' || s[0] == 'S') && (s[1] == 'm' || s[1] == 'M') && s[2] == '_')
    s = s.substr(3);
  auto fail = [&](const std::string& why, const std::string& hint) -> int {
    throw UserError(kernel, loc, fmt::format("TESSEL_TARGET_ARCH is '{}', {}", v, why), hint);
  };
  int arch = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), arch);
  // What to set: the targets NVRTC compiles for where it is present, from sm_70 (tessel's
  // lowest).
  const std::vector<int> compiled = nvrtc_available() ? nvrtc_archs() : std::vector<int>{};
  std::vector<int> archs = compiled;
  std::erase_if(archs, [](int a) { return a < 70; });
  const std::string example =
      archs.empty() ? std::string(
                          "set it to the GPU's major x 10 + minor, e.g. 80 (A100), 89 (L40) or 90 "
                          "(H100), or unset it to lower for GPU 0 (sm_90 without a GPU)")
                    : fmt::format(
                          "set it to the GPU's major x 10 + minor, one of {} (80: A100, 89: L40, "
                          "90: H100), or unset it to lower for GPU 0 (sm_90 without a GPU)",
                          fmt::join(archs, ", "));
  if (ec == std::errc() && end != s.data() + s.size() && (*end == 'a' || *end == 'f') &&
      end + 1 == s.data() + s.size())
    return fail("not a compute capability",
                fmt::format("give {} without '{}': tessel picks the architecture-specific "
                            "targets itself (sm_90a where it emits wgmma)",
                            arch, *end));
  if (ec != std::errc() || end != s.data() + s.size() || arch < 10 || arch > 129)
    return fail("not a compute capability", example);
  if (!compiled.empty() && std::find(compiled.begin(), compiled.end(), arch) == compiled.end())
    return fail(fmt::format("which NVRTC {} does not compile for", nvrtc_version()), example);
  if (arch < 70) return fail("below sm_70, which tessel does not lower for", example);
  return arch;
}

int target_arch(const std::string& kernel, SourceLoc loc) {
  if (std::optional<int> arch = target_arch_override(kernel, loc)) return *arch;
  return cuda_available() ? compute_capability(0) : passes::kDefaultArch;
}

std::string device_name(int device) {
  DeviceState& s = device_state(device);
  Driver& d = driver();
  char name[256] = {};
  TESSEL_CU(cuDeviceGetName, name, sizeof(name) - 1, s.dev);
  return name;
}

int max_shared_memory_per_block(int device) {
  DeviceState& s = device_state(device);
  Driver& d = driver();
  int v = 0;
  TESSEL_CU(cuDeviceGetAttribute, &v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, s.dev);
  return v;
}

BlockCache& block_cache() {
  static auto* cache = new BlockCache;  // outlives the Buffers freed at exit
  return *cache;
}

int64_t cached_block_bytes(int device) { return block_cache().cached_bytes(device); }

void release_cached_blocks(int device) {
  std::vector<void*> blocks = block_cache().drain(device);
  if (blocks.empty()) return;
  Driver& d = ready();
  ContextScope scope(nullptr);
  set_device(device);
  for (void* p : blocks) TESSEL_CU(cuMemFreeAsync, dptr(p), nullptr);
}

void* device_alloc(int64_t nbytes, int device, void* stream) {
  if (nbytes <= 0) return nullptr;
  DeviceState& s = device_state(device);
  Driver& d = driver();
  if (int64_t size_class = s.pools ? BlockCache::size_class(nbytes, stream) : 0) {
    if (void* kept = block_cache().take(device, size_class)) return kept;
    nbytes = size_class;  // the block may serve any request of its class later
  }
  ContextScope scope(stream);
  set_device(device);
  CUdeviceptr p = 0;
  auto alloc = [&] {
    return s.pools ? d.p_cuMemAllocAsync(&p, static_cast<size_t>(nbytes), cu_stream(stream))
                   : d.p_cuMemAlloc(&p, static_cast<size_t>(nbytes));
  };
  CUresult r = alloc();
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Kept blocks go back to the pool; frees still pending on other streams return their
    // memory once they complete.
    release_cached_blocks(device);
    TESSEL_CU(cuCtxSynchronize);
    r = alloc();
  }
  if (r != CUDA_SUCCESS)
    throw RuntimeError(
        "cannot allocate " + std::to_string(nbytes) + " bytes on cuda:" + std::to_string(device) +
        ": cuMemAllocAsync failed: " + error_text(d, r) +
        (r == CUDA_ERROR_OUT_OF_MEMORY ? " (free other Buffers first, or allocate less)" : ""));
  return reinterpret_cast<void*>(p);
}

void device_free(void* ptr, int device, void* stream, int64_t nbytes) {
  if (!ptr) return;
  DeviceState& s = device_state(device);
  Driver& d = driver();
  // The class of the allocation's own stream (a retired partition stream, below, is not
  // the legacy one: its block was allocated at its exact size).
  const int64_t size_class = s.pools && nbytes > 0 ? BlockCache::size_class(nbytes, stream) : 0;
  if (size_class && block_cache().give(device, size_class, ptr)) return;
  // The partition of `stream` may be gone (its stream synchronized and destroyed first).
  if (stream && partitions().any.load() && retired_stream(stream)) stream = nullptr;
  ContextScope scope(stream);
  set_device(device);
  if (s.pools)
    TESSEL_CU(cuMemFreeAsync, dptr(ptr), cu_stream(stream));
  else
    TESSEL_CU(cuMemFree, dptr(ptr));
}

void memcpy_htod(void* dst, const void* src, int64_t nbytes, void* stream) {
  if (nbytes <= 0) return;
  ContextScope scope(stream);
  ensure_context();
  Driver& d = driver();
  TESSEL_CU(cuMemcpyHtoDAsync, dptr(dst), src, static_cast<size_t>(nbytes), cu_stream(stream));
}

void memcpy_dtoh(void* dst, const void* src, int64_t nbytes, void* stream) {
  if (nbytes <= 0) return;
  ContextScope scope(stream);
  ensure_context();
  Driver& d = driver();
  TESSEL_CU(cuMemcpyDtoHAsync, dst, dptr(src), static_cast<size_t>(nbytes), cu_stream(stream));
}

void memcpy_dtod(void* dst, const void* src, int64_t nbytes, void* stream) {
  if (nbytes <= 0) return;
  ContextScope scope(stream);
  ensure_context();
  Driver& d = driver();
  TESSEL_CU(cuMemcpyDtoDAsync, dptr(dst), dptr(src), static_cast<size_t>(nbytes),
            cu_stream(stream));
}

void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, int64_t nbytes,
                 void* stream) {
  if (nbytes <= 0) return;
  DeviceState& ds = device_state(dst_device);
  DeviceState& ss = device_state(src_device);
  Driver& d = driver();
  ContextScope scope(stream);
  set_device(dst_device);
  TESSEL_CU(cuMemcpyPeerAsync, dptr(dst), ds.ctx, dptr(src), ss.ctx, static_cast<size_t>(nbytes),
            cu_stream(stream));
}

void memset_d8(void* dst, uint8_t value, int64_t nbytes, void* stream) {
  if (nbytes <= 0) return;
  ContextScope scope(stream);
  ensure_context();
  Driver& d = driver();
  TESSEL_CU(cuMemsetD8Async, dptr(dst), value, static_cast<size_t>(nbytes), cu_stream(stream));
}

void stream_synchronize(void* stream) {
  ContextScope scope(stream);
  ensure_context();
  Driver& d = driver();
  TESSEL_CU(cuStreamSynchronize, cu_stream(stream));
}

int max_active_programs(const Function& fn, int threads, int shared_bytes) {
  Driver& d = driver();
  int n = 0;
  TESSEL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &n, static_cast<CUfunction>(fn.fn),
            threads, static_cast<size_t>(shared_bytes));
  return n < 1 ? 1 : n;
}

void* stream_create() {
  ensure_context();
  Driver& d = driver();
  CUstream st = nullptr;
  TESSEL_CU(cuStreamCreate, &st, CU_STREAM_NON_BLOCKING);
  return st;
}

void stream_destroy(void* stream) {
  Driver& d = driver();
  if (stream) d.p_cuStreamDestroy(static_cast<CUstream>(stream));
}

void graph_begin_capture(void* stream) {
  ContextScope scope(stream);
  ensure_context();
  Driver& d = driver();
  TESSEL_CU(cuStreamBeginCapture, static_cast<CUstream>(stream), CU_STREAM_CAPTURE_MODE_GLOBAL);
}

void* graph_end_capture(void* stream) {
  Driver& d = driver();
  ContextScope scope(stream);  // instantiate in the stream's context
  CUgraph g = nullptr;
  TESSEL_CU(cuStreamEndCapture, static_cast<CUstream>(stream), &g);
  CUgraphExec exec = nullptr;
  CUresult r =
      d.p_cuGraphInstantiateWithFlags(&exec, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
  d.p_cuGraphDestroy(g);
  check(r, "cuGraphInstantiateWithFlags");
  return exec;
}

void graph_launch(void* exec, void* stream) {
  Driver& d = driver();
  ContextScope scope(stream);
  TESSEL_CU(cuGraphLaunch, static_cast<CUgraphExec>(exec), cu_stream(stream));
}

void graph_destroy(void* exec) {
  Driver& d = driver();
  if (exec) d.p_cuGraphExecDestroy(static_cast<CUgraphExec>(exec));
}

void* event_create() {
  ensure_context();
  Driver& d = driver();
  CUevent e = nullptr;
  TESSEL_CU(cuEventCreate, &e, CU_EVENT_DEFAULT);
  return e;
}

void event_record(void* event, void* stream) {
  Driver& d = driver();
  ContextScope scope(stream);
  TESSEL_CU(cuEventRecord, static_cast<CUevent>(event), cu_stream(stream));
}

float event_elapsed_ms(void* start, void* end) {
  Driver& d = driver();
  TESSEL_CU(cuEventSynchronize, static_cast<CUevent>(end));
  float ms = 0;
  TESSEL_CU(cuEventElapsedTime, &ms, static_cast<CUevent>(start), static_cast<CUevent>(end));
  return ms;
}

void event_destroy(void* event) {
  Driver& d = driver();
  if (event) d.p_cuEventDestroy(static_cast<CUevent>(event));
}

bool enable_peer_access(int device, int peer) {
  Driver& d = ready();
  DeviceState& a = device_state(device);
  DeviceState& b = device_state(peer);
  int can = 0;
  TESSEL_CU(cuDeviceCanAccessPeer, &can, a.dev, b.dev);
  if (!can) return false;
  set_device(device);
  CUresult r = d.p_cuCtxEnablePeerAccess(b.ctx, 0);
  if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) check(r, "cuCtxEnablePeerAccess");
  return true;
}

void device_synchronize(int device) {
  set_device(device);
  Driver& d = driver();
  TESSEL_CU(cuCtxSynchronize);
}

// ---- memory shared between processes (CUDA IPC) ----

void* device_alloc_shareable(int64_t nbytes, int device) {
  Driver& d = ready();
  set_device(device);
  CUdeviceptr p = 0;
  CUresult r = d.p_cuMemAlloc(&p, static_cast<size_t>(std::max<int64_t>(nbytes, 1)));
  if (r != CUDA_SUCCESS)
    throw RuntimeError("cannot allocate " + std::to_string(nbytes) + " shareable bytes on cuda:" +
                       std::to_string(device) + ": cuMemAlloc failed: " + error_text(d, r));
  return reinterpret_cast<void*>(p);
}

void device_free_shareable(void* ptr, int device) {
  if (!ptr) return;
  Driver& d = ready();
  set_device(device);
  d.p_cuMemFree(dptr(ptr));  // no throw: called from destructors
}

std::string ipc_handle(void* ptr, int device) {
  Driver& d = ready();
  set_device(device);
  CUipcMemHandle h{};
  TESSEL_CU(cuIpcGetMemHandle, &h, dptr(ptr));
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h));
}

void* ipc_open(const std::string& handle, int device) {
  Driver& d = ready();
  set_device(device);
  if (handle.size() != sizeof(CUipcMemHandle))
    throw RuntimeError("ipc_open: a CUDA IPC handle has " + std::to_string(sizeof(CUipcMemHandle)) +
                       " bytes, got " + std::to_string(handle.size()));
  CUipcMemHandle h{};
  std::memcpy(&h, handle.data(), sizeof(h));
  CUdeviceptr p = 0;
  TESSEL_CU(cuIpcOpenMemHandle, &p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  return reinterpret_cast<void*>(p);
}

void ipc_close(void* ptr, int device) {
  if (!ptr) return;
  Driver& d = ready();
  set_device(device);
  d.p_cuIpcCloseMemHandle(dptr(ptr));
}

// ---- modules and launches ----

namespace {
struct ModuleCache {
  std::mutex mu;
  // (context id, XXH3 of the cubin, cubin size) -> module. A module belongs to the
  // context it was loaded in, and cuLaunchKernel needs the function's context to be the
  // stream's: an SM partition (green context) loads its own copy (see DECISIONS.md).
  std::map<std::tuple<uint64_t, uint64_t, size_t>, CUmodule> modules;
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
  std::map<CUfunction, int> shared_set;  // dynamic shared bytes already allowed
};
ModuleCache& module_cache() {
  static ModuleCache c;
  return c;
}
}  // namespace

Function load_function(const std::string& cubin, const std::string& kernel_name, int device) {
  Driver& d = ready();
  uint64_t hash = XXH3_64bits(cubin.data(), cubin.size());
  ModuleCache& c = module_cache();
  std::lock_guard lock(c.mu);
  auto key = std::make_tuple(current_context_id(device), hash, cubin.size());
  auto it = c.modules.find(key);
  if (it == c.modules.end()) {
    set_device(device);
    CUmodule m = nullptr;
    // The JIT's error log says why a PTX image (TESSEL_OVERRIDE_DIR) does not load.
    char log[4096] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log, reinterpret_cast<void*>(sizeof(log) - 1)};
    CUresult r = d.p_cuModuleLoadDataEx(&m, cubin.data(), 2, opts, values);
    if (r != CUDA_SUCCESS)
      throw RuntimeError("cuModuleLoadDataEx failed: " + error_text(d, r) +
                         (log[0] ? std::string("\n") + log : std::string()));
    it = c.modules.emplace(key, m).first;
  }
  auto fkey = std::make_pair(it->second, kernel_name);
  auto fit = c.functions.find(fkey);
  if (fit == c.functions.end()) {
    CUfunction f = nullptr;
    CUresult r = d.p_cuModuleGetFunction(&f, it->second, kernel_name.c_str());
    if (r != CUDA_SUCCESS)
      throw RuntimeError("cuModuleGetFunction failed for kernel '" + kernel_name +
                         "': " + error_text(d, r));
    fit = c.functions.emplace(fkey, f).first;
  }
  return Function{static_cast<void*>(fit->second), device, std::get<0>(key)};
}

void launch(const Function& fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
            int shared_bytes, void* stream, void** params) {
  Driver& d = ready();
  ContextScope scope(stream);
  set_device(fn.device);
  if (fn.context != 0 && fn.context != current_context_id(fn.device))
    throw RuntimeError(
        "a kernel loaded in one context was launched on a stream of another (an SM "
        "partition's stream and the device's, or two partitions): load it with "
        "load_function inside a ContextScope of the launch stream");
  auto f = static_cast<CUfunction>(fn.fn);
  if (shared_bytes > 48 * 1024) {
    ModuleCache& c = module_cache();
    std::lock_guard lock(c.mu);
    int& allowed = c.shared_set[f];
    if (allowed < shared_bytes) {
      TESSEL_CU(cuFuncSetAttribute, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes);
      allowed = shared_bytes;
    }
  }
  TESSEL_CU(cuLaunchKernel, f, grid_x, grid_y, grid_z, block_x, 1, 1,
            static_cast<unsigned>(shared_bytes), cu_stream(stream), params, nullptr);
}

void encode_tensor_map(const TensorMapSpec& s, void* out) {
  if (s.rank < 1 || s.rank > 5) throw InternalError("a tensor map of rank outside [1, 5]");
  static_assert(sizeof(CUtensorMap) == 128);
  Driver& d = ready();
  const CUtensorMapDataType type = s.elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : s.elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                   : s.elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                       : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], element_strides[5];
  for (int j = 0; j < s.rank; ++j) {
    dims[j] = s.sizes[j];
    box[j] = s.box[j];
    element_strides[j] = 1;
    if (j > 0) strides[j - 1] = s.strides[j];
  }
  auto* map = static_cast<CUtensorMap*>(out);
  TESSEL_CU(cuTensorMapEncodeTiled, map, type, static_cast<cuuint32_t>(s.rank), s.base, dims,
            strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
            s.swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

// ---- SM partitions (green contexts) ----

bool green_contexts_available() { return green_contexts_unavailable_reason().empty(); }

std::string green_contexts_unavailable_reason() {
  if (!cuda_available()) return "no CUDA driver/GPU: " + driver().reason;
  const Driver& d = driver();
  if (!d.green_missing.empty())
    return "the CUDA driver (version " + std::to_string(d.version / 1000) + "." +
           std::to_string(d.version % 1000 / 10) + ") lacks the green-context entry points " +
           d.green_missing + " (they need a driver for CUDA 12.5 or newer)";
  return "";
}

Partition partition_create(int device, int min_sms) {
  std::string why = green_contexts_unavailable_reason();
  if (!why.empty()) throw RuntimeError("SM partitions (green contexts) are unavailable: " + why);
  DeviceState& s = device_state(device);  // retains the primary context first, as the docs advise
  Driver& d = driver();
  set_device(device);
  CUdevResource all{};
  TESSEL_CU(cuDeviceGetDevResource, s.dev, &all, CU_DEV_RESOURCE_TYPE_SM);
  CUdevResource group{}, rest{};
  CUdevResource* use = &all;
  if (static_cast<unsigned>(min_sms) < all.sm.smCount) {
    // One group of at least min_sms SMs; the driver rounds the count up to its granularity.
    unsigned groups = 1;
    CUresult r = d.p_cuDevSmResourceSplitByCount(&group, &groups, &all, &rest, 0,
                                                 static_cast<unsigned>(min_sms));
    if (r == CUDA_SUCCESS && groups == 1)
      use = &group;
    else if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
      check(r, "cuDevSmResourceSplitByCount");
    // else: the rounded count exceeds the device: the partition is the whole device.
  }
  CUdevResourceDesc desc = nullptr;
  TESSEL_CU(cuDevResourceGenerateDesc, &desc, use, 1);
  CUgreenCtx green = nullptr;
  TESSEL_CU(cuGreenCtxCreate, &green, desc, s.dev, CU_GREEN_CTX_DEFAULT_STREAM);
  Partition p;
  p.green = green;
  p.device = device;
  try {
    CUcontext ctx = nullptr;
    TESSEL_CU(cuCtxFromGreenCtx, &ctx, green);
    p.context = ctx;
    CUdevResource got{};
    TESSEL_CU(cuGreenCtxGetDevResource, green, &got, CU_DEV_RESOURCE_TYPE_SM);
    p.sms = static_cast<int>(got.sm.smCount);
    CUstream st = nullptr;
    TESSEL_CU(cuGreenCtxStreamCreate, &st, green, CU_STREAM_NON_BLOCKING, 0);
    p.stream = st;
  } catch (...) {
    d.p_cuGreenCtxDestroy(green);
    throw;
  }
  PartitionRegistry& r = partitions();
  p.id = r.next_id.fetch_add(1);
  std::unique_lock lock(r.mu);
  r.retired.erase(p.stream);
  r.live[p.stream] = p;
  r.any.store(true);
  r.count.fetch_add(1);
  return p;
}

namespace {
// Unloads the modules loaded in context `id` (its context current) and forgets them.
void unload_modules(uint64_t id) {
  Driver& d = driver();
  ModuleCache& c = module_cache();
  std::lock_guard lock(c.mu);
  for (auto it = c.modules.begin(); it != c.modules.end();) {
    if (std::get<0>(it->first) != id) {
      ++it;
      continue;
    }
    CUmodule m = it->second;
    for (auto f = c.functions.begin(); f != c.functions.end();) {
      if (f->first.first == m) {
        c.shared_set.erase(f->second);
        f = c.functions.erase(f);
      } else {
        ++f;
      }
    }
    d.p_cuModuleUnload(m);
    it = c.modules.erase(it);
  }
}
}  // namespace

void partition_destroy(const Partition& p) {
  if (!p.green || !cuda_available()) return;
  Driver& d = driver();
  PartitionRegistry& r = partitions();
  {
    std::unique_lock lock(r.mu);
    if (r.live.erase(p.stream) == 0) return;  // destroyed already
    r.retired.insert(p.stream);
    r.count.fetch_sub(1);
  }
  // No throws from here: called from destructors.
  if (d.p_cuCtxPushCurrent(static_cast<CUcontext>(p.context)) == CUDA_SUCCESS) {
    d.p_cuStreamSynchronize(static_cast<CUstream>(p.stream));
    unload_modules(p.id);
    d.p_cuStreamDestroy(static_cast<CUstream>(p.stream));
    CUcontext popped = nullptr;
    d.p_cuCtxPopCurrent(&popped);
  }
  if (t_last == p.context) t_last = nullptr;
  d.p_cuGreenCtxDestroy(static_cast<CUgreenCtx>(p.green));
}

bool stream_partition(void* stream, Partition* out) {
  PartitionRegistry& r = partitions();
  if (!stream || r.count.load(std::memory_order_acquire) == 0) return false;
  std::shared_lock lock(r.mu);
  auto it = r.live.find(stream);
  if (it == r.live.end()) return false;
  if (out) *out = it->second;
  return true;
}

ContextScope::ContextScope(void* stream) {
  Partition p;
  if (!stream_partition(stream, &p)) return;
  device_ = p.device;
  if (t_active.context == p.context) return;  // nested in a scope of the same partition
  Driver& d = driver();
  TESSEL_CU(cuCtxPushCurrent, static_cast<CUcontext>(p.context));
  pushed_ = true;
  saved_active_ = t_active;
  saved_last_ = t_last;
  t_active = p;
  t_last = static_cast<CUcontext>(p.context);
}

ContextScope::~ContextScope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  driver().p_cuCtxPopCurrent(&popped);  // restores the context current before the scope
  t_active = saved_active_;
  t_last = static_cast<CUcontext>(saved_last_);
}

uint64_t current_context_id(int device) {
  if (t_active.context && t_active.device == device) return t_active.id;
  return static_cast<uint64_t>(device) + 1;
}

int current_sm_count(int device) {
  if (t_active.context && t_active.device == device) return t_active.sms;
  return sm_count(device);
}

}  // namespace tessel::rt
