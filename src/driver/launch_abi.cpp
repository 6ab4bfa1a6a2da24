#include "driver/launch_abi.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/element.hpp"

namespace tessel::rt {

HostInt HostInt::plan(const ir::Node* n) {
  HostInt h;
  if (n->op == ir::Op::Const && !is_float(n->dtype)) {
    h.value = n->ival;
  } else if (n->op == ir::Op::Arg && n->arg_kind == ir::ArgKind::int_scalar) {
    h.kind = arg_int;
    h.arg = static_cast<int>(n->ival);
  } else if ((n->op == ir::Op::Size || n->op == ir::Op::Stride) &&
             n->args.at(0)->op == ir::Op::Arg) {
    h.kind = n->op == ir::Op::Size ? arg_size : arg_stride;
    h.arg = static_cast<int>(n->args[0]->ival);
    h.dim = static_cast<int>(n->ival);
  } else {
    h.kind = evaluated;
    h.node = n;
  }
  return h;
}

LaunchAbi make_launch_abi(const codegen::CudaKernel& k) {
  LaunchAbi abi;
  for (const codegen::Param& p : k.params) {
    AbiSlot s;
    s.source = p.kind;
    s.node = p.node;
    s.dim = p.dim;
    switch (p.kind) {
      case codegen::Param::tensor_ptr:
      case codegen::Param::device_ptr:
      case codegen::Param::check_record:
      case codegen::Param::split_workspace:
        s.type = AbiSlot::pointer;
        break;
      case codegen::Param::tensor_map:
        s.type = AbiSlot::tensor_map;
        s.node = ir::addressed_tensor(p.node);  // the loaded tensor
        s.tma_dims = p.tma_dims;
        s.tma_box = p.tma_box;
        s.tma_swizzle = p.tma_swizzle;
        break;
      case codegen::Param::host_float:
        s.type = p.dtype == DType::f64 ? AbiSlot::f64 : AbiSlot::f32;
        break;
      case codegen::Param::host_int:
      case codegen::Param::tensor_size:
      case codegen::Param::tensor_stride:
        s.type = p.dtype == DType::i32 ? AbiSlot::i32 : AbiSlot::i64;
        break;
    }
    s.size = s.type == AbiSlot::i32 || s.type == AbiSlot::f32 ? 4
             : s.type == AbiSlot::tensor_map                  ? 128
                                                              : 8;
    const ir::Node* tensor = p.kind == codegen::Param::device_ptr   ? nullptr
                             : p.kind == codegen::Param::tensor_map ? ir::addressed_tensor(p.node)
                                                                    : p.node;
    if (tensor && tensor->op == ir::Op::Arg) s.arg = static_cast<int>(tensor->ival);
    if (p.kind == codegen::Param::host_float &&
        (p.node->op != ir::Op::Arg || p.node->arg_kind != ir::ArgKind::float_scalar))
      s.arg = -1;  // an expression: evaluated on each call
    if (p.kind == codegen::Param::host_int) s.value = HostInt::plan(p.node);
    abi.bytes = (abi.bytes + s.size - 1) / s.size * s.size;  // natural alignment
    s.offset = abi.bytes;
    abi.bytes += s.size;
    abi.slots.push_back(s);
  }
  for (const ir::Node* b : k.grid.begins) abi.begins.push_back(HostInt::plan(b));
  for (const ir::Node* e : k.grid.ends) abi.ends.push_back(HostInt::plan(e));
  return abi;
}

TensorMapSpec tensor_map_spec(const Buffer& t, const std::vector<int>& dims,
                              const std::vector<int64_t>& box, int swizzle) {
  TensorMapSpec m;
  m.swizzle = swizzle;
  m.elem_bytes = static_cast<int>(dtype_size(t.dtype()));
  m.rank = static_cast<int>(dims.size());
  m.base = t.data_ptr();
  uint64_t inner = static_cast<uint64_t>(m.elem_bytes);  // bytes spanned by the dims inside
  for (size_t j = 0; j < dims.size(); ++j) {
    const size_t d = static_cast<size_t>(dims[j]);
    m.sizes[j] = static_cast<uint64_t>(t.shape()[d]);
    m.box[j] = static_cast<uint32_t>(box[j]);
    if (j == 0) {
      m.strides[0] = inner;
    } else {
      const uint64_t stride = t.shape()[d] == 1
                                  ? (inner + 15) / 16 * 16
                                  : static_cast<uint64_t>(t.strides()[d]) * m.elem_bytes;
      if (stride % 16 != 0 || stride >= (uint64_t{1} << 40))
        throw InternalError(fmt::format(
            "a tensor descriptor's stride of {} bytes (dim {}) is not a multiple of 16 below 2^40",
            stride, d));
      m.strides[j] = stride;
    }
    inner = std::max(inner, m.strides[j] * m.sizes[j]);
  }
  return m;
}

uint64_t LaunchPlan::bits(const AbiSlot& s) const {
  uint64_t v = 0;
  std::memcpy(&v, block() + s.offset, s.size);
  return v;
}

namespace {

// The Buffer of a slot's tensor: an argument by position, else an allocation.
const Buffer& slot_tensor(const AbiSlot& s, const HostEnv& env) {
  return s.arg >= 0 ? *env.arg_buffers[s.arg] : env.tensor(s.node);
}

// Writes integer `v` as slot `s`'s type (the key makes index arithmetic 64-bit for tensors
// spanning 2^31 elements and for integer arguments beyond 32 bits; a value computed on the
// host can still exceed it).
void put_int(const ir::Graph& g, const AbiSlot& s, int64_t v, unsigned char* at) {
  if (s.type == AbiSlot::i64) {
    std::memcpy(at, &v, 8);
    return;
  }
  if (v < INT32_MIN || v > INT32_MAX)
    throw UserError(
        g.kernel_name, s.node->loc,
        fmt::format("the value {} does not fit this kernel's 32-bit index arithmetic", v),
        "set Settings::index_dtype = ts::i64");
  int32_t v32 = static_cast<int32_t>(v);
  std::memcpy(at, &v32, 4);
}

}  // namespace

void plan_launch(const ir::Graph& g, const ir::Node* loop, const codegen::CudaKernel& k,
                 const LaunchAbi& abi, const HostEnv& env, int persistent_programs,
                 LaunchPlan& plan) {
  plan.threads = static_cast<unsigned>(k.threads);
  plan.shared_bytes = k.shared_bytes;
  plan.resize(abi.bytes);
  unsigned char* block = plan.block();
  for (const AbiSlot& s : abi.slots) {
    unsigned char* at = block + s.offset;
    switch (s.source) {
      case codegen::Param::tensor_ptr: {
        void* ptr = slot_tensor(s, env).data_ptr();
        std::memcpy(at, &ptr, sizeof(ptr));
        break;
      }
      case codegen::Param::device_ptr: {
        const Buffer& t = env.tensor(s.node->args[0]);
        int64_t off = 0;
        for (size_t d = 1; d < s.node->args.size(); ++d) {
          int64_t i = env.eval_int(s.node->args[d]);
          int64_t size = t.shape()[d - 1];
          if (i < 0 || i >= size)
            throw UserError(
                g.kernel_name, s.node->loc,
                fmt::format("device scalar index {} is out of range for a dimension of size {}", i,
                            size),
                "index within the tensor's shape");
          off += i * t.strides()[d - 1];
        }
        void* ptr = static_cast<char*>(t.data_ptr()) + off * dtype_size(t.dtype());
        std::memcpy(at, &ptr, sizeof(ptr));
        break;
      }
      case codegen::Param::tensor_size:
        put_int(g, s, slot_tensor(s, env).shape()[s.dim], at);
        break;
      case codegen::Param::tensor_stride: {
        const Buffer& t = slot_tensor(s, env);
        // A size-1 dim is only ever indexed at 0: its stride can be anything.
        put_int(g, s, t.shape()[s.dim] == 1 ? 0 : t.strides()[s.dim], at);
        break;
      }
      case codegen::Param::host_int:
        put_int(g, s, s.value.eval(env), at);
        break;
      case codegen::Param::split_workspace:  // the caller's: set_split_workspace
        std::memset(at, 0, sizeof(void*));
        break;
      case codegen::Param::check_record:
        if (!env.check_record)
          throw InternalError("a bounds-checking kernel launched without its record");
        std::memcpy(at, &env.check_record, sizeof(void*));
        break;
      case codegen::Param::tensor_map: {
        // A tensor without elements has no box to copy: the kernel skips it.
        const Buffer& t = slot_tensor(s, env);
        if (t.numel() == 0 || !cuda_available())  // no driver: a dry run
          std::memset(at, 0, 128);
        else
          encode_tensor_map(tensor_map_spec(t, s.tma_dims, s.tma_box, s.tma_swizzle), at);
        break;
      }
      case codegen::Param::host_float: {
        // A float argument is read directly; other expressions through the evaluator.
        double d = s.arg >= 0 ? env.args[s.arg].fvalue : env.eval(s.node).as_double();
        float f = to_f32(d);
        if (s.type == AbiSlot::f64)
          std::memcpy(at, &d, 8);
        else
          std::memcpy(at, &f, 4);
        break;
      }
    }
  }
  if (k.grid.persistent) {
    plan.grid[0] = static_cast<unsigned>(persistent_programs);
    return;
  }
  int64_t tiles[8];
  const size_t dims = abi.ends.size();
  if (dims > 8) throw InternalError("a launch grid of more than 8 loop dimensions");
  int64_t numel = 1, flat_block = 1;
  for (size_t d = 0; d < dims; ++d) {
    int64_t begin = abi.begins[d].eval(env), end = abi.ends[d].eval(env);
    // Tile indices are computed in the index dtype (loop control is 64-bit).
    if (g.index_dtype == DType::i32 && (end > INT32_MAX || begin < INT32_MIN))
      throw UserError(
          g.kernel_name, loop->loc,
          fmt::format("the loop's range [{}, {}) goes beyond 32-bit index arithmetic", begin, end),
          "set Settings::index_dtype = ts::i64 (or bound the loop by a tensor's size)");
    int64_t extent = end - begin;
    tiles[d] = extent <= 0 ? 0 : (extent + k.grid.blocks[d] - 1) / k.grid.blocks[d];
    numel *= std::max<int64_t>(extent, 0);
    flat_block *= k.grid.blocks[d];
  }
  int64_t total = 1;
  for (size_t d = 0; d < dims; ++d) total *= tiles[d];
  if (k.grid.flattened)
    total = (numel + flat_block - 1) / flat_block;  // tiles of the flattened space
  if (total == 0) {
    plan.empty = true;  // an empty loop launches nothing
    return;
  }
  if (k.grid.xyz) {
    // Axis a covers dim order[a] (Config::loop_orders).
    for (size_t a = 0; a < 3; ++a) {
      int64_t n = a < dims ? tiles[k.grid.order.at(a)] : 1;
      int64_t limit = a == 0 ? INT32_MAX : 65535;  // CUDA's grid limits (x, then y and z)
      if (n > limit)
        throw UserError(
            g.kernel_name, loop->loc,
            fmt::format("pid_type xyz needs {} programs along grid axis {}, more than its limit {}",
                        n, "xyz"[a], limit),
            "use pid_type flat or a persistent pid_type, larger block sizes, or another "
            "loop_orders");
      plan.grid[a] = static_cast<unsigned>(n);
    }
  } else {
    if (k.split_k > 1) {
      plan.split_tiles = total;
      total *= k.split_k;
    }
    if (total >= (int64_t{1} << 31))
      throw UserError(g.kernel_name, loop->loc,
                      fmt::format("the launch needs {} programs, more than a grid can hold", total),
                      "use larger block sizes, or a persistent pid_type");
    plan.grid[0] = static_cast<unsigned>(total);
  }
}

SplitWorkspace split_workspace(const LaunchPlan& plan, const codegen::CudaKernel& k) {
  const int64_t sums = plan.split_tiles * k.split_bytes;
  return {sums, sums + plan.split_tiles * 4};
}

void set_split_workspace(const LaunchAbi& abi, void* base, LaunchPlan& plan) {
  for (const AbiSlot& s : abi.slots)
    if (s.source == codegen::Param::split_workspace)
      std::memcpy(plan.block() + s.offset, &base, sizeof(void*));
}

}  // namespace tessel::rt
