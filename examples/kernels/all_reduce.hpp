// One-shot all-reduce over the R ranks of a ts::SymmetricBuffer (the algorithm of Helion's
// examples/distributed/all_reduce.py, its barriers those of symm_mem_sync in
// examples/distributed/utils.py). Per tile of the buffers:
//   1. a barrier: the rank sets slot [tile, my_rank] of every rank's signal pad to 1 (a
//      signal through a multicast tensor of the pads, waiting for the slot to be 0: the
//      previous barrier's signal was consumed), then waits until slot [tile, r] of its own
//      pad is 1 for every rank r and resets those slots to 0 (the writes of every rank
//      before the kernel are visible after it: release / acquire at system scope);
//   2. it sums the tile of every rank's buffer, read through a multicast tensor of the
//      buffers (accumulated in f32, so bf16 rounds once), and stores the sum;
//   3. a second barrier, so that no rank overwrites its buffer (a later kernel) while
//      another still reads it.
// The pads are zero again after every call (CUDA graph replays need no reset). The pad
// index is the tile index, so the pads need tiles * R elements (all_reduce_pad_elements).
//
// Running it. Every rank's programs must be resident at once (a wait spins until every
// rank's program of the same tile signals). On one GPU with R ranks: R launches of the
// kernel, one per rank (ranks = {r}, out [1, N]), on R streams, each with a persistent
// pid_type and Settings::max_sms = SMs / R (all_reduce_settings), the same for every rank:
// then every rank has the same grid and program w of every rank walks the same tiles in
// the same order. On the CPU interpreter one host thread cannot run R launches at once, so
// a single launch runs every rank: ranks = {0, 1, ..., R - 1}, out [R, N] (row k is rank
// ranks[k]'s result); the interpreter runs the programs of a kernel that waits
// concurrently, one per (rank, tile), so the barriers meet (docs/DECISIONS.md).
#pragma once

#include <cstdint>
#include <tessel/tessel.hpp>
#include <utility>
#include <vector>

namespace examples {
namespace ts = tessel;

/// The one-shot all-reduce kernel: out[k, i] = sum over ranks r of buffer r [i], computed
/// by rank ranks[k] (barriers included), in tiles of `block` elements. Arguments: buf_ptrs
/// (u64 [R], the buffers' addresses: SymmetricBuffer::dev_ptrs), like (a rank's buffer:
/// shape [N] and dtype, bf16 or f32), pad_ptrs (u64 [R], the signal pads' addresses:
/// signal_pad_ptrs), pad (a rank's signal pad, i32 of at least all_reduce_pad_elements(N,
/// R, block) zeros), ranks (i64 [K], the ranks this launch runs), out ([K, N], like's
/// dtype). `s`: pid_type, max_sms, num_warps (all_reduce_settings on a GPU).
inline auto make_one_shot_all_reduce(int64_t block = 1024, ts::Settings s = {}) {
  s.static_captures = true;  // `block` is fixed for the kernel object
  return ts::kernel(
      "one_shot_all_reduce",
      [block](ts::Tensor buf_ptrs, ts::Tensor like, ts::Tensor pad_ptrs, ts::Tensor pad,
              ts::Tensor ranks, ts::Tensor out) {
        const ts::Value world = buf_ptrs.size(0);
        for (auto [tk, t] : ts::tile(ranks.size(0), like.size(0), {.block_size = {1, block}})) {
          const ts::Value rank = ranks(tk.begin());
          const ts::Value slot = t.id() * world;  // the tile's R slots in every pad
          auto pads = ts::multicast_like(pad, pad_ptrs(ts::all));  // every rank's pad
          auto mine = ts::multicast_like(pad, pad_ptrs(rank));     // this rank's pad
          auto barrier = [&] {
            ts::signal(pads, {slot + rank}, 1, 0, ts::Scope::sys);
            ts::wait(mine, {slot + ts::arange(world)}, 1, 0, ts::Scope::sys);
          };
          barrier();
          auto bufs = ts::multicast_like(like, buf_ptrs(ts::all));
          ts::Value sum = ts::sum(bufs(t).to(ts::f32), 0);  // [R, t] -> [t], in f32
          out(tk, t) = sum(ts::newaxis, ts::all);
          barrier();
        }
      },
      s);
}

/// Signal-pad elements a call needs per rank: R slots for each tile of `block` elements.
inline int64_t all_reduce_pad_elements(int64_t n, int ranks, int64_t block = 1024) {
  return (n + block - 1) / block * ranks;
}

/// Settings for one of R ranks on one GPU of `sms` SMs: a persistent grid of at most
/// sms / R programs (so every rank's programs are resident at once), `num_warps` warps.
inline ts::Settings all_reduce_settings(int sms, int ranks, int num_warps = 8) {
  ts::Config c;
  c.num_warps = num_warps;
  c.num_stages = 1;  // no loads issued ahead of the barrier that orders them
  c.pid_type = ts::PidType::persistent_interleaved;
  return ts::Settings{.max_sms = sms / ranks, .config = c};
}

/// R ranks of a GPU ts::SymmetricBuffer on one GPU: rank r's launch of the kernel on its
/// own stream (ranks = {r}, out(r) of shape [1, N]), with all_reduce_settings for the
/// GPU's `sms` SMs, so every rank runs the same grid. The buffers' pads must hold
/// all_reduce_pad_elements(N, R, block) elements. enqueue(r) does not synchronize the host:
/// enqueue every rank before synchronizing (a rank alone waits forever at its barrier).
class OneGpuAllReduce {
 public:
  OneGpuAllReduce(ts::SymmetricBuffer sb, int sms, int64_t block = 1024, int num_warps = 8)
      : sb_(std::move(sb)),
        k_(make_one_shot_all_reduce(block, all_reduce_settings(sms, sb_.world_size(), num_warps))) {
    const ts::Device device = sb_.buffer(0).device();
    const int64_t n = sb_.buffer(0).size(0);
    for (int r = 0; r < sb_.world_size(); ++r) {
      streams_.push_back(ts::Stream::create());
      ranks_.push_back(ts::Buffer::from_vector({static_cast<double>(r)}, {1}, ts::i64).to(device));
      outs_.push_back(ts::Buffer::zeros({1, n}, sb_.buffer(0).dtype(), device));
    }
    ts::Stream{}.synchronize();  // the fills above ran on the legacy stream; ours do not wait
  }
  /// Rank r's launch on stream(r) (asynchronous).
  void enqueue(int r) const {
    k_(streams_[r], sb_.dev_ptrs(r), sb_.buffer(r), sb_.signal_pad_ptrs(r), sb_.signal_pad(r),
       ranks_[r], outs_[r]);
  }
  /// Every rank's launch, then waits for all of them.
  void run() const {
    for (int r = 0; r < sb_.world_size(); ++r) enqueue(r);
    synchronize();
  }
  void synchronize() const {
    for (const ts::Stream& s : streams_) s.synchronize();
  }
  ts::Stream stream(int r) const { return streams_[r]; }
  /// Rank r's result, [1, N].
  const ts::Buffer& out(int r) const { return outs_[r]; }
  const ts::SymmetricBuffer& buffers() const { return sb_; }

 private:
  ts::SymmetricBuffer sb_;
  decltype(make_one_shot_all_reduce()) k_;
  std::vector<ts::Stream> streams_;
  std::vector<ts::Buffer> ranks_, outs_;
};

}  // namespace examples
