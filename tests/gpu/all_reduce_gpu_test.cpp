// The one-shot all-reduce (examples/kernels/all_reduce.hpp) on one GPU: R = 2, 4, 8 ranks
// of a ts::SymmetricBuffer, each rank a persistent launch on its own stream capped at
// SMs / R programs, bf16 and f32, 4K to 16M elements, exact against a reference sum of
// small integers (exact in bf16 too); eager calls, then each rank's launch captured in its
// own CUDA graph on its own stream and replayed (twice: the pads are zero again after a
// call). A wrong barrier hangs here (a GPU wait spins; the interpreter's all_reduce_test
// reports it): run with a timeout.
#include <gtest/gtest.h>

#include <cstdint>
#include <tessel/tessel.hpp>
#include <vector>

#include "examples/kernels/all_reduce.hpp"
#include "gpu_test_util.hpp"

namespace ts = tessel;

namespace {

double value(int r, int64_t i) { return static_cast<double>((i * 7 + r * 3) % 19) - 9.0; }

ts::SymmetricBuffer gpu_ranks(int64_t n, int world, ts::DType t, int64_t block) {
  ts::SymmetricBuffer sb = ts::SymmetricBuffer::on_device(
      {n}, t, world, ts::cuda(0), examples::all_reduce_pad_elements(n, world, block));
  std::vector<double> v(static_cast<size_t>(n));
  for (int r = 0; r < world; ++r) {
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value(r, i);
    sb.buffer(r).copy_from(ts::Buffer::from_vector(v, {n}, t));
  }
  ts::rt::device_synchronize(0);  // the copies are done before the ranks' streams read
  return sb;
}

std::vector<double> reference(int64_t n, int world) {
  std::vector<double> want(static_cast<size_t>(n), 0);
  for (int r = 0; r < world; ++r)
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] += value(r, i);
  return want;
}

void expect_sums(const examples::OneGpuAllReduce& ar, const std::vector<double>& want,
                 const char* what) {
  for (int r = 0; r < ar.buffers().world_size(); ++r) {
    EXPECT_EQ(ar.out(r).to_vector(), want) << what << ", rank " << r;
    std::vector<double> pad = ar.buffers().signal_pad(r).to_vector();
    EXPECT_EQ(pad, std::vector<double>(pad.size(), 0)) << what << ", pad of rank " << r;
  }
}

/// R ranks on cuda:0, bf16 and f32, 4K to 16M elements: eager twice, then two replays of
/// one CUDA graph per rank.
void sums_eager_and_from_graphs(int world) {
  const int sms = ts::rt::sm_count(0);
  const int64_t block = 4096;
  for (ts::DType t : {ts::bf16, ts::f32})
    for (int64_t n : {int64_t{4096}, int64_t{100003}, int64_t{1} << 20, int64_t{1} << 24}) {
      SCOPED_TRACE(testing::Message() << world << " ranks, " << dtype_name(t) << ", n = " << n);
      examples::OneGpuAllReduce ar(gpu_ranks(n, world, t, block), sms, block);
      const std::vector<double> want = reference(n, world);
      ar.run();  // eager (the first call compiles)
      expect_sums(ar, want, "eager");
      ar.run();
      expect_sums(ar, want, "eager again");
      // Each rank's launch in its own graph, captured on its own stream.
      std::vector<ts::CudaGraph> graphs;
      for (int r = 0; r < world; ++r)
        graphs.push_back(ts::CudaGraph::capture(ar.stream(r), [&] { ar.enqueue(r); }));
      for (int replay = 0; replay < 2; ++replay) {
        for (int r = 0; r < world; ++r) ts::Buffer(ar.out(r)).fill(0);
        ts::rt::device_synchronize(0);  // fill runs on the legacy stream; ours do not wait
        for (int r = 0; r < world; ++r) graphs[static_cast<size_t>(r)].replay(ar.stream(r));
        ar.synchronize();
        expect_sums(ar, want, replay == 0 ? "graph replay" : "second graph replay");
      }
    }
}

}  // namespace

TEST(AllReduceGpu, TwoRanksOnOneGpu) {
  TESSEL_REQUIRE_GPU();
  sums_eager_and_from_graphs(2);
}

TEST(AllReduceGpu, FourRanksOnOneGpu) {
  TESSEL_REQUIRE_GPU();
  sums_eager_and_from_graphs(4);
}

TEST(AllReduceGpu, EightRanksOnOneGpu) {
  TESSEL_REQUIRE_GPU();
  sums_eager_and_from_graphs(8);
}
