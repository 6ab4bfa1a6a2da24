#include "autotune/cache_key.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include "codegen/embedded.hpp"
#include "driver/cuda_api.hpp"

#ifndef TESSEL_VERSION
#define TESSEL_VERSION "unknown"
#endif

namespace tessel::autotune {

namespace {

// Bump when generated code changes enough that tuned configs should be redone.
constexpr const char* kCodegenVersion = "tessel-codegen-1";

std::string hash128(std::string_view s) {
  XXH128_hash_t h = XXH3_128bits(s.data(), s.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

// Length-prefixed concatenation, so that field boundaries are part of the hash input.
void field(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
  out += ';';
}

}  // namespace

std::string codegen_version() {
  static const std::string v = [] {
    std::string all;
    for (const auto& [name, text] : embedded_headers()) {
      field(all, name);
      field(all, text);
    }
    return std::string(kCodegenVersion) + "+" + hash128(all).substr(0, 16);
  }();
  return v;
}

std::string kernel_content_hash(const ir::Graph& g) {
  std::string text;
  field(text, ir::print(g, /*names=*/false));  // names change no config's speed
  field(text, codegen_version());
  return hash128(text);
}

std::string gpu_description(int device) {
  // Code lowered for another architecture (TESSEL_TARGET_ARCH) is tuned apart.
  const int cc = rt::compute_capability(device), target = rt::target_arch();
  return fmt::format("{} sm_{}{}", rt::device_name(device), cc,
                     target == cc ? "" : fmt::format(" lowered for sm_{}", target));
}

ConfigKeyParts config_key_parts(const ir::Graph& g, const std::string& spec_key,
                                const Settings& settings, const std::string& gpu) {
  ConfigKeyParts p;
  p.kernel_hash = kernel_content_hash(g);
  p.spec_key = spec_key;
  p.gpu = gpu;
  p.tessel_version = TESSEL_VERSION;
  p.nvrtc = rt::nvrtc_identity();
  AutotuneEffort effort = settings.autotune_effort.value_or(AutotuneEffort::none);
  p.tuning = fmt::format(
      "effort={} overrides={} max_sms={} reserved_sms={}", static_cast<int>(effort),
      settings.autotune_config_overrides ? settings.autotune_config_overrides->to_json() : "",
      settings.max_sms.value_or(0), settings.reserved_sms.value_or(0));
  return p;
}

std::string config_key(const ConfigKeyParts& p) {
  std::string all;
  for (const std::string* s :
       {&p.kernel_hash, &p.spec_key, &p.gpu, &p.tessel_version, &p.nvrtc, &p.tuning})
    field(all, *s);
  return hash128(all);
}

}  // namespace tessel::autotune
