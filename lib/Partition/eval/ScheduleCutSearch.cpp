//===- Partition/eval/ScheduleCutSearch.cpp - The best cut for a schedule ===//
//
// See ScheduleCutSearch.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ScheduleCutSearch.h"

#include "onnx-partition/Cost/PipelineInFlight.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

namespace {
/// The pipeline stages of a cut: per chain index (stagePipelineOrder, what
/// stagesAsChain numbers), its forward nodes in topological order, its
/// device and stage id; per node its chain index.
struct StageCut {
  std::vector<std::vector<int>> forward;
  std::vector<int> device, stageId;
  std::vector<int> pos;
  /// (device, is backward) -> the stage id such nodes carry on the device.
  std::map<std::pair<int, bool>, int> idOn;
  int stages() const { return static_cast<int>(forward.size()); }
};

StageCut stageCut(const CostGraph &G, const std::vector<int> &Order, const Plan &Pl) {
  const bool ByStage = Pl.stage.size() == G.numNodes();
  auto StageOf = [&](int V) { return ByStage ? Pl.stage[V] : Pl.device[V]; };
  const std::map<int, int> Position = stagePipelineOrder(G, Order, Pl.device, Pl.stage);
  StageCut C;
  C.forward.resize(Position.size());
  C.device.assign(Position.size(), -1);
  C.stageId.assign(Position.size(), -1);
  C.pos.assign(G.numNodes(), -1);
  for (int V : Order) {
    C.idOn.try_emplace({Pl.device[V], G.node(V).isBackward()}, StageOf(V));
    auto It = Position.find(StageOf(V));
    if (It == Position.end()) continue;
    C.pos[V] = It->second;
    if (!G.node(V).isForwardSide()) continue;
    C.forward[It->second].push_back(V);
    if (C.device[It->second] < 0) {
      C.device[It->second] = Pl.device[V];
      C.stageId[It->second] = StageOf(V);
    }
  }
  return C;
}

/// Forward edges that run against the pipeline (to an earlier stage) under
/// the chain positions Pos; nodes without a position are skipped.
int backwardRunningEdges(const CostGraph &G, const std::vector<int> &Pos) {
  int N = 0;
  for (const CostEdge &E : G.edges())
    if (G.node(E.src).isForwardSide() && G.node(E.dst).isForwardSide() && Pos[E.src] >= 0 &&
        Pos[E.dst] >= 0 && Pos[E.dst] < Pos[E.src])
      ++N;
  return N;
}

struct Move {
  int boundary = 0;   ///< between chain stages boundary and boundary + 1
  bool later = false; ///< a suffix of stage boundary to boundary + 1
  Plan plan;
  int nodes = 0;
  double price = 0;
};

/// Bytes the stage at chain position At sends on per micro-batch (forward
/// edges to later positions) when the forward nodes of Stages sit at Pos.
double sentBytes(const CostGraph &G, const StageCut &C, const std::vector<int> &Pos, int At,
                 std::initializer_list<int> Stages) {
  double Bytes = 0;
  for (int S : Stages)
    for (int U : C.forward[S]) {
      if (Pos[U] != At) continue;
      for (int E : G.outEdges(U)) {
        const CostEdge &Ed = G.edge(E);
        if (G.node(Ed.dst).isForwardSide() && Pos[Ed.dst] > At) Bytes += Ed.bytes;
      }
    }
  return Bytes;
}

/// The move of at least Ms of stage From's forward slice (its suffix when
/// Later, else its prefix), with their classes, to the neighbouring stage,
/// extended (up to MaxMs) until the boundary sends no more bytes than now:
/// a cut inside a layer sends more tensors than one between layers, and
/// every micro-batch in flight holds them. False when it would empty the
/// stage, take a class with forward nodes in another stage, or make more
/// edges run against the pipeline than Limit.
bool makeMove(const CostGraph &G, const Platform &P, const Plan &Pl, const StageCut &C,
              const std::vector<std::vector<int>> &Members, int Boundary, bool Later, double Ms, double MaxMs,
              int Limit, Move &M) {
  const int From = Later ? Boundary : Boundary + 1, To = Later ? Boundary + 1 : Boundary;
  const std::vector<int> &Fwd = C.forward[From];
  std::vector<int> Pos = C.pos;
  const double Before = sentBytes(G, C, Pos, Boundary, {Boundary, Boundary + 1});
  std::set<int> Classes;
  double Taken = 0;
  for (size_t I = 0;; ++I) {
    if (I + 1 >= Fwd.size() || Taken > MaxMs) return false; // the stage keeps a forward node
    const int V = Later ? Fwd[Fwd.size() - 1 - I] : Fwd[I];
    if (!Classes.insert(G.classOf(V)).second) continue;
    for (int U : Members[G.classOf(V)]) {
      Taken += P.nodeTimeMs(G.node(U), Pl.device[U]);
      if (G.node(U).isBackward()) continue;
      if (C.pos[U] != From) return false;
      Pos[U] = To;
    }
    if (Taken >= Ms && sentBytes(G, C, Pos, Boundary, {Boundary, Boundary + 1}) <= Before * (1 + 1e-12))
      break;
  }
  M.boundary = Boundary;
  M.later = Later;
  M.plan = Pl;
  M.nodes = 0;
  const bool ByStage = Pl.stage.size() == G.numNodes();
  for (int K : Classes)
    for (int U : Members[K]) {
      const bool Bwd = G.node(U).isBackward();
      M.plan.device[U] = C.device[To];
      if (ByStage) {
        auto It = C.idOn.find({C.device[To], Bwd});
        M.plan.stage[U] = It != C.idOn.end() ? It->second : C.stageId[To];
      }
      Pos[U] = To;
      ++M.nodes;
    }
  return backwardRunningEdges(G, Pos) <= Limit;
}
} // namespace

Expected<CutSearchResult> onnxp::searchScheduleCut(const CostGraph &G, const Platform &P, const Plan &Start,
                                                   const CutPriceFn &Price, const CutFitsFn &Fits,
                                                   const CutSearchOptions &O) {
  if (Start.device.size() != G.numNodes())
    return makeInternalError("the plan places ", Start.device.size(), " nodes, the graph has ", G.numNodes());
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return Order.takeError();
  Expected<double> First = Price(Start);
  if (!First) return First.takeError();
  std::vector<std::vector<int>> Members(G.numClasses());
  for (size_t V = 0; V < G.numNodes(); ++V)
    Members[G.classOf(static_cast<int>(V))].push_back(static_cast<int>(V));
  CutSearchResult R;
  R.plan = Start;
  R.startMs = R.iterationMs = *First;
  R.candidates = 1;
  StageCut C = stageCut(G, *Order, Start);
  R.shifted.assign(std::max(0, C.stages() - 1), 0);
  if (C.stages() < 2) return R;
  double Total = 0;
  for (size_t V = 0; V < G.numNodes(); ++V) Total += P.nodeTimeMs(G.node(V), Start.device[V]);
  const double Slice = Total / C.stages() / std::max(1, O.slices);
  const int Limit = backwardRunningEdges(G, C.pos);
  for (int Round = 0; Round < O.maxRounds; ++Round) {
    std::vector<Move> Moves;
    for (int B = 0; B + 1 < C.stages(); ++B)
      for (bool Later : {true, false}) {
        int Last = 0; // a larger quantum that takes the same classes is the same move
        for (int Q : O.quanta) {
          if (O.until.expired()) {
            R.outOfTime = true;
            break;
          }
          Move M;
          if (!makeMove(G, P, R.plan, C, Members, B, Later, Q * Slice, Slice * O.slices / 2, Limit, M) ||
              M.nodes == Last)
            continue;
          Last = M.nodes;
          Expected<double> T = Price(M.plan);
          ++R.candidates;
          if (!T) continue; // a cut the schedule cannot run
          M.price = *T;
          if (M.price < R.iterationMs * (1 - 1e-9)) Moves.push_back(std::move(M));
        }
      }
    // The best move that fits (memory is checked on the few that would be
    // taken only: the check replays liveness, the price does not).
    std::stable_sort(Moves.begin(), Moves.end(),
                     [](const Move &A, const Move &B) { return A.price < B.price; });
    const Move *Taken = nullptr;
    for (const Move &M : Moves) {
      if (!Fits(M.plan)) {
        Taken = &M;
        break;
      }
    }
    if (!Taken) break;
    R.shifted[Taken->boundary] += Taken->later ? Taken->nodes : -Taken->nodes;
    R.iterationMs = Taken->price;
    R.plan = Taken->plan;
    ++R.moves;
    if (R.outOfTime) break; // the best move priced before the clock ran out is taken
    C = stageCut(G, *Order, R.plan);
    if (C.stages() != static_cast<int>(R.shifted.size()) + 1) break; // a stage emptied: stop here
  }
  return R;
}
