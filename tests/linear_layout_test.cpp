// Linear layouts over GF(2) (src/layout): the algebra, and each constructor against the
// plain formula of its source (Triton's BlockedEncoding, the PTX ISA's fragment figures
// and swizzling modes) over every input.
#include "layout/linear_layout.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "layout/distributed_layouts.hpp"
#include "layout/mma_layouts.hpp"
#include "layout/shared_layouts.hpp"
#include "tessel/error.hpp"
#include "user_error_util.hpp"

namespace {

using namespace tessel::layout;
using LL = LinearLayout;

/// The message of the tessel::InternalError `f` throws ("<no error>" when none).
template <class F>
std::string internal_error(F&& f) {
  return user_error_test::error_message<tessel::InternalError>(f);
}

/// Calls `f` with every input of `layout` (each input dim over its whole size).
void for_each_input(const LL& layout, const std::function<void(const Coords&)>& f) {
  int64_t total = int64_t{1} << layout.num_in_bits();
  for (int64_t flat = 0; flat < total; ++flat) {
    Coords in;
    int64_t rest = flat;
    for (const auto& d : layout.in_dims()) {
      int32_t size = int32_t{1} << d.bases.size();
      in.emplace_back(d.name, static_cast<int32_t>(rest % size));
      rest /= size;
    }
    f(in);
  }
}

/// The value of dim `name` in `c`.
int32_t at(const Coords& c, const std::string& name) {
  for (const auto& [n, v] : c)
    if (n == name) return v;
  ADD_FAILURE() << "no dim " << name;
  return -1;
}

/// (row, col) of a 2-D layout's output.
std::pair<int32_t, int32_t> rc(const Coords& out) { return {at(out, "dim0"), at(out, "dim1")}; }

Coords rlw(int32_t r, int32_t l, int32_t w) { return {{kRegister, r}, {kLane, l}, {kWarp, w}}; }

// A small hand-written layout: register -> dim0 8, lane -> dim0/dim1.
LL small_layout() {
  return LL({{kRegister, {{1, 0}, {0, 2}}}, {kLane, {{2, 1}, {4, 0}}}}, {{"dim0", 8}, {"dim1", 4}});
}

TEST(LinearLayout, ApplyXorsTheBasesOfSetBits) {
  LL l = small_layout();
  EXPECT_EQ(l.apply({{kRegister, 0}, {kLane, 0}}), (Coords{{"dim0", 0}, {"dim1", 0}}));
  EXPECT_EQ(l.apply({{kRegister, 3}, {kLane, 0}}), (Coords{{"dim0", 1}, {"dim1", 2}}));
  // lane 3 = (2, 1) ^ (4, 0); with register 1: dim0 6 ^ 1.
  EXPECT_EQ(l.apply({{kLane, 3}, {kRegister, 1}}), (Coords{{"dim0", 7}, {"dim1", 1}}));
}

TEST(LinearLayout, BadBasesAndInputsAreRejected) {
  std::string msg = internal_error([] { LL({{kLane, {{4}}}}, {{"dim0", 4}}); });
  EXPECT_NE(msg.find("basis (4) of input dim 'lane' is outside output dim 'dim0' of size 4"),
            std::string::npos)
      << msg;
  msg = internal_error([] { LL({}, {{"dim0", 6}}); });
  EXPECT_NE(msg.find("size of dim 'dim0' is 6, not a power of two"), std::string::npos) << msg;
  msg = internal_error([] { small_layout().apply({{kRegister, 4}, {kLane, 0}}); });
  EXPECT_NE(msg.find("input 4 is outside dim 'register' of size 4"), std::string::npos) << msg;
  msg = internal_error([] { small_layout().apply({{kRegister, 0}, {kWarp, 0}}); });
  EXPECT_NE(msg.find("no value for input dim 'lane'"), std::string::npos) << msg;
}

TEST(LinearLayout, ProductPlacesTheSecondAboveTheFirst) {
  // Shared dims: b's bits above a's, b's coordinates scaled by a's size (a repeated).
  LL p = LL::identity_1d(4, kRegister, "dim0") * LL::identity_1d(2, kRegister, "dim0") *
         LL::identity_1d(8, kLane, "dim0");
  EXPECT_EQ(p, LL({{kRegister, {{1}, {2}, {4}}}, {kLane, {{8}, {16}, {32}}}}, {{"dim0", 64}}));
  for (int r = 0; r < 8; ++r)
    for (int l = 0; l < 8; ++l)
      EXPECT_EQ(at(p.apply({{kRegister, r}, {kLane, l}}), "dim0"), r + 8 * l);
  // Independent dims: each keeps its own bases, zero in the other's dims.
  LL q = LL::identity_1d(4, kRegister, "dim1") * LL::identity_1d(2, kLane, "dim0");
  EXPECT_EQ(q.out_dims(), (std::vector<LL::OutDim>{{"dim1", 4}, {"dim0", 2}}));
  EXPECT_EQ(q.apply({{kRegister, 3}, {kLane, 1}}), (Coords{{"dim1", 3}, {"dim0", 1}}));
}

TEST(LinearLayout, ProductWithABlockDimSpreadsATileOverACluster) {
  // Two programs of a cluster, each holding a 16 x 8 mma tile, stacked along dim0.
  LL tile = mma_sync_accumulator({16, 8}, {1, 1});
  LL cluster = tile * LL::identity_1d(2, kBlock, "dim0");
  EXPECT_EQ(cluster.out_dims(), (std::vector<LL::OutDim>{{"dim0", 32}, {"dim1", 8}}));
  EXPECT_TRUE(cluster.is_surjective() && cluster.is_injective());
  for_each_input(cluster, [&](const Coords& in) {
    Coords one(in.begin(), in.end() - 1);  // register, lane, warp
    auto [row, col] = rc(tile.apply(one));
    EXPECT_EQ(rc(cluster.apply(in)), std::make_pair(row + 16 * at(in, kBlock), col));
  });
}

TEST(LinearLayout, ComposeFeedsOutputsToTheOuterInputs) {
  LL inner = small_layout();
  // outer: (dim0, dim1) -> flat = dim0 * 4 + dim1 (a row-major address).
  LL outer({{"dim0", {{4}, {8}, {16}}}, {"dim1", {{1}, {2}}}}, {{"addr", 32}});
  LL c = inner.compose(outer);
  for_each_input(inner, [&](const Coords& in) {
    auto [row, col] = rc(inner.apply(in));
    EXPECT_EQ(at(c.apply(in), "addr"), row * 4 + col);
  });
  std::string msg = internal_error([&] { inner.compose(LL::identity_1d(8, "dim0", "x")); });
  EXPECT_NE(msg.find("compose: the outer layout's input dims are not"), std::string::npos) << msg;
}

TEST(LinearLayout, InverseRoundTripsABijection) {
  LL c = mma_sync_accumulator({16, 8}, {1, 1});
  ASSERT_TRUE(c.is_surjective() && c.is_injective());
  LL inv = c.inverse();
  EXPECT_EQ(c.compose(inv), LL::identity_1d(4, kRegister, kRegister) *
                                LL::identity_1d(32, kLane, kLane) *
                                LL::identity_1d(1, kWarp, kWarp));
  EXPECT_EQ(inv.compose(c),
            LL::identity_1d(16, "dim0", "dim0") * LL::identity_1d(8, "dim1", "dim1"));
  std::string msg = internal_error([] { LL::zeros_1d(2, kWarp, "dim0").inverse(); });
  EXPECT_NE(msg.find("inverse of a layout that is not a bijection"), std::string::npos) << msg;
}

TEST(LinearLayout, PseudoInverseOfASurjectionIsARightInverse) {
  // 4 warps hold copies (zero bases): several inputs per element.
  LL l = blocked({8, 32}, {2, 1}, {4, 8}, {4, 1}, {1, 0});
  l = broadcast(l, 0);
  ASSERT_TRUE(l.is_surjective());
  ASSERT_FALSE(l.is_injective());
  LL p = l.pseudo_inverse();
  for_each_input(p, [&](const Coords& y) { EXPECT_EQ(l.apply(p.apply(y)), y); });
  // The lowest input bits are chosen: warp 0 (the copies' bits are 0).
  for_each_input(p, [&](const Coords& y) { EXPECT_EQ(at(p.apply(y), kWarp), 0); });
}

TEST(LinearLayout, PseudoInverseOfAnInjectionIsALeftInverse) {
  LL l({{kRegister, {{1, 0}, {0, 4}}}, {kLane, {{2, 1}}}}, {{"dim0", 4}, {"dim1", 8}});
  ASSERT_TRUE(l.is_injective());
  ASSERT_FALSE(l.is_surjective());
  LL p = l.pseudo_inverse();
  for_each_input(l, [&](const Coords& x) { EXPECT_EQ(p.apply(l.apply(x)), x); });
  LL neither({{kRegister, {{1}, {0}}}}, {{"dim0", 4}});
  std::string msg = internal_error([&] { neither.pseudo_inverse(); });
  EXPECT_NE(msg.find("neither surjective nor injective"), std::string::npos) << msg;
}

TEST(LinearLayout, ReshapeOutsFlattensRowMajor) {
  LL l = blocked({8, 16}, {1, 4}, {8, 4}, {1, 1}, {1, 0});
  LL flat = l.reshape_outs({{"dim0", 128}});
  LL split = l.reshape_outs({{"dim0", 4}, {"dim1", 2}, {"dim2", 16}});
  for_each_input(l, [&](const Coords& in) {
    auto [row, col] = rc(l.apply(in));
    EXPECT_EQ(at(flat.apply(in), "dim0"), row * 16 + col);
    EXPECT_EQ(split.apply(in), (Coords{{"dim0", row / 2}, {"dim1", row % 2}, {"dim2", col}}));
  });
  EXPECT_EQ(flat.reshape_outs({{"dim0", 8}, {"dim1", 16}}), l);
  std::string msg = internal_error([&] { l.reshape_outs({{"dim0", 64}}); });
  EXPECT_NE(msg.find("reshape_outs to dims of 6 bits from 7 bits"), std::string::npos) << msg;
}

TEST(LinearLayout, TransposeOutsPermutesCoordinates) {
  LL l = small_layout();
  LL t = l.transpose_outs({1, 0});
  EXPECT_EQ(t.out_dims(), (std::vector<LL::OutDim>{{"dim0", 4}, {"dim1", 8}}));
  for_each_input(l, [&](const Coords& in) {
    auto [row, col] = rc(l.apply(in));
    EXPECT_EQ(rc(t.apply(in)), std::make_pair(col, row));
  });
  EXPECT_EQ(t.transpose_outs({1, 0}), l);
  std::string msg = internal_error([&] { l.transpose_outs({0, 0}); });
  EXPECT_NE(msg.find("transpose_outs: order is not a permutation of 0 .. 1"), std::string::npos)
      << msg;
}

TEST(LinearLayout, EqualityAndToString) {
  EXPECT_EQ(small_layout(), small_layout());
  EXPECT_NE(small_layout(), small_layout().transpose_outs({0, 1}).reshape_outs({{"dim0", 32}}));
  EXPECT_NE(LL::identity_1d(4, kLane, "dim0"), LL::identity_1d(4, kRegister, "dim0"));
  EXPECT_EQ(mma_sync_accumulator({16, 8}, {1, 1}).to_string(),
            "register[4]: (0, 1) (8, 0)\n"
            "lane[32]: (0, 2) (0, 4) (1, 0) (2, 0) (4, 0)\n"
            "warp[1]:\n"
            "-> dim0[16], dim1[8]");
}

TEST(BlockedLayout, MatchesTheBlockedEncodingFormula) {
  // CTA tile 16 x 64 (2*4*2 rows, 4*8*2 cols), repeated twice along dim0 in registers.
  LL l = blocked({32, 64}, {2, 4}, {4, 8}, {2, 2}, {1, 0});
  EXPECT_EQ(l.in_dim_size(kRegister), 16);
  EXPECT_TRUE(l.is_surjective() && l.is_injective());
  for_each_input(l, [&](const Coords& in) {
    int r = at(in, kRegister), ln = at(in, kLane), w = at(in, kWarp);
    int col = r % 4 + 4 * (ln % 8 + 8 * (w % 2));
    int row = (r / 4) % 2 + 2 * (ln / 8 + 4 * (w / 2 + 2 * (r / 8)));
    EXPECT_EQ(rc(l.apply(in)), std::make_pair(row, col));
  });
  // Column-major: dim0 fastest.
  LL c = blocked({16, 8}, {4, 1}, {4, 8}, {1, 1}, {0, 1});
  for_each_input(c, [&](const Coords& in) {
    int r = at(in, kRegister), ln = at(in, kLane);
    EXPECT_EQ(rc(c.apply(in)), std::make_pair(r + 4 * (ln % 4), ln / 4));
  });
}

TEST(BlockedLayout, SmallerTileHoldsCopiesInLanesAndDropsRegisters) {
  // Covers 16 x 32: on a 1 x 32 tile the register of row 1 is dropped and the lanes of
  // rows 2 .. 14 hold copies of row 0.
  LL l = blocked({1, 32}, {2, 1}, {8, 4}, {1, 8}, {1, 0});
  EXPECT_EQ(l.in_dim_size(kRegister), 1);
  EXPECT_FALSE(l.is_injective());
  for_each_input(l, [&](const Coords& in) {
    int ln = at(in, kLane), w = at(in, kWarp);
    EXPECT_EQ(rc(l.apply(in)), std::make_pair(0, ln % 4 + 4 * w));
  });
  LL k = blocked({4, 32}, {2, 1}, {8, 4}, {1, 8}, {1, 0});
  for_each_input(k, [&](const Coords& in) {
    int r = at(in, kRegister), ln = at(in, kLane), w = at(in, kWarp);
    EXPECT_EQ(rc(k.apply(in)), std::make_pair((r + 2 * (ln / 4)) % 4, ln % 4 + 4 * w));
  });
}

TEST(BlockedLayout, BadArgumentsAreRejected) {
  std::string msg = internal_error([] { blocked({16, 16}, {1, 1}, {4, 4}, {1, 1}, {1, 0}); });
  EXPECT_NE(msg.find("threads_per_warp covers 16 lanes, not 32"), std::string::npos) << msg;
  msg = internal_error([] { blocked({16, 16}, {1, 1}, {4, 8}, {1, 1}, {1, 1}); });
  EXPECT_NE(msg.find("order is not a permutation of 0 .. 1"), std::string::npos) << msg;
  msg = internal_error([] { blocked({16, 12}, {1, 1}, {4, 8}, {1, 1}, {1, 0}); });
  EXPECT_NE(msg.find("shape[1] is 12, not a power of two"), std::string::npos) << msg;
  msg = internal_error([] { blocked({16}, {1, 1}, {4, 8}, {1, 1}, {1, 0}); });
  EXPECT_NE(msg.find("need 1 (> 0) entries each"), std::string::npos) << msg;
}

TEST(SliceLayout, ReductionResultIsHeldByEveryLaneOfTheReducedDim) {
  LL parent = blocked({16, 32}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  LL rows = slice(parent, 1);
  EXPECT_EQ(rows.out_dims(), (std::vector<LL::OutDim>{{"dim0", 16}}));
  // The 4 registers along dim1 are gone; the 8 lanes along dim1 hold the same row.
  EXPECT_EQ(rows.in_dim_size(kRegister), 1);
  for_each_input(rows, [&](const Coords& in) {
    EXPECT_EQ(at(rows.apply(in), "dim0"), at(in, kLane) / 8 + 4 * at(in, kWarp));
  });
  LL cols = slice(parent, 0);
  EXPECT_EQ(cols.in_dim_size(kRegister), 4);
  for_each_input(cols, [&](const Coords& in) {
    EXPECT_EQ(at(cols.apply(in), "dim0"), at(in, kRegister) + 4 * (at(in, kLane) % 8));
  });
  std::string msg = internal_error([&] { slice(parent, 2); });
  EXPECT_NE(msg.find("dim 2 is not one of the 2 tensor dims"), std::string::npos) << msg;
}

TEST(BroadcastLayout, SizeOneDimHasZeroBases) {
  LL parent = blocked({16, 32}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  LL b = broadcast(parent, 1);
  EXPECT_EQ(b.out_dims(), (std::vector<LL::OutDim>{{"dim0", 16}, {"dim1", 1}}));
  EXPECT_EQ(b.in_dims()[1].bases, (std::vector<LL::Basis>{{0, 0}, {0, 0}, {0, 0}, {1, 0}, {2, 0}}));
  EXPECT_EQ(slice(parent, 1), slice(b, 1));
}

TEST(MmaSyncLayout, AccumulatorMatchesThePtxFragment) {
  LL one = mma_sync_accumulator({16, 8}, {1, 1});
  for_each_input(one, [&](const Coords& in) {
    int l = at(in, kLane), r = at(in, kRegister);
    EXPECT_EQ(rc(one.apply(in)), std::make_pair(l / 4 + 8 * (r / 2 % 2), 2 * (l % 4) + r % 2));
  });
  // 2 x 2 warps (warp w at (w / 2, w % 2)), 2 x 2 repetitions, columns first.
  LL l = mma_sync_accumulator({64, 32}, {2, 2});
  EXPECT_EQ(l.in_dim_size(kRegister), 16);
  EXPECT_TRUE(l.is_surjective() && l.is_injective());
  for_each_input(l, [&](const Coords& in) {
    int ln = at(in, kLane), r = at(in, kRegister), w = at(in, kWarp);
    int row = ln / 4 + 8 * (r / 2 % 2) + 16 * (w / 2) + 32 * (r / 8);
    int col = 2 * (ln % 4) + r % 2 + 8 * (w % 2) + 16 * (r / 4 % 2);
    EXPECT_EQ(rc(l.apply(in)), std::make_pair(row, col));
  });
}

TEST(MmaSyncLayout, OperandsMatchThePtxFragments) {
  LL a = mma_sync_a({16, 16}, {1, 1});
  for_each_input(a, [&](const Coords& in) {
    int l = at(in, kLane), r = at(in, kRegister);
    EXPECT_EQ(rc(a.apply(in)),
              std::make_pair(l / 4 + 8 * (r / 2 % 2), 2 * (l % 4) + r % 2 + 8 * (r / 4)));
  });
  LL b = mma_sync_b({16, 8}, {1, 1});
  for_each_input(b, [&](const Coords& in) {
    int l = at(in, kLane), r = at(in, kRegister);
    EXPECT_EQ(rc(b.apply(in)), std::make_pair(2 * (l % 4) + r % 2 + 8 * (r / 2 % 2), l / 4));
  });
  // With 2 x 2 warps, warps of one row share A's rows and warps of one column B's columns.
  LL a2 = mma_sync_a({32, 32}, {2, 2});
  LL b2 = mma_sync_b({32, 16}, {2, 2});
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(rc(a2.apply(rlw(0, 0, w))), std::make_pair(16 * (w / 2), 0));
    EXPECT_EQ(rc(b2.apply(rlw(0, 0, w))), std::make_pair(0, 8 * (w % 2)));
  }
  // Registers: A's 8 fragment registers, then K repetitions; B's 4, then K.
  EXPECT_EQ(rc(a2.apply(rlw(8, 0, 0))), std::make_pair(0, 16));
  EXPECT_EQ(rc(b2.apply(rlw(4, 0, 0))), std::make_pair(16, 0));
  EXPECT_TRUE(a2.is_surjective() && !a2.is_injective());
  std::string msg = internal_error([] { mma_sync_a({16, 8}, {1, 1}); });
  EXPECT_NE(msg.find("a 16 x 8 tile is smaller than one 16 x 16 fragment"), std::string::npos)
      << msg;
}

TEST(WgmmaLayout, AccumulatorMatchesThePtxFragment) {
  // Two warpgroups along N, a repetition along M.
  LL l = wgmma_accumulator({128, 128}, 64, {4, 2});
  EXPECT_EQ(l.in_dim_size(kRegister), 64);
  EXPECT_EQ(l.in_dim_size(kWarp), 8);
  EXPECT_TRUE(l.is_surjective() && l.is_injective());
  for_each_input(l, [&](const Coords& in) {
    int ln = at(in, kLane), r = at(in, kRegister), w = at(in, kWarp);
    int fr = r % 32;  // the register within one instruction's N / 2
    int row = 16 * (w % 4) + ln / 4 + 8 * (fr / 2 % 2) + 64 * (r / 32);
    int col = 8 * (fr / 4) + 2 * (ln % 4) + fr % 2 + 64 * (w / 4);
    EXPECT_EQ(rc(l.apply(in)), std::make_pair(row, col));
  });
  std::string msg = internal_error([] { wgmma_accumulator({64, 64}, 24, {4, 1}); });
  EXPECT_NE(msg.find("instruction width n is 24, not a power of two"), std::string::npos) << msg;
  msg = internal_error([] { wgmma_accumulator({64, 64}, 64, {2, 2}); });
  EXPECT_NE(msg.find("not a multiple of 4"), std::string::npos) << msg;
  msg = internal_error([] { wgmma_accumulator({64, 32}, 64, {4, 1}); });
  EXPECT_NE(msg.find("smaller than one 64 x 64 fragment"), std::string::npos) << msg;
}

/// The offset of (row, col) in a rows x cols tile of `eb`-byte elements swizzled by `swz`
/// bytes as the PTX ISA draws it: atoms of 8 rows of swz bytes stacked down the rows, in
/// each row the 16-byte chunk index XORed with the row's phase in the 8-row pattern.
int32_t swizzled_offset(int row, int col, int rows, int eb, int swz) {
  int atom_cols = swz / eb, vec = 16 / eb, chunks = swz / 16;
  int atom = col / atom_cols, c = col % atom_cols;
  int phase = (row / (8 / chunks)) % chunks;
  return atom * rows * atom_cols + row * atom_cols + ((c / vec) ^ phase) * vec + c % vec;
}

TEST(SwizzledShared, SwizzlesAreBijectionsMatchingTheXorFormula) {
  for (int swz : {32, 64, 128})
    for (int eb : {1, 2, 4})
      for (int atoms : {1, 2}) {
        int rows = 16, cols = atoms * swz / eb;
        LL l = swizzled_shared({rows, cols}, eb, swz);
        ASSERT_TRUE(l.is_surjective() && l.is_injective()) << swz << " " << eb;
        LL inv = l.inverse();
        std::set<int32_t> seen;
        for (int row = 0; row < rows; ++row)
          for (int col = 0; col < cols; ++col) {
            int32_t o = swizzled_offset(row, col, rows, eb, swz);
            EXPECT_EQ(rc(l.apply({{kOffset, o}})), std::make_pair(row, col))
                << swz << "B, " << eb << "-byte, offset " << o;
            EXPECT_EQ(at(inv.apply({{"dim0", row}, {"dim1", col}}), kOffset), o);
            seen.insert(o);
          }
        EXPECT_EQ(static_cast<int>(seen.size()), rows * cols);
      }
}

TEST(SwizzledShared, UnswizzledAndColumnMajorTiles) {
  LL plain = swizzled_shared({8, 32}, 2, 0);
  LL cm = swizzled_shared({64, 8}, 2, 128, {0, 1});
  for (int o = 0; o < 256; ++o) {
    EXPECT_EQ(rc(plain.apply({{kOffset, o}})), std::make_pair(o / 32, o % 32));
    // Contiguous dim0: the memory rows are dim1.
    auto [d0, d1] = rc(cm.apply({{kOffset, o}}));
    EXPECT_EQ(swizzled_offset(d1, d0, 8, 2, 128), o);
  }
  std::string msg = internal_error([] { swizzled_shared({8, 32}, 2, 128); });
  EXPECT_NE(msg.find("8 x 32 tile (contiguous dim last) is smaller than one atom of 8 x 64"),
            std::string::npos)
      << msg;
  msg = internal_error([] { swizzled_shared({8, 64}, 2, 16); });
  EXPECT_NE(msg.find("swizzle_bytes is 16, not 0, 32, 64 or 128"), std::string::npos) << msg;
}

TEST(LayoutConversion, BlockedToMmaMovesEachElementToItsFragmentSlot) {
  LL mma = mma_sync_accumulator({16, 8}, {1, 1});
  LL blk = blocked({16, 8}, {1, 4}, {16, 2}, {1, 1}, {1, 0});
  LL to_blocked = mma.invert_and_compose(blk);
  for_each_input(mma, [&](const Coords& in) {
    auto [row, col] = rc(mma.apply(in));
    // In the blocked layout, element (row, col) is register col % 4 of lane 2 row + col / 4.
    EXPECT_EQ(to_blocked.apply(in), rlw(col % 4, 2 * row + col / 4, 0));
  });
  // And back: the composition of both conversions is the identity.
  EXPECT_EQ(to_blocked.compose(blk.invert_and_compose(mma)),
            LL::identity_1d(4, kRegister, kRegister) * LL::identity_1d(32, kLane, kLane) *
                LL::identity_1d(1, kWarp, kWarp));
  // To a layout holding copies (4 warps, 4 rows on the warps of one): the lowest warp.
  LL copies = blocked({16, 8}, {1, 4}, {16, 2}, {4, 1}, {1, 0});
  LL to_copies = mma.invert_and_compose(copies);
  for_each_input(mma, [&](const Coords& in) { EXPECT_EQ(at(to_copies.apply(in), kWarp), 0); });
  // A destination that does not hold every element.
  LL half = blocked({16, 4}, {1, 2}, {16, 2}, {1, 1}, {1, 0});
  half = LL(half.in_dims(), {{"dim0", 16}, {"dim1", 8}});
  std::string msg = internal_error([&] { mma.invert_and_compose(half); });
  EXPECT_NE(msg.find("is not held by the destination layout"), std::string::npos) << msg;
}

TEST(LayoutConversion, RegistersToSwizzledSharedOffsets) {
  // A register tile stored to a 128-byte swizzled f16 tile: the offset of each element.
  LL regs = mma_sync_accumulator({64, 64}, {2, 2});
  LL smem = swizzled_shared({64, 64}, 2, 128);
  LL offsets = regs.compose(smem.inverse());
  for_each_input(regs, [&](const Coords& in) {
    auto [row, col] = rc(regs.apply(in));
    EXPECT_EQ(at(offsets.apply(in), kOffset), swizzled_offset(row, col, 64, 2, 128));
  });
}

}  // namespace

// held_bit: one bit of one output dim, none (a broadcast bit), or several (nullopt).
TEST(LinearLayout, HeldBitNamesTheOneCoordinateBitOfABasis) {
  using tessel::layout::held_bit;
  EXPECT_EQ(held_bit({0, 8}), (std::pair{1, 3}));
  EXPECT_EQ(held_bit({1, 0}), (std::pair{0, 0}));
  EXPECT_EQ(held_bit({0, 0}), (std::pair{-1, -1}));
  EXPECT_FALSE(held_bit({2, 4}).has_value());
  EXPECT_FALSE(held_bit({6, 0}).has_value());
}
