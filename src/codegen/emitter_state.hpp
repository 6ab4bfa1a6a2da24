// The state of emitting one kernel, shared by the emitter's parts:
// cuda_emitter.cpp (kernel, loops, values), emit_memory.cpp (loads, stores),
// emit_reduce.cpp (reductions), emit_facts.cpp (register uniformity, folds, rounding by
// stores). Internal to codegen.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cuda_kernel.hpp"
#include "codegen/names.hpp"
#include "passes/kernel_ir.hpp"
#include "passes/kernel_plan.hpp"
#include "passes/layout.hpp"
#include "passes/reduce_steps.hpp"

namespace tessel::codegen {

/// C++ register type of a dtype in generated code (f16/bf16 are held as float).
std::string reg_type(DType t);
/// A literal of dtype t.
std::string literal(DType t, double f, int64_t i);

class Emitter {
 public:
  Emitter(const ir::Graph& g, const passes::KernelPlan& plan, const passes::NestIr& nir,
          CudaKernel& out);
  void run();

  // --- shared helpers ---
  void line(const std::string& s, const ir::Node* at = nullptr);
  void open(const std::string& s, const ir::Node* at = nullptr);
  /// An unrolled loop over registers (or warps): open, named for the reader.
  void open_unrolled(const std::string& s);
  void close();
  std::string idx_t() const { return idx_t_; }
  int regs() const { return L_->regs(); }
  bool is_array(const ir::Node* n) const { return !n->is_scalar(); }
  /// Expression of node `n` at register `r` (an expression string such as "r").
  std::string at(const ir::Node* n, const std::string& r);
  /// Expression of a scalar node.
  std::string scalar(const ir::Node* n);
  /// Offset of register r's element along Sym `s` from the tile's begin (an int
  /// expression): the slot's bits, or for a flattened loop's dim its coordinate array.
  std::string coord(const ir::Sym* s, const std::string& r) const;
  /// The bits of `s`'s layout slot at register r (equal to coord except in flattened loops).
  std::string slot_coord(const ir::Sym* s, const std::string& r) const;
  /// Whether `s` is a dim of a flattened loop (its elements are not contiguous in memory).
  bool flattened(const ir::Sym* s) const;
  int slot(const ir::Sym* s) const { return L_->slot_of.at(s); }
  /// "true" when every thread holds elements, else the test for register r.
  std::string active(const std::string& r) const;
  /// Validity of coordinate of `s` at r: inside the tile / extent and the Sym's own block.
  std::string sym_valid(const ir::Sym* s, const std::string& r);
  /// Whether `s` spans the vector lanes and its limits are multiples of 16 (the key's
  /// facts), so that validity is the same for all elements of a vector.
  bool valid_by_vector(const ir::Sym* s) const;
  /// Whether comparison `n` is a tile's index (or a widening cast of it) against its
  /// loop's bounds, index < b with b >= end or index >= b with b <= begin, that holds for
  /// every element: constant bounds with every tile full (e.g. tn.index() < x.size(1) in
  /// chunks of 4096 over 16384 columns, static shapes). The emitter writes `true`.
  bool tile_index_always_in_bounds(const ir::Node* n) const;
  std::string tensor_param(const ir::Node* t);
  /// Size `dim` of tensor `t` where the generated code knows it (static shapes, a size the
  /// key fixes, a constant allocation), else -1.
  int64_t known_size(const ir::Node* t, int dim) const;
  std::string size_param(const ir::Node* t, int dim);
  std::string stride_param(const ir::Node* t, int dim);
  /// The parameter holding size or stride `dim` of tensor `t` (kind tensor_size or
  /// tensor_stride), added to the kernel's parameters on first use.
  std::string dim_param(Param::Kind kind, const ir::Node* t, int dim);
  std::string host_param(const ir::Node* n);
  /// Settings::check_bounds: the kernel's bounds record parameter (emit_memory.cpp).
  std::string check_record_param();
  std::string declare(const ir::Node* n, const std::string& suffix = "");
  std::string name(const ir::Node* n) const { return names_.at(n); }
  void bind(const ir::Node* n, const std::string& nm) { names_[n] = nm; }
  std::string loc_comment(const ir::Node* n) const;
  [[noreturn]] void unsupported(const ir::Node* n, const std::string& what) const;

  // --- parts ---
  void emit_block(const ir::Block& b);
  void emit_node(const ir::Node* n);
  void emit_loop(const ir::Node* n);
  void emit_load(const ir::Node* n);
  /// The vector loads of vector load `n` into `raw` (its memory dtype, TS_N elements).
  void emit_vector_load_into(const ir::Node* n, const std::string& raw);
  /// Before `loop`: declares the loads' buffers and loads the first tiles into them.
  void emit_prefetch_first(const ir::Node* loop, const passes::Prefetch& p);
  /// At the top of `loop`'s body: converts buffer 0 into the loads' values, moves the
  /// other buffers down, then loads tile i + p.tiles_ahead into the last (the loads are then
  /// skipped where they stand).
  void emit_prefetch_next(const ir::Node* loop, const passes::Prefetch& p);
  /// Prefetch buffers (`count` per load, p<id> or p<id>_<k>) of `loads` in their memory
  /// dtype; loading the current tile into buffer k; taking buffer 0 as the loads' values
  /// v<id> and moving buffers k + 1 to k (emit_pipeline.cpp).
  void declare_prefetch_buffers(const std::vector<const ir::Node*>& loads, int count,
                                const std::string& comment);
  void load_into_buffers(const std::vector<const ir::Node*>& loads, int k, int count);
  void take_prefetched(const std::vector<const ir::Node*>& loads, int count);
  /// The mma.sync contraction whose factor load `n` is copied by cp.async into its ring
  /// (passes::Contraction::Mma::copy_stages), or null.
  const passes::Contraction* copy_ring_of(const ir::Node* n) const;
  /// cp.async copies of the current tile of `loads` (copy_ring_of each) into ring slot `slot`
  /// (an expression), each in its factor's staged layout.
  void copy_into_ring(const std::vector<const ir::Node*>& loads, const std::string& slot);
  /// The vector loads of vector load `n` as cp.async copies into the staged tile at `tile`
  /// (its memory dtype): rows of `inner` elements `pitch` apart, as emit_mma_contraction stages
  /// a factor.
  void emit_vector_copy_into(const ir::Node* n, const std::string& tile, int64_t inner,
                             int64_t pitch);
  /// num_stages >= 2 with a persistent pid_type (emit_pipeline.cpp): before the program
  /// loop, declares the buffers of the top-level loop's early `loads` and loads the tile of
  /// program id `first` (if below `end`) into them.
  void emit_program_prefetch_first(const std::vector<const ir::Node*>& loads,
                                   const passes::LoopKnobs& knobs,
                                   const std::vector<std::string>& counts, const std::string& first,
                                   const std::string& end);
  /// Where early load n of the program loop stands in its body: converts its buffer into
  /// its value, then loads the tile of program id program_next_ (if below program_end_)
  /// into it; so the buffer, not the value, is what lives through the work before the load
  /// (a loop over K holding an accumulator).
  void take_program_prefetch(const ir::Node* n);
  void emit_store(const ir::Node* n);
  /// The layout of access n where it has its own (the kernel IR's), else null.
  const passes::Layout* own_layout(const ir::Node* n) const { return nir_.own_layout(n); }
  /// Emits `make` with L_ = `own` (element coordinates, vectors and masks of that layout).
  /// A layout with another vector width or number of groups than the one in use (a
  /// contraction's factor) has TS_V and TS_G defined for it while its code is emitted.
  template <class F>
  void in_layout(const passes::Layout& own, F&& make) {
    const passes::Layout* saved = L_;
    set_layout_macros(*saved, own);
    L_ = &own;
    make();
    L_ = saved;
    set_layout_macros(own, *saved);
  }
  /// The layout of a contraction's factor whose load is `n` (it is loaded in it), or null.
  const passes::Layout* factor_load_layout(const ir::Node* n) const;
  /// `each(n)` for each load n of `loads`, emitted in the layout n is loaded in: its
  /// factor's (factor_load_layout) or the one in use; TS_V and TS_G change only between
  /// loads of layouts that differ in them.
  template <class F>
  void each_in_load_layout(const std::vector<const ir::Node*>& loads, F&& each) {
    const passes::Layout* saved = L_;
    for (const ir::Node* n : loads) {
      const passes::Layout* want = factor_load_layout(n);
      if (!want) want = saved;
      if (want != L_) set_layout_macros(*L_, *want);
      L_ = want;
      each(n);
    }
    if (L_ != saved) set_layout_macros(*L_, *saved);
    L_ = saved;
  }
  /// Redefines TS_V and TS_G where layout `to` differs from `from` in them.
  void set_layout_macros(const passes::Layout& from, const passes::Layout& to);
  /// The contraction whose sum is `sum` (passes/contractions.hpp), or null.
  const passes::Contraction* contraction_of(const ir::Node* sum) const;
  /// The sum of contraction c, its factors staged in shared memory (emit_contract.cpp).
  void emit_contraction(const passes::Contraction& c);
  /// Contraction c's factor i: its nodes in its own layout, then `to_shared` (in it too).
  void emit_factor(const passes::Contraction& c, int i, const std::function<void()>& to_shared);
  /// A contraction on tensor cores (Contraction::mma; emit_mma.cpp).
  void emit_mma_contraction(const passes::Contraction& c);
  /// A contraction on wgmma, its factors in its ring (Contraction::Mma::wgmma;
  /// emit_wgmma.cpp).
  void emit_wgmma_contraction(const passes::Contraction& c);
  /// Its products of one tile of K with 8-bit floats summed into f32 (Mma::promote_n): per
  /// 64-row tile i < reps and part h of its `cols` columns, `fn` over the tile's k steps
  /// (`k_steps`, a loop over ks) from zero into `part`, then added into `sum` (a_desc and
  /// b_desc: the operands' descriptors in i, h and ks).
  void emit_promoted_products(const passes::Contraction& c, const std::string& sum,
                              const std::string& fn, const std::string& a_desc,
                              const std::string& b_desc, int64_t reps, int64_t cols,
                              const std::string& k_steps);
  /// The contractions on wgmma whose K is `loop`'s tile (each with a ring of its own).
  std::vector<const passes::Contraction*> rings_of(const ir::Node* loop) const;
  /// Before `loop` (its lb/le declared): the ring's load function and its first tiles.
  void emit_ring_first(const ir::Node* loop, const passes::Contraction& c);
  /// After `loop`: waits for the last tile's products and releases its buffer.
  void emit_ring_last(const ir::Node* loop, const passes::Contraction& c);
  // ---- split-K (Config::split_k, emit_split_k.cpp) ----
  /// The loop over K whose tiles the programs of an output tile share: the one loop of
  /// the nest with wgmma rings, a statement of the top-level loop's body, carrying only
  /// their accumulators from zeros; else nullptr and `why_not` says why.
  const ir::Node* find_split_loop(std::string& why_not) const;
  /// The flat program's tile and share: pid = blockIdx.x / split_k, split = the rest.
  void emit_split_program();
  /// The share of the loop over K's tiles that this program sums: lb/le of `loop`.
  void emit_split_bounds(const ir::Node* loop);
  /// After the loop: partial sums to the workspace; the tile's last program adds them
  /// in split order and goes on to the epilogue, the others return.
  void emit_split_reduction(const ir::Node* loop);
  const ir::Node* split_loop_ = nullptr;  // Config::split_k > 1: find_split_loop()
  /// At the program's start: the rings' mbarriers and counters.
  void declare_rings(std::ostringstream& src) const;
  /// Before the persistent program loop: the cursor (program id, tile of K) of each ring
  /// that runs across programs (Contraction::Mma::across_programs).
  void declare_ring_cursors();
  /// One ring's cursor, starting at the program walk's first program id.
  void declare_ring_cursor(const passes::Contraction& c);
  /// The ring's load function `ring_load(kb[, tile begins])`: waits until buffer ld % S is
  /// read, arms its `filled` mbarrier, issues the TMA copies of tile kb of K (of the
  /// program whose tile begins it takes, `across`; else the running program's).
  void emit_ring_load(const passes::Contraction& c, bool across);
  /// The cursor's next tile of K loaded and the cursor advanced, along K and on to the
  /// program walk's next program id (program_walk_), while `condition` holds.
  void emit_ring_walk(const passes::Contraction& c, const std::string& condition);
  /// Config::warp_specialize (Contraction::Mma::producer_warp): the threads past TS_T, one
  /// warp, whose first thread issues every copy of the ring for the program walk's program
  /// ids (program_walk_), then exit; the consumers go on.
  void emit_producer_warp(const passes::Contraction& c);
  /// The contraction whose ring a producer warpgroup fills, or null; and whether the code
  /// emitted is past the producer's branch (line(): __syncthreads becomes the consumers').
  const passes::Contraction* producer_ = nullptr;
  bool consumers_only_ = false;
  /// The registers per thread a program with a producer warpgroup launches with, where its
  /// warpgroups then move registers (setmaxnreg): the kernel's __maxnreg__, so that ptxas
  /// knows the count at entry (else it ignores setmaxnreg: C7508). 0: none.
  int launch_registers_ = 0;
  /// The array contraction sum `s` is summed into (declared here) and its initial value at
  /// register r: the add `acc + s` that is s's only use (f32, s's shape, acc computed
  /// earlier) takes s's place, starting from acc (the add is then not emitted: one
  /// accumulator's registers, not two); where acc is a loop's carried value that the add
  /// updates and nothing else reads, s is summed into acc's own registers (init ""); else an
  /// array for s starting from 0.
  struct ContractionSum {
    std::string name, init;
  };
  /// How contraction sum s accumulates: `add` = acc + s its only use (else null); `loop`
  /// when acc is that loop's carried value, updated by the add and read by nothing else
  /// (summed in its own registers), `from_zeros` when its initial value is ts::zeros.
  struct Accumulation {
    const ir::Node *add = nullptr, *acc = nullptr, *loop = nullptr;
    bool from_zeros = false;
  };
  Accumulation accumulation_of(const ir::Node* s) const;
  Accumulation find_accumulation(const ir::Node* s) const;         // accumulation_of, not memoized
  mutable std::map<const ir::Node*, Accumulation> accumulations_;  // accumulation_of's
  /// Whether `carried` of `loop` is a wgmma ring's accumulator starting from zeros: its
  /// first products of each loop overwrite it (scale-d 0), so it is not initialized (an
  /// initialization would end wgmma's pipelining: ptxas C7515) but zeroed when the loop
  /// runs no iteration.
  bool starts_from_zeros(const ir::Node* loop, const ir::Node* carried) const;
  /// Whether `carried` of `loop` is such an accumulator of 8-bit products summed into f32 a
  /// tile of K at a time (Mma::promote_n): wgmma writes the partial sums, never it, so it is
  /// zeroed before the loop and each tile's sums are added as they are.
  bool promoted_from_zeros(const ir::Node* loop, const ir::Node* carried) const;
  ContractionSum declare_contraction_sum(const ir::Node* s, const std::string& comment);
  /// Array `dst` (declared here, reg_type(dtype)) := array `src`, converted from layout
  /// `from` to layout `to` (slots of the same Syms in another order) through shared
  /// memory: each thread writes its elements at their position in `from`'s tile (one pad
  /// element per row of its innermost slot), a barrier, each reads its elements in `to`.
  void convert_layout(const std::string& src, const passes::Layout& from, const std::string& dst,
                      const passes::Layout& to, DType dtype, const ir::Node* at);
  /// The same where `to` is `from` with lanes exchanged for registers
  /// (passes/lane_exchange.hpp): a butterfly of warp shuffles per exchanged lane bit, then
  /// the registers renumbered (at compile time).
  void exchange_lanes(const std::string& src, const passes::Layout& from, const std::string& dst,
                      const passes::Layout& to, DType dtype, const ir::Node* at);
  void emit_array_load(const ir::Node* n, const std::string& nm);
  /// Load n by tensor descriptor into array `nm` (declared): thread 0 issues the TMA copy
  /// of its box into its shared stage, every thread waits on the stage's mbarrier and
  /// reads its elements there under the load's masks (emit_memory.cpp).
  void emit_tma_load(const ir::Node* n, const std::string& nm);
  /// The CUtensorMap parameter of load n by tensor descriptor.
  std::string tensor_map_param(const ir::Node* n);
  void emit_array_store(const ir::Node* n, const std::string& value);
  /// Exactly once (docs/DECISIONS.md): every element that a write (Store, Atomic, Signal,
  /// Wait) reaches is written by one thread and register of the program, its owner: of
  /// the copies the layout holds of it (along the slots its indexed shape lacks), the one
  /// whose coordinates along those slots are 0; thread 0's register 0 for one element.
  /// owner_test: the " && ..." test of TS_FLAT(r) for that ("" when there are no copies);
  /// copy_bits: the TS_FLAT bits that tell the copies apart.
  std::string owner_test(const ir::Node* n) const;
  int64_t copy_bits(const ir::Node* n) const;
  /// Whether access n reaches one element (only scalar indices).
  bool writes_one_element(const ir::Node* n) const { return passes::reaches_one_element(n); }
  /// The address and the owner's test of the element write n reaches at register r ("r"
  /// inside TS_FOR; "0" for one element), addressed as loads and stores are (plan_access;
  /// emits the access's limits and Settings::check_bounds reports).
  struct Element {
    std::string ptr, valid;
    std::string offset;  // elements from the tensor's data pointer
  };
  Element element_at(const ir::Node* n);
  /// Atomic, Signal, Wait (emit_atomics.cpp).
  void emit_atomic(const ir::Node* n);
  /// Whether a live node uses n's value.
  bool value_used(const ir::Node* n) const { return passes::value_used(nir_, n); }
  /// Gives every copy of write n's result (old values, in v<id>) the owner's value,
  /// through shared memory.
  void broadcast_from_owners(const ir::Node* n, const std::string& nm);
  /// Expression `e` of node n's value rounded to n's dtype, unless a store rounds it.
  std::string rounded(const ir::Node* n, const std::string& e) const;
  /// The barrier before access (or loop) n, where the kernel IR has one
  /// (NestIr::barrier_before, passes/memory_order.hpp).
  void emit_barrier(const ir::Node* n);
  void emit_reduce(const ir::Node* n);
  /// The shared memory stage of op n in the kernel IR (passes/kernel_ir.hpp): its bytes
  /// start at `offset`, and it starts with a barrier (`barrier`) only where an op that may
  /// run just before it uses bytes that overlap (passes/shared_plan.hpp).
  using SharedUse = passes::SharedStage;
  const SharedUse& shared_use(const ir::Node* n) const;
  /// Top-level loop, not flattened: the tile indices of the running program.
  void emit_program_tiles(const passes::LoopKnobs& knobs, const std::vector<std::string>& counts,
                          bool xyz);
  /// Flattened loop `n` (dims in `order`, slowest first): declares each dim's extent
  /// fn<id>_<d> and returns the expression of the number of elements.
  std::string emit_flat_extents(const ir::Node* n, const std::vector<int>& order);
  /// Inside a flattened tile starting at flat element `fb`: declares each dim's
  /// coordinate array fc<id>_<d> and binds the dims' DimVars (begin = loop begin).
  void emit_flat_coords(const ir::Node* n, const std::vector<int>& order, const std::string& fb);

  // Tile state of loop dims: begin/end variables.
  struct DimVars {
    std::string tb, te, lb;  // tile begin, tile end (clamped), loop begin
    int64_t block = 1;
    std::string flat;  // flattened loop: per-register coordinate array (offset from tb)
  };
  std::map<std::pair<const ir::Node*, int>, DimVars> dims;
  /// The variable names (lb<id>_<d>, tb.., te..) and block of dim d of `loop`.
  DimVars dim_vars(const ir::Node* loop, int d) const;

  const ir::Graph& g_;
  const ir::Node* top_;
  const passes::KernelPlan& plan_;  // the config applied to this nest
  /// The layout the code being emitted addresses elements in: the nest's (nest_), or
  /// inside a LayoutScope an access's own (Layout::own_order; emit_convert.cpp).
  const passes::Layout* L_;
  const passes::Layout& nest_;
  CudaKernel& out_;
  std::ostringstream body_;
  int indent_ = 1;
  std::string idx_t_;
  const passes::NestIr& nir_;  // the kernel IR of the nest
  const std::set<const ir::Node*>& live_;
  std::map<const ir::Node*, std::string> names_;  // node -> its expression in the code
  Names ids_;  // identifiers: the user's names where known (codegen/names.hpp)
  std::map<std::string, std::string> param_names_;  // dedupe key -> name
  std::set<const ir::Node*> written_;               // tensors stored to
  std::set<const ir::Node*> prefetched_;            // loads emitted by emit_prefetch_next
  /// Per loop over K of cp.async rings: the variable holding its tile's slot.
  std::map<const ir::Node*, std::string> ring_slot_;
  std::set<const ir::Node*> staged_;  // contractions' factors and products (emitted by the sum)
  std::set<const ir::Node*> summed_into_;  // adds a contraction's sum accumulated into
  /// Inits of carried accumulators that start from zeros (starts_from_zeros) used nowhere
  /// else: not emitted (Emitter::skip_unused_zero_inits).
  std::set<const ir::Node*> unused_inits_;
  void skip_unused_zero_inits();
  bool in_factor_ = false;       // emitting a contraction's factor
  std::ostringstream prologue_;  // device scalar reads
  bool multicast_ = false;       // the loop nest uses a multicast tensor (ts::multicast_like)
  bool uses_atomics_ = false;    // include tessel/atomics.cuh (<cuda/atomic>)
  bool uses_tma_ = false;        // include tessel/tma.cuh (<cuda/ptx>)
  bool uses_mma_ = false;        // include tessel/mma.cuh (ldmatrix, mma.sync)
  bool uses_wgmma_ = false;      // include tessel/wgmma.cuh; compile for sm_90a
  std::map<std::string, std::string> wgmma_functions_;  // name -> its definition
  /// The top-level loop's tile counts per dim (nt<d>), and in a persistent kernel this
  /// program's walk over program ids: the first, the step to the next, the bound.
  std::vector<std::string> program_counts_;
  /// The program loop's early loads (emit_program_prefetch_first), not yet taken, and the
  /// next program id of the running one and its bound.
  std::set<const ir::Node*> program_prefetched_;
  std::string program_next_, program_end_;
  struct ProgramWalk {
    std::string first, step, end;
  } program_walk_;
  int tmp_ = 0;
};

}  // namespace tessel::codegen
