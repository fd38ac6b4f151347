//===- Support/SignalCleanup.h - What a fatal signal cleans up -*- C++ -*-===//
//
// Internal to lib/Support. SIGINT, SIGTERM, SIGHUP and SIGQUIT end a run;
// before they do, the handler installed here stops the child process the
// run is waiting for (calibrate's ONNX Runtime, ChildProcess.h), removes the
// run's scratch directories and unlinks its temporaries (OutputTransaction.h),
// then re-raises the signal with its default action. The tables it walks
// are fixed arrays changed only with those signals blocked, and the
// handler makes async-signal-safe calls only (kill, waitpid, nanosleep,
// fork and execv of rm, unlink).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_SUPPORT_SIGNALCLEANUP_H
#define ONNXP_LIB_SUPPORT_SIGNALCLEANUP_H

#include <csignal>
#include <string>
#include <sys/types.h>

namespace onnxp::signal_cleanup {

/// The signals that end the process by default and leave no core dump of
/// interest to us (issue 25 added SIGHUP, a closed terminal, and SIGQUIT).
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/// Blocks kSignals for its lifetime.
class Block {
public:
  Block();
  ~Block();
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;

private:
  sigset_t Old;
};

/// Installs the handler on kSignals (a signal the caller ignores, nohup's
/// SIGHUP, stays ignored).
void installHandlers();

/// A file (or, with Directory, a directory and everything in it) removed
/// if a handled signal ends the run. Call with the signals blocked; false
/// when the table is full or the path too long.
bool registerPath(const std::string &Path, bool Directory = false);
/// No longer removed on a signal (it was renamed into place or removed).
void forgetPath(const std::string &Path);

/// The child the run waits for, stopped (SIGTERM, then SIGKILL after two
/// seconds) and reaped before anything is removed; 0: none. Call with the
/// signals blocked.
void setChild(pid_t Pid);

} // namespace onnxp::signal_cleanup

#endif // ONNXP_LIB_SUPPORT_SIGNALCLEANUP_H
