// tessel_bench_worker: the child process in which the autotuner runs and times
// candidate kernels, so that a hung kernel, a crash or a sticky CUDA error (an illegal
// address poisons the whole CUDA context) ends this process and never the user's.
// Protocol: autotune/worker_protocol.hpp. It creates its own CUDA context and maps the
// parent's copies of the call's tensors through CUDA IPC (no copy, the same data).
// Not linked into libtessel (CMakeLists.txt excludes this file from the library).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "autotune/worker_protocol.hpp"
#include "driver/cuda_api.hpp"

namespace rt = tessel::rt;
using nlohmann::json;
using tessel::autotune::Message;

namespace {

struct Shared {
  void* ptr = nullptr;  // the parent's memory, mapped here
  int64_t bytes = 0;
  void* snapshot = nullptr;  // private copy restored before every run (restore = true)
};

struct Launch {
  rt::Function fn;
  unsigned grid[3] = {1, 1, 1};
  unsigned threads = 1;
  int shared = 0;
  /// Each parameter's bytes: a value or pointer in the first word, a CUtensorMap in all.
  struct alignas(64) Param {
    uint64_t words[16] = {};
  };
  std::vector<Param> params;
  /// A split-K kernel's workspace (the worker's own; its counters zeroed once: each
  /// launch's last programs reset them).
  std::shared_ptr<void> workspace;
};

class Worker {
 public:
  json setup(const Message& m) {
    device_ = m.header.at("device").get<int>();
    rt::set_device(device_);
    const json& bufs = m.header.at("buffers");
    for (const json& b : bufs) {
      Shared s;
      s.bytes = b.at("bytes").get<int64_t>();
      s.ptr = rt::ipc_open(m.blobs.at(b.at("handle").get<size_t>()), device_);
      if (b.at("restore").get<bool>()) {
        s.snapshot = rt::device_alloc(s.bytes, device_);
        rt::memcpy_dtod(s.snapshot, s.ptr, s.bytes);
      }
      shared_.push_back(s);
    }
    flush_bytes_ = m.header.at("flush_bytes").get<int64_t>();
    if (flush_bytes_ > 0) flush_ = rt::device_alloc(flush_bytes_, device_);
    rt::device_synchronize(device_);
    return {{"op", "ready"}};
  }

  json run(const Message& m) {
    launches_.clear();
    for (const json& l : m.header.at("launches")) {
      Launch x;
      x.fn = rt::load_function(m.blobs.at(l.at("cubin").get<size_t>()),
                               l.at("kernel").get<std::string>(), device_);
      for (int d = 0; d < 3; ++d) x.grid[d] = l.at("grid").at(d).get<unsigned>();
      x.threads = l.at("threads").get<unsigned>();
      x.shared = l.at("shared").get<int>();
      for (const json& p : l.at("params")) {
        Launch::Param& v = x.params.emplace_back();
        if (p.contains("v")) {
          v.words[0] = p.at("v").get<uint64_t>();
        } else if (p.contains("workspace")) {
          const int64_t bytes = p.at("workspace").get<int64_t>();
          const int64_t zeroed = p.at("zeroed_from").get<int64_t>();
          const int device = device_;
          x.workspace.reset(rt::device_alloc(bytes, device), [device, bytes](void* w) {
            rt::device_free(w, device, nullptr, bytes);
          });
          rt::memset_d8(static_cast<char*>(x.workspace.get()) + zeroed, 0, bytes - zeroed);
          v.words[0] = reinterpret_cast<uint64_t>(x.workspace.get());
        } else if (p.contains("map")) {
          const json& m = p.at("map");
          rt::TensorMapSpec spec;
          spec.elem_bytes = m.at("elem").get<int>();
          spec.rank = static_cast<int>(m.at("sizes").size());
          spec.swizzle = m.value("swizzle", 0);
          spec.base = static_cast<char*>(shared_.at(m.at("buf").get<size_t>()).ptr) +
                      m.at("off").get<int64_t>();
          for (int j = 0; j < spec.rank && j < 5; ++j) {
            spec.sizes[j] = m.at("sizes").at(j).get<uint64_t>();
            spec.strides[j] = m.at("strides").at(j).get<uint64_t>();
            spec.box[j] = m.at("box").at(j).get<uint32_t>();
          }
          rt::encode_tensor_map(spec, v.words);
        } else if (!p.contains("zero_map")) {
          const Shared& s = shared_.at(p.at("buf").get<size_t>());
          v.words[0] = reinterpret_cast<uint64_t>(s.ptr) + p.at("off").get<uint64_t>();
        }
      }
      launches_.push_back(std::move(x));
    }
    events(1);
    restore();
    rt::event_record(start_[0]);
    launch_all();
    rt::event_record(end_[0]);
    float ms = rt::event_elapsed_ms(start_[0], end_[0]);
    rt::device_synchronize(device_);  // surfaces a fault of the kernel
    return {{"op", "ran"}, {"id", m.header.at("id")}, {"ms", ms}};
  }

  json time(const Message& m) {
    int reps = m.header.at("reps").get<int>();
    events(reps);
    for (int r = 0; r < reps; ++r) {
      restore();
      if (flush_) rt::memset_d8(flush_, static_cast<uint8_t>(r), flush_bytes_);
      rt::event_record(start_[r]);
      launch_all();
      rt::event_record(end_[r]);
    }
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) ms.push_back(rt::event_elapsed_ms(start_[r], end_[r]));
    rt::device_synchronize(device_);
    return {{"op", "timed"}, {"id", m.header.at("id")}, {"ms", ms}};
  }

  /// False when the CUDA context is unusable (a sticky error).
  bool context_ok() {
    try {
      rt::device_synchronize(device_);
      return true;
    } catch (...) {
      return false;
    }
  }

 private:
  void events(int n) {
    while (static_cast<int>(start_.size()) < n) {
      start_.push_back(rt::event_create());
      end_.push_back(rt::event_create());
    }
  }
  void restore() {
    for (const Shared& s : shared_)
      if (s.snapshot) rt::memcpy_dtod(s.ptr, s.snapshot, s.bytes);
  }
  void launch_all() {
    std::vector<void*> ptrs;
    for (Launch& l : launches_) {
      ptrs.resize(l.params.size());
      for (size_t i = 0; i < l.params.size(); ++i) ptrs[i] = l.params[i].words;
      rt::launch(l.fn, l.grid[0], l.grid[1], l.grid[2], l.threads, l.shared, nullptr, ptrs.data());
    }
  }

  int device_ = 0;
  std::vector<Shared> shared_;
  void* flush_ = nullptr;
  int64_t flush_bytes_ = 0;
  std::vector<Launch> launches_;
  std::vector<void*> start_, end_;
};

}  // namespace

int main(int argc, char** argv) {
  int fd = 3;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--socket-fd=", 12) == 0) fd = std::atoi(argv[i] + 12);
  Worker w;
  for (;;) {
    Message m;
    if (tessel::autotune::receive_message(fd, -1, m) != tessel::autotune::ReadStatus::ok) return 0;
    std::string op = m.header.value("op", "");
    if (op == "quit") return 0;
    json reply;
    try {
      if (op == "setup")
        reply = w.setup(m);
      else if (op == "run")
        reply = w.run(m);
      else if (op == "time")
        reply = w.time(m);
      else
        reply = {{"op", "error"}, {"message", "unknown op '" + op + "'"}, {"fatal", false}};
    } catch (const std::exception& e) {
      bool fatal = op == "setup" || !w.context_ok();
      reply = {{"op", "error"}, {"message", e.what()}, {"fatal", fatal}};
      if (m.header.contains("id")) reply["id"] = m.header["id"];
      tessel::autotune::send_message(fd, Message{reply, {}});
      if (fatal) {
        std::fprintf(stderr, "tessel_bench_worker: %s\n", e.what());
        _exit(3);
      }
      continue;
    }
    if (!tessel::autotune::send_message(fd, Message{reply, {}})) return 0;
  }
}
