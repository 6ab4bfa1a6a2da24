// Config <-> JSON and C++ initializer text.
#include "tessel/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "tessel/error.hpp"

namespace tessel {

using nlohmann::json;

static const char* kPidNames[] = {"flat", "xyz", "persistent_blocked", "persistent_interleaved"};

std::string pid_type_name(PidType p) {
  if (static_cast<unsigned>(p) >= 4)
    throw UserError("", {}, fmt::format("PidType value {} is not a pid type", static_cast<int>(p)),
                    "use ts::PidType::flat, xyz, persistent_blocked or persistent_interleaved");
  return kPidNames[static_cast<int>(p)];
}

static const char* kEvictNames[] = {"", "first", "last"};

std::string eviction_policy_name(EvictionPolicy p) {
  if (static_cast<unsigned>(p) >= 3)
    throw UserError(
        "", {},
        fmt::format("EvictionPolicy value {} is not one of none, first, last", static_cast<int>(p)),
        "use ts::EvictionPolicy::none, first or last");
  return kEvictNames[static_cast<int>(p)];
}

static EvictionPolicy eviction_from_name(const std::string& s, SourceLoc loc) {
  for (int i = 0; i < 3; ++i)
    if (s == kEvictNames[i]) return static_cast<EvictionPolicy>(i);
  throw UserError("", loc, fmt::format("unknown load eviction policy '{}'", s),
                  "use \"\", \"first\" or \"last\"");
}

static PidType pid_from_name(const std::string& s, SourceLoc loc) {
  for (int i = 0; i < 4; ++i)
    if (s == kPidNames[i]) return static_cast<PidType>(i);
  throw UserError("", loc, fmt::format("unknown pid_type '{}'", s),
                  "use flat, xyz, persistent_blocked or persistent_interleaved");
}

std::string Config::to_json() const {
  json j = json::object();
  if (block_sizes) j["block_sizes"] = *block_sizes;
  if (num_warps) j["num_warps"] = *num_warps;
  if (num_stages) j["num_stages"] = *num_stages;
  if (maxnreg) j["maxnreg"] = *maxnreg;
  if (pid_type) j["pid_type"] = pid_type_name(*pid_type);
  if (num_sm_multiplier) j["num_sm_multiplier"] = *num_sm_multiplier;
  if (split_k) j["split_k"] = *split_k;
  if (warp_specialize) j["warp_specialize"] = *warp_specialize;
  if (loop_orders) j["loop_orders"] = *loop_orders;
  if (flatten_loops) j["flatten_loops"] = *flatten_loops;
  if (l2_groupings) j["l2_groupings"] = *l2_groupings;
  if (reduction_loops) {
    json r = json::array();
    for (const auto& v : *reduction_loops) r.push_back(v ? json(*v) : json(nullptr));
    j["reduction_loops"] = r;
  }
  if (indexing) j["indexing"] = *indexing;
  if (load_eviction_policies) {
    json r = json::array();
    for (EvictionPolicy p : *load_eviction_policies) r.push_back(eviction_policy_name(p));
    j["load_eviction_policies"] = r;
  }
  if (tunables) j["tunables"] = *tunables;
  return j.dump();
}

Config Config::from_json(const std::string& text, std::source_location at) {
  const SourceLoc loc = SourceLoc::from(at);  // the caller's line, where errors point
  json j;
  // Keys seen per open object: a repeated key is an error, not "the last one wins".
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto track = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end) keys.pop_back();
    if (event == json::parse_event_t::key &&
        !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  try {
    j = json::parse(text, track);
  } catch (const json::exception& e) {
    throw UserError("", loc, fmt::format("malformed config JSON: {}", e.what()),
                    "pass the text printed by Config::to_json()");
  }
  if (!duplicate.empty())
    throw UserError("", loc, fmt::format("config JSON has the key '{}' twice", duplicate),
                    "give each key once");
  if (!j.is_object()) throw UserError("", loc, "a config must be a JSON object");
  Config c;
  // Integers must be JSON integers in range (no silent truncation of 4.5 or 1e10).
  auto integer = [&](const json& v, const std::string& key, int64_t lo, int64_t hi) -> int64_t {
    if (!v.is_number_integer())
      throw UserError("", loc, fmt::format("config key '{}' needs integers, got {}", key, v.dump()),
                      "use the text printed by Config::to_json()");
    int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                    ? hi + 1
                    : v.get<int64_t>();
    if (x < lo || x > hi)
      throw UserError(
          "", loc,
          fmt::format("config key '{}': {} is out of range [{}, {}]", key, v.dump(), lo, hi),
          "ts::Config documents each key's values (include/tessel/config.hpp)");
    return x;
  };
  auto int32 = [&](const json& v, const std::string& key) {
    return static_cast<int>(integer(v, key, INT32_MIN, INT32_MAX));
  };
  auto list = [&](const json& v, const std::string& key) -> const json& {
    if (!v.is_array())
      throw UserError("", loc, fmt::format("config key '{}' needs a list", key),
                      "use the text printed by Config::to_json()");
    return v;
  };
  auto int64s = [&](const json& v, const std::string& key) {
    std::vector<int64_t> out;
    for (const json& e : list(v, key)) out.push_back(integer(e, key, INT64_MIN, INT64_MAX));
    return out;
  };
  auto int32s = [&](const json& v, const std::string& key) {
    std::vector<int> out;
    for (const json& e : list(v, key)) out.push_back(int32(e, key));
    return out;
  };
  for (auto& [key, v] : j.items()) {
    try {
      if (key == "block_sizes")
        c.block_sizes = int64s(v, key);
      else if (key == "num_warps")
        c.num_warps = int32(v, key);
      else if (key == "num_stages")
        c.num_stages = int32(v, key);
      else if (key == "maxnreg")
        c.maxnreg = int32(v, key);
      else if (key == "pid_type")
        c.pid_type = pid_from_name(v.get<std::string>(), loc);
      else if (key == "num_sm_multiplier")
        c.num_sm_multiplier = int32(v, key);
      else if (key == "split_k")
        c.split_k = int32(v, key);
      else if (key == "warp_specialize") {
        if (!v.is_boolean())
          throw UserError(
              "", loc,
              fmt::format("config key 'warp_specialize' needs true or false, got {}", v.dump()),
              "use the text printed by Config::to_json()");
        c.warp_specialize = v.get<bool>();
      } else if (key == "loop_orders") {
        std::vector<std::vector<int>> orders;
        for (const json& e : list(v, key)) orders.push_back(int32s(e, key));
        c.loop_orders = orders;
      } else if (key == "flatten_loops")
        c.flatten_loops = v.get<std::vector<bool>>();
      else if (key == "l2_groupings")
        c.l2_groupings = int32s(v, key);
      else if (key == "reduction_loops") {
        std::vector<std::optional<int64_t>> r;
        for (const json& e : list(v, key))
          r.push_back(e.is_null() ? std::nullopt
                                  : std::optional<int64_t>(integer(e, key, 1, INT64_MAX)));
        c.reduction_loops = r;
      } else if (key == "indexing") {
        // One strategy for every memory op may be given as a string (Helion's form).
        std::vector<std::string> r = v.is_string() ? std::vector<std::string>{v.get<std::string>()}
                                                   : v.get<std::vector<std::string>>();
        for (const std::string& e : r)
          if (e != "pointer" && e != "tensor_descriptor")
            throw UserError("", loc,
                            fmt::format("config key 'indexing': \"{}\" is not supported", e),
                            "use \"pointer\" or \"tensor_descriptor\" (TMA loads)");
        c.indexing = r;
      } else if (key == "load_eviction_policies") {
        std::vector<EvictionPolicy> r;
        for (const std::string& e : v.get<std::vector<std::string>>())
          r.push_back(eviction_from_name(e, loc));
        c.load_eviction_policies = r;
      } else if (key == "tunables") {
        if (!v.is_object())
          throw UserError("", loc, "config key 'tunables' needs an object of name: integer");
        std::map<std::string, int64_t> t;
        for (auto& [name, value] : v.items())
          t[name] = integer(value, "tunables." + name, INT64_MIN, INT64_MAX);
        c.tunables = t;
      } else
        throw UserError(
            "", loc, fmt::format("unknown config key '{}'", key),
            "keys are block_sizes, num_warps, num_stages, maxnreg, pid_type, num_sm_multiplier, "
            "split_k, warp_specialize, loop_orders, flatten_loops, l2_groupings, reduction_loops, "
            "indexing, "
            "load_eviction_policies, "
            "tunables");
    } catch (const json::exception& e) {
      throw UserError(
          "", loc, fmt::format("config key '{}' has a value of the wrong type: {}", key, e.what()),
          "ts::Config documents each key's values (include/tessel/config.hpp)");
    }
  }
  return c;
}

std::string Config::to_cpp() const {
  std::vector<std::string> parts;
  auto list = [](const auto& v) { return fmt::format("{{{}}}", fmt::join(v, ", ")); };
  if (block_sizes) parts.push_back(".block_sizes = std::vector<int64_t>" + list(*block_sizes));
  if (num_warps) parts.push_back(fmt::format(".num_warps = {}", *num_warps));
  if (num_stages) parts.push_back(fmt::format(".num_stages = {}", *num_stages));
  if (maxnreg) parts.push_back(fmt::format(".maxnreg = {}", *maxnreg));
  if (pid_type) parts.push_back(".pid_type = ts::PidType::" + pid_type_name(*pid_type));
  if (num_sm_multiplier)
    parts.push_back(fmt::format(".num_sm_multiplier = {}", *num_sm_multiplier));
  if (split_k) parts.push_back(fmt::format(".split_k = {}", *split_k));
  if (warp_specialize)
    parts.push_back(fmt::format(".warp_specialize = {}", *warp_specialize ? "true" : "false"));
  if (loop_orders) {
    std::vector<std::string> o;
    for (const auto& v : *loop_orders) o.push_back(list(v));
    parts.push_back(".loop_orders = std::vector<std::vector<int>>" + list(o));
  }
  if (flatten_loops) parts.push_back(".flatten_loops = std::vector<bool>" + list(*flatten_loops));
  if (l2_groupings) parts.push_back(".l2_groupings = std::vector<int>" + list(*l2_groupings));
  if (reduction_loops) {
    std::vector<std::string> r;
    for (const auto& v : *reduction_loops) r.push_back(v ? std::to_string(*v) : "std::nullopt");
    parts.push_back(".reduction_loops = std::vector<std::optional<int64_t>>" + list(r));
  }
  if (indexing) {
    std::vector<std::string> r;
    for (const auto& v : *indexing) r.push_back(json(v).dump());
    parts.push_back(".indexing = std::vector<std::string>" + list(r));
  }
  if (load_eviction_policies) {
    std::vector<std::string> r;
    for (EvictionPolicy p : *load_eviction_policies)
      r.push_back("ts::EvictionPolicy::" +
                  (p == EvictionPolicy::none ? std::string("none") : eviction_policy_name(p)));
    parts.push_back(".load_eviction_policies = std::vector<ts::EvictionPolicy>" + list(r));
  }
  if (tunables) {
    std::vector<std::string> r;
    for (const auto& [name, v] : *tunables)
      r.push_back(fmt::format("{{{}, {}}}", json(name).dump(), v));
    parts.push_back(".tunables = std::map<std::string, int64_t>" + list(r));
  }
  return fmt::format("ts::Config{{{}}}", fmt::join(parts, ", "));
}

}  // namespace tessel
