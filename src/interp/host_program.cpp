#include "interp/host_program.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "common/byte_size.hpp"
#include "common/preserve_format.hpp"
#include "driver/bounds_report.hpp"
#include "driver/cuda_api.hpp"
#include "driver/gpu_program.hpp"
#include "interp/interpreter.hpp"

namespace tessel::rt {

namespace {

const char* const kAllocHint =
    "allocate less: check the sizes passed to the allocation (a typo, a size of the wrong "
    "dimension, or a product that overflowed)";

std::string allocation_what(const ir::Node* alloc, const std::vector<int64_t>& shape) {
  return fmt::format("cannot allocate {}{}", describe_dense(shape, alloc->dtype),
                     alloc->name.empty() ? "" : fmt::format(" for '{}'", alloc->name));
}

// Whether argument `a` has `shape` and exactly its row-major strides.
bool dense_row_major(const ir::ArgValue& a, const std::vector<int64_t>& shape) {
  if (!a.shape || !a.strides || *a.shape != shape) return false;
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if ((*a.strides)[d] != expected) return false;
    expected *= std::max<int64_t>(shape[d], 1);
  }
  return true;
}

}  // namespace

int64_t check_alloc_shape(const ir::Graph& g, const ir::Node* alloc,
                          const std::vector<int64_t>& shape) {
  for (int64_t s : shape)
    if (s < 0)
      throw UserError(
          g.kernel_name, alloc->loc,
          fmt::format("allocation of shape {} has a negative size {}", shape_str(shape), s),
          "check the sizes passed to the allocation");
  std::optional<int64_t> nbytes = dense_bytes(shape, alloc->dtype);
  if (!nbytes)
    throw UserError(g.kernel_name, alloc->loc, allocation_what(alloc, shape), kAllocHint);
  return *nbytes;
}

std::vector<Buffer> run_host_program(const ir::Graph& g, const Config& config, HostEnv& env,
                                     GpuProgram* gpu) {
  // The interpreter reads host memory: GPU arguments are staged through the host.
  bool staged = !gpu && env.device.is_cuda();
  std::vector<const Buffer*> originals;
  std::vector<Buffer> host_copies;  // the staged arguments
  if (staged) {
    originals = env.arg_buffers;
    host_copies.resize(originals.size());
    for (size_t i = 0; i < originals.size(); ++i)
      if (originals[i]) {
        host_copies[i] = originals[i]->to(cpu());
        env.arg_buffers[i] = &host_copies[i];
      }
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
  std::optional<interp::UnwrittenMemory> unwritten;  // the interpreter's: ts::empty elements set
  if (!gpu) unwritten.emplace(g);
  for (const ir::Node* n : g.host) {
    switch (n->op) {
      case ir::Op::Alloc: {
        std::vector<int64_t> shape;
        for (const ir::Node* e : n->args) shape.push_back(env.eval_int(e));
        int64_t nbytes = check_alloc_shape(g, n, shape);
        // Like an argument: dense, in the argument's stride order (torch's empty_like); a
        // contiguous argument's order is row-major, the allocation's own.
        std::vector<int64_t> like_strides;
        // A row-major argument of the same shape (the common case, a call's path) gives
        // none, without building the strides.
        if (n->like && !dense_row_major(env.args.at(n->like->ival), shape)) {
          const ir::ArgValue& a = env.args.at(n->like->ival);
          like_strides = preserve_format_strides(*a.shape, *a.strides);
          // Row-major (contiguous_strides(shape), compared without building it): none.
          bool row_major = like_strides.size() == shape.size();
          int64_t expected = 1;
          for (size_t d = shape.size(); row_major && d-- > 0;) {
            row_major = like_strides[d] == expected;
            expected *= std::max<int64_t>(shape[d], 1);
          }
          if (row_major) like_strides.clear();
        }
        Buffer b;
        try {
          // A dense allocation takes the shape itself (no copy); one like an argument, its
          // elements, viewed with the argument's strides below.
          std::vector<int64_t> dims;
          if (like_strides.empty())
            dims.swap(shape);
          else
            dims = {nbytes / dtype_size(n->dtype)};
          b = Buffer::empty_on_stream(std::move(dims), n->dtype, alloc_device,
                                      staged ? nullptr : env.stream);
        } catch (const RuntimeError& e) {  // out of memory: the call's sizes are too large
          shape.clear();  // moved into the allocation: evaluated again for the message
          for (const ir::Node* d : n->args) shape.push_back(env.eval_int(d));
          // "cannot allocate N bytes on cuda:0: ... (out of memory)": what matters is said.
          std::string why = e.what();
          if (why.rfind("tessel: ", 0) == 0) why.erase(0, 8);
          if (why.find("out of memory") != std::string::npos) why = "out of memory";
          throw UserError(
              g.kernel_name, n->loc,
              fmt::format("{} on {}: {}", allocation_what(n, shape), alloc_device.str(), why),
              kAllocHint);
        }
        if (n->ival == ir::fill_value) b.fill_on_stream(n->fval, staged ? nullptr : env.stream);
        if (!like_strides.empty()) b = b.view_as_strided(shape, like_strides, 0, {});
        env.set_alloc(n, std::move(b));
        break;
      }
      case ir::Op::ShapeCheck:
        ir::check_shape(g, n, env.eval_int(n->args[0]), env.eval_int(n->args[1]));
        break;
      case ir::Op::Loop:
        if (gpu)
          gpu->launch(n, env);
        else
          interp::run_loop(g, n, env, config, *unwritten);
        break;
      case ir::Op::Return:  // the program's last statement
        outputs.reserve(n->args.size());
        for (auto o = n->args.begin(); o != n->args.end(); ++o) {
          // An allocation returned once is moved out (its last use), not copied.
          if ((*o)->op == ir::Op::Alloc && std::find(o + 1, n->args.end(), *o) == n->args.end())
            outputs.push_back(env.take_alloc(*o));
          else
            outputs.push_back(env.tensor(*o));
        }
        break;
      // Scalars, and device ops (never in the host block).
      case ir::Op::Arg:
      case ir::Op::Size:
      case ir::Op::Stride:
      case ir::Op::DeviceScalar:
      case ir::Op::Const:
      case ir::Op::Unary:
      case ir::Op::Binary:
      case ir::Op::Where:
      case ir::Op::Cast:
      case ir::Op::Full:
      case ir::Op::Arange:
      case ir::Op::Permute:
      case ir::Op::View:
      case ir::Op::Reduce:
      case ir::Op::Load:
      case ir::Op::Store:
      case ir::Op::Atomic:
      case ir::Op::Signal:
      case ir::Op::Wait:
      case ir::Op::Multicast:
      case ir::Op::LoopIndex:
      case ir::Op::TileIndex:
      case ir::Op::TileBegin:
      case ir::Op::TileEnd:
      case ir::Op::TileBlock:
      case ir::Op::TileId:
      case ir::Op::ProgramId:
      case ir::Op::Carried:
      case ir::Op::Yield:
      case ir::Op::LoopResult:
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
      if (originals[i]) Buffer(*originals[i]).copy_from(host_copies[i], {});
    for (Buffer& o : outputs) {
      bool is_arg = false;
      for (size_t i = 0; i < originals.size(); ++i)
        if (originals[i] && o.storage() == host_copies[i].storage()) {
          o = *originals[i];
          is_arg = true;
        }
      if (!is_arg) o = o.to(env.device, {});
    }
  }
  return outputs;
}

}  // namespace tessel::rt
