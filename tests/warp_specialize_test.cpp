// Config::warp_specialize (passes/tensor_cores.cpp plan_producer_warp, codegen/emit_wgmma.cpp
// emit_producer_warp): a producer warpgroup past the nest's threads issues every TMA copy
// of a wgmma ring and exits, its registers moved to the consumers; the consumers' barriers
// are a named barrier of their own; where it cannot apply the layout stage says why. GPU:
// tests/gpu/dot_gpu_test.cpp (DotGpu.WarpSpecializedDotsMatchTheInterpreter).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <tessel/tessel.hpp>

#include "examples/kernels/matmul.hpp"
#include "examples/kernels/moe.hpp"
#include "nvrtc_test_util.hpp"
#include "passes/layout.hpp"
#include "stage_test_util.hpp"
#include "tests/dot_test_util.hpp"

namespace ts = tessel;
namespace passes = tessel::passes;

namespace {

ts::Config specialized(int64_t m, int64_t n, int64_t k, int warps, int stages, ts::PidType pid) {
  ts::Config c = dot_test::blocks(m, n, k, warps);
  c.num_stages = stages;
  c.pid_type = pid;
  c.warp_specialize = true;
  return c;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The layout dump's "warp_specialize not applied: ..." to the end of its line, else the dump.
std::string why(const stage_test::Staged& s) {
  const std::string& t = s.text;
  const size_t at = t.find("warp_specialize not applied: ");
  return at == std::string::npos ? std::string("(applied)\n") + t
                                 : t.substr(at, t.find('\n', at) - at);
}

}  // namespace

TEST(WarpSpecialize, TheConfigKeyReadsBackAndDefaultsToOff) {
  ts::Config c = specialized(128, 256, 64, 8, 4, ts::PidType::flat);
  EXPECT_EQ(ts::Config::from_json(c.to_json()), c);
  EXPECT_NE(c.to_json().find("\"warp_specialize\":true"), std::string::npos) << c.to_json();
  EXPECT_NE(c.to_cpp().find(".warp_specialize = true"), std::string::npos) << c.to_cpp();
  EXPECT_FALSE(ts::Config::from_json("{}").warp_specialize);
  try {
    ts::Config::from_json(R"({"warp_specialize": 1})");
    ADD_FAILURE() << "an integer was taken for a bool";
  } catch (const ts::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("config key 'warp_specialize' needs true or false"),
              std::string::npos)
        << e.what();
  }
}

// The producer's branch comes first: it lowers its registers, its first thread walks the
// program's tiles issuing the ring's copies, it exits; the consumers raise theirs, never
// refill the ring, and synchronize among themselves. 8 consumer warps: 232 registers each.
TEST(WarpSpecialize, AProducerWarpgroupIssuesTheRingsCopies) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({1000, 520}, ts::bf16),
             y = ts::Buffer::zeros({520, 776}, ts::bf16);
  ts::Buffer bias = ts::Buffer::zeros({776}, ts::bf16);
  for (ts::PidType pid :
       {ts::PidType::flat, ts::PidType::persistent_blocked, ts::PidType::persistent_interleaved}) {
    const ts::Config c = specialized(128, 256, 64, 8, 4, pid);
    auto k = examples::make_matmul_bias_gelu(ts::Settings{.config = c});
    stage_test::Staged s = stage_test::staged("layout", true, k, c, x, y, bias);
    EXPECT_NE(s.text.find("issued by a producer warpgroup"), std::string::npos) << s.text;
    EXPECT_EQ(s.stages.loops.at(0).kernel.threads, 256 + 128);
    const std::string cu = nvrtc_test::compile(k, x, y, bias);
    SCOPED_TRACE(c.to_json());
    // 384 threads launch with 168 registers each, fixed (__maxnreg__) so that ptxas knows the
    // count setmaxnreg starts from.
    EXPECT_NE(cu.find("__maxnreg__(168)"), std::string::npos) << cu;
    const size_t producer = cu.find("if (tid >= TS_T) {");
    const size_t consumers = cu.find("ts::registers_up<232>();");
    ASSERT_NE(producer, std::string::npos) << cu;
    ASSERT_NE(consumers, std::string::npos) << cu;
    EXPECT_LT(producer, consumers);
    EXPECT_LT(cu.find("ts::registers_down<40>();"), consumers);
    EXPECT_EQ(count(cu, "_load(("), 1) << cu;  // the producer's one call of the load function
    EXPECT_EQ(cu.find("_fill"), std::string::npos) << cu;
    // The partial tile of K's zeroing: a barrier of the consumers alone.
    EXPECT_GE(count(cu, "ts::sync_threads_of(TS_T);"), 1) << cu;
    EXPECT_EQ(count(cu.substr(consumers), "__syncthreads()"), 0) << cu;
  }
  // TF32 with a row-major y: the consumers copy each tile K-major between barriers of their
  // own (named barriers: the producer has exited), the producer's other warps copy nothing;
  // 40 registers each for the producer, 232 for the consumers.
  ts::Buffer xf = ts::Buffer::zeros({300, 244}, ts::f32),
             yf = ts::Buffer::zeros({244, 520}, ts::f32);
  for (ts::PidType pid : {ts::PidType::flat, ts::PidType::persistent_interleaved}) {
    const ts::Config c = specialized(256, 128, 32, 8, 4, pid);
    auto tf32 = examples::make_dot_matmul(ts::Settings{.config = c});
    SCOPED_TRACE(c.to_json());
    stage_test::Staged s = stage_test::staged("layout", true, tf32, c, xf, yf);
    EXPECT_NE(s.text.find("copied K-major by the threads"), std::string::npos) << s.text;
    stage_test::Staged ki = stage_test::staged("kernel_ir", true, tf32, c, xf, yf);
    EXPECT_NE(ki.text.find("shared stage ring of 4, TMA at 0,"), std::string::npos) << ki.text;
    const std::string cu = nvrtc_test::compile(tf32, xf, yf);
    const size_t consumers = cu.find("ts::registers_up<232>();");
    ASSERT_NE(consumers, std::string::npos) << cu;
    EXPECT_LT(cu.find("ts::registers_down<40>();"), consumers) << cu;
    EXPECT_EQ(cu.find("if (tid >= TS_T + 32)"), std::string::npos) << cu;
    const std::string consumer = cu.substr(consumers);
    EXPECT_NE(consumer.find("K-major copies"), std::string::npos) << consumer;
    EXPECT_NE(consumer.find("uint4"), std::string::npos) << consumer;  // the copy
    EXPECT_GE(count(consumer, "ts::sync_threads_of(TS_T);"), 3) << consumer;
    EXPECT_EQ(count(consumer, "__syncthreads()"), 0) << consumer;
  }
}

// Where the operands' tiles do not follow from the program id and K (the grouped GEMM's
// expert, loaded in the program), with split_k or pid_type xyz, the kernel runs without a
// producer and the layout stage says why; the interpreter's values do not depend on it.
// A batched dot whose batch tile holds one element (examples::make_bmm): its factors are
// indexed by the batch tile's begin, which the producer computes from the program id as it
// does the other tiles' (and the ring runs across a persistent program's tiles).
TEST(WarpSpecialize, ABatchedDotsProducerIndexesTheBatchByItsTileBegin) {
  REQUIRE_NVRTC();
  ts::Buffer x = ts::Buffer::zeros({4, 520, 256}, ts::bf16),
             y = ts::Buffer::zeros({4, 256, 392}, ts::bf16);
  for (ts::PidType pid : {ts::PidType::flat, ts::PidType::persistent_interleaved}) {
    const ts::Config c = specialized(128, 128, 64, 8, 4, pid);
    SCOPED_TRACE(c.to_json());
    auto k = examples::make_bmm(ts::Settings{.config = c});
    stage_test::Staged s = stage_test::staged("layout", true, k, c, x, y);
    EXPECT_EQ(why(s).rfind("(applied)", 0), 0u) << why(s);
    const passes::Contraction& con = s.stages.loops.at(0).layout.contractions.at(0);
    EXPECT_EQ(con.mma->across_programs, pid != ts::PidType::flat);
    const std::string cu = nvrtc_test::compile(k, x, y);
    const size_t producer = cu.find("if (tid >= TS_T) {");
    ASSERT_NE(producer, std::string::npos) << cu;
    // x [B, M, K]'s box at (k, the M tile's begin, the batch's): the loading program's.
    EXPECT_EQ(nvrtc_test::count_matches(
                  cu.substr(producer),
                  R"(tma_copy<3>\(x_map\d+, buf \+ 0, filled, \{kb, tb\d+_1, tb\d+_0\}\))"),
              1)
        << cu;
  }
  // Without warp_specialize, a persistent program's ring runs on into its next tile.
  ts::Config persistent = specialized(128, 128, 64, 8, 4, ts::PidType::persistent_interleaved);
  persistent.warp_specialize.reset();
  auto k = examples::make_bmm(ts::Settings{.config = persistent});
  stage_test::Staged s = stage_test::staged("layout", false, k, persistent, x, y);
  EXPECT_TRUE(s.stages.loops.at(0).layout.contractions.at(0).mma->across_programs) << s.text;
}

TEST(WarpSpecialize, WhereItCannotApplyTheLayoutStageSaysWhy) {
  ts::Buffer x = ts::Buffer::randn({256, 128}, ts::bf16, ts::cpu(), 1),
             y = ts::Buffer::randn({128, 256}, ts::bf16, ts::cpu(), 2);
  ts::Config split = specialized(128, 128, 64, 4, 3, ts::PidType::flat);
  split.split_k = 2;
  auto k = dot_test::make_dot(ts::Settings{.config = split});
  EXPECT_EQ(why(stage_test::staged("layout", false, k, split, x, y)),
            "warp_specialize not applied: split_k shares each tile among programs");
  // The CUDA says so too, as it does of split_k.
  const std::string cu = k.cuda(false, x, y).at(0);
  EXPECT_NE(cu.find("// warp_specialize is not applied: split_k shares each tile among programs"),
            std::string::npos)
      << cu;
  EXPECT_EQ(cu.find("registers_down"), std::string::npos) << cu;
  ts::Config xyz = specialized(128, 128, 64, 4, 3, ts::PidType::xyz);
  EXPECT_EQ(why(stage_test::staged("layout", false, k, xyz, x, y)),
            "warp_specialize not applied: pid_type xyz (use flat or a persistent one)");
  ts::Config capped = specialized(128, 128, 64, 4, 3, ts::PidType::flat);
  capped.maxnreg = 200;
  EXPECT_EQ(why(stage_test::staged("layout", false, k, capped, x, y)),
            "warp_specialize not applied: maxnreg caps the registers the consumers take from it");
  // The grouped GEMM: its expert is loaded in the program.
  ts::Config grouped{.block_sizes = std::vector<int64_t>{128, 64}, .num_warps = 4, .num_stages = 3};
  grouped.warp_specialize = true;
  auto g = examples::make_grouped_matmul(ts::Settings{.config = grouped}, 64);
  ts::Buffer w = ts::Buffer::randn({2, 128, 256}, ts::bf16, ts::cpu(), 3);
  ts::Buffer n_rows = ts::Buffer::scalar(200, ts::i32);
  ts::Buffer experts = ts::Buffer::from_vector({1, 0, 1, 0}, {4}, ts::i32);
  const std::string reason =
      why(stage_test::staged("layout", false, g, grouped, x, w, n_rows, experts));
  EXPECT_TRUE(std::regex_search(reason, std::regex("warp_specialize not applied: factor %[0-9]+ "
                                                   "\\(a tile of tensor argument 1 \\('w'\\)\\) "
                                                   "does not follow from the program id and K "
                                                   "alone")))
      << reason;
  // Off or on, the interpreter computes the same values.
  ts::Config plain = specialized(128, 128, 64, 4, 3, ts::PidType::flat);
  plain.warp_specialize = false;
  EXPECT_EQ(dot_test::make_dot(ts::Settings{.config = plain})(x, y).to_vector(),
            dot_test::make_dot(
                ts::Settings{.config = specialized(128, 128, 64, 4, 3, ts::PidType::flat)})(x, y)
                .to_vector());
}

// The producer's 128 threads must fit beside the consumers' within a program's 1024, and a
// thread's registers one wgmma's fragment;
// where no dot runs on wgmma (ieee f32 stays on the CUDA cores) the knob is said to be moot.
TEST(WarpSpecialize, ItNeedsRoomForTheProducerAndADotOnWgmma) {
  ts::Buffer x = ts::Buffer::randn({256, 128}, ts::bf16, ts::cpu(), 1),
             y = ts::Buffer::randn({128, 256}, ts::bf16, ts::cpu(), 2);
  // 256 x 256 on 32 warps: 64 registers per thread, too few for a wgmma of 128 columns, whose
  // fragment alone is 64 (ptxas: "Insufficient registers"); mma.sync instead.
  ts::Config wide = specialized(256, 256, 64, 32, 2, ts::PidType::flat);
  auto k = dot_test::make_dot(ts::Settings{.config = wide});
  stage_test::Staged s = stage_test::staged("layout", false, k, wide, x, y);
  EXPECT_NE(s.text.find("not wgmma: num_warps 32 leaves 64 registers per thread, too few for a "
                        "wgmma of 128 columns (fewer warps, or a smaller N block)"),
            std::string::npos)
      << s.text;
  EXPECT_EQ(why(s).rfind("warp_specialize not applied: no ts::dot of the loop runs on wgmma (not "
                         "on wgmma: num_warps 32 leaves 64 registers per thread",
                         0),
            0u)
      << why(s);
  // 256 x 128 on 32 warps: 8 warpgroups of 64 rows x 64 columns on wgmma; the producer is what
  // does not fit.
  ts::Config narrower = specialized(256, 128, 64, 32, 2, ts::PidType::flat);
  auto n = dot_test::make_dot(ts::Settings{.config = narrower});
  stage_test::Staged on_wgmma = stage_test::staged("layout", false, n, narrower, x, y);
  EXPECT_EQ(why(on_wgmma),
            "warp_specialize not applied: num_warps 32 leaves no room for the producer's 128 "
            "threads (a program has at most 1024 threads; use num_warps 16 or fewer)")
      << on_wgmma.text;
  if (ts::rt::nvrtc_available()) {
    const std::string cu = nvrtc_test::compile(n, x, y);
    EXPECT_NE(cu.find("__launch_bounds__(1024)"), std::string::npos) << cu;
    EXPECT_EQ(cu.find("registers_up"), std::string::npos) << cu;
  }
  ts::Buffer xf = ts::Buffer::randn({256, 128}, ts::f32, ts::cpu(), 3),
             yf = ts::Buffer::randn({128, 256}, ts::f32, ts::cpu(), 4);
  ts::Config ieee_config = specialized(128, 128, 32, 4, 3, ts::PidType::flat);
  auto ieee = examples::make_dot_matmul(
      ts::Settings{.config = ieee_config, .dot_precision = ts::DotPrecision::ieee});
  EXPECT_EQ(why(stage_test::staged("layout", false, ieee, ieee_config, xf, yf))
                .rfind("warp_specialize not applied: no ts::dot of the loop runs on wgmma", 0),
            0u);
  // 16 consumer warps: the program launches with 96 registers per thread (640 threads), and
  // the consumers take what the producer gives up, no more (setmaxnreg.inc would wait).
  if (ts::rt::nvrtc_available()) {
    ts::Config sixteen = specialized(128, 128, 64, 16, 4, ts::PidType::flat);
    auto k16 = dot_test::make_dot(ts::Settings{.config = sixteen});
    const std::string cu = nvrtc_test::compile(k16, x, y);
    EXPECT_NE(cu.find("__maxnreg__(96)"), std::string::npos) << cu;
    EXPECT_NE(cu.find("ts::registers_down<40>();"), std::string::npos) << cu;
    EXPECT_NE(cu.find("ts::registers_up<104>();"), std::string::npos) << cu;  // 640 x 96 in all
    // 4 consumer warps launch with 248 registers each: nothing to move.
    ts::Config four = specialized(128, 128, 64, 4, 4, ts::PidType::flat);
    const std::string cu4 =
        nvrtc_test::compile(dot_test::make_dot(ts::Settings{.config = four}), x, y);
    EXPECT_NE(cu4.find("__launch_bounds__(256)"), std::string::npos) << cu4;
    EXPECT_NE(cu4.find("if (tid >= TS_T) {"), std::string::npos) << cu4;
    EXPECT_EQ(cu4.find("registers_"), std::string::npos) << cu4;
    // A small tile on 8 consumer warps: its registers move too, from a count fixed at launch
    // (ptxas ignored setmaxnreg, C7508, where the kernel used fewer than __launch_bounds__
    // allowed and the count at entry was unknown).
    ts::Config small = specialized(128, 64, 64, 8, 4, ts::PidType::flat);
    const std::string cus =
        nvrtc_test::compile(dot_test::make_dot(ts::Settings{.config = small}), x, y);
    EXPECT_NE(cus.find("__maxnreg__(168)"), std::string::npos) << cus;
    EXPECT_NE(cus.find("ts::registers_up<232>();"), std::string::npos) << cus;
  }
}
