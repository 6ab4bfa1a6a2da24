#include "autotune/config_cache.hpp"

#include <nlohmann/json.hpp>

#include "common/disk_cache.hpp"

namespace tessel::autotune {

using nlohmann::json;

static json parts_json(const ConfigKeyParts& p) {
  return json{{"kernel_hash", p.kernel_hash},       {"spec_key", p.spec_key}, {"gpu", p.gpu},
              {"tessel_version", p.tessel_version}, {"nvrtc", p.nvrtc},       {"tuning", p.tuning}};
}

static std::filesystem::path record_path(const ConfigKeyParts& parts) {
  std::filesystem::path dir = cache_dir();
  if (dir.empty()) return {};
  return dir / "configs" / (config_key(parts) + ".json");
}

std::optional<TunedRecord> load_tuned(const ConfigKeyParts& parts) {
  if (cache_disabled()) return std::nullopt;
  std::filesystem::path path = record_path(parts);
  if (path.empty()) return std::nullopt;
  std::optional<std::string> text = read_file(path);
  if (!text) return std::nullopt;
  try {
    json j = json::parse(*text);
    if (j.at("key") != parts_json(parts)) return std::nullopt;
    TunedRecord r;
    r.config = Config::from_json(j.at("config").dump(), {});
    r.time_us = j.at("time_us").get<double>();
    r.configs_tried = j.at("configs_tried").get<int>();
    r.kernel_name = j.at("kernel").get<std::string>();
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // malformed: treated as absent, overwritten by the next store
  }
}

bool store_tuned(const ConfigKeyParts& parts, const TunedRecord& record) {
  if (cache_disabled()) return false;
  std::filesystem::path path = record_path(parts);
  if (path.empty()) return false;
  json j{{"key", parts_json(parts)},
         {"config", json::parse(record.config.to_json())},
         {"time_us", record.time_us},
         {"configs_tried", record.configs_tried},
         {"kernel", record.kernel_name}};
  return write_file_atomic(path, j.dump(2) + "\n");
}

}  // namespace tessel::autotune
