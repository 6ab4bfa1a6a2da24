// Generated code of atomics, signals and waits, compiled with NVRTC for sm_90 (no GPU
// needed): every op with every sem and scope, every test kernel, the owner rule (one
// thread per element) and the old values reaching the copies through shared memory.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "atomic_kernels.hpp"
#include "driver/bounds_report.hpp"
#include "interp_test_util.hpp"
#include "nvrtc_test_util.hpp"
#include "runtime/kernel_tuning.hpp"
#include "user_error_util.hpp"

namespace ts = tessel;
using interp_test::blocks;

namespace {

const std::vector<ts::Sem> kSems = {ts::Sem::relaxed, ts::Sem::acquire, ts::Sem::release,
                                    ts::Sem::acq_rel};
const std::vector<ts::Scope> kScopes = {ts::Scope::cta, ts::Scope::gpu, ts::Scope::sys};

}  // namespace

TEST(AtomicsCodegen, EveryOpSemAndScopeCompilesForSm90AndSm80) {
  REQUIRE_NVRTC();
  // One kernel holding each combination (one NVRTC compile) on i64, the adds of every
  // float dtype (f16 and bf16 through PTX), and every op on i32 and u64.
  auto k =
      ts::kernel("every_atomic", [](ts::Tensor i32, ts::Tensor i64, ts::Tensor u64, ts::Tensor f16,
                                    ts::Tensor bf16, ts::Tensor f32, ts::Tensor f64) {
        for (auto t : ts::tile(i32.size(0))) {
          auto every_op = [&](ts::Tensor x, ts::Sem sem, ts::Scope scope) {
            ts::atomic_add(x, {t}, 1, sem, scope);
            ts::atomic_max(x, {t}, 2, sem, scope);
            ts::atomic_min(x, {t}, 3, sem, scope);
            ts::atomic_and(x, {t}, 4, sem, scope);
            ts::atomic_or(x, {t}, 5, sem, scope);
            ts::atomic_xor(x, {t}, 6, sem, scope);
            ts::atomic_xchg(x, {t}, 7, sem, scope);
            ts::atomic_cas(x, {t}, 8, 9, sem, scope);
          };
          for (ts::Sem sem : kSems)
            for (ts::Scope scope : kScopes) {
              every_op(i64, sem, scope);
              for (ts::Tensor f : {f16, bf16, f32, f64}) ts::atomic_add(f, {t}, 0.5, sem, scope);
            }
          every_op(i32, ts::Sem::acq_rel, ts::Scope::sys);  // the other integer dtypes
          every_op(u64, ts::Sem::relaxed, ts::Scope::cta);
          for (ts::Scope scope : kScopes) {
            ts::signal(i32, {t}, 1, std::nullopt, scope);
            ts::signal(i64, {t}, 2, 1, scope);
            ts::wait(u64, {t}, 1, std::nullopt, scope);
            ts::wait(i32, {t}, 1, 0, scope);
          }
        }
        return f32;
      });
  auto buf = [](ts::DType t) { return ts::Buffer::zeros({64}, t); };
  std::string src = nvrtc_test::compile(k, buf(ts::i32), buf(ts::i64), buf(ts::u64), buf(ts::f16),
                                        buf(ts::bf16), buf(ts::f32), buf(ts::f64));
  for (const char* op : {"A_add", "A_max", "A_min", "A_and", "A_or", "A_xor", "A_xchg", "A_cas"})
    for (const char* sem : {"relaxed", "acquire", "release", "acq_rel"})
      for (const char* scope : {"cta", "gpu", "sys"})
        EXPECT_GE(nvrtc_test::count(src, std::string("ts::atomic<ts::") + op + ", ts::" + sem +
                                             ", ts::" + scope + ">"),
                  op == std::string("A_add") ? 5 : 1)
            << op << " " << sem << " " << scope;
  EXPECT_EQ(nvrtc_test::count(src, "ts::wait_for<false, ts::acquire"), 3) << src;
  EXPECT_EQ(nvrtc_test::count(src, "ts::wait_for<true, ts::acquire"), 3) << src;
  EXPECT_EQ(nvrtc_test::count(src, "ts::wait_for<true, ts::release"), 3) << src;
  EXPECT_NE(src.find("#include \"tessel/atomics.cuh\""), std::string::npos);
  // And for sm_80, which has no atom.add.bf16 (atomic_add_bf16_cas) and lowers the same
  // kernel the same way: the code differs in its header's target alone.
  ::setenv("TESSEL_TARGET_ARCH", "80", 1);
  const std::string sm80 =
      nvrtc_test::compile(k, buf(ts::i32), buf(ts::i64), buf(ts::u64), buf(ts::f16), buf(ts::bf16),
                          buf(ts::f32), buf(ts::f64));
  ::unsetenv("TESSEL_TARGET_ARCH");
  std::string expected = src;
  const size_t target = expected.find(", lowered for sm_90.\n");
  ASSERT_NE(target, std::string::npos) << src;
  expected.replace(target, 20, ", lowered for sm_80.");
  EXPECT_EQ(sm80, expected);
}

TEST(AtomicsCodegen, EveryTestKernelCompiles) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({100}, ts::f32);
  nvrtc_test::compile(atomic_test::make_counter(), x);
  nvrtc_test::compile(atomic_test::make_tile_counter(blocks({32})), x);
  nvrtc_test::compile(atomic_test::make_histogram(blocks({64})), ts::Buffer::zeros({100}, ts::i32),
                      ts::Buffer::zeros({7}, ts::i32));
  nvrtc_test::compile(atomic_test::make_cas_max(), ts::Buffer::zeros({10}, ts::i32));
  nvrtc_test::compile(atomic_test::make_xchg(), x);
  nvrtc_test::compile(atomic_test::make_reduce_ops(blocks({4})), ts::Buffer::zeros({10}, ts::i64));
  nvrtc_test::compile(atomic_test::make_chain(), ts::Buffer::zeros({16}, ts::i32));
  nvrtc_test::compile(atomic_test::make_ticket(), ts::Buffer::zeros({16}, ts::i32));
}

TEST(AtomicsCodegen, OnlyTheOwnerOfEachCopiedElementAdds) {
  REQUIRE_NVRTC();
  // rows(tm) += sum over tn: the [tm] partial sums are held by the threads of every tn
  // coordinate of the layout; one of each adds.
  std::string src = nvrtc_test::compile(atomic_test::make_row_sum(blocks({8, 64})),
                                        ts::Buffer::zeros({32, 256}, ts::f32));
  size_t at = src.find("ts::atomic<ts::A_add");
  ASSERT_NE(at, std::string::npos) << src;
  std::string line = src.substr(at, src.find('\n', at) - at);
  EXPECT_NE(line.find("(TS_FLAT(r) & 63) == 0"), std::string::npos) << line;
  EXPECT_EQ(src.find("ts_smem"), std::string::npos) << "old values unused: no broadcast";
}

TEST(AtomicsCodegen, UsedOldValuesReachEveryCopyThroughSharedMemory) {
  REQUIRE_NVRTC();
  std::string src =
      nvrtc_test::compile(atomic_test::make_row_sum_olds(blocks({4, 16})),
                          ts::Buffer::zeros({4, 64}, ts::f32), ts::Buffer::zeros({4, 4}, ts::f32));
  EXPECT_NE(src.find("old values to the copies"), std::string::npos) << src;
  EXPECT_NE(src.find("[TS_FLAT(r) & ~15]"), std::string::npos) << src;
}

TEST(AtomicsCodegen, OneElementIsUpdatedByThreadZeroAndItsOldValueShared) {
  REQUIRE_NVRTC();
  std::string src =
      nvrtc_test::compile(atomic_test::make_counter(), ts::Buffer::zeros({8}, ts::f32));
  EXPECT_NE(src.find("tid == 0 &&"), std::string::npos) << src;
  EXPECT_NE(src.find("if (tid == 0) sm"), std::string::npos) << src;
}

TEST(AtomicsCodegen, SignalsAndWaitsOrderTheWholeProgram) {
  REQUIRE_NVRTC();
  std::string src = nvrtc_test::compile(atomic_test::make_chain(), ts::Buffer::zeros({8}, ts::i32));
  size_t wait = src.find("ts::wait_for<false, ts::acquire, ts::gpu>");
  size_t after = src.find("every thread of the program continues after the wait");
  size_t before = src.find("earlier memory accesses happen before the signal");
  size_t signal = src.find("ts::atomic<ts::A_xchg, ts::release, ts::gpu>");
  ASSERT_NE(wait, std::string::npos) << src;
  EXPECT_LT(wait, after);
  EXPECT_LT(after, before);
  EXPECT_LT(before, signal);
}

TEST(AtomicsCodegen, KernelsWithoutAtomicsDoNotIncludeLibcuxx) {
  REQUIRE_NVRTC();
  auto k = ts::kernel("plain", [](ts::Tensor x) {
    ts::Tensor y = ts::empty_like(x);
    for (auto t : ts::tile(x.size(0))) y(t) = x(t) + 1;
    return y;
  });
  std::string src = nvrtc_test::compile(k, ts::Buffer::zeros({64}, ts::f32));
  EXPECT_EQ(src.find("atomics.cuh"), std::string::npos);
}

TEST(AtomicsCodegen, UnderCheckBoundsAWaitGivesUpAndTheRecordNamesIt) {
  REQUIRE_NVRTC();
  auto k = atomic_test::make_chain(ts::Settings{.check_bounds = true});
  ts::Buffer pad = ts::Buffer::zeros({8}, ts::i32);
  std::string src = nvrtc_test::compile(k, pad);
  EXPECT_NE(src.find("ts::wait_for<false, ts::acquire, ts::gpu>"), std::string::npos) << src;
  EXPECT_NE(src.find(", 0, ts_check, "), std::string::npos) << src;
  const ts::ir::Graph& g = ts::rt::traced_graph(k.impl(), ts::detail::call_args(pad));
  const ts::ir::Node* wait = nullptr;
  for (const auto& n : g.nodes())
    if (n->op == ts::ir::Op::Wait) wait = n.get();
  ASSERT_NE(wait, nullptr);
  std::string msg = user_error_test::user_error([&] {
    ts::rt::raise_bounds_record(g, {wait->id + 1, -1, 3, 0});
  });
  user_error_test::expect_message(
      msg, "chain", "atomic_kernels.hpp", wait->loc.line,
      "ts::wait on tensor argument 0 at element offset 3 waited for 1 but the element still held "
      "0 after 4194304 polls",
      "launch no more programs than run on the GPU at once");
}
