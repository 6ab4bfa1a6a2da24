// The on-disk cache's location and its file primitives. Files are written atomically
// (a temporary name in the same directory, then rename(2)), so a reader sees either no
// file or a complete one, also when several processes write the same key at once; a
// temporary left behind by a crash is never read (readers only open final names).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

/// The cache directory: $TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else
/// $HOME/.cache/tessel; empty when none of the variables is set. Read from the
/// environment on every call (cheap; tests change it).
std::filesystem::path cache_dir();

/// True when TESSEL_SKIP_CACHE is on (common/env_bool.hpp: 1, true, on, yes; a value that is
/// no boolean counts as on): nothing is read from or written to the cache.
bool cache_disabled();

/// Writes `bytes` to `path` atomically, creating missing directories. Returns false
/// (never throws) when the file cannot be written; the cache is then simply not filled.
bool write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// The whole content of `path`; nullopt when it does not exist or cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace tessel
