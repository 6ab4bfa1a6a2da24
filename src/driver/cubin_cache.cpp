#include "driver/cubin_cache.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include "common/disk_cache.hpp"

namespace tessel::rt {

namespace {

// Feeds length-prefixed fields into one XXH3-128 state, so field boundaries matter.
class Hasher {
 public:
  Hasher() { XXH3_128bits_reset(state_); }
  ~Hasher() { XXH3_freeState(state_); }
  Hasher(const Hasher&) = delete;
  void add(std::string_view s) {
    uint64_t n = s.size();
    XXH3_128bits_update(state_, &n, sizeof(n));
    XXH3_128bits_update(state_, s.data(), s.size());
  }
  std::string hex() const {
    XXH128_hash_t h = XXH3_128bits_digest(state_);
    return fmt::format("{:016x}{:016x}", h.high64, h.low64);
  }

 private:
  XXH3_state_t* state_ = XXH3_createState();
};

constexpr std::string_view kMagic = "tessel-cubin-1 ";

}  // namespace

std::string cubin_key(const std::string& source, const std::string& program_name,
                      const rt::CompileOptions& options) {
  Hasher h;
  h.add(source);
  h.add(program_name);
  h.add(std::to_string(options.arch));
  for (const std::string& o : options.extra) h.add(o);
  for (const auto& [name, text] : options.headers) {
    h.add(name);
    h.add(text);
  }
  h.add(rt::nvrtc_identity());
  return h.hex();
}

std::string compile_cached(const std::string& source, const std::string& program_name,
                           const rt::CompileOptions& options) {
  std::filesystem::path dir = cache_dir();
  if (cache_disabled() || dir.empty()) return rt::compile_cuda(source, program_name, options);
  std::filesystem::path path =
      dir / "cubins" / (cubin_key(source, program_name, options) + ".cubin");
  if (std::optional<std::string> file = read_file(path)) {
    // "<magic><16 hex digits>\n<cubin>"
    size_t header = kMagic.size() + 17;
    if (file->size() > header && file->compare(0, kMagic.size(), kMagic) == 0 &&
        (*file)[header - 1] == '\n') {
      std::string_view cubin(file->data() + header, file->size() - header);
      if (fmt::format("{:016x}", XXH3_64bits(cubin.data(), cubin.size())) ==
          file->substr(kMagic.size(), 16))
        return std::string(cubin);
    }
  }
  std::string cubin = rt::compile_cuda(source, program_name, options);
  std::string file = fmt::format("{}{:016x}\n", kMagic, XXH3_64bits(cubin.data(), cubin.size()));
  file += cubin;
  write_file_atomic(path, file);
  return cubin;
}

}  // namespace tessel::rt
