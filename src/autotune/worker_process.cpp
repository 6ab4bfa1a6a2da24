#include "autotune/worker_process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tessel/error.hpp"

extern char** environ;

namespace tessel::autotune {

namespace fs = std::filesystem;

#ifndef TESSEL_WORKER_FROM_LIBDIR
#define TESSEL_WORKER_FROM_LIBDIR "../libexec/tessel"
#endif

std::string installed_worker_near(const std::string& binary) {
  std::error_code ec;
  fs::path dir = fs::path(binary).parent_path();
  for (fs::path p : {dir / TESSEL_WORKER_FROM_LIBDIR / "tessel_bench_worker",
                     dir / ".." / "libexec" / "tessel" / "tessel_bench_worker"})
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  return "";
}

std::string find_worker_executable() {
  std::error_code ec;
  if (const char* env = std::getenv("TESSEL_BENCH_WORKER"); env && *env)
    return fs::exists(env, ec) ? env : "";
  // The binary holding this code: libtessel.so, or the program a static tessel is
  // linked into (dladdr names the main program by argv[0]: /proc/self/exe instead).
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  Dl_info info{};
  std::string holder;
  if (::dladdr(reinterpret_cast<void*>(&find_worker_executable), &info) && info.dli_fname &&
      info.dli_fname[0] == '/')
    holder = info.dli_fname;
  for (const std::string& binary : {holder, self.string()})
    if (!binary.empty())
      if (std::string p = installed_worker_near(binary); !p.empty()) return p;
#ifdef TESSEL_BENCH_WORKER_PATH
  if (fs::exists(TESSEL_BENCH_WORKER_PATH, ec)) return TESSEL_BENCH_WORKER_PATH;
#endif
#ifdef TESSEL_WORKER_INSTALL_PATH
  if (fs::exists(TESSEL_WORKER_INSTALL_PATH, ec)) return TESSEL_WORKER_INSTALL_PATH;
#endif
  if (!self.empty()) {
    fs::path next = self.parent_path() / "tessel_bench_worker";
    if (fs::exists(next, ec)) return next.string();
  }
  return "";
}

WorkerProcess::WorkerProcess(const std::string& path) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw RuntimeError(fmt::format("autotune: socketpair failed: {}", std::strerror(errno)));
  // The worker's end must not already be fd 3 (dup2(3, 3) would keep close-on-exec).
  if (sv[1] <= 3) {
    int moved = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    ::close(sv[1]);
    sv[1] = moved;
  }
  std::string log = (fs::temp_directory_path() / "tessel_worker_XXXXXX").string();
  int log_fd = ::mkostemp(log.data(), O_CLOEXEC);
  if (log_fd >= 0) log_path_ = log;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
  if (log_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  }
  std::string arg = "--socket-fd=3";
  char* argv[] = {const_cast<char*>(path.c_str()), arg.data(), nullptr};
  int rc = ::posix_spawn(&pid_, path.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (log_fd >= 0) ::close(log_fd);
  if (rc != 0) {
    ::close(sv[0]);
    if (!log_path_.empty()) ::unlink(log_path_.c_str());
    throw RuntimeError(
        fmt::format("autotune: cannot start the timing worker {}: {}", path, std::strerror(rc)));
  }
  fd_ = sv[0];
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) {
    send(Message{{{"op", "quit"}}, {}});
    reap(1.0);
  }
  if (fd_ >= 0) ::close(fd_);
  if (!log_path_.empty()) ::unlink(log_path_.c_str());
}

bool WorkerProcess::send(const Message& m) { return fd_ >= 0 && send_message(fd_, m); }

ReadStatus WorkerProcess::receive(double timeout_s, Message& out) {
  if (fd_ < 0) return ReadStatus::closed;
  return receive_message(fd_, timeout_s, out);
}

std::string WorkerProcess::describe(int status) const {
  std::string how;
  if (WIFEXITED(status))
    how = fmt::format("exited with status {}", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    how = fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                      ::strsignal(WTERMSIG(status)));
  else
    how = "ended";
  std::string tail = output_tail();
  return tail.empty() ? how : how + "; its last output: " + tail;
}

std::string WorkerProcess::output_tail() const {
  if (log_path_.empty()) return "";
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 1500) text = "..." + text.substr(text.size() - 1500);
  return text;
}

std::string WorkerProcess::kill() {
  if (pid_ <= 0) return "not running";
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  pid_ = -1;
  return r > 0 ? describe(status) : "was killed";
}

std::string WorkerProcess::reap(double timeout_s) {
  if (pid_ <= 0) return "not running";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return describe(status);
    }
    if (r < 0 && errno != EINTR) {  // not our child any more (SIGCHLD ignored?)
      pid_ = -1;
      return "ended";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return kill();
}

}  // namespace tessel::autotune
