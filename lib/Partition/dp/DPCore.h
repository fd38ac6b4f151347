//===- Partition/dp/DPCore.h - What the DP variants share -------*- C++ -*-===//
//
// The lattice walk of the push DP (IdealDP.cpp explains it) and the shape of
// a DP solution, shared by the max-load DP and the Pareto DP of the "gpipe"
// objective (GpipeDP.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_PARTITION_DP_DPCORE_H
#define ONNXP_LIB_PARTITION_DP_DPCORE_H

#include "DeviceSetCost.h"
#include "IdealLattice.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/dp/IdealDP.h"
#include "onnx-partition/Support/Deadline.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace onnxp::dp {

/// One device's interval of the chain of ideals.
struct Segment {
  int From, To; ///< ideals, From < To
  bool Cpu;
  int Replicas;
};

struct Solution {
  double Value = kInfinity;
  std::vector<Segment> Segments; ///< in stage order
  double Pairs = 0;              ///< (I', I) pairs priced
  /// The run's deadline stopped the DP (issue 20): Value and Segments are
  /// the best complete split pushed so far (none if infinite), not the
  /// optimum. A cell's value is final once the DP has pushed from it (it
  /// takes ideals by size), so the back pointers of a complete split read
  /// back a valid one.
  bool TimedOut = false;
  /// The DP stopped at its PairBudget (MaxLoadDP): no Value, no Segments.
  bool OverBudget = false;
  double Walked = 0; ///< ideals it pushed from (its share of the lattice)
};

/// The DP's work budget in (ideal, superset) pairs, about half a CPU second
/// here: what dp spends on kind orders beyond the platform's own
/// (KindOrders.cpp), the least it gives compute balancing (IdealDP.cpp),
/// and what the exact DP on a graph within kAutoIdealBudget may take
/// before dp contracts it as a big graph (issue 37, item 8: a mid-size
/// Inception graph of 19,607 ideals took 3.3e7 pairs, 3.9 CPU s).
constexpr double kDPPairBudget = 4e6;

/// The run's deadline as the DP loops see it (PartitionOptions::deadline):
/// tick() looks at the clock every 4096 calls, so it can sit in the
/// innermost loop. It starts disarmed: the DP's first walk (from the empty
/// ideal, one pass over the lattice) always completes, so a run whose
/// preprocessing ate the budget still has the splits that walk pushes
/// (all on one device when it fits) rather than none.
class DPClock {
public:
  explicit DPClock(const Deadline &At) : At(At) {}
  void arm() { Armed = true; }
  bool tick() {
    if (Armed && At.isSet() && !Expired && (++Count & 4095) == 0) Expired = At.expired();
    return Expired;
  }
  /// Looks at the clock now.
  bool expired() {
    if (Armed && !Expired) Expired = At.expired();
    return Expired;
  }

private:
  Deadline At;
  uint32_t Count = 0;
  bool Armed = false;
  bool Expired = false;
};

/// Visits every ideal To > From once (canonical DFS up the lattice) with
/// Cost holding To \ From, calling OnPair(To, AccOk, CpuOk) when the set is
/// backward-contiguous. A subtree is cut once neither an accelerator
/// (memory, support, processing <= AccCut) nor a CPU (processing <= Cut)
/// can hold the set: both only get worse as the set grows. AccCut is Cut
/// times the most replicas a set may get (App. C.2). Returns the number of
/// sets priced; stops early (Clock expired) at the run's deadline.
template <typename Fn>
double walkUpFrom(const IdealLattice &L, DeviceSetCost &Cost, int From, double Cut, double AccCut,
                  bool HaveAcc, bool HaveCpu, DPClock &Clock, Fn &&OnPair) {
  struct Frame {
    int Ideal;
    int Added; ///< unit added to reach Ideal, -1 at the root
    uint32_t Next;
  };
  std::vector<Frame> Stack;
  double Pairs = 0;
  Stack.push_back({From, -1, L.edgeBegin[From]});
  while (!Stack.empty()) {
    if (Clock.tick()) {
      // Out of time: unwind so Cost holds the empty set again.
      for (auto It = Stack.rbegin(); It != Stack.rend(); ++It)
        if (It->Added >= 0) Cost.removeUnit(It->Added);
      break;
    }
    Frame &F = Stack.back();
    uint32_t End = L.edgeBegin[F.Ideal + 1];
    // Canonical order: only units larger than the one added last.
    if (F.Next < End && L.edgeUnit[F.Next] <= F.Added)
      F.Next = static_cast<uint32_t>(
          std::upper_bound(L.edgeUnit.begin() + F.Next, L.edgeUnit.begin() + End, F.Added) -
          L.edgeUnit.begin());
    if (F.Next == End) {
      if (F.Added >= 0) Cost.removeUnit(F.Added);
      Stack.pop_back();
      continue;
    }
    int U = L.edgeUnit[F.Next];
    int To = L.edgeTarget[F.Next];
    ++F.Next;
    Cost.addUnit(U);
    bool AccOk = HaveAcc && Cost.fitsAccelerator() && Cost.accProcessing() <= AccCut;
    bool CpuOk = HaveCpu && Cost.cpuProcessing() <= Cut;
    if (!AccOk && !CpuOk) {
      Cost.removeUnit(U);
      continue;
    }
    ++Pairs;
    if (Cost.backwardContiguous()) OnPair(To, AccOk, CpuOk);
    Stack.push_back({To, U, L.edgeBegin[To]});
  }
  return Pairs;
}

/// The Pareto DP for "gpipe" (max FW + max BW, seed 004 App. A).
Solution solveGpipeDP(const CostGraph &G, const Platform &P, const PartitionOptions &O, const UnitGraph &UG,
                      const IdealLattice &L, double UpperBound);

/// The DP on a given unit graph, without the dpl bound (for baselines that
/// shape the unit graph themselves, e.g. PipeDream's path).
/// Ideals above which dp contracts (AutoContract.cpp): the DP's time grows
/// with the number of (ideal, superset) pairs; this keeps it near a second.
constexpr size_t kAutoIdealBudget = 20000;
/// Ideals up to which dp still solves the uncontracted graph exactly when
/// the exact reductions do not bring it within kAutoIdealBudget. Issue 37,
/// item 8: the same budget as big graphs. At 120,000 a 371-node Inception
/// v2 (59,862 ideals, 3.09e8 pairs) took 20 CPU s, silently; now it is
/// contracted, with the note every contraction gives.
constexpr size_t kExactIdealBudget = kAutoIdealBudget;

/// dp on a graph with more than kAutoIdealBudget ideals (AutoContract.cpp):
/// the exact reductions first -- if they bring the ideals within the budget
/// the result is still optimal among contiguous plans of G; otherwise, when
/// G itself is within the ideal limit (FullFits) with at most
/// kExactIdealBudget ideals (FullCount), nothing (the caller runs the exact
/// DP on G); otherwise the finest structural granularity that
/// fits, refined around stage boundaries, mapped back to G.
/// IdealBudget: the contraction's ideal budget, kAutoIdealBudget (or the
/// --ideal-limit) when 0.
Expected<std::optional<Plan>> solveContracted(const CostGraph &G, const Platform &P,
                                              const PartitionOptions &O, const IdealDPTuning &Tuning,
                                              bool FullFits, size_t FullCount, size_t IdealBudget = 0);

Expected<Plan> solveOnUnits(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                            const UnitGraph &UG);

} // namespace onnxp::dp

#endif // ONNXP_LIB_PARTITION_DP_DPCORE_H
