//===- Support/SignalCleanup.cpp - What a fatal signal cleans up ---------===//
//
// See SignalCleanup.h. Paths live in a fixed table the handler can walk
// without allocating; an entry is cleared (first byte 0) when forgotten.
//
//===----------------------------------------------------------------------===//
#include "SignalCleanup.h"

#include "onnx-partition/Support/OutputTransaction.h"

#include <cstring>
#include <ctime>
#include <iterator>

#include <sys/wait.h>
#include <unistd.h>

using namespace onnxp;
using namespace onnxp::signal_cleanup;

namespace {
constexpr int kMaxPaths = 4096;
constexpr int kMaxPath = 4096;
char Paths[kMaxPaths][kMaxPath];
bool IsDirectory[kMaxPaths];
volatile sig_atomic_t NumPaths = 0;
volatile sig_atomic_t Child = 0;

/// The child asked to stop, given two seconds to do so (profile.js removes
/// its own temporary folder), then killed; reaped either way.
void stopChild(pid_t Pid) {
  kill(Pid, SIGTERM);
  const struct timespec Tick = {0, 50 * 1000 * 1000};
  for (int I = 0; I < 40; ++I) {
    if (waitpid(Pid, nullptr, WNOHANG) == Pid) return;
    nanosleep(&Tick, nullptr);
  }
  kill(Pid, SIGKILL);
  waitpid(Pid, nullptr, 0);
}

/// `rm -rf Dir`: a directory's files cannot be listed with
/// async-signal-safe calls, but fork and execv are.
void removeTree(const char *Dir) {
  pid_t Pid = fork();
  if (Pid == 0) {
    char Rm[] = "rm", Flags[] = "-rf", DashDash[] = "--";
    char *const Argv[] = {Rm, Flags, DashDash, const_cast<char *>(Dir), nullptr};
    execv("/bin/rm", Argv);
    _exit(127);
  }
  if (Pid > 0) waitpid(Pid, nullptr, 0);
}

extern "C" void cleanUpAndDie(int Sig) {
  if (Child > 0) stopChild(static_cast<pid_t>(Child));
  for (int I = 0; I < NumPaths; ++I) {
    if (!Paths[I][0]) continue;
    if (IsDirectory[I]) removeTree(Paths[I]);
    else unlink(Paths[I]);
  }
  signal(Sig, SIG_DFL);
  raise(Sig);
}
} // namespace

Block::Block() {
  sigset_t S;
  sigemptyset(&S);
  for (int Sig : kSignals) sigaddset(&S, Sig);
  sigprocmask(SIG_BLOCK, &S, &Old);
}

Block::~Block() { sigprocmask(SIG_SETMASK, &Old, nullptr); }

void signal_cleanup::installHandlers() {
  for (int Sig : kSignals) {
    struct sigaction Old;
    // A signal the user's shell ignores (nohup's SIGHUP) stays ignored;
    // ours stays (SavedSignalHandlers may have put the caller's back since).
    if (sigaction(Sig, nullptr, &Old) != 0 || Old.sa_handler == SIG_IGN || Old.sa_handler == cleanUpAndDie)
      continue;
    struct sigaction A;
    std::memset(&A, 0, sizeof A);
    A.sa_handler = cleanUpAndDie;
    sigemptyset(&A.sa_mask);
    sigaction(Sig, &A, nullptr);
  }
}

bool signal_cleanup::registerPath(const std::string &Path, bool Directory) {
  if (NumPaths >= kMaxPaths || Path.size() >= kMaxPath) return false;
  std::memcpy(Paths[NumPaths], Path.c_str(), Path.size() + 1);
  IsDirectory[NumPaths] = Directory;
  NumPaths = NumPaths + 1;
  return true;
}

void signal_cleanup::forgetPath(const std::string &Path) {
  Block B;
  for (int I = 0; I < NumPaths; ++I)
    if (Path == Paths[I]) Paths[I][0] = '\0';
}

void signal_cleanup::setChild(pid_t Pid) { Child = Pid; }

struct SavedSignalHandlers::Saved {
  struct sigaction Action[std::size(kSignals)];
};

SavedSignalHandlers::SavedSignalHandlers() : S(new Saved) {
  for (size_t I = 0; I < std::size(kSignals); ++I) sigaction(kSignals[I], nullptr, &S->Action[I]);
}

SavedSignalHandlers::~SavedSignalHandlers() {
  for (size_t I = 0; I < std::size(kSignals); ++I) sigaction(kSignals[I], &S->Action[I], nullptr);
  delete S;
}
