// The typed launch ABI (driver/launch_abi.hpp) on the CPU: a dry call (rt::LaunchObserver)
// runs the GPU path of a call on CPU Buffers with no driver call, and its recorded
// parameter block is decoded slot by slot against the generated kernel's parameter list:
// pointers, sizes, strides and scalars are the call's, at naturally aligned offsets.
#include "driver/launch_abi.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <tessel/tessel.hpp>

#include "codegen/compile_pipeline.hpp"
#include "driver/gpu_program.hpp"
#include "examples/kernels/seed002.hpp"
#include "runtime/kernel_tuning.hpp"

namespace ts = tessel;

namespace {

/// The launches of one dry call of `f`.
std::vector<ts::rt::LaunchRecord> dry_launches(const std::function<void()>& f) {
  std::vector<ts::rt::LaunchRecord> rec;
  ts::rt::LaunchObserver o{.dry = true, .record = &rec};
  ts::rt::LaunchObserver* before = ts::rt::observe_launches(&o);
  f();
  ts::rt::observe_launches(before);
  EXPECT_EQ(o.launches, static_cast<int64_t>(rec.size()));
  return rec;
}

/// The generated kernels of the specialization `k` makes for `args`.
template <class K, class... A>
std::vector<ts::codegen::CudaKernel> kernels_of(const K& k, const A&... a) {
  std::vector<ts::detail::CallArg> args = {ts::detail::to_call_arg(a)...};
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), args);
  ts::codegen::CompiledStages stages =
      ts::codegen::compile_pipeline(g, ts::rt::specialization_config(k.impl(), args), {});
  std::vector<ts::codegen::CudaKernel> out;
  for (const auto& l : stages.loops) out.push_back(l.kernel);
  return out;
}

template <class T>
T slot(const ts::rt::LaunchRecord& r, size_t i) {
  T v;
  std::memcpy(&v, r.block.data() + r.offsets.at(i), sizeof(T));
  return v;
}

auto axpby_bias() {
  return ts::kernel("axpby_bias", [](ts::Tensor x, ts::Tensor y, ts::Tensor bias, ts::Value alpha,
                                     ts::Tensor out) {
    for (auto [tm, tn] : ts::tile(x.size(0), x.size(1)))
      out(tm, tn) = x(tm, tn) * alpha + y(tm, tn) + bias(ts::newaxis, tn);
  });
}

TEST(LaunchAbi, SlotsAreNaturallyAlignedInSignatureOrder) {
  auto k = axpby_bias();
  ts::Buffer x = ts::Buffer::zeros({64, 100}, ts::f32), b = ts::Buffer::zeros({100}, ts::f32);
  std::vector<ts::codegen::CudaKernel> ks = kernels_of(k, x, x, b, 0.5, x);
  ASSERT_EQ(ks.size(), 1u);
  ts::rt::LaunchAbi abi = ts::rt::make_launch_abi(ks[0]);
  ASSERT_EQ(abi.slots.size(), ks[0].params.size());
  uint32_t end = 0;
  int i32 = 0, pointers = 0, floats = 0;
  for (const ts::rt::AbiSlot& s : abi.slots) {
    EXPECT_EQ(s.offset % s.size, 0u);   // natural alignment
    EXPECT_GE(s.offset, end);           // in order, not overlapping
    EXPECT_LT(s.offset - end, s.size);  // no gap beyond the alignment padding
    end = s.offset + s.size;
    i32 += s.type == ts::rt::AbiSlot::i32;
    pointers += s.type == ts::rt::AbiSlot::pointer;
    floats += s.type == ts::rt::AbiSlot::f32;
    EXPECT_EQ(s.size, s.type == ts::rt::AbiSlot::i32 || s.type == ts::rt::AbiSlot::f32 ? 4u : 8u);
  }
  EXPECT_EQ(abi.bytes, end);
  EXPECT_EQ(pointers, 4);  // x, y, bias, out
  EXPECT_EQ(floats, 1);    // alpha
  EXPECT_GT(i32, 0);       // sizes and strides in 32-bit index arithmetic
}

TEST(LaunchAbi, ADryCallPacksEachParameterAsTheCallGivesIt) {
  auto k = axpby_bias();
  ts::Buffer x = ts::Buffer::zeros({64, 100}, ts::f32), y = ts::Buffer::zeros({64, 100}, ts::f32);
  ts::Buffer b = ts::Buffer::zeros({100}, ts::f32), out = ts::Buffer::zeros({64, 100}, ts::f32);
  std::vector<ts::rt::LaunchRecord> rec = dry_launches([&] { k(x, y, b, 0.25, out); });
  ASSERT_EQ(rec.size(), 1u);
  const ts::codegen::CudaKernel kern = kernels_of(k, x, y, b, 0.25, out).at(0);
  const ts::Buffer* by_arg[] = {&x, &y, &b, nullptr, &out};
  ASSERT_EQ(rec[0].offsets.size(), kern.params.size());
  for (size_t i = 0; i < kern.params.size(); ++i) {
    const ts::codegen::Param& p = kern.params[i];
    const ts::Buffer* t = p.node->op == ts::ir::Op::Arg ? by_arg[p.node->ival] : nullptr;
    switch (p.kind) {
      case ts::codegen::Param::tensor_ptr:
        ASSERT_TRUE(t);
        EXPECT_EQ(slot<void*>(rec[0], i), t->data_ptr()) << i;
        break;
      case ts::codegen::Param::tensor_size:
        ASSERT_TRUE(t);
        EXPECT_EQ(slot<int32_t>(rec[0], i), t->size(p.dim)) << i;
        break;
      case ts::codegen::Param::tensor_stride:
        ASSERT_TRUE(t);
        EXPECT_EQ(slot<int32_t>(rec[0], i), t->stride(p.dim)) << i;
        break;
      case ts::codegen::Param::host_float:
        EXPECT_EQ(slot<float>(rec[0], i), 0.25f) << i;
        break;
      default:
        ADD_FAILURE() << "unexpected parameter kind " << static_cast<int>(p.kind);
    }
  }
  // One program per tile of the [64, 100] loop under the default block sizes.
  int64_t tiles = 1;
  for (size_t d = 0; d < kern.grid.blocks.size(); ++d)
    tiles *= (std::vector<int64_t>{64, 100}[d] + kern.grid.blocks[d] - 1) / kern.grid.blocks[d];
  EXPECT_EQ(rec[0].grid[0] * rec[0].grid[1] * rec[0].grid[2], tiles);
  EXPECT_EQ(rec[0].threads, static_cast<unsigned>(kern.threads));
}

TEST(LaunchAbi, HostIntegersPlannedOnceEqualTheHostEvaluator) {
  // Bounds computed on the host: an integer argument, and an expression of sizes.
  auto k = ts::kernel("half_rows", [](ts::Tensor x, ts::Value n, ts::Tensor out) {
    for (auto t : ts::tile(ts::floordiv(x.size(0), 2))) out(t) = x(t) + n;
    for (auto t : ts::tile(n)) out(t) = x(t) * 2;
  });
  ts::Buffer x = ts::Buffer::zeros({1000}, ts::f32), out = ts::Buffer::zeros({1000}, ts::f32);
  std::vector<ts::rt::LaunchRecord> rec = dry_launches([&] { k(x, 300, out); });
  ASSERT_EQ(rec.size(), 2u);  // two top-level loops: two launches
  std::vector<ts::codegen::CudaKernel> ks = kernels_of(k, x, 300, out);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(rec[0].grid[0], (500 + ks[0].grid.blocks[0] - 1) / ks[0].grid.blocks[0]);
  EXPECT_EQ(rec[1].grid[0], (300 + ks[1].grid.blocks[0] - 1) / ks[1].grid.blocks[0]);
  // Every host integer the kernels read, planned, against the generic evaluator.
  std::vector<ts::detail::CallArg> args = {ts::detail::to_call_arg(x), ts::detail::to_call_arg(300),
                                           ts::detail::to_call_arg(out)};
  ts::rt::HostEnv env;
  env.args.resize(3);
  env.args[0].shape = &x.shape();
  env.args[0].strides = &x.strides();
  env.args[1].ivalue = 300;
  env.args[2].shape = &out.shape();
  env.args[2].strides = &out.strides();
  int planned = 0, checked = 0;
  for (const ts::codegen::CudaKernel& kern : ks) {
    ts::rt::LaunchAbi abi = ts::rt::make_launch_abi(kern);
    std::vector<std::pair<ts::rt::HostInt, const ts::ir::Node*>> ints;
    for (size_t d = 0; d < abi.ends.size(); ++d) {
      ints.push_back({abi.begins[d], kern.grid.begins[d]});
      ints.push_back({abi.ends[d], kern.grid.ends[d]});
    }
    for (size_t i = 0; i < abi.slots.size(); ++i)
      if (kern.params[i].kind == ts::codegen::Param::host_int)
        ints.push_back({abi.slots[i].value, kern.params[i].node});
    for (const auto& [h, node] : ints) {
      EXPECT_EQ(h.eval(env), env.eval_int(node));
      planned += h.kind != ts::rt::HostInt::evaluated;
      ++checked;
    }
  }
  EXPECT_GE(checked, 4);
  EXPECT_GE(planned, 3);  // constants 0, n, x.size(0): no evaluator
}

TEST(LaunchAbi, ADryCallOfAPersistentKernelPassesTheDeviceBoundsAddress) {
  auto k = examples::make_padded_sum_into();
  ts::Buffer x = ts::Buffer::ones({100, 100}, ts::f32), out = ts::Buffer::zeros({100}, ts::f32);
  ts::Buffer size = ts::Buffer::scalar(80, ts::i32);
  std::vector<ts::rt::LaunchRecord> rec = dry_launches([&] { k(x, size, out); });
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].grid[0], 132u);  // a dry run's GPU: 132 SMs, one program each
  const ts::codegen::CudaKernel kern = kernels_of(k, x, size, out).at(0);
  int device_ptrs = 0;
  for (size_t i = 0; i < kern.params.size(); ++i)
    if (kern.params[i].kind == ts::codegen::Param::device_ptr ||
        (kern.params[i].kind == ts::codegen::Param::tensor_ptr &&
         kern.params[i].node->op == ts::ir::Op::Arg && kern.params[i].node->ival == 1)) {
      EXPECT_EQ(slot<void*>(rec[0], i), size.data_ptr());
      ++device_ptrs;
    }
  EXPECT_EQ(device_ptrs, 1);
  EXPECT_EQ(out.to_vector()[0], 0.0);  // nothing ran
}

}  // namespace
