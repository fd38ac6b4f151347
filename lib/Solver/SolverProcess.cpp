//===- Solver/SolverProcess.cpp - CBC in a child process, killed on time ---===//
//
// solveMilp (MilpModel.h). CBC keeps its -seconds limit in branch and
// bound, but not inside its root phase: the first LP, preprocessing, cut
// rounds and the sub-MIP that completes a MIP start run to their end (a
// 10 s limit took 20.95 s on ResNet-50 with 8 devices, 10.4 s of it in the
// first LP). Neither the event handler (not called inside the LP) nor Clp's
// own limit (not passed to every LP CBC solves) stops it there, so this file
// does: it forks, the child runs CBC (CbcModel.cpp) and writes frames to a
// pipe -- progress, each improving incumbent in the model's own columns,
// and finally the result -- and the parent reads them until the result
// arrives or the deadline passes, when it kills the child (SIGKILL) and
// answers with the best incumbent it received, which it checks against the
// model itself. The child leaves with _exit: no atexit handlers, no
// sanitizer leak report, no flushing of the parent's buffers.
//
// Frame: one type byte, a uint64 payload length, the payload.
//   'p' progress  seconds, incumbent, bound (doubles), then the event text
//   's' incumbent objective, then one double per column
//   'r' result    status (int32), objective, bound, seconds, seconds to
//                 incumbent (doubles), start accepted (int8), nodes (int64),
//                 then the values
//   'e' error     the message
//
//===----------------------------------------------------------------------===//
#include "CbcSolve.h"

#include "onnx-partition/Support/Deadline.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace onnxp;

namespace {

/// Calls the user's progress callback directly (in-process solves).
class DirectSink : public CbcSink {
public:
  explicit DirectSink(const MilpOptions &O) : O(O) {}
  void progress(const MilpProgress &P) override {
    if (O.progress) O.progress(P);
  }
  void incumbent(double, const std::vector<double> &) override {}
  bool wantsIncumbents() const override { return false; }

private:
  const MilpOptions &O;
};

// An empty vector's data() may be null, and neither append nor memcpy may
// be handed null even for zero bytes (UBSan's nonnull check).
void appendBytes(std::string &Out, const void *P, size_t N) {
  if (N > 0) Out.append(static_cast<const char *>(P), N);
}
template <typename T> void appendPod(std::string &Out, T V) { appendBytes(Out, &V, sizeof(V)); }

/// Writes frames to the pipe in the child. A failed write (the parent is
/// gone) ends the child.
class PipeSink : public CbcSink {
public:
  explicit PipeSink(int Fd) : Fd(Fd) {}
  void progress(const MilpProgress &P) override {
    std::string Payload;
    appendPod(Payload, P.seconds);
    appendPod(Payload, P.incumbent);
    appendPod(Payload, P.bound);
    Payload += P.event;
    send('p', Payload);
  }
  void incumbent(double Objective, const std::vector<double> &Values) override {
    std::string Payload;
    appendPod(Payload, Objective);
    appendBytes(Payload, Values.data(), Values.size() * sizeof(double));
    send('s', Payload);
  }
  bool wantsIncumbents() const override { return true; }

  void send(char Type, const std::string &Payload) {
    std::string Frame(1, Type);
    appendPod<uint64_t>(Frame, Payload.size());
    Frame += Payload;
    const char *P = Frame.data();
    size_t Left = Frame.size();
    while (Left > 0) {
      ssize_t N = ::write(Fd, P, Left);
      if (N < 0 && errno == EINTR) continue;
      if (N <= 0) ::_exit(3);
      P += N;
      Left -= static_cast<size_t>(N);
    }
  }

private:
  int Fd;
};

[[noreturn]] void runChild(const MilpModel &M, const MilpOptions &O, int Fd) {
  // Die with the parent (a test harness's timeout kills only the tool).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  PipeSink Sink(Fd);
  MilpOptions Child = O;
  Child.progress = nullptr; // the parent's callback; the child only streams
  Expected<MilpResult> R = solveMilpInProcess(M, Child, Sink);
  if (!R) {
    Sink.send('e', R.takeError().message());
  } else {
    std::string Payload;
    appendPod<int32_t>(Payload, static_cast<int32_t>(R->status));
    for (double V : {R->objective, R->bound, R->seconds, R->secondsToIncumbent}) appendPod(Payload, V);
    appendPod<int8_t>(Payload, R->startAccepted ? 1 : 0);
    appendPod<int64_t>(Payload, R->nodes);
    appendBytes(Payload, R->values.data(), R->values.size() * sizeof(double));
    Sink.send('r', Payload);
  }
  ::close(Fd);
  std::fflush(stdout); // CBC's own log under --verbose
  ::_exit(0);
}

/// Reads frames from the child and keeps what they say.
struct ParentState {
  const MilpModel &M;
  const MilpOptions &O;
  std::string Buffer;
  MilpProgress Last;
  double BestObjective = MilpModel::Inf;
  std::vector<double> BestValues;
  std::optional<MilpResult> Final;
  std::optional<std::string> ChildError;
  int Completed = 0;          ///< incumbents completed by MilpOptions::completeIncumbent
  bool StopRequested = false; ///< MilpOptions::stopOnIncumbent said so

  template <typename T> static T readPod(const char *&P) {
    T V;
    std::memcpy(&V, P, sizeof(T));
    P += sizeof(T);
    return V;
  }

  void frame(char Type, const char *P, size_t N) {
    const char *End = P + N;
    const size_t Cols = M.numVars();
    if (Type == 'p' && N >= 3 * sizeof(double)) {
      MilpProgress Pr;
      Pr.seconds = readPod<double>(P);
      Pr.incumbent = readPod<double>(P);
      Pr.bound = readPod<double>(P);
      Pr.event.assign(P, End);
      Last = Pr;
      if (O.progress) O.progress(Pr);
    } else if (Type == 's' && N == (1 + Cols) * sizeof(double)) {
      readPod<double>(P);
      std::vector<double> X(Cols);
      if (Cols > 0) std::memcpy(X.data(), P, Cols * sizeof(double));
      // Trust nothing from the child: round, complete, check, price it here.
      bool Partial = false;
      for (size_t I = 0; I < Cols; ++I) {
        if (std::isnan(X[I])) Partial = true;
        else if (M.vars()[I].kind != VarKind::Continuous) X[I] = std::round(X[I]);
      }
      if (Partial) {
        // Found in CBC's preprocessed space: only the caller can complete it.
        if (!O.completeIncumbent) return;
        X = O.completeIncumbent(X);
        if (X.size() != Cols) return;
        ++Completed;
      }
      for (double V : X)
        if (!std::isfinite(V)) return;
      if (!(M.maxViolation(X) <= 1e-6)) return;
      double Obj = M.objectiveOf(X);
      if (Obj < BestObjective) {
        BestObjective = Obj;
        BestValues = std::move(X);
        if (O.stopOnIncumbent && O.stopOnIncumbent(Obj)) StopRequested = true;
      }
    } else if (Type == 'r' && N >= sizeof(int32_t) + 4 * sizeof(double) + 1 + sizeof(int64_t)) {
      MilpResult R;
      R.status = static_cast<MilpStatus>(readPod<int32_t>(P));
      R.objective = readPod<double>(P);
      R.bound = readPod<double>(P);
      R.seconds = readPod<double>(P);
      R.secondsToIncumbent = readPod<double>(P);
      R.startAccepted = readPod<int8_t>(P) != 0;
      R.nodes = static_cast<long>(readPod<int64_t>(P));
      size_t Left = static_cast<size_t>(End - P);
      if (Left > 0 && Left % sizeof(double) == 0 && Left / sizeof(double) <= Cols) {
        R.values.resize(Left / sizeof(double));
        std::memcpy(R.values.data(), P, Left);
      }
      Final = std::move(R);
    } else if (Type == 'e') {
      ChildError = std::string(P, End);
    }
  }

  /// Parses every complete frame in Buffer.
  void drain() {
    size_t Pos = 0;
    const size_t Header = 1 + sizeof(uint64_t);
    while (Buffer.size() - Pos >= Header && !StopRequested) {
      uint64_t Len;
      std::memcpy(&Len, Buffer.data() + Pos + 1, sizeof(Len));
      if (Buffer.size() - Pos - Header < Len) break;
      frame(Buffer[Pos], Buffer.data() + Pos + Header, static_cast<size_t>(Len));
      Pos += Header + static_cast<size_t>(Len);
    }
    Buffer.erase(0, Pos);
  }
};

Expected<MilpResult> solveInChild(const MilpModel &M, const MilpOptions &O) {
  const auto Begin = SteadyClock::now();
  // The child is killed at the deadline; CBC's own limit (cbcSecondsFor)
  // ends before it when CBC stops in time.
  const bool HasHard = O.deadline.isSet();
  const SteadyClock::time_point Hard = O.deadline.at().value_or(Begin);

  int Fds[2];
  if (::pipe2(Fds, O_CLOEXEC) != 0)
    return makeInternalError("cannot create a pipe for CBC: ", std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t Pid = ::fork();
  if (Pid < 0) {
    ::close(Fds[0]);
    ::close(Fds[1]);
    return makeInternalError("cannot start the CBC process: ", std::strerror(errno));
  }
  if (Pid == 0) {
    ::close(Fds[0]);
    runChild(M, O, Fds[1]);
  }
  ::close(Fds[1]);

  ParentState S{M, O, {}, {}, MilpModel::Inf, {}, {}, {}};
  if (!M.mipStart().empty() && M.maxViolation(M.mipStart()) <= 1e-6) {
    // The start is the first incumbent: kept if CBC is stopped early.
    S.BestObjective = M.objectiveOf(M.mipStart());
    S.BestValues = M.mipStart();
  }
  bool Killed = false, Eof = false;
  auto LastBeat = Begin;
  char Chunk[1 << 16];
  while (!Eof) {
    auto Now = SteadyClock::now();
    if ((HasHard && Now >= Hard) || S.StopRequested) {
      ::kill(Pid, SIGKILL);
      Killed = true;
      break;
    }
    // Wake at least every second: the deadline, and a heartbeat for the
    // progress line while CBC is silent (its root LP).
    double Wait = 1.0;
    if (HasHard) Wait = std::min(Wait, std::chrono::duration<double>(Hard - Now).count());
    struct pollfd P = {Fds[0], POLLIN, 0};
    int Rc = ::poll(&P, 1, std::max(1, static_cast<int>(std::ceil(Wait * 1000))));
    if (Rc < 0 && errno != EINTR) break;
    if (Rc > 0) {
      ssize_t N = ::read(Fds[0], Chunk, sizeof(Chunk));
      if (N > 0) {
        S.Buffer.append(Chunk, static_cast<size_t>(N));
        S.drain();
      } else if (N == 0 || errno != EINTR) {
        Eof = true;
      }
    }
    Now = SteadyClock::now();
    if (O.progress && Now - LastBeat >= std::chrono::seconds(1)) {
      LastBeat = Now;
      MilpProgress Pr = S.Last;
      Pr.seconds = std::chrono::duration<double>(Now - Begin).count();
      if (std::isfinite(S.BestObjective)) Pr.incumbent = std::min(Pr.incumbent, S.BestObjective);
      Pr.event = S.Last.event.empty() || S.Last.event == "start" ? "root" : "search";
      O.progress(Pr);
    }
  }
  ::close(Fds[0]);
  int WaitStatus = 0;
  while (::waitpid(Pid, &WaitStatus, 0) < 0 && errno == EINTR) {}
  const double Seconds = std::chrono::duration<double>(SteadyClock::now() - Begin).count();

  if (!Killed && S.Final) {
    S.Final->seconds = Seconds;
    return std::move(*S.Final);
  }
  if (!Killed && S.ChildError) return makeInternalError(*S.ChildError);
  // Stopped from outside, or the child died without a result (a crash of
  // CBC): the best incumbent received, if any.
  MilpResult R;
  R.seconds = Seconds;
  R.startAccepted = !M.mipStart().empty() && M.maxViolation(M.mipStart()) <= 1e-6;
  if (Killed) {
    R.stop = S.StopRequested ? MilpStop::Caller : MilpStop::Deadline;
  } else {
    char Why[64];
    if (WIFSIGNALED(WaitStatus))
      std::snprintf(Why, sizeof(Why), "CBC died of signal %d", WTERMSIG(WaitStatus));
    else std::snprintf(Why, sizeof(Why), "CBC exited with code %d", WEXITSTATUS(WaitStatus));
    R.stop = MilpStop::Crashed;
    R.crashDetail = Why;
  }
  R.bound = S.Last.bound;
  if (!S.BestValues.empty()) {
    R.status = MilpStatus::Feasible;
    R.values = std::move(S.BestValues);
    R.objective = S.BestObjective;
    R.bound = std::min(R.bound, R.objective);
  } else {
    R.status = MilpStatus::NoSolution;
  }
  return R;
}

} // namespace

Expected<MilpResult> onnxp::solveMilp(const MilpModel &M, const MilpOptions &O) {
  if (M.numVars() == 0) return makeInternalError("MILP model has no variables");
  if (!O.isolate) {
    DirectSink Sink(O);
    return solveMilpInProcess(M, O, Sink);
  }
  return solveInChild(M, O);
}
