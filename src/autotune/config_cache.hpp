// Tuned configs on disk: <cache_dir>/configs/<config_key(parts)>.json, one record per
// (kernel, specialization, GPU, versions, tuning settings), written atomically.
#pragma once

#include <optional>
#include <string>

#include "autotune/cache_key.hpp"
#include "tessel/config.hpp"

namespace tessel::autotune {

/// What the autotuner found, as stored.
struct TunedRecord {
  Config config;
  double time_us = 0;  // its measured time (microseconds per call)
  int configs_tried = 0;
  std::string kernel_name;
};

/// The record stored for `parts`; nullopt when there is none, when TESSEL_SKIP_CACHE is
/// set, or when the file is unreadable, malformed or stored for other parts (a hash
/// collision). Never throws.
std::optional<TunedRecord> load_tuned(const ConfigKeyParts& parts);

/// Stores `record` for `parts` (atomic write). Returns false when the cache is disabled
/// or cannot be written; never throws.
bool store_tuned(const ConfigKeyParts& parts, const TunedRecord& record);

}  // namespace tessel::autotune
