#include "common/disk_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/env_bool.hpp"

namespace tessel {

namespace fs = std::filesystem;

static std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

fs::path cache_dir() {
  if (std::string d = env("TESSEL_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return fs::path(d) / "tessel";
  if (std::string d = env("HOME"); !d.empty()) return fs::path(d) / ".cache" / "tessel";
  return {};
}

bool cache_disabled() {
  // A value that is no boolean was refused at the kernel's trace (KernelImpl): on.
  return parse_env_bool(std::getenv("TESSEL_SKIP_CACHE")).value_or(true);
}

bool write_file_atomic(const fs::path& path, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return false;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

}  // namespace tessel
