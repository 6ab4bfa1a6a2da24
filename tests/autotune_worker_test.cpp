// The machinery that keeps the user's process alive while candidates run in a child:
// the message protocol, timeouts, and a worker that hangs, crashes or has no GPU
// (src/autotune/worker_protocol.hpp, worker_process.hpp). No GPU needed.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "autotune/worker_process.hpp"
#include "autotune/worker_protocol.hpp"
#include "driver/cuda_api.hpp"

namespace at = tessel::autotune;
namespace fs = std::filesystem;

namespace {

struct SocketPair {
  int fd[2];
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~SocketPair() {
    ::close(fd[0]);
    if (fd[1] >= 0) ::close(fd[1]);
  }
};

TEST(AutotuneWorker, MessagesRoundTripWithBinaryBlobs) {
  SocketPair s;
  std::string blob("\0\x01\xff cubin", 9);
  at::Message m{{{"op", "run"}, {"id", 7}, {"v", uint64_t{0xfedcba9876543210}}}, {blob, ""}};
  ASSERT_TRUE(at::send_message(s.fd[0], m));
  at::Message got;
  ASSERT_EQ(at::receive_message(s.fd[1], 1.0, got), at::ReadStatus::ok);
  EXPECT_EQ(got.header, m.header);
  EXPECT_EQ(got.blobs, m.blobs);
}

TEST(AutotuneWorker, ReceiveTimesOutAndSeesAClosedPeer) {
  SocketPair s;
  at::Message got;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(at::receive_message(s.fd[1], 0.1, got), at::ReadStatus::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(90));
  ::close(s.fd[1]);
  s.fd[1] = -1;
  EXPECT_FALSE(at::send_message(s.fd[0], at::Message{{{"op", "quit"}}, {}}));  // no SIGPIPE
}

// A fake worker: a shell script.
std::string script(const std::string& name, const std::string& body) {
  fs::path p = fs::temp_directory_path() / (name + std::to_string(::getpid()) + ".sh");
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

TEST(AutotuneWorker, AHungWorkerIsKilledAfterTheTimeout) {
  std::string path = script("hang", "sleep 30");
  at::WorkerProcess w(path);
  at::Message reply;
  EXPECT_EQ(w.receive(0.2, reply), at::ReadStatus::timeout);
  EXPECT_EQ(w.kill().find("was killed by signal 9"), 0u);
  fs::remove(path);
}

TEST(AutotuneWorker, ACrashedWorkerIsReportedWithItsOutput) {
  std::string path = script("crash", "echo 'illegal memory access' >&2; exit 3");
  at::WorkerProcess w(path);
  at::Message reply;
  EXPECT_EQ(w.receive(5.0, reply), at::ReadStatus::closed);
  std::string how = w.reap(5.0);
  EXPECT_EQ(how, "exited with status 3; its last output: illegal memory access");
  fs::remove(path);
}

TEST(AutotuneWorker, TheBuiltWorkerIsFoundAndFailsCleanlyWithoutAGpu) {
  if (tessel::rt::cuda_available())
    GTEST_SKIP() << "a GPU is present (the GPU tests cover the worker)";
  std::string path = at::find_worker_executable();
  ASSERT_FALSE(path.empty());
  at::WorkerProcess w(path);
  ASSERT_TRUE(w.send(at::Message{
      {{"op", "setup"}, {"device", 0}, {"flush_bytes", 0}, {"buffers", nlohmann::json::array()}},
      {}}));
  at::Message reply;
  ASSERT_EQ(w.receive(30.0, reply), at::ReadStatus::ok);
  EXPECT_EQ(reply.header.value("op", ""), "error");
  EXPECT_TRUE(reply.header.value("fatal", false));
  EXPECT_NE(reply.header.value("message", "").find("CUDA"), std::string::npos)
      << reply.header.dump();
  EXPECT_EQ(w.reap(5.0).find("exited with status 3"), 0u);
}

}  // namespace
