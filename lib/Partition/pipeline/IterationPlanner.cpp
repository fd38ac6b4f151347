//===- Partition/pipeline/IterationPlanner.cpp - Pipeline x data parallelism ===//
//
// See IterationPlanner.h. The cut search is cheap (bisection over a greedy
// packing, linear in the blocks); the simulator prices every layout, so the
// plan returned is the best the simulator saw, not the search's estimate.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/IterationPlanner.h"

#include "onnx-partition/Coarsen/Linearize.h"
#include "onnx-partition/Partition/StageReplicaDP.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

using namespace onnxp;

namespace {

/// The linearized graph: per block prefix sums and the bytes crossing each
/// boundary (boundary k lies between blocks k - 1 and k).
struct BlockChain {
  int size = 0;
  std::vector<double> time, state, saved; ///< prefix sums, size + 1 entries
  std::vector<double> cut;                ///< size + 1 entries, 0 at both ends
  std::vector<int> blockOf;               ///< per cost-graph node
  StageChain stages;                      ///< the same blocks for StageReplicaDP.h
  double span(const std::vector<double> &Prefix, int I, int J) const { return Prefix[J] - Prefix[I]; }
};

Expected<BlockChain> linearized(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                bool Training) {
  LinearizeOptions LO;
  LO.dataFree = O.dataFree;
  LO.sideInputs = true;
  LO.maxBlockShare = 0.25;
  Expected<Linearization> L = linearizeGraph(G, LO);
  if (!L) return L.takeError();
  BlockChain C;
  C.size = static_cast<int>(L->chain.size());
  C.blockOf = L->blockOf;
  const bool AnyParams = hasParameterBytes(G);
  std::vector<double> Time(C.size, 0), State(C.size, 0), Saved(C.size, 0), Diff(C.size + 2, 0);
  std::vector<double> Forward(C.size, 0), Backward(C.size, 0), Gradient(C.size, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    const int B = C.blockOf[V];
    if (Training || !N.isBackward()) Time[B] += P.nodeTimeMs(N, 0);
    if (Training || !N.isBackward()) (N.isBackward() ? Backward : Forward)[B] += P.nodeTimeMs(N, 0);
    State[B] += iterationStateBytes(N, AnyParams, Training);
    Saved[B] += Training ? N.savedBytes : 0;
    Gradient[B] += Training ? N.gradBytes : 0;
  }
  for (const CostEdge &E : G.edges()) {
    if (!G.node(E.src).isForwardSide() || !G.node(E.dst).isForwardSide()) continue;
    const int From = C.blockOf[E.src], To = C.blockOf[E.dst];
    if (From >= To) continue;
    Diff[From + 1] += E.bytes;
    Diff[To + 1] -= E.bytes;
  }
  C.time.assign(C.size + 1, 0);
  C.state = C.saved = C.cut = C.time;
  double Running = 0;
  for (int B = 0; B < C.size; ++B) {
    C.time[B + 1] = C.time[B] + Time[B];
    C.state[B + 1] = C.state[B] + State[B];
    C.saved[B + 1] = C.saved[B] + Saved[B];
  }
  for (int K = 1; K < C.size; ++K) C.cut[K] = (Running += Diff[K]);
  StageChain &S = C.stages;
  S.size = C.size;
  S.forward.assign(C.size + 1, 0);
  S.backward = S.gradient = S.forward;
  S.state = C.state;
  S.saved = C.saved;
  for (int B = 0; B < C.size; ++B) {
    S.forward[B + 1] = S.forward[B] + Forward[B];
    S.backward[B + 1] = S.backward[B] + Backward[B];
    S.gradient[B + 1] = S.gradient[B] + Gradient[B];
  }
  return C;
}

/// What one (P, d) search needs.
struct CutSearch {
  const BlockChain &C;
  const Platform &P;
  int maxStages;
  int replicas;
  int microbatches;
  bool gpipe;
  bool training;
  double memory;

  int inFlight(int FromEnd) const {
    const int PerReplica = (microbatches + replicas - 1) / replicas;
    if (!training) return 0;
    return gpipe ? PerReplica : std::min(PerReplica, FromEnd); // 1F1B: P - s on each replica
  }
  double stageTime(int I, int J) const {
    const double Trips = training ? 2 : 1; // the activation, then its gradient back
    double T = C.span(C.time, I, J);
    if (I > 0) T += Trips * P.linkMs(LinkKind::Peer, C.cut[I]);
    if (J < C.size) T += Trips * P.linkMs(LinkKind::Peer, C.cut[J]);
    return T;
  }
  bool fits(int I, int J, int FromEnd, double Limit) const {
    if (stageTime(I, J) > Limit) return false;
    return C.span(C.state, I, J) + inFlight(FromEnd) * C.span(C.saved, I, J) <= memory;
  }
  /// Stage boundaries [0, b1, ..., size] packing from the last stage, each
  /// stage as long as it fits under Limit; empty when more than maxStages.
  std::vector<int> pack(double Limit) const {
    std::vector<int> Bounds{C.size};
    int J = C.size;
    for (int K = 1; J > 0; ++K) {
      if (K > maxStages || !fits(J - 1, J, K, Limit)) return {};
      int I = J - 1;
      while (I > 0 && fits(I - 1, J, K, Limit)) --I;
      Bounds.push_back(I);
      J = I;
    }
    std::reverse(Bounds.begin(), Bounds.end());
    return Bounds;
  }
  /// The least limit (to 1e-9 relative) whose packing succeeds.
  std::vector<int> bestCut() const {
    double Hi = stageTime(0, C.size) * 2 + 1;
    std::vector<int> Best = pack(Hi);
    if (Best.empty()) return Best;
    double Lo = 0;
    for (int Iter = 0; Iter < 80 && Hi - Lo > 1e-9 * Hi; ++Iter) {
      const double Mid = (Lo + Hi) / 2;
      std::vector<int> B = pack(Mid);
      if (B.empty()) Lo = Mid;
      else Hi = Mid, Best = std::move(B);
    }
    return Best;
  }
};

/// First accelerator of each stage's replica group: packed (s d), or
/// aligned to node boundaries (floor(A / d) groups per node of A); empty
/// when the layout does not fit on the platform.
/// The cut search for at most Stages stages of D replicas each under the
/// request's schedule and the accelerator's memory.
CutSearch cutSearch(const BlockChain &C, const Platform &P, const PartitionOptions &O,
                    const IterationRequest &Req, int Stages, int D) {
  return CutSearch{C,
                   P,
                   Stages,
                   D,
                   O.globalMicrobatches,
                   Req.schedule == PipelineScheduleKind::Gpipe,
                   Req.training,
                   P.accMemory()};
}

std::vector<int> groupBases(const Platform &P, int Stages, int D, bool Aligned) {
  std::vector<int> Base(Stages);
  const int A = P.acceleratorsPerNode > 0 ? P.acceleratorsPerNode : P.accelerators;
  // Aligned differs from packed only when d < A does not divide A.
  if (Aligned && (D >= A || A % D == 0)) return {};
  for (int S = 0; S < Stages; ++S) {
    if (!Aligned) {
      Base[S] = S * D;
    } else {
      const int PerNode = A / D;
      Base[S] = (S / PerNode) * A + (S % PerNode) * D;
    }
    if (Base[S] + D > P.accelerators) return {};
  }
  return Base;
}

/// Stage s = blocks [Bounds[s], Bounds[s + 1]) on Reps[s] accelerators
/// from Base[s] on.
Plan layoutPlan(const CostGraph &G, const Platform &P, const PartitionOptions &O, const BlockChain &C,
                const std::vector<int> &Bounds, const std::vector<int> &Base, const std::vector<int> &Reps) {
  Plan Pl;
  const int Stages = static_cast<int>(Bounds.size()) - 1;
  std::vector<int> StageOfBlock(C.size, 0);
  for (int S = 0; S < Stages; ++S)
    for (int B = Bounds[S]; B < Bounds[S + 1]; ++B) StageOfBlock[B] = S;
  Pl.device.assign(G.numNodes(), 0);
  Pl.stage.assign(G.numNodes(), 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    Pl.stage[V] = StageOfBlock[C.blockOf[V]];
    Pl.device[V] = Base[Pl.stage[V]];
  }
  if (*std::max_element(Reps.begin(), Reps.end()) > 1) {
    Pl.replicas.assign(P.numDevices(), 1);
    for (int S = 0; S < Stages; ++S) {
      Pl.replicas[Base[S]] = Reps[S];
      for (int R = 1; R < Reps[S]; ++R) Pl.replicas[Base[S] + R] = 0;
    }
  }
  Pl.memoryModel = MemoryModel::Schedule;
  Pl.objectiveKind = *O.objective;
  Pl.accelerators = P.accelerators;
  Pl.cpus = P.cpus;
  Pl.pipelineSchedule = O.pipelineSchedule;
  setIterationBatch(O, Pl);
  return Pl;
}

Error needsGlobalBatch(const PartitionOptions &O) {
  if (O.globalMicrobatches >= 1 && O.objective && isIterationObjective(*O.objective)) return Error::success();
  return makeUsageError("pipeline-dp plans one iteration of a global batch (objective iteration or "
                        "throughput); give --global-batch B (and --micro-batch b)");
}

/// Prices one layout; false (and Status) when it cannot run or fit.
bool priceLayout(const CostGraph &G, const Platform &P, Plan &Pl, std::string &Status) {
  Expected<IterationPrice> Price = priceIterationPlan(G, P, Pl);
  if (!Price) {
    Status = Price.takeError().message();
    return false;
  }
  Pl.objective = iterationObjectiveValue(Pl, *Price);
  return true;
}

} // namespace

namespace {
/// The planner's state over one graph: the linearized chain and the request.
struct LayoutSearch {
  const CostGraph &G;
  const Platform &P;
  const PartitionOptions &O;
  BlockChain C;
  IterationRequest Req;
  std::set<std::tuple<std::vector<int>, std::vector<int>, std::vector<int>>> Seen; // (bounds, bases, d_s)
  int Priced = 0;
  std::string LastFailure;

  /// The note's common part: "pipeline-dp: LAYOUT on U of N accelerators,
  /// M micro-batches of b sample(s) per iteration (SCHEDULE); ".
  std::string layoutNote(const std::string &Layout, int Used) const {
    return "pipeline-dp: " + Layout + " on " + std::to_string(Used) + " of " +
           std::to_string(P.accelerators) + " accelerators, " + std::to_string(O.globalMicrobatches) +
           " micro-batches of " + std::to_string(O.microbatchSamples) + " sample(s) per iteration (" +
           pipelineScheduleName(Req.schedule) + "); ";
  }

  /// The best of the packed and node-aligned placements of the best cut
  /// into at most Stages stages with D replicas each; nullopt when none
  /// fits (Candidates, when set, gets every layout tried).
  std::optional<Plan> best(int Stages, int D, std::vector<IterationCandidate> *Candidates) {
    const CutSearch S = cutSearch(C, P, O, Req, Stages, D);
    const std::vector<int> Bounds = S.bestCut();
    IterationCandidate Cand;
    Cand.stages = Bounds.empty() ? Stages : static_cast<int>(Bounds.size()) - 1;
    Cand.replicas = D;
    if (Bounds.empty()) {
      Cand.status = "no cut into at most " + std::to_string(Stages) + " stages fits memory";
      if (Candidates) Candidates->push_back(Cand);
      return std::nullopt;
    }
    std::optional<Plan> Best;
    for (bool Aligned : {false, true}) {
      const std::vector<int> Base = groupBases(P, Cand.stages, D, Aligned);
      const std::vector<int> Reps(Cand.stages, D);
      if (Base.empty() || !Seen.insert({Bounds, Base, Reps}).second) continue;
      Plan Pl = layoutPlan(G, P, O, C, Bounds, Base, Reps);
      Cand.aligned = Aligned;
      ++Priced;
      if (!priceLayout(G, P, Pl, Cand.status)) {
        LastFailure = Cand.status;
        if (Candidates) Candidates->push_back(Cand);
        continue;
      }
      Cand.objective = Pl.objective;
      Cand.status.clear();
      if (Candidates) Candidates->push_back(Cand);
      if (!Best || Pl.objective < Best->objective * (1 - 1e-12)) {
        Pl.notes = {
            layoutNote(std::to_string(Cand.stages) + " stage(s) x " + std::to_string(D) + " replica(s)",
                       Cand.stages * D) +
            "the best of the layouts the iteration simulator priced"};
        Best = std::move(Pl);
      }
    }
    return Best;
  }

  /// The layouts of StageReplicaDP.h, one per number of accelerators
  /// used, each priced by the simulator (Candidates gets them); the best.
  std::optional<Plan> perStage(std::vector<IterationCandidate> *Candidates) {
    StageReplicaRequest R;
    R.microbatches = O.globalMicrobatches;
    R.gpipe = Req.schedule == PipelineScheduleKind::Gpipe;
    R.training = Req.training;
    R.memory = P.accMemory();
    R.optimizerTraffic = O.optimizerTraffic;
    std::optional<Plan> Best;
    for (const std::optional<StageReplicaLayout> &L : stageReplicaLayouts(C.stages, P, R)) {
      if (!L || !Seen.insert({L->bounds, L->base, L->replicas}).second) continue;
      IterationCandidate Cand;
      Cand.stages = static_cast<int>(L->replicas.size());
      Cand.replicas = *std::max_element(L->replicas.begin(), L->replicas.end());
      Cand.perStage = L->replicas;
      Plan Pl = layoutPlan(G, P, O, C, L->bounds, L->base, L->replicas);
      ++Priced;
      const bool Ok = priceLayout(G, P, Pl, Cand.status);
      if (Ok) Cand.objective = Pl.objective;
      else LastFailure = Cand.status;
      if (Candidates) Candidates->push_back(Cand);
      if (!Ok || (Best && !(Pl.objective < Best->objective * (1 - 1e-12)))) continue;
      std::string Reps;
      for (int D : L->replicas) Reps += (Reps.empty() ? "" : ",") + std::to_string(D);
      const int Used = std::accumulate(L->replicas.begin(), L->replicas.end(), 0);
      Pl.notes = {layoutNote(std::to_string(Cand.stages) + " stage(s) x [" + Reps + "] replicas", Used) +
                  "each stage's replicas chosen by the per-stage search (seed 004 App. C.2), the best "
                  "of the layouts the iteration simulator priced"};
      Best = std::move(Pl);
    }
    return Best;
  }
};

Expected<std::unique_ptr<LayoutSearch>> layoutSearch(const CostGraph &G, const Platform &P,
                                                     const PartitionOptions &O) {
  ONNXP_RETURN_IF_ERROR(needsGlobalBatch(O));
  if (P.accelerators < 1) return makeUsageError("pipeline-dp plans on accelerators; the platform has none");
  Plan Probe;
  Probe.objectiveKind = *O.objective;
  Probe.pipelineSchedule = O.pipelineSchedule;
  const IterationRequest Req = iterationRequest(G, Probe);
  Expected<BlockChain> C = linearized(G, P, O, Req.training);
  if (!C) return C.takeError();
  return std::make_unique<LayoutSearch>(LayoutSearch{G, P, O, std::move(*C), Req, {}, 0, {}});
}
} // namespace

Expected<Plan> onnxp::planIteration(const CostGraph &G, const Platform &P, const PartitionOptions &O,
                                    std::vector<IterationCandidate> *Candidates) {
  Expected<std::unique_ptr<LayoutSearch>> S = layoutSearch(G, P, O);
  if (!S) return S.takeError();
  LayoutSearch &L = **S;
  const int N = P.accelerators, M = O.globalMicrobatches;
  std::optional<Plan> Best;
  for (int Stages = 1; Stages <= std::min(N, L.C.size); ++Stages)
    for (int D = 1; Stages * D <= N && D <= M; ++D)
      if (std::optional<Plan> Pl = L.best(Stages, D, Candidates))
        if (!Best || Pl->objective < Best->objective * (1 - 1e-12)) Best = std::move(Pl);
  // Issue 33 item 3: stages of different degrees, kept only when better.
  if (std::optional<Plan> Pl = L.perStage(Candidates))
    if (!Best || Pl->objective < Best->objective * (1 - 1e-12)) Best = std::move(Pl);
  if (!Best)
    return makeDoesNotFitError("pipeline-dp: no layout of stages x replicas on ", N, " accelerators fits",
                               L.LastFailure.empty() ? std::string() : " (" + L.LastFailure + ")");
  Best->stats["blocks"] = L.C.size;
  Best->stats["layouts"] = L.Priced;
  return std::move(*Best);
}

Expected<Plan> onnxp::planLayout(const CostGraph &G, const Platform &P, const PartitionOptions &O, int Stages,
                                 int Replicas) {
  Expected<std::unique_ptr<LayoutSearch>> S = layoutSearch(G, P, O);
  if (!S) return S.takeError();
  if (Stages < 1 || Replicas < 1 || Stages * Replicas > P.accelerators)
    return makeUsageError(Stages, " stages x ", Replicas, " replicas do not fit ", P.accelerators,
                          " accelerators");
  std::optional<Plan> Pl = (*S)->best(Stages, Replicas, nullptr);
  if (!Pl)
    return makeDoesNotFitError(Stages, " stages x ", Replicas, " replicas do not fit (", (*S)->LastFailure,
                               ")");
  return std::move(*Pl);
}

Expected<Plan> onnxp::iterationBaseline(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  ONNXP_RETURN_IF_ERROR(needsGlobalBatch(O));
  Plan Probe;
  Probe.objectiveKind = *O.objective;
  Probe.pipelineSchedule = O.pipelineSchedule;
  const IterationRequest Req = iterationRequest(G, Probe);
  Expected<BlockChain> C = linearized(G, P, O, Req.training);
  if (!C) return C.takeError();
  std::string Why;
  for (int Stages = 1; Stages <= std::min(P.accelerators, C->size); ++Stages) {
    const CutSearch S = cutSearch(*C, P, O, Req, Stages, 1);
    const std::vector<int> Bounds = S.bestCut();
    if (Bounds.empty()) continue;
    const int Used = static_cast<int>(Bounds.size()) - 1;
    Plan Pl = layoutPlan(G, P, O, *C, Bounds, groupBases(P, Used, 1, false), std::vector<int>(Used, 1));
    if (priceLayout(G, P, Pl, Why)) return Pl;
  }
  return makeDoesNotFitError("no pipeline of the accelerators fits without replicas",
                             Why.empty() ? "" : ": " + Why);
}

Expected<Plan> onnxp::partitionPipelineDP(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  return planIteration(G, P, O);
}
