//===- Partition/MemoryFit.cpp - What would fit, after "does not fit" ----===//
//
// Issue 22: a "does not fit" error names the least memory per accelerator
// with which the same algorithm finds a plan at this device count, and the
// least accelerator count that fits the given memory. Both are found with
// the algorithm itself (runPartitioner, so every plan is validated under
// the run's memory model): doubling until it fits, then bisection to 2%.
// The search is bounded in runs and time; when a bound is hit the message
// gives the bracket it established instead of a single number.
//
//===----------------------------------------------------------------------===//
#include "MemoryFit.h"

#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <cmath>
#include <vector>

using namespace onnxp;

namespace {
thread_local bool InSearch = false; // a search's own failures do not search again

struct Clock {
  Deadline end;
  explicit Clock(Deadline End) : end(End) {}
  bool out() const { return end.expired(); }
};

/// Single-accelerator planners (their registry facts): more devices change nothing.
bool singleDevice(const std::string &Name) {
  Expected<const PartitionerInfo *> Info = findPartitioner(Name);
  return Info && (*Info)->facts.singleDevice;
}
} // namespace

bool onnxp::isMemoryFailure(const Error &E, const Platform &P) {
  return !InSearch && std::isfinite(P.accMemory()) && E.kind() == Error::Kind::Input && E.doesNotFit();
}

bool onnxp::inMemoryFitSearch() { return InSearch; }

std::string onnxp::whatWouldFit(const std::string &Name, const CostGraph &G, const Platform &P,
                                const PartitionOptions &O, const Chain *C, const FitTrial &Try) {
  InSearch = true;
  struct Reset {
    ~Reset() { InSearch = false; }
  } R;
  // The search runs after the plan failed, for at most 60 s or the run's
  // limit, whichever is less: an error path may take up to that beyond the
  // limit, to say what would fit (docs/cost-model.md). Each trial stops at
  // the earlier of the run's deadline and the search's end: the budget is
  // checked only between trials, and one trial of a slow algorithm (seed
  // 001's DP on a 200-block chain at 160 GiB) otherwise ran until the run's
  // default limit of 600 s. When the run's deadline has passed, a trial does
  // what its algorithm always does (its first warm start), as before.
  const double Seconds = O.deadline.limitGiven() ? std::min(60.0, O.deadline.limitSeconds()) : 60.0;
  Clock Budget(Deadline::after(Seconds));
  PartitionOptions Quiet = O;
  Quiet.progress = nullptr;
  Quiet.verbose = false;
  Quiet.deadline = O.deadline.within(Seconds);
  int Trial = 0;
  auto Fits = [&](const Platform &Q) {
    ++Trial;
    if (O.progress)
      O.progress(Name + ": searching what would fit, trial " + std::to_string(Trial) + " (" +
                 std::to_string(Q.accelerators) + " x " + humanBytes(Q.accMemory()) + ")");
    return Try(Name, G, Q, Quiet, C);
  };

  std::string Out;
  // Least memory per accelerator at this device count.
  const double Given = P.accMemory();
  double Lo = Given, Hi = NAN;
  Platform Q = P;
  for (int I = 0; I < 12 && !Budget.out(); ++I) {
    Q.accelerator.memoryBytes = Lo * 2;
    if (Fits(Q)) {
      Hi = Lo * 2;
      break;
    }
    Lo *= 2;
  }
  const int Acc = P.accelerators;
  const std::string On = std::to_string(Acc) + " accelerator" + (Acc == 1 ? "" : "s");
  if (Trial == 0) return "; the time limit left no time to search what would fit";
  if (std::isnan(Hi)) {
    Out += "; " + Name + " finds no plan on " + On + " with up to " + humanBytes(Lo) + " each";
  } else {
    while (Hi - Lo > 0.02 * Hi && !Budget.out()) {
      Q.accelerator.memoryBytes = (Lo + Hi) / 2;
      (Fits(Q) ? Hi : Lo) = (Lo + Hi) / 2;
    }
    Out += "; " + Name + " finds a plan on " + On + " with " + humanBytes(Hi) + " each (" +
           exactBytes(std::ceil(Hi)) + "; none with " + humanBytes(Lo) + ")";
  }
  if (singleDevice(Name)) return Out;

  // Least accelerator count at the given memory: Acc + 1, then doubling to 64.
  std::vector<int> Counts;
  for (int K = Acc + 1; K <= 64; K = std::max(K + 1, K * 2)) Counts.push_back(K);
  if (!Counts.empty() && Counts.back() < 64) Counts.push_back(64);
  Q = P;
  int Fail = Acc, Fit = -1;
  for (int K : Counts) {
    if (Budget.out()) break;
    Q.accelerators = K;
    if (Fits(Q)) {
      Fit = K;
      break;
    }
    Fail = K;
  }
  if (Fit < 0) {
    Out +=
        ", and none on up to " + std::to_string(Fail) + " accelerators with " + humanBytes(Given) + " each";
    return Out;
  }
  while (Fit - Fail > 1 && !Budget.out()) {
    int Mid = (Fit + Fail) / 2;
    Q.accelerators = Mid;
    (Fits(Q) ? Fit : Fail) = Mid;
  }
  Out += ", or on " + std::to_string(Fit) + " accelerators with " + humanBytes(Given) + " each";
  if (Fit - Fail > 1) Out += " (" + std::to_string(Fail + 1) + " or more were not all tried)";
  return Out;
}
