#include "autotune/gpu_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "autotune/accuracy.hpp"
#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"

namespace tessel::autotune {

namespace {

int device_of(detail::CallArgs args) {
  for (const detail::CallArg& a : args)
    if (const Buffer* b = detail::buffer_arg(a)) return b->device().index;
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double autotune_timeout_s(const ir::Graph& g, double fallback) {
  const char* v = std::getenv("TESSEL_AUTOTUNE_TIMEOUT");
  const std::string_view text = v ? v : "";
  if (text.empty()) return fallback;
  double s = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), s);
  if (ec != std::errc() || end != text.data() + text.size() || !(s > 0) || !std::isfinite(s))
    throw UserError(
        g.kernel_name, ir::first_loop_loc(g),
        fmt::format("TESSEL_AUTOTUNE_TIMEOUT is '{}', not a number of seconds above 0", text),
        "set it to the seconds one candidate may take to load and run once, e.g. 30 "
        "(default 10), or unset it");
  return s;
}

GpuBackend::GpuBackend(const ir::Graph& g, detail::CallArgs args, const Settings& settings,
                       Config reference_config, std::string kernel, GpuBackendOptions options)
    : graph_(g),
      settings_(settings),
      kernel_(std::move(kernel)),
      reference_config_(std::move(reference_config)),
      options_(std::move(options)),
      device_(device_of(args)),
      arch_(rt::compute_capability(device_)),
      sms_(rt::sm_count(device_)),
      worker_path_(find_worker_executable()),
      shared_(g, args, device_) {
  options_.timeout_s = autotune_timeout_s(g, options_.timeout_s);
  if (options_.compile_threads <= 0)
    options_.compile_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

GpuBackend::~GpuBackend() = default;

void GpuBackend::start_worker() {
  if (worker_path_.empty())
    throw RuntimeError(
        "autotune: the timing worker tessel_bench_worker was not found (set "
        "TESSEL_BENCH_WORKER to its path)");
  if (shared_dirty_) shared_.reset();
  shared_dirty_ = false;
  worker_ = std::make_unique<WorkerProcess>(worker_path_);
  Message setup{{{"op", "setup"}, {"device", device_}, {"flush_bytes", options_.flush_bytes}}, {}};
  nlohmann::json bufs = nlohmann::json::array();
  for (const SharedTensors::Entry& e : shared_.entries()) {
    bufs.push_back({{"handle", setup.blobs.size()}, {"bytes", e.bytes}, {"restore", e.restore}});
    setup.blobs.push_back(e.handle);
  }
  setup.header["buffers"] = bufs;
  std::string failure;
  // CUDA initialization in a new process can take seconds.
  std::optional<Message> r = exchange(setup, std::max(60.0, options_.timeout_s), failure);
  if (!r) throw RuntimeError("autotune: the timing worker could not start: " + failure);
}

std::optional<Message> GpuBackend::exchange(const Message& m, double timeout_s,
                                            std::string& failure) {
  auto gone = [&](const std::string& why) {
    failure = why;
    worker_.reset();
    shared_dirty_ = true;
    return std::nullopt;
  };
  if (!worker_->send(m)) return gone("the timing worker died: " + worker_->reap(2));
  Message reply;
  switch (worker_->receive(timeout_s, reply)) {
    case ReadStatus::ok:
      break;
    case ReadStatus::timeout:
      return gone(fmt::format("timed out after {:g} s (a hung or very slow kernel); the worker {}",
                              timeout_s, worker_->kill()));
    case ReadStatus::closed:
    case ReadStatus::malformed:
      return gone("the timing worker died: it " + worker_->reap(2));
  }
  if (reply.header.value("op", "") == "error") {
    std::string what = reply.header.value("message", "unknown error");
    if (reply.header.value("fatal", true))
      return gone(what + " (CUDA context lost; worker " + worker_->reap(2) + ")");
    failure = what;
    return std::nullopt;
  }
  return reply;
}

std::optional<Message> GpuBackend::run_message(const BuiltCandidate& c, std::string& failure) {
  std::optional<rt::HostEnv> env = shared_.env(*c.graph);
  if (!env) {
    failure = "its tunables change the kernel's allocations, which the autotuner cannot measure";
    return std::nullopt;
  }
  Message m{{{"op", "run"}, {"id", next_id_++}}, {}};
  nlohmann::json launches = nlohmann::json::array();
  for (size_t i = 0; i < c.kernels.size(); ++i) {
    const auto& [loop, k] = c.kernels[i];
    rt::LaunchPlan plan;
    rt::LaunchAbi abi = rt::make_launch_abi(k);
    try {
      int programs =
          k.grid.persistent ? rt::persistent_grid(settings_, c.config, sms_, kernel_) : 0;
      rt::plan_launch(*c.graph, loop, k, abi, *env, programs, plan);
    } catch (const Error& e) {
      failure = e.what();
      return std::nullopt;
    }
    if (plan.empty) continue;
    nlohmann::json params = nlohmann::json::array();
    for (size_t p = 0; p < k.params.size(); ++p) {
      if (k.params[p].kind == codegen::Param::tensor_map) {
        // The worker encodes it for its own mapping of the tensor's buffer.
        const rt::AbiSlot& slot = abi.slots[p];
        const Buffer& t = slot.arg >= 0 ? *env->arg_buffers[slot.arg] : env->tensor(slot.node);
        if (t.numel() == 0) {
          params.push_back({{"zero_map", true}});
          continue;
        }
        rt::TensorMapSpec spec =
            rt::tensor_map_spec(t, slot.tma_dims, slot.tma_box, slot.tma_swizzle);
        std::optional<std::pair<int, int64_t>> where =
            shared_.locate(reinterpret_cast<uint64_t>(spec.base));
        if (!where) {
          failure = "a tensor descriptor's tensor is not in memory the autotuner shares";
          return std::nullopt;
        }
        params.push_back(
            {{"map",
              {{"buf", where->first},
               {"off", where->second},
               {"elem", spec.elem_bytes},
               {"sizes", std::vector<uint64_t>(spec.sizes, spec.sizes + spec.rank)},
               {"strides", std::vector<uint64_t>(spec.strides, spec.strides + spec.rank)},
               {"box", std::vector<uint32_t>(spec.box, spec.box + spec.rank)},
               {"swizzle", spec.swizzle}}}});
        continue;
      }
      if (k.params[p].kind == codegen::Param::split_workspace) {  // the worker allocates it
        const rt::SplitWorkspace w = rt::split_workspace(plan, k);
        params.push_back({{"workspace", w.bytes}, {"zeroed_from", w.counters_at}});
        continue;
      }
      bool pointer = k.params[p].kind == codegen::Param::tensor_ptr ||
                     k.params[p].kind == codegen::Param::device_ptr;
      std::optional<std::pair<int, int64_t>> where =
          pointer ? shared_.locate(plan.bits(abi.slots[p])) : std::nullopt;
      if (where)
        params.push_back({{"buf", where->first}, {"off", where->second}});
      else
        params.push_back({{"v", plan.bits(abi.slots[p])}});
    }
    launches.push_back({{"cubin", m.blobs.size()},
                        {"kernel", k.name},
                        {"grid", {plan.grid[0], plan.grid[1], plan.grid[2]}},
                        {"threads", plan.threads},
                        {"shared", plan.shared_bytes},
                        {"params", params}});
    m.blobs.push_back(c.cubins.at(i));
  }
  m.header["launches"] = launches;
  return m;
}

void GpuBackend::ensure_reference() {
  if (have_reference_) return;
  std::vector<std::future<BuiltCandidate>> built =
      build_candidates({reference_config_}, options_.graph_for, arch_, 1);
  BuiltCandidate c = built[0].get();
  std::string failure = c.failure;
  std::optional<Message> run = failure.empty() ? run_message(c, failure) : std::nullopt;
  if (run) {
    if (!worker_) start_worker();
    if (exchange(*run, options_.timeout_s, failure)) {
      for (const Buffer& out : shared_.checked(*c.graph)) {
        Buffer copy = Buffer::empty(out.shape(), out.dtype(), out.device(), {});
        copy.copy_from(out, {});
        reference_.push_back(copy);
      }
      for (size_t i = 0; i < options_.reference.size() && i < reference_.size(); ++i)
        reference_[i] = options_.reference[i];
      rt::stream_synchronize();
      have_reference_ = true;
      return;
    }
  }
  throw RuntimeError("autotune: the default config " + reference_config_.to_json() +
                     " failed, so candidates cannot be checked: " + failure);
}

Measurement GpuBackend::measure_one(const BuiltCandidate& c) {
  if (!c.failure.empty()) return Measurement::failure(c.failure);
  std::string failure;
  std::optional<Message> run = run_message(c, failure);
  if (!run) return Measurement::failure(failure);
  if (!worker_) start_worker();
  std::optional<Message> ran = exchange(*run, options_.timeout_s, failure);
  if (!ran) return Measurement::failure(failure);
  std::string mismatch = compare_outputs(shared_.checked(*c.graph), reference_);
  if (!mismatch.empty()) return Measurement::rejection(mismatch);
  double once_ms = std::max(1e-3, ran->header.value("ms", 1.0));
  // Far slower than the best so far even counting a cold first run: it cannot win, so
  // its single run is its score (saves the repeats of hopeless configs).
  if (once_ms * 1000 > 3 * best_us_) return Measurement::success(once_ms * 1000);
  int reps = std::clamp(static_cast<int>(std::ceil(options_.target_ms / once_ms)),
                        options_.min_reps, options_.max_reps);
  Message time{{{"op", "time"}, {"id", run->header["id"]}, {"reps", reps}}, {}};
  std::optional<Message> timed =
      exchange(time, options_.timeout_s + reps * (4 * once_ms + 1) / 1000, failure);
  if (!timed) return Measurement::failure(failure);
  std::vector<double> ms = timed->header.value("ms", std::vector<double>{});
  if (ms.empty()) return Measurement::failure("the worker returned no times");
  double us = median(ms) * 1000.0;
  best_us_ = std::min(best_us_, us);
  return Measurement::success(us);
}

std::vector<Measurement> GpuBackend::measure(const std::vector<Config>& configs, const Done& done) {
  rt::set_device(device_);
  ensure_reference();
  std::vector<std::future<BuiltCandidate>> built =
      build_candidates(configs, options_.graph_for, arch_, options_.compile_threads);
  std::vector<Measurement> out;
  for (size_t i = 0; i < built.size(); ++i) {
    BuiltCandidate c = built[i].get();  // timing overlaps the later compilations
    if (options_.tamper && c.failure.empty()) options_.tamper(c);
    out.push_back(measure_one(c));
    done(i, out.back());
  }
  return out;
}

}  // namespace tessel::autotune
