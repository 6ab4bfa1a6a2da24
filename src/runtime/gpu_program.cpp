#include "runtime/gpu_program.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "codegen/embedded.hpp"

namespace tessel::rt {

GpuProgram::GpuProgram(const ir::Graph& g, const Config& config, const Settings& settings)
    : graph_(g), config_(config), settings_(settings) {}

const codegen::CudaKernel& GpuProgram::kernel(const ir::Node* loop) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = loops_[loop];
  if (!slot) {
    slot = std::make_unique<Compiled>();
    slot->kernel = codegen::generate_cuda(graph_, loop, config_, graph_.index_dtype);
  }
  return slot->kernel;
}

static bool print_code_requested(const Settings& s) {
  const char* v = std::getenv("TESSEL_PRINT_CODE");
  return s.print_output_code.value_or(false) || (v && *v && std::string(v) != "0");
}

// Turns an NVRTC failure into a UserError at the user's line: generated statements end
// with a `// file:line` comment naming the user's source line they come from.
[[noreturn]] static void report_compile_error(const std::string& kernel, const CompileError& e,
                                              const std::string& source) {
  std::smatch m;
  int line = 0;
  if (std::regex_search(e.log, m, std::regex(R"(\((\d+)\): error)"))) line = std::stoi(m[1]);
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string generated = line > 0 && line <= static_cast<int>(lines.size()) ? lines[line - 1] : "";
  std::string where;
  for (int l = line; l > 0 && where.empty(); --l) {
    std::smatch lm;
    if (std::regex_search(lines[l - 1], lm, std::regex(R"(// (\S+:\d+)$)"))) where = lm[1];
  }
  throw UserError(kernel, {},
                  fmt::format("NVRTC could not compile the generated CUDA{}: {}\n  generated line {}: {}",
                              where.empty() ? "" : " for the code at " + where, e.log, line,
                              generated),
                  "this is a tessel code generation bug or an unsupported construct; print the "
                  "code with TESSEL_PRINT_CODE=1 and report it");
}

GpuProgram::Compiled& GpuProgram::compiled(const ir::Node* loop, int device) {
  kernel(loop);
  std::lock_guard<std::mutex> lock(mu_);
  Compiled& c = *loops_[loop];
  if (c.loaded && c.fn.device == device) return c;
  if (print_code_requested(settings_)) std::cerr << c.kernel.source << std::flush;
  CompileOptions opts;
  opts.arch = compute_capability(device);
  opts.headers = embedded_headers();
  std::string cubin;
  try {
    cubin = compile_cuda(c.kernel.source, c.kernel.name + ".cu", opts);
  } catch (const CompileError& e) {
    report_compile_error(graph_.kernel_name, e, c.kernel.source);
  }
  c.fn = load_function(cubin, c.kernel.name, device);
  c.loaded = true;
  return c;
}

void GpuProgram::launch(const ir::Node* loop, HostEnv& env) {
  Compiled& c = compiled(loop, env.device.index);
  const codegen::CudaKernel& k = c.kernel;
  // Parameter values, then pointers to them (cuLaunchKernel's kernelParams).
  std::vector<uint64_t> storage(k.params.size());
  std::vector<void*> ptrs(k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    const codegen::Param& p = k.params[i];
    void* slot = &storage[i];
    switch (p.kind) {
      case codegen::Param::tensor_ptr: {
        void* ptr = env.tensor(p.node).data_ptr();
        std::memcpy(slot, &ptr, sizeof(ptr));
        break;
      }
      case codegen::Param::device_ptr: {
        const Buffer& t = env.tensor(p.node->args[0]);
        int64_t off = 0;
        for (size_t d = 1; d < p.node->args.size(); ++d) {
          int64_t i = env.eval_int(p.node->args[d]);
          if (i < 0 || i >= t.size(static_cast<int>(d - 1)))
            throw UserError(graph_.kernel_name, p.node->loc,
                            fmt::format("device scalar index {} is out of range for a dimension of size {}",
                                        i, t.size(static_cast<int>(d - 1))),
                            "index within the tensor's shape");
          off += i * t.stride(static_cast<int>(d - 1));
        }
        void* ptr = static_cast<char*>(t.data_ptr()) + off * dtype_size(t.dtype());
        std::memcpy(slot, &ptr, sizeof(ptr));
        break;
      }
      case codegen::Param::tensor_size:
      case codegen::Param::tensor_stride:
      case codegen::Param::host_int: {
        int64_t v = p.kind == codegen::Param::host_int ? env.eval_int(p.node)
                    : p.kind == codegen::Param::tensor_size ? env.tensor(p.node).size(p.dim)
                                                            : env.tensor(p.node).stride(p.dim);
        if (p.dtype == DType::i32) {
          int32_t v32 = static_cast<int32_t>(v);
          std::memcpy(slot, &v32, 4);
        } else {
          std::memcpy(slot, &v, 8);
        }
        break;
      }
      case codegen::Param::host_float: {
        float f = static_cast<float>(env.eval(p.node).as_double());
        std::memcpy(slot, &f, 4);
        break;
      }
    }
    ptrs[i] = slot;
  }
  unsigned gx = 1, gy = 1, gz = 1;
  if (k.grid.persistent) {
    gx = static_cast<unsigned>(sm_count(env.device.index) * config_.num_sm_multiplier.value_or(1));
  } else {
    std::vector<int64_t> tiles;
    for (size_t d = 0; d < k.grid.ends.size(); ++d) {
      int64_t extent = env.eval_int(k.grid.ends[d]) - env.eval_int(k.grid.begins[d]);
      tiles.push_back(extent <= 0 ? 0 : (extent + k.grid.blocks[d] - 1) / k.grid.blocks[d]);
    }
    int64_t total = 1;
    for (int64_t t : tiles) total *= t;
    if (total == 0) return;  // an empty loop launches nothing
    if (k.grid.xyz) {
      gx = static_cast<unsigned>(tiles.size() > 0 ? tiles[0] : 1);
      gy = static_cast<unsigned>(tiles.size() > 1 ? tiles[1] : 1);
      gz = static_cast<unsigned>(tiles.size() > 2 ? tiles[2] : 1);
    } else {
      if (total >= (int64_t{1} << 31))
        throw UserError(graph_.kernel_name, loop->loc,
                        fmt::format("the launch needs {} programs, more than a grid can hold", total),
                        "use larger block sizes, or a persistent pid_type");
      gx = static_cast<unsigned>(total);
    }
  }
  rt::launch(c.fn, gx, gy, gz, static_cast<unsigned>(k.threads), k.shared_bytes, env.stream, ptrs.data());
}

}  // namespace tessel::rt
