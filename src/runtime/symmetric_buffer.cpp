#include "tessel/symmetric_buffer.hpp"

#include <fmt/format.h>

#include "common/byte_size.hpp"
#include "driver/cuda_api.hpp"
#include "tessel/error.hpp"

namespace tessel {

struct SymmetricBuffer::State {
  std::vector<Buffer> buffers, pads, ptrs, pad_ptrs;
};

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& hint) {
  throw UserError("", SourceLoc{}, "SymmetricBuffer: " + what, hint);
}

// The bytes of a dense `shape` of `dtype`. Errors: UserError for a negative size, or a byte
// count past 2^63 - 1.
int64_t checked_bytes(const std::vector<int64_t>& shape, DType dtype) {
  for (int64_t s : shape)
    if (s < 0) fail(fmt::format("a negative size {}", s), "sizes are 0 or more");
  std::optional<int64_t> bytes = dense_bytes(shape, dtype);
  if (!bytes)
    fail("cannot allocate " + describe_dense(shape, dtype),
         "use a smaller shape (check its sizes for a typo or a computation that overflowed)");
  return *bytes;
}

// A zero-filled contiguous tensor; on a GPU in cuMemAlloc memory (peer access covers it,
// unlike stream-ordered pool memory), freed when the last Buffer over it goes away.
Buffer allocate(const std::vector<int64_t>& shape, DType dtype, Device device) {
  if (!device.is_cuda()) return Buffer::zeros(shape, dtype, device, {});
  const int64_t nbytes = checked_bytes(shape, dtype);
  void* p = rt::device_alloc_shareable(nbytes, device.index);
  const int dev = device.index;
  std::shared_ptr<void> owner(p, [dev](void* q) {
    try {
      rt::device_free_shareable(q, dev);
    } catch (...) {
      // The driver may already be shut down at process exit.
    }
  });
  Buffer b = Buffer::from_blob(p, shape, {}, dtype, device, {});
  b.storage()->keep_alive = std::move(owner);
  b.fill(0, {});
  return b;
}

// The addresses of `bufs`, u64 [R] on `device`.
Buffer address_table(const std::vector<Buffer>& bufs, Device device) {
  Buffer host = Buffer::empty({static_cast<int64_t>(bufs.size())}, DType::u64, cpu(), {});
  auto* p = static_cast<uint64_t*>(host.data_ptr());
  for (size_t r = 0; r < bufs.size(); ++r)
    p[r] = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(bufs[r].data_ptr()));
  return device.is_cuda() ? host.to(device, {}) : host;
}

}  // namespace

SymmetricBuffer SymmetricBuffer::create(std::vector<int64_t> shape, DType dtype,
                                        std::vector<Device> devices, int64_t signal_pad_elements) {
  if (devices.empty()) fail("no devices (ranks)", "pass one device per rank");
  if (signal_pad_elements < 0)
    fail(fmt::format("a negative signal pad length {}", signal_pad_elements),
         "signal pads hold 0 or more i32 elements");
  checked_bytes(shape, dtype);
  for (const Device& d : devices)
    if (d.is_cuda() != devices[0].is_cuda())
      fail(fmt::format("ranks on {} and {}", devices[0].str(), d.str()),
           "put every rank on the CPU (the interpreter) or every rank on a GPU");
  // Peer access between every pair of distinct GPUs.
  for (const Device& a : devices)
    for (const Device& b : devices)
      if (a.is_cuda() && a.index != b.index && !rt::enable_peer_access(a.index, b.index))
        throw RuntimeError(fmt::format(
            "SymmetricBuffer: {} cannot access the memory of {} (no peer access between them)",
            a.str(), b.str()));
  SymmetricBuffer sb;
  sb.s_ = std::make_shared<State>();
  for (const Device& d : devices) {
    sb.s_->buffers.push_back(allocate(shape, dtype, d));
    sb.s_->pads.push_back(allocate({signal_pad_elements}, DType::i32, d));
  }
  for (const Device& d : devices)  // the zero fills, queued on the legacy default stream
    if (d.is_cuda()) rt::device_synchronize(d.index);
  for (const Device& d : devices) {
    sb.s_->ptrs.push_back(address_table(sb.s_->buffers, d));
    sb.s_->pad_ptrs.push_back(address_table(sb.s_->pads, d));
  }
  return sb;
}

SymmetricBuffer SymmetricBuffer::on_device(std::vector<int64_t> shape, DType dtype, int world_size,
                                           Device device, int64_t signal_pad_elements) {
  if (world_size < 1) fail(fmt::format("a world size of {}", world_size), "use 1 rank or more");
  return create(std::move(shape), dtype,
                std::vector<Device>(static_cast<size_t>(world_size), device), signal_pad_elements);
}

int SymmetricBuffer::world_size() const { return static_cast<int>(s_->buffers.size()); }

static size_t rank_index(const SymmetricBuffer& s, int rank) {
  if (rank < 0 || rank >= s.world_size())
    fail(fmt::format("rank {} of {} ranks", rank, s.world_size()),
         fmt::format("use a rank in [0, {})", s.world_size()));
  return static_cast<size_t>(rank);
}

Buffer SymmetricBuffer::buffer(int rank) const { return s_->buffers[rank_index(*this, rank)]; }
Buffer SymmetricBuffer::dev_ptrs(int rank) const { return s_->ptrs[rank_index(*this, rank)]; }
Buffer SymmetricBuffer::signal_pad(int rank) const { return s_->pads[rank_index(*this, rank)]; }
Buffer SymmetricBuffer::signal_pad_ptrs(int rank) const {
  return s_->pad_ptrs[rank_index(*this, rank)];
}

std::vector<uint64_t> SymmetricBuffer::buffer_ptrs() const {
  std::vector<uint64_t> out;
  for (const Buffer& b : s_->buffers)
    out.push_back(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.data_ptr())));
  return out;
}

}  // namespace tessel
