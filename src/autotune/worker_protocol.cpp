#include "autotune/worker_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tessel::autotune {

namespace {

constexpr char kMagic[4] = {'T', 'S', 'W', '1'};
constexpr uint64_t kMaxBlob = uint64_t{1} << 32;  // 4 GiB: anything larger is corrupt

bool write_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

using Clock = std::chrono::steady_clock;

// Reads exactly n bytes before `deadline` (none when `forever`).
ReadStatus read_all(int fd, void* data, size_t n, Clock::time_point deadline, bool forever) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    int wait_ms = -1;
    if (!forever) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return ReadStatus::timeout;
      wait_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ReadStatus::closed;
    if (r == 0) return ReadStatus::timeout;
    ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return ReadStatus::closed;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return ReadStatus::ok;
}

}  // namespace

bool send_message(int fd, const Message& m) {
  std::string header = m.header.dump();
  std::string frame(kMagic, 4);
  auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) frame.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(header.size(), 4);
  frame += header;
  put(m.blobs.size(), 4);
  if (!write_all(fd, frame.data(), frame.size())) return false;
  for (const std::string& b : m.blobs) {
    uint64_t n = b.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
    if (!write_all(fd, len, 8) || !write_all(fd, b.data(), b.size())) return false;
  }
  return true;
}

ReadStatus receive_message(int fd, double timeout_s, Message& out) {
  bool forever = timeout_s < 0;
  auto deadline = Clock::now() +
                  std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, timeout_s) * 1e6));
  auto get = [&](uint64_t& v, int bytes) {
    unsigned char b[8] = {};
    ReadStatus s = read_all(fd, b, static_cast<size_t>(bytes), deadline, forever);
    v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return s;
  };
  char magic[4];
  if (ReadStatus s = read_all(fd, magic, 4, deadline, forever); s != ReadStatus::ok) return s;
  if (std::memcmp(magic, kMagic, 4) != 0) return ReadStatus::malformed;
  uint64_t len = 0, count = 0;
  if (ReadStatus s = get(len, 4); s != ReadStatus::ok) return s;
  std::string header(len, '\0');
  if (ReadStatus s = read_all(fd, header.data(), len, deadline, forever); s != ReadStatus::ok)
    return s;
  if (ReadStatus s = get(count, 4); s != ReadStatus::ok) return s;
  out.blobs.clear();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t n = 0;
    if (ReadStatus s = get(n, 8); s != ReadStatus::ok) return s;
    if (n > kMaxBlob) return ReadStatus::malformed;
    std::string blob(n, '\0');
    if (ReadStatus s = read_all(fd, blob.data(), n, deadline, forever); s != ReadStatus::ok)
      return s;
    out.blobs.push_back(std::move(blob));
  }
  out.header = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  return out.header.is_discarded() ? ReadStatus::malformed : ReadStatus::ok;
}

}  // namespace tessel::autotune
