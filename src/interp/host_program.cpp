#include "interp/host_program.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "driver/bounds_report.hpp"
#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"
#include "interp/interpreter.hpp"

namespace tessel::rt {

std::vector<Buffer> run_host_program(const ir::Graph& g, const Config& config, HostEnv& env,
                                     GpuProgram* gpu) {
  // The interpreter reads host memory: GPU arguments are staged through the host.
  bool staged = !gpu && env.device.is_cuda();
  std::vector<Buffer> originals;
  if (staged) {
    originals = env.arg_buffers;
    for (Buffer& b : env.arg_buffers)
      if (b.defined()) b = b.to(cpu());
  }
  Device alloc_device = staged ? cpu() : env.device;
  // Bounds-checking mode on the GPU: the kernels record the first violation here, read
  // back (synchronizing the stream) after the call.
  Buffer record;
  if (gpu && g.check_bounds) {
    record = Buffer::empty_on_stream({4}, DType::i64, env.device, env.stream);
    record.fill_on_stream(0, env.stream);
    env.check_record = record.data_ptr();
  }
  std::vector<Buffer> outputs;
  for (const ir::Node* n : g.host) {
    switch (n->op) {
      case ir::Op::Alloc: {
        std::vector<int64_t> shape;
        for (const ir::Node* e : n->args) {
          int64_t s = env.eval_int(e);
          if (s < 0)
            throw UserError(g.kernel_name, n->loc,
                            fmt::format("allocation with a negative size {}", s),
                            "check the sizes passed to the allocation");
          shape.push_back(s);
        }
        int64_t numel = 1;
        bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
        for (int64_t s : shape)
          if (!empty && __builtin_mul_overflow(numel, s, &numel))
            throw UserError(g.kernel_name, n->loc,
                            fmt::format("allocation of shape [{}] has more than 2^63 elements",
                                        fmt::join(shape, ", ")),
                            "check the sizes passed to the allocation");
        Buffer b =
            Buffer::empty_on_stream(n->like ? std::vector<int64_t>{empty ? 0 : numel} : shape,
                                    n->dtype, alloc_device, staged ? nullptr : env.stream);
        if (n->ival == ir::fill_value) b.fill_on_stream(n->fval, staged ? nullptr : env.stream);
        // Like an argument: dense, in the argument's stride order (torch's empty_like).
        if (n->like) b = b.view_as_strided(shape, ir::alloc_strides(n, env.args), 0);
        env.allocs[n] = b;
        break;
      }
      case ir::Op::ShapeCheck:
        ir::check_shape(g, n, env.eval_int(n->args[0]), env.eval_int(n->args[1]));
        break;
      case ir::Op::Loop:
        if (gpu)
          gpu->launch(n, env);
        else
          interp::run_loop(g, n, env, config);
        break;
      case ir::Op::Return:
        for (const ir::Node* o : n->args) outputs.push_back(env.tensor(o));
        break;
      default:
        break;  // scalars are evaluated where they are used
    }
  }
  if (record.defined()) {
    BoundsRecord r{};
    memcpy_dtoh(r.data(), record.data_ptr(), sizeof(r), env.stream);
    stream_synchronize(env.stream);
    raise_bounds_record(g, r);
  }
  if (staged) {
    for (size_t i = 0; i < originals.size(); ++i)
      if (originals[i].defined()) originals[i].copy_from(env.arg_buffers[i]);
    for (Buffer& o : outputs) {
      bool is_arg = false;
      for (size_t i = 0; i < originals.size(); ++i)
        if (originals[i].defined() && o.storage() == env.arg_buffers[i].storage()) {
          o = originals[i];
          is_arg = true;
        }
      if (!is_arg) o = o.to(env.device);
    }
  }
  return outputs;
}

}  // namespace tessel::rt
