#include "interp/write_log.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/element.hpp"
#include "driver/alias_groups.hpp"
#include "passes/race_check.hpp"

namespace tessel::interp {

namespace {

// The index tuple of the element at `offset` (elements from t's data pointer), by
// decreasing stride; empty when the offset is not one of t's elements.
std::vector<int64_t> index_of(const Buffer& t, int64_t offset) {
  std::vector<int> dims(t.dim());
  std::iota(dims.begin(), dims.end(), 0);
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int a, int b) { return std::abs(t.stride(a)) > std::abs(t.stride(b)); });
  std::vector<int64_t> idx(t.dim(), 0);
  int64_t rest = offset;
  for (int d : dims) {
    if (t.stride(d) == 0 || t.size(d) == 1) continue;
    idx[d] = rest / t.stride(d);
    rest -= idx[d] * t.stride(d);
  }
  bool ok = rest == 0;
  for (int d = 0; d < t.dim(); ++d) ok &= idx[d] >= 0 && idx[d] < t.size(d);
  return ok ? idx : std::vector<int64_t>{};
}

std::string value_str(const void* p, DType t) {
  return is_float(t) ? fmt::format("{}", read_element(p, t))
                     : fmt::format("{}", read_element_int(p, t));
}

}  // namespace

WriteLog::WriteLog(const ir::Graph& g, const ir::Node* loop, const rt::HostEnv& env) : g_(g) {
  ir::walk(loop->body, [&](const ir::Node* n) {
    if (n->op != ir::Op::Store) return;
    if (n->is_multicast_access()) {
      multicast_store_ = true;
    } else {
      auto range = rt::byte_range(env.tensor(n->args[0]));
      if (range.first < range.second) written_.push_back(range);
    }
  });
}

bool WriteLog::may_be_written(uintptr_t lo, uintptr_t hi) const {
  if (multicast_store_) return true;
  for (auto [wlo, whi] : written_)
    if (wlo < hi && lo < whi) return true;
  return false;
}

WriteLog::Region& WriteLog::region_for(uintptr_t lo, uintptr_t hi, int64_t granule) {
  std::vector<size_t> hit;
  for (size_t i = 0; i < regions_.size(); ++i)
    if (regions_[i].lo < hi && lo < regions_[i].hi) hit.push_back(i);
  if (hit.size() == 1) {
    Region& r = regions_[hit[0]];
    if (r.lo <= lo && hi <= r.hi && granule % r.granule == 0 && (lo - r.lo) % r.granule == 0)
      return r;
  }
  // A new region over the union of the overlapping ones, whose cells divide every
  // element of each (memory shared by tensors of two dtypes, or at unaligned offsets).
  Region merged;
  merged.lo = lo;
  merged.hi = hi;
  for (size_t i : hit) {
    merged.lo = std::min(merged.lo, regions_[i].lo);
    merged.hi = std::max(merged.hi, regions_[i].hi);
  }
  int64_t g = std::gcd(granule, static_cast<int64_t>(lo - merged.lo));
  for (size_t i : hit)
    g = std::gcd(g,
                 std::gcd(regions_[i].granule, static_cast<int64_t>(regions_[i].lo - merged.lo)));
  merged.granule = g;
  const size_t cells = (merged.hi - merged.lo + g - 1) / g;
  merged.cells.assign(cells, 0);
  bool read = false;
  for (size_t i : hit) read |= !regions_[i].readers.empty();
  if (read) merged.readers.assign(cells, 0);
  for (size_t i : hit) {
    const Region& r = regions_[i];
    const int64_t per = r.granule / g, first = static_cast<int64_t>(r.lo - merged.lo) / g;
    for (size_t c = 0; c < r.cells.size(); ++c)
      for (int64_t k = 0; k < per; ++k) {
        const size_t at = static_cast<size_t>(first + static_cast<int64_t>(c) * per + k);
        if (r.cells[c]) merged.cells[at] = r.cells[c];
        if (!r.readers.empty() && r.readers[c]) merged.readers[at] = r.readers[c];
      }
  }
  for (auto it = hit.rbegin(); it != hit.rend(); ++it)
    regions_.erase(regions_.begin() + static_cast<long>(*it));
  regions_.push_back(std::move(merged));
  return regions_.back();
}

void WriteLog::begin_store(const ir::Node* n, const Buffer& t) {
  begin_execution(n, t);
  base_ = reinterpret_cast<uintptr_t>(t.data_ptr());
  auto [lo, hi] = rt::byte_range(t);
  region_ = lo < hi ? &region_for(lo, hi, elem_bytes_) : nullptr;
}

void WriteLog::begin_multicast_store(const ir::Node* n, const Buffer& like) {
  begin_execution(n, like);
  region_ = nullptr;
}

void WriteLog::target(uintptr_t base, std::pair<uintptr_t, uintptr_t> range, int64_t stack_index) {
  base_ = base;
  stack_index_ = stack_index;
  region_ = range.first < range.second && (!loading_ || may_be_written(range.first, range.second))
                ? &region_for(range.first, range.second, elem_bytes_)
                : nullptr;
  if (region_ && loading_ && region_->readers.empty())
    region_->readers.assign(region_->cells.size(), 0);
}

void WriteLog::begin_read(const ir::Node* n, const Buffer& t) {
  store_ = n;
  tensor_ = &t;
  stack_index_ = -1;
  elem_bytes_ = dtype_size(t.dtype());
  loading_ = true;
  mine_ = (uint64_t{program_} + 1) << 32 | static_cast<uint32_t>(n->id);
  region_ = nullptr;
}

bool WriteLog::begin_load(const ir::Node* n, const Buffer& t) {
  begin_read(n, t);
  base_ = reinterpret_cast<uintptr_t>(t.data_ptr());
  auto [lo, hi] = rt::byte_range(t);
  if (lo >= hi || !may_be_written(lo, hi)) return false;
  target(base_, {lo, hi}, -1);
  return true;
}

void WriteLog::begin_multicast_load(const ir::Node* n, const Buffer& like) { begin_read(n, like); }

void WriteLog::read_cells(uintptr_t addr, int64_t offset) {
  const int64_t first = static_cast<int64_t>(addr - region_->lo) / region_->granule;
  const int64_t cells = elem_bytes_ / region_->granule;
  for (int64_t c = first; c < first + cells; ++c) {
    const uint64_t w = region_->cells[static_cast<size_t>(c)];
    if (w != 0 && w >> 32 != mine_ >> 32) read_of_written(offset, w);
    if (w != 0) continue;  // this program's own write: what it reads is settled (read())
    uint64_t& r = region_->readers[static_cast<size_t>(c)];
    if (r == 0)
      r = mine_;
    else if (r >> 32 != mine_ >> 32)
      r |= kSeveral;
  }
}

void WriteLog::begin_execution(const ir::Node* n, const Buffer& t) {
  store_ = n;
  loading_ = false;
  tensor_ = &t;
  stack_index_ = -1;
  elem_bytes_ = dtype_size(t.dtype());
  mine_ = (uint64_t{program_} + 1) << 32 | static_cast<uint32_t>(store_of_execution_.size());
  store_of_execution_.push_back(static_cast<uint32_t>(n->id));
  if (rmw_of_node_.size() <= static_cast<size_t>(n->id))
    rmw_of_node_.resize(static_cast<size_t>(n->id) + 1, -1);
  int8_t& rmw = rmw_of_node_[static_cast<size_t>(n->id)];
  if (rmw < 0) rmw = passes::is_read_modify_write(g_, n) ? 1 : 0;
  rmw_ = rmw == 1;
}

void WriteLog::write_cells(uintptr_t addr, int64_t offset, const void* value) {
  const int64_t first = static_cast<int64_t>(addr - region_->lo) / region_->granule;
  const int64_t cells = elem_bytes_ / region_->granule;
  for (int64_t c = first; c < first + cells; ++c) {
    if (!region_->readers.empty()) {
      const uint64_t r = region_->readers[static_cast<size_t>(c)];
      if (r != 0 && (r >> 32 != mine_ >> 32 || (r & kSeveral))) write_of_read(offset, r);
    }
    uint64_t& cell = region_->cells[static_cast<size_t>(c)];
    const bool same_program = cell >> 32 == mine_ >> 32;
    if (cell == 0 || (same_program && cell != mine_)) {
      cell = mine_;
    } else if (rmw_) {
      lost_update(offset, cell);
    } else if (std::memcmp(reinterpret_cast<const void*>(addr), value,
                           static_cast<size_t>(elem_bytes_)) != 0) {
      conflict(offset, cell, value);
    } else if (!same_program) {
      cell = mine_;  // the same bits from another program: the last writer, whose later
                     // reads of the element see its own value
    }
  }
}

std::string element_str(const Buffer& t, int64_t offset) {
  std::vector<int64_t> idx = index_of(t, offset);
  return idx.empty() ? fmt::format("at element offset {}", offset)
                     : fmt::format("({})", fmt::join(idx, ", "));
}

std::string WriteLog::element_str(int64_t offset) const {
  std::string e = interp::element_str(*tensor_, offset);
  if (stack_index_ >= 0)
    e += fmt::format(" of the buffer at 0x{:x} (dev_ptrs element {}, row-major)", base_,
                     stack_index_);
  return e;
}

void WriteLog::lost_update(int64_t offset, uint64_t earlier) const {
  std::string who = earlier == mine_
                        ? fmt::format("twice in program {}", program_)
                        : fmt::format("by programs {} and {}", (earlier >> 32) - 1, program_);
  throw UserError(
      g_.kernel_name, store_->loc,
      fmt::format(
          "this read-modify-write of {} reaches element {} {}: each reads the element before the "
          "other's write, so on a GPU one update is lost",
          ir::describe_tensor(store_->args[0]), element_str(offset), who),
      "make the indices distinct (within a program and across programs), reduce the values that "
      "go to one element first, or update it with an atomic (ts::atomic_add, ...)");
}

void WriteLog::conflict(int64_t offset, uint64_t earlier, const void* value) const {
  const Buffer& t = *tensor_;
  std::string element = element_str(offset);
  const void* old_value =
      reinterpret_cast<const void*>(base_ + static_cast<uintptr_t>(offset * elem_bytes_));
  if (earlier == mine_)
    throw UserError(
        g_.kernel_name, store_->loc,
        fmt::format(
            "this store writes element {} of {} twice in program {}, with different values ({} "
            "and {}): on a GPU two threads of the program write it, and it keeps either value",
            element, ir::describe_tensor(store_->args[0]), program_,
            value_str(old_value, t.dtype()), value_str(value, t.dtype())),
        "make the indices of a scatter distinct, or reduce the values that go to one element "
        "first");
  const ir::Node* other =
      g_.nodes().at(store_of_execution_.at(static_cast<uint32_t>(earlier))).get();
  std::string where =
      other != store_ ? fmt::format(" (the other store is at {})", other->loc.str()) : "";
  throw UserError(
      g_.kernel_name, store_->loc,
      fmt::format("programs {} and {} of the launch both write element {} of {}{}, with different "
                  "values ({} and {}): on a GPU the element keeps whichever is written last",
                  (earlier >> 32) - 1, program_, element, ir::describe_tensor(store_->args[0]),
                  where, value_str(old_value, t.dtype()), value_str(value, t.dtype())),
      "give each program its own elements (index the store with every tile of the loop, or make "
      "gather indices distinct across programs), or reduce inside one program");
}

namespace {

const char* kOverlapHint =
    "write the result to a separate output tensor, whose memory no program of the launch "
    "reads, or split the work into two kernels (or two top-level loops: each is a launch, "
    "and a launch sees the writes of the launches before it); where programs update shared "
    "elements (a scatter-add, a counter), use an atomic (ts::atomic_add, ...)";

// "store to X at file:line": the other access, naming its tensor where it differs.
std::string other_access(const char* what, const ir::Node* other, const ir::Node* mine) {
  const char* prep = other->op == ir::Op::Store ? " to " : " of ";
  std::string tensor =
      other->args[0] != mine->args[0] ? prep + ir::describe_tensor(other->args[0]) : "";
  return fmt::format("{}{} at {}", what, tensor, other->loc.str());
}

}  // namespace

void WriteLog::read_of_written(int64_t offset, uint64_t writer) const {
  const ir::Node* other =
      g_.nodes().at(store_of_execution_.at(static_cast<uint32_t>(writer))).get();
  throw UserError(
      g_.kernel_name, store_->loc,
      fmt::format("program {} of the launch reads element {} of {}, which program {} writes "
                  "(the {}): on a GPU the programs run in no fixed order, so the read sees the "
                  "old value or the new one, whichever program runs first",
                  program_, element_str(offset), ir::describe_tensor(store_->args[0]),
                  (writer >> 32) - 1, other_access("store", other, store_)),
      kOverlapHint);
}

void WriteLog::write_of_read(int64_t offset, uint64_t reader) const {
  const ir::Node* other = g_.nodes().at(static_cast<size_t>(reader & (kSeveral - 1))).get();
  const std::string readers = reader >> 32 != mine_ >> 32
                                  ? fmt::format("program {} reads", (reader >> 32) - 1)
                                  : std::string("other programs read");
  throw UserError(
      g_.kernel_name, store_->loc,
      fmt::format("program {} of the launch writes element {} of {}, which {} (the {}): on a "
                  "GPU the programs run in no fixed order, so the read sees the old value or the "
                  "new one, whichever program runs first",
                  program_, element_str(offset), ir::describe_tensor(store_->args[0]), readers,
                  other_access("load", other, store_)),
      kOverlapHint);
}

}  // namespace tessel::interp
