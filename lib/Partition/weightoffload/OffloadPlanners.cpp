//===- Partition/weightoffload/OffloadPlanners.cpp - Greedy, Greedy*, L2L -===//
//
// The planners of seed 002 §5 and §7, each a selection plus Algorithm 2,
// each replayed by the independent simulator before it is returned:
//  - greedy:  Algorithm 1 with the discount, Algorithm 2 over every cut;
//    by default also Algorithm 1 run with memory margins and without the
//    discount in its scoring (see planGreedyFamily); the paper's variant
//    alone is `greedy-paper`.
//  - Greedy*: Algorithm 1 and Algorithm 2 without the discount (Table 1:
//    "weights are not only offloaded once": after F_k a weight chosen at
//    both points is sent to the host again); same margins.
//  - L2L (Pudipeddi et al. 2020, seed 002 §2/§7): the paper gives no formula,
//    only "keep on the GPU only the encoder that is being used" with the
//    weights' master copy on the host. Modelled as: every choice that takes
//    a weight off while another layer runs, i.e. (k,1) for k < L and (k,0)
//    for k > 1 (so only the layer in use and the one being fetched are on
//    the GPU), with the discount (the host copy is the master, nothing is
//    sent back after a forward), and double buffering: the next layer's
//    prefetch starts no earlier than the current op (oneAhead). No cut
//    points (a cut would fetch B_L's neighbours during the forward phase,
//    which is not L2L's execution).
//  - exhaustive: every set of useful choices x every cut point, for small
//    instances (Theorem 1's checks).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"
#include "onnx-partition/Partition/WeightOffloadSimulator.h"
#include "onnx-partition/Support/Deadline.h"

#include "onnx-partition/IR/CostGraph.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

using namespace onnxp;

static Expected<OffloadPlan> finish(const OffloadInstance &I, std::string Algo, OffloadSelection Sel,
                                    std::optional<OffloadSchedule> Sch, int Cut) {
  if (!Sch)
    return makeInternalError(I.name, ": ", Algo, ": the list schedule found no feasible order for the ",
                             Sel.count(), " chosen offloads");
  Expected<OffloadSimulation> Sim = simulateOffloadSchedule(I, *Sch, Sch->cycleTime);
  if (!Sim) return Sim.takeError().withContext(Algo);
  OffloadPlan P;
  P.algorithm = std::move(Algo);
  P.selection = std::move(Sel);
  P.schedule = std::move(*Sch);
  P.cut = Cut;
  P.cycleTime = Sim->cycleTime;
  P.idleTime = Sim->cycleTime - I.totalCompute();
  P.peakMemory = Sim->peakMemory;
  P.idleBeforeF.assign(I.L + 1, 0);
  P.idleBeforeB.assign(I.L + 1, 0);
  double Prev = 0;
  for (int J = 0; J < I.numOps(); ++J) {
    double Idle = P.schedule.opStart[J] - Prev;
    (I.opIsBackward(J) ? P.idleBeforeB : P.idleBeforeF)[I.opLayer(J)] = Idle;
    Prev = P.schedule.opStart[J] + I.opTime(J);
  }
  // The idle at the end of the cycle (waiting for cut prefetches or the last
  // transfers) delays the next B_L.
  P.idleBeforeB[I.L] += P.schedule.cycleTime - Prev;
  return P;
}

/// Every choice that takes a weight off the GPU while another layer runs.
static OffloadSelection allUsefulChoices(const OffloadInstance &I) {
  OffloadSelection Sel(I.L);
  for (int K = 1; K <= I.L; ++K) {
    if (I.w[K] <= 0) continue;
    Sel.afterForward[K] = K < I.L;
    Sel.afterBackward[K] = K > 1;
  }
  return Sel;
}

static Expected<OffloadPlan> planGreedyFamily(const OffloadInstance &I, bool Discount, bool Margins,
                                              const char *Name, const Deadline &Until) {
  ONNXP_RETURN_IF_ERROR(checkOffloadFeasible(I));
  OffloadScheduleOptions O;
  O.discount = Discount;
  O.deadline = Until;
  // Issue 20: every candidate after the first is optional; on 500 blocks
  // the nine take about 3 s.
  auto Passed = [&] { return Until.expired(); };
  // Candidate selections: Algorithm 1 at M_GPU, then (with Margins) at
  // M_GPU - j max|w| for j = 1..3 and finally every useful choice. Algorithm 1
  // makes the op peaks fit and nothing more, so Algorithm 2 may find no room
  // for the buffer of the next prefetch (on BERT-32 it then idles one
  // transfer before many B_k). A margin of j weights leaves that room; three
  // cover the transfers Algorithm 2 keeps in flight (one per direction plus
  // a prefetch waiting for its op). Each candidate is scheduled with the
  // real M_GPU; the best schedule wins.
  double WMax = 0;
  for (int K = 1; K <= I.L; ++K) WMax = std::max(WMax, I.w[K]);
  // With the discount, greedy also scores without it (Greedy*'s selections):
  // the scoring is a heuristic, and scheduling any selection with the
  // discount saves transfers, so greedy is never behind Greedy*.
  std::vector<OffloadSelection> Candidates;
  std::vector<bool> Scorings{Discount};
  if (Margins && Discount) Scorings.push_back(false);
  int Planned = 0; // candidates the options call for
  for (bool Scoring : Scorings) {
    for (int J = 0; J <= (Margins ? 3 : 0); ++J) {
      OffloadInstance Reduced = I;
      Reduced.memory = I.memory - J * WMax;
      if (J > 0 && Reduced.memory < I.minimumMemory()) break;
      ++Planned;
      if (!Candidates.empty() && Passed()) continue;
      Expected<OffloadSelection> Sel = selectGreedy(Reduced, Scoring);
      if (!Sel) return Sel.takeError();
      Candidates.push_back(*Sel);
    }
  }
  if (Margins) {
    ++Planned;
    if (!Passed()) Candidates.push_back(allUsefulChoices(I));
  }
  std::optional<OffloadSchedule> Best;
  OffloadSelection BestSel(I.L);
  int BestCut = 0, Tried = 0;
  bool CutsStopped = false;
  for (size_t Q = 0; Q < Candidates.size(); ++Q) {
    if (Q > 0 && Passed()) break;
    ++Tried;
    bool Seen = false;
    for (size_t R = 0; R < Q; ++R)
      Seen |= Candidates[R].afterForward == Candidates[Q].afterForward &&
              Candidates[R].afterBackward == Candidates[Q].afterBackward;
    if (Seen) continue;
    int Cut = 0;
    std::optional<OffloadSchedule> Sch = scheduleBestCut(I, Candidates[Q], O, &Cut, &CutsStopped);
    if (Sch && (!Best || Sch->cycleTime < Best->cycleTime * (1 - 1e-12))) {
      Best = std::move(Sch);
      BestSel = Candidates[Q];
      BestCut = Cut;
    }
  }
  Expected<OffloadPlan> Out = finish(I, Name, BestSel, std::move(Best), BestCut);
  if (Out) {
    Out->candidates = Planned;
    // A candidate whose cut points the clock cut short counts as not tried.
    Out->candidatesTried = CutsStopped ? Tried - 1 : Tried;
  }
  return Out;
}

Expected<OffloadPlan> onnxp::planGreedyOffload(const OffloadInstance &I, bool Margins,
                                               const Deadline &Until) {
  return planGreedyFamily(I, /*Discount=*/true, Margins, Margins ? "greedy" : "greedy-paper", Until);
}

Expected<OffloadPlan> onnxp::planGreedyStarOffload(const OffloadInstance &I, bool Margins,
                                                   const Deadline &Until) {
  return planGreedyFamily(I, /*Discount=*/false, Margins, Margins ? "greedy*" : "greedy*-paper", Until);
}

Expected<OffloadPlan> onnxp::planL2LOffload(const OffloadInstance &I) {
  ONNXP_RETURN_IF_ERROR(checkOffloadFeasible(I));
  OffloadScheduleOptions O;
  O.oneAhead = true;
  O.allCuts = false;
  OffloadSelection Sel = allUsefulChoices(I);
  return finish(I, "l2l", Sel, scheduleOffloads(I, Sel, 0, O), 0);
}

Expected<OffloadPlan> onnxp::planExhaustiveOffload(const OffloadInstance &I, int MaxChoices) {
  ONNXP_RETURN_IF_ERROR(checkOffloadFeasible(I));
  // Useful choices: a weight with bytes, covering at least one op.
  std::vector<std::pair<int, int>> Choices;
  for (int K = 1; K <= I.L; ++K) {
    if (I.w[K] <= 0) continue;
    if (K < I.L) Choices.push_back({K, 1});
    if (K > 1) Choices.push_back({K, 0});
  }
  if ((int)Choices.size() > MaxChoices)
    return makeUsageError(I.name, ": exhaustive offload search over ", Choices.size(),
                          " choices is too large (limit ", MaxChoices, ")");
  std::optional<OffloadSchedule> Best;
  OffloadSelection BestSel(I.L);
  int BestCut = 0;
  for (unsigned long Mask = 0; Mask < (1ul << Choices.size()); ++Mask) {
    OffloadSelection Sel(I.L);
    for (size_t Q = 0; Q < Choices.size(); ++Q)
      if (Mask >> Q & 1) (Choices[Q].second ? Sel.afterForward : Sel.afterBackward)[Choices[Q].first] = 1;
    if (!selectionCoversMemory(I, Sel)) continue; // no schedule can exist
    for (int C = 0; C < numCutPoints(Sel); ++C) {
      auto Sch = scheduleOffloads(I, Sel, C);
      if (Sch && (!Best || Sch->cycleTime < Best->cycleTime * (1 - 1e-12))) {
        Best = std::move(Sch);
        BestSel = Sel;
        BestCut = C;
      }
    }
  }
  return finish(I, "exhaustive", BestSel, std::move(Best), BestCut);
}

std::string onnxp::describeOffloadPlan(const OffloadInstance &I, const OffloadPlan &P) {
  std::ostringstream OS;
  char Buf[256];
  std::snprintf(Buf, sizeof Buf,
                "%s: cycle %.3f ms = compute %.3f ms + idle %.3f ms; peak %.2f MB of %.2f MB; cut %d\n",
                P.algorithm.c_str(), P.cycleTime, I.totalCompute(), P.idleTime, P.peakMemory / 1e6,
                I.memory / 1e6, P.cut);
  OS << Buf;
  OS << "layer  weight_MB  after_F(k,1)  after_B(k,0)  idle_before_F_ms  idle_before_B_ms\n";
  for (int K = 1; K <= I.L; ++K) {
    std::snprintf(Buf, sizeof Buf, "%5d  %9.2f  %12s  %12s  %16.3f  %16.3f\n", K, I.w[K] / 1e6,
                  P.selection.afterForward[K] ? "offload" : "-",
                  P.selection.afterBackward[K] ? "offload" : "-", P.idleBeforeF[K], P.idleBeforeB[K]);
    OS << Buf;
  }
  return OS.str();
}
