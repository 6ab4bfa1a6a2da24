// The parent's handle on one timing worker process (tessel_bench_worker): started with
// posix_spawn (never fork: the parent already holds a CUDA context, which a forked
// child cannot use), talked to over a Unix socket on the worker's fd 3, its stdout and
// stderr sent to a temporary file whose tail explains a crash.
#pragma once

#include <sys/types.h>

#include <string>

#include "autotune/worker_protocol.hpp"

namespace tessel::autotune {

/// The worker executable: $TESSEL_BENCH_WORKER; else the installed one next to the
/// binary holding tessel's code (installed_worker_near of libtessel.so, or of the program
/// a static tessel is linked into); else the one built with this library (its build
/// tree); else the one at the configured install path (CMAKE_INSTALL_PREFIX/libexec/
/// tessel); else tessel_bench_worker next to the running executable. Empty when none
/// exists.
std::string find_worker_executable();

/// The installed worker for a binary at `binary` (a path to a file): the first of
/// <its dir>/TESSEL_WORKER_FROM_LIBDIR (the install's libdir to libexec/tessel, for
/// libtessel.so in <prefix>/lib) and <its dir>/../libexec/tessel (for a program in
/// <prefix>/bin) that holds a tessel_bench_worker file. Empty when neither does.
std::string installed_worker_near(const std::string& binary);

class WorkerProcess {
 public:
  /// Starts `path`. RuntimeError when it cannot be started.
  explicit WorkerProcess(const std::string& path);
  /// Asks the worker to quit, then kills it if it has not exited within a second.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// False when the worker is gone.
  bool send(const Message& m);
  /// One reply, waiting at most `timeout_s` seconds.
  ReadStatus receive(double timeout_s, Message& out);
  /// Kills the worker (SIGKILL) and reaps it. Returns how it ended and the tail of its
  /// output, e.g. "was killed by signal 9 (Killed)".
  std::string kill();
  /// Waits up to `timeout_s` seconds for the worker to exit by itself (then kills it);
  /// returns how it ended and the tail of its output.
  std::string reap(double timeout_s);
  pid_t pid() const { return pid_; }

 private:
  std::string describe(int status) const;
  std::string output_tail() const;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string log_path_;
};

}  // namespace tessel::autotune
