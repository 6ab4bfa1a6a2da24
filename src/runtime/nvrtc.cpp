// NVRTC through dlopen: found in $CUDA_HOME/lib64 when CUDA_HOME is set (only there), else
// /usr/local/cuda/lib64, else on the loader path. nvrtc.h is included for its types only.
#include <dlfcn.h>
#include <nvrtc.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "driver/cuda_api.hpp"

namespace tessel::rt {
namespace {

namespace fs = std::filesystem;

// clang-format off
#define TESSEL_NVRTC_FUNCTIONS(X) \
  X(nvrtcVersion) \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs) \
  X(nvrtcGetErrorString) \
  X(nvrtcCreateProgram) \
  X(nvrtcDestroyProgram) \
  X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog) \
  X(nvrtcGetCUBINSize) \
  X(nvrtcGetCUBIN) \
  X(nvrtcGetPTXSize) \
  X(nvrtcGetPTX)
// clang-format on

struct Nvrtc {
  void* lib = nullptr;
  std::string reason;
  std::string home;  // the CUDA toolkit directory, "" when unknown
#define TESSEL_DECLARE(name) decltype(&::name) p_##name = nullptr;
  TESSEL_NVRTC_FUNCTIONS(TESSEL_DECLARE)
#undef TESSEL_DECLARE
};

// The CUDA toolkit set by $CUDA_HOME, "" when unset. A toolkit named there is the only one
// searched: taking another where it lacks NVRTC would compile with a toolkit the user did
// not ask for.
std::string cuda_home_env() {
  const char* env = std::getenv("CUDA_HOME");
  return env ? env : "";
}

// Candidate CUDA toolkit directories: $CUDA_HOME alone when set, else /usr/local/cuda and
// the build's CUDA.
std::vector<std::string> cuda_homes() {
  if (std::string env = cuda_home_env(); !env.empty()) return {env};
  std::vector<std::string> homes = {"/usr/local/cuda"};
#ifdef TESSEL_CUDA_HOME
  homes.push_back(TESSEL_CUDA_HOME);
#endif
  return homes;
}

const char* const kNvrtcNames[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
// Where a toolkit keeps its libraries (lib64; lib in some packagings, e.g. conda's).
const char* const kLibDirs[] = {"/lib64/", "/lib/"};

void init_nvrtc(Nvrtc& n) {
  const auto& names = kNvrtcNames;
  for (const std::string& home : cuda_homes()) {
    for (const char* dir : kLibDirs)
      for (const char* name : names) {
        std::string path = home + dir + name;
        if (n.lib || !fs::exists(path)) continue;
        if ((n.lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) n.home = home;
      }
    if (n.lib) break;
  }
  if (const std::string env = cuda_home_env(); !n.lib && !env.empty()) {
    n.reason = "CUDA_HOME is '" + env +
               "', which holds no lib64/libnvrtc.so; point CUDA_HOME at a CUDA toolkit (the "
               "directory holding include/ and lib64/) or unset it to use /usr/local/cuda";
    return;
  }
  if (!n.lib) {
    for (const char* name : names)
      if ((n.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!n.lib) {
    n.reason =
        "libnvrtc.so was not found in /usr/local/cuda/lib64 or on the loader path; install "
        "the CUDA toolkit or set CUDA_HOME";
    return;
  }
#define TESSEL_RESOLVE(name)                                                \
  n.p_##name = reinterpret_cast<decltype(n.p_##name)>(dlsym(n.lib, #name)); \
  if (!n.p_##name) {                                                        \
    n.reason = "libnvrtc lacks " #name;                                     \
    n.lib = nullptr;                                                        \
    return;                                                                 \
  }
  TESSEL_NVRTC_FUNCTIONS(TESSEL_RESOLVE)
#undef TESSEL_RESOLVE
  if (n.home.empty()) {
    // Loaded from the loader path: the toolkit is the library directory's parent.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(n.p_nvrtcVersion), &info) && info.dli_fname)
      n.home = fs::path(info.dli_fname).parent_path().parent_path().string();
  }
}

Nvrtc& nvrtc() {
  static Nvrtc n;
  static std::once_flag once;
  std::call_once(once, [] { init_nvrtc(n); });
  return n;
}

Nvrtc& nvrtc_ready() {
  Nvrtc& n = nvrtc();
  if (!n.lib) throw RuntimeError("NVRTC is not available: " + n.reason);
  return n;
}

std::atomic<int64_t> g_compile_count{0};

}  // namespace

bool nvrtc_available() { return nvrtc().lib != nullptr; }

std::string nvrtc_version() {
  Nvrtc& n = nvrtc_ready();
  int major = 0, minor = 0;
  n.p_nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_archs() {
  Nvrtc& n = nvrtc_ready();
  int count = 0;
  if (n.p_nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(count));
  if (n.p_nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

std::vector<std::string> cuda_include_dirs() {
  std::vector<std::string> dirs;
  std::string home = nvrtc().home;
  if (home.empty()) {
    for (const std::string& h : cuda_homes())
      if (fs::exists(h + "/include/cuda.h")) {
        home = h;
        break;
      }
  }
  if (home.empty()) return dirs;
  for (const char* sub : {"/include", "/include/cccl"})
    if (fs::is_directory(home + sub)) dirs.push_back(home + sub);
  return dirs;
}

std::string compile_cuda(const std::string& source, const std::string& program_name,
                         const CompileOptions& options, std::string* ptx) {
  Nvrtc& n = nvrtc_ready();
  // A kernel may ask for its architecture's arch-specific features (wgmma: sm_90a), which
  // only that architecture runs.
  const std::string own_arch = "--gpu-architecture=sm_" + std::to_string(options.arch);
  std::vector<std::string> opts = {"-default-device"};
  bool has_std = false, has_arch = false;
  for (const std::string& o : options.extra) {
    has_std = has_std || o.rfind("-std=", 0) == 0 || o.rfind("--std=", 0) == 0;
    if (o.rfind("--gpu-architecture=", 0) != 0) continue;
    has_arch = true;
    if (o != own_arch && o != own_arch + "a") {
      const std::string why =
          "'" + program_name + "' was lowered for " + o.substr(19) +
          " (ts::dot on wgmma, which only sm_90 runs), asked for sm_" +
          std::to_string(options.arch) +
          ": tessel lowers for GPU 0 or TESSEL_TARGET_ARCH; set TESSEL_TARGET_ARCH=" +
          std::to_string(options.arch) + " to lower for this GPU";
      throw CompileError(why, why, source);
    }
  }
  if (!has_arch) opts.push_back(own_arch);
  if (!has_std) opts.push_back("-std=c++17");
  for (const std::string& dir : cuda_include_dirs()) opts.push_back("-I" + dir);
  opts.insert(opts.end(), options.extra.begin(), options.extra.end());
  std::vector<const char*> opt_ptrs;
  for (const std::string& o : opts) opt_ptrs.push_back(o.c_str());
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : options.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }

  nvrtcProgram prog = nullptr;
  nvrtcResult r = n.p_nvrtcCreateProgram(&prog, source.c_str(), program_name.c_str(),
                                         static_cast<int>(header_texts.size()), header_texts.data(),
                                         header_names.data());
  if (r != NVRTC_SUCCESS)
    throw RuntimeError("nvrtcCreateProgram failed for '" + program_name +
                       "': " + n.p_nvrtcGetErrorString(r));
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(
      &prog, [](nvrtcProgram* p) { nvrtc().p_nvrtcDestroyProgram(p); });
  ++g_compile_count;
  r = n.p_nvrtcCompileProgram(prog, static_cast<int>(opt_ptrs.size()), opt_ptrs.data());
  size_t log_size = 0;
  n.p_nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) n.p_nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != NVRTC_SUCCESS) {
    std::string shown = log.size() > 8000 ? log.substr(0, 8000) + "\n..." : log;
    throw CompileError("NVRTC could not compile '" + program_name + "' for sm_" +
                           std::to_string(options.arch) + " (" + n.p_nvrtcGetErrorString(r) +
                           "):\n" + shown,
                       log, source);
  }
  size_t size = 0;
  r = n.p_nvrtcGetCUBINSize(prog, &size);
  if (r != NVRTC_SUCCESS || size == 0)
    throw RuntimeError("nvrtcGetCUBINSize failed for '" + program_name +
                       "': " + n.p_nvrtcGetErrorString(r));
  std::string cubin(size, '\0');
  r = n.p_nvrtcGetCUBIN(prog, cubin.data());
  if (r != NVRTC_SUCCESS)
    throw RuntimeError("nvrtcGetCUBIN failed for '" + program_name +
                       "': " + n.p_nvrtcGetErrorString(r));
  if (ptx) {
    size_t ptx_size = 0;
    r = n.p_nvrtcGetPTXSize(prog, &ptx_size);
    if (r == NVRTC_SUCCESS) {
      ptx->assign(ptx_size, '\0');
      r = n.p_nvrtcGetPTX(prog, ptx->data());
    }
    if (r != NVRTC_SUCCESS)
      throw RuntimeError("nvrtcGetPTX failed for '" + program_name +
                         "': " + n.p_nvrtcGetErrorString(r));
    while (!ptx->empty() && ptx->back() == '\0') ptx->pop_back();
  }
  return cubin;
}

int64_t compile_count() { return g_compile_count.load(); }

std::string nvrtc_identity() {
  static const std::string id = [] {
    for (const std::string& home : cuda_homes()) {
      for (const char* name : kNvrtcNames) {
        std::error_code ec;
        fs::path p = fs::canonical(home + "/lib64/" + name, ec);
        if (ec || !fs::exists(p, ec)) continue;
        auto size = fs::file_size(p, ec);
        auto mtime = fs::last_write_time(p, ec).time_since_epoch().count();
        return p.string() + ":" + std::to_string(size) + ":" + std::to_string(mtime);
      }
    }
    return nvrtc_available() ? "nvrtc " + nvrtc_version() : std::string("no nvrtc");
  }();
  return id;
}

}  // namespace tessel::rt
