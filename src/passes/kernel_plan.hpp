// The config applied to one top-level loop nest (one CUDA kernel), once: what code
// generation reads instead of the Config. Block sizes per tile dimension, the knobs of
// every loop of the nest, the program map (pid type), the pipelining depth, the register
// cap, the loads' L2 eviction priorities and indexing.
//
// Before (config, read while printing):    block_size(ld, config), loop_knobs(g, loop, config),
//                                          config.pid_type, config.num_stages, ...
// After (plan_kernel, in the layout stage): plan.block(ld), plan.knobs(loop), plan.pid_type, ...
// TESSEL_DUMP_DIR's 06-layout.ir describes each nest's plan (describe).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.hpp"
#include "passes/loop_knobs.hpp"
#include "tessel/config.hpp"

namespace tessel::passes {

/// The compute capability (major x 10 + minor) tessel lowers for where no GPU says
/// otherwise: sm_90 (H100, H200). CPU tests compile generated code for it with NVRTC.
inline constexpr int kDefaultArch = 90;

/// Which tensor-core and copy instructions compute capability `arch` has (PTX ISA, the
/// target ISA notes of each instruction): mma.sync on 16-bit floats, TF32 and i8 from sm_80,
/// on f8e4m3 and f8e5m2 from sm_89; wgmma on sm_90 only (sm_90a; later GPUs have other
/// tensor-core instructions); the TMA (bulk tensor copies) from sm_90.
bool has_mma_sync(int arch, DType operand);
inline bool has_wgmma(int arch) { return arch == 90; }
inline bool has_tma(int arch) { return arch >= 90; }
/// Shared memory one program may use on compute capability `arch`, in bytes: the opt-in
/// maximum per thread block (CUDA C++ Programming Guide, "Technical Specifications per
/// Compute Capability"): 227 KiB on sm_90 and sm_100, 163 KiB on sm_80 and sm_87, 99 KiB on
/// sm_86, sm_89 and sm_120, 64 KiB on sm_75.
int64_t shared_bytes_limit(int arch);

struct KernelPlan {
  const ir::Node* loop = nullptr;  // the top-level loop
  int arch = kDefaultArch;         // the target GPU's compute capability (has_wgmma, ...)
  int64_t shared_limit() const { return shared_bytes_limit(arch); }
  std::string config_json;  // the complete config (the kernel's header comment)
  PidType pid_type = PidType::flat;
  bool persistent = false;  // pid_type persistent_blocked or persistent_interleaved
  int num_stages = 1;       // Config::num_stages: loads issued num_stages - 1 tiles ahead
  std::optional<int> maxnreg;
  int split_k = 1;               // Config::split_k: programs per output tile of a dot on wgmma
  bool warp_specialize = false;  // Config::warp_specialize: a producer warpgroup for a wgmma ring
  /// Per load (Node::load_id): its L2 eviction priority; empty: none set.
  std::vector<EvictionPolicy> load_eviction;
  /// Per load (Node::load_id): whether Config::indexing asks for a tensor descriptor (TMA)
  /// and the target has the TMA (below sm_90 such loads read through pointers, as Triton's
  /// tensor descriptors do there); empty: none does.
  std::vector<bool> tensor_descriptor_loads;
  /// Config::indexing asks for a tensor descriptor that the target, without the TMA, reads
  /// through pointers (describe says so).
  bool tensor_descriptors_without_tma = false;

  /// Elements `s` spans in a tile value (null: 1): a tile's block size, a padded extent's
  /// power of two, a BlockSize's block. Errors: InternalError for a Sym of another kernel.
  int64_t block(const ir::Sym* s) const;
  /// Block size of loop dimension `d` (a grid dimension: 1).
  int64_t block(const ir::LoopDim& d) const { return d.is_tile ? block(d.sym) : 1; }
  /// Elements of one tile of `loop`: the product of its dims' blocks.
  int64_t tile_elems(const ir::Node* loop) const;
  /// The knobs of `loop`, the top-level loop or one nested in it. Errors: InternalError
  /// for a loop outside the nest.
  const LoopKnobs& knobs(const ir::Node* loop) const;

  std::vector<int64_t> blocks_by_sym;                                // by Sym::id
  std::vector<std::pair<const ir::Node*, LoopKnobs>> knobs_by_loop;  // pre-order (ir::walk)
};

/// The plan of top-level loop `loop` of `g` under complete config `c`, for a GPU of compute
/// capability `arch`.
KernelPlan plan_kernel(const ir::Graph& g, const ir::Node* loop, const Config& c,
                       int arch = kDefaultArch);

/// The plan as comment lines for stage dumps: pid type, stages, register cap, each loop's
/// knobs and each tile dimension's block.
std::string describe(const KernelPlan& p);

}  // namespace tessel::passes
