//===- Coarsen/Linearize.cpp - Seed 000 §5 greedy linearization ---------===//
//
// Separators by one sweep over a topological order of the non-constant
// forward nodes: s at position p is a separator when the furthest position
// any earlier node's edge reaches is at most p. Everything else is
// assignment of the remaining nodes to blocks (Linearize.h, steps 1 and 3)
// and per-block sums.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Coarsen/Linearize.h"

#include "onnx-partition/Coarsen/Contraction.h"

#include "onnx-partition/Analysis/BackwardSplit.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/SharedParameters.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

using namespace onnxp;

namespace {
/// Ops that make a tensor from attributes or static shapes alone.
bool isGenerator(const std::string &Op) {
  return Op == "Constant" || Op == "ConstantOfShape" || Op == "Shape" || Op == "Size" || Op == "Range" ||
         Op == "EyeLike" || Op == "RandomNormal" || Op == "RandomUniform";
}
} // namespace

std::vector<char> onnxp::constantLikeNodes(const CostGraph &G, const std::vector<char> &DataFree) {
  const int N = static_cast<int>(G.numNodes());
  std::vector<char> ConstLike(N, 0);
  Expected<std::vector<int>> Order = G.topologicalOrder();
  if (!Order) return ConstLike;
  const bool Known = DataFree.size() == static_cast<size_t>(N);
  for (int V : *Order) {
    const CostNode &Nd = G.node(V);
    if (!Nd.isForwardSide()) continue;
    bool All = true;
    for (int EId : G.inEdges(V)) All &= ConstLike[G.edge(EId).src] == 1;
    if (Known) {
      ConstLike[V] = DataFree[V];
      continue;
    }
    // Without the model, a guess from costs alone: generators and free
    // nodes computing from constant-like inputs only; and, as leaves that
    // make nothing downstream constant, sources reading parameters (a
    // weight Transpose -- or an embedding Gather, which reads data too).
    if (All && (isGenerator(Nd.op) || (Nd.accTime == 0 && Nd.cpuTime == 0))) ConstLike[V] = 1;
    else if (G.inEdges(V).empty() && Nd.paramBytes > 0) ConstLike[V] = 2;
  }
  for (char &C : ConstLike) C = C != 0;
  return ConstLike;
}

std::vector<char> onnxp::dataFreeNodes(const CostGraph &G, const OnnxModel &M) {
  const onnx::GraphProto &OG = M.graph();
  std::set<std::string> Params;
  for (const ParameterInfo &P : findParameters(M)) Params.insert(P.name);
  std::map<std::string, std::vector<int>> Readers;
  for (int I = 0; I < OG.node_size(); ++I)
    for (const std::string &In : OG.node(I).input()) Readers[In].push_back(I);
  // Data flows from the data inputs through every op but Shape and Size.
  std::vector<char> Data(OG.node_size(), 0);
  std::vector<int> Work;
  auto Reach = [&](const std::string &Tensor) {
    auto It = Readers.find(Tensor);
    if (It == Readers.end()) return;
    for (int I : It->second) {
      const std::string &Op = OG.node(I).op_type();
      if (Data[I] || Op == "Shape" || Op == "Size") continue;
      Data[I] = 1;
      Work.push_back(I);
    }
  };
  for (const auto &In : OG.input())
    if (!M.isInitializer(In.name()) && !Params.count(In.name())) Reach(In.name());
  while (!Work.empty()) {
    int I = Work.back();
    Work.pop_back();
    for (const std::string &Out : OG.node(I).output()) Reach(Out);
  }
  std::vector<char> Free(G.numNodes(), 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    bool F = !N.onnxNodes.empty() && N.isForwardSide();
    for (int I : N.onnxNodes) F &= I >= 0 && I < OG.node_size() && !Data[I];
    Free[V] = F;
  }
  return Free;
}

namespace {

bool isOptimizer(const CostNode &N) { return N.role == Role::Optimizer; }

} // namespace

namespace {

/// What every refinement of the block boundaries shares: the core order
/// and the constant-like flags.
struct CoreOrder {
  std::vector<int> order; ///< topological order of every node
  std::vector<char> constLike;
  std::vector<int> core; ///< non-constant forward-side nodes, in order
  std::vector<int> pos;  ///< per node: its position in core, else -1
};

/// Issue 24: forward nodes whose tensors are side inputs -- cheap (the
/// longest path from the inputs to them costs at most ConeShare of the
/// forward time), produced early by that token, and read by at least two
/// nodes spread over at least SpanShare of the forward time.
std::vector<char> sideProducers(const CostGraph &G, const CoreOrder &C, double ConeShare, double SpanShare) {
  const int N = static_cast<int>(G.numNodes());
  std::vector<char> Side(N, 0);
  double Total = 0;
  std::vector<double> Prefix(C.core.size() + 1, 0);
  for (size_t P = 0; P < C.core.size(); ++P) {
    Total += G.node(C.core[P]).accTime;
    Prefix[P + 1] = Total;
  }
  if (!(Total > 0)) return Side;
  std::vector<double> Cone(N, 0);
  for (int V : C.core) {
    double Longest = 0;
    for (int EId : G.inEdges(V))
      if (C.pos[G.edge(EId).src] >= 0) Longest = std::max(Longest, Cone[G.edge(EId).src]);
    Cone[V] = Longest + G.node(V).accTime;
    if (Cone[V] > ConeShare * Total) continue;
    std::set<int> Readers;
    int Last = -1;
    for (int EId : G.outEdges(V)) {
      int D = G.edge(EId).dst;
      if (C.pos[D] < 0) continue;
      Readers.insert(D);
      Last = std::max(Last, C.pos[D]);
    }
    const int P = C.pos[V];
    if (Readers.size() >= 2 && Last > P && Prefix[Last] - Prefix[P + 1] >= SpanShare * Total) Side[V] = 1;
  }
  return Side;
}

/// Block ends (positions in core) of seed 000's separators, ignoring the
/// edges of Side nodes.
std::vector<int> separatorEnds(const CostGraph &G, const CoreOrder &C, const std::vector<char> &Side) {
  const size_t K = C.core.size();
  std::vector<int> Reach(K, -1), Ends;
  for (size_t P = 0; P < K; ++P) {
    if (Side[C.core[P]]) continue;
    for (int EId : G.outEdges(C.core[P])) Reach[P] = std::max(Reach[P], C.pos[G.edge(EId).dst]);
  }
  int MaxBefore = -1;
  for (size_t P = 0; P < K; ++P) {
    if (MaxBefore <= static_cast<int>(P)) Ends.push_back(static_cast<int>(P));
    MaxBefore = std::max(MaxBefore, Reach[P]);
  }
  // The last node is always a separator (nothing comes after it).
  assert(!Ends.empty() && Ends.back() == static_cast<int>(K) - 1);
  return Ends;
}

/// The chain of the blocks ending at Ends (positions in core): every node
/// assigned (Linearize.h steps 1 and 3) and per-block numbers.
Linearization buildChain(const CostGraph &G, const LinearizeOptions &O, const CoreOrder &CO,
                         const std::vector<int> &Ends) {
  const int N = static_cast<int>(G.numNodes());
  const std::vector<int> &Order = CO.order;
  const std::vector<char> &ConstLike = CO.constLike;
  const int L = static_cast<int>(Ends.size());
  std::vector<int> BlockOf(N, -1), Separators;
  for (int B = 0, P = 0; B < L; ++B) {
    for (; P <= Ends[B]; ++P) BlockOf[CO.core[P]] = B;
    Separators.push_back(CO.core[Ends[B]]);
  }

  // Constant-like nodes: the earliest block of their consumers, resolved
  // in reverse topological order so constant trees follow their root.
  for (auto It = Order.rbegin(); It != Order.rend(); ++It) {
    int V = *It;
    if (!ConstLike[V]) continue;
    int Best = -1;
    for (int EId : G.outEdges(V)) {
      int B = BlockOf[G.edge(EId).dst];
      if (B >= 0 && G.node(G.edge(EId).dst).isForwardSide()) Best = Best < 0 ? B : std::min(Best, B);
    }
    BlockOf[V] = Best; // -1: only backward or optimizer consumers, resolved below
  }
  // A constant-like node of a colocation class with core members (a tied
  // weight: the embedding's Gather and the head's weight Transpose) joins
  // the class's earliest core block, so a plan keeps the class on one
  // device; its output then travels to its later readers and is priced as
  // a crossing tensor below (Moved).
  std::vector<char> Moved(N, 0);
  {
    std::map<int, int> ClassCore;
    for (int V : CO.core)
      if (G.node(V).colocClass >= 0) {
        auto [It, New] = ClassCore.try_emplace(G.node(V).colocClass, BlockOf[V]);
        if (!New) It->second = std::min(It->second, BlockOf[V]);
      }
    for (int V = 0; V < N; ++V) {
      if (!ConstLike[V] || G.node(V).colocClass < 0) continue;
      auto It = ClassCore.find(G.node(V).colocClass);
      if (It == ClassCore.end() || It->second == BlockOf[V]) continue;
      BlockOf[V] = It->second;
      Moved[V] = 1;
    }
  }
  // Step 3: backward nodes by partner, then by forward predecessor.
  std::vector<int> Pending;
  for (int V : Order) {
    const CostNode &Nd = G.node(V);
    if (!Nd.isBackward()) continue;
    if (Nd.partner >= 0 && BlockOf[Nd.partner] >= 0 && G.node(Nd.partner).isForwardSide()) {
      BlockOf[V] = BlockOf[Nd.partner];
      continue;
    }
    int Latest = -1;
    for (int EId : G.inEdges(V)) {
      int S = G.edge(EId).src;
      if (G.node(S).isForwardSide() && !ConstLike[S]) Latest = std::max(Latest, BlockOf[S]);
    }
    BlockOf[V] = Latest;
    if (Latest < 0) Pending.push_back(V);
  }
  // Backward nodes reading nothing forward: the earliest block among their
  // backward successors (gradients flow towards block 1).
  for (auto It = Pending.rbegin(); It != Pending.rend(); ++It) {
    int V = *It, Best = -1;
    for (int EId : G.outEdges(V)) {
      int B = BlockOf[G.edge(EId).dst];
      if (B >= 0 && G.node(G.edge(EId).dst).isBackward()) Best = Best < 0 ? B : std::min(Best, B);
    }
    BlockOf[V] = Best;
  }
  // Optimizer nodes: the block of their colocation class.
  std::map<int, int> ClassBlock;
  for (int V = 0; V < N; ++V)
    if (!isOptimizer(G.node(V)) && BlockOf[V] >= 0 && G.node(V).colocClass >= 0)
      ClassBlock.try_emplace(G.node(V).colocClass, BlockOf[V]);
  for (int V : Order) {
    const CostNode &Nd = G.node(V);
    if (!isOptimizer(Nd) || BlockOf[V] >= 0) continue;
    auto It = ClassBlock.find(Nd.colocClass);
    if (Nd.colocClass >= 0 && It != ClassBlock.end()) BlockOf[V] = It->second;
  }
  // Anything left: the latest block among its predecessors, else the last.
  for (int V : Order) {
    if (BlockOf[V] >= 0) continue;
    int Latest = -1;
    for (int EId : G.inEdges(V)) Latest = std::max(Latest, BlockOf[G.edge(EId).src]);
    BlockOf[V] = Latest >= 0 ? Latest : L - 1;
  }

  // Per-block numbers.
  Linearization Out;
  Chain &C = Out.chain;
  C.name = G.sourceName;
  C.sourceName = G.sourceName;
  C.inputBytes = O.inputBytes;
  C.blocks.resize(L);
  const bool Training = G.isTraining();
  std::vector<double> Saved(L, 0), Outputs(L, 0), Trained(L, 0);
  // Issue 35: each backward node's W share with the blocks as pipeline
  // positions (a block's input gradient is what crosses to the block
  // before); a stage of several blocks has at least this W.
  const std::vector<double> WShare = weightGradientShare(G, BlockOf);
  for (int V = 0; V < N; ++V) {
    const CostNode &Nd = G.node(V);
    ChainBlock &B = C.blocks[BlockOf[V]];
    B.nodes.push_back(V);
    B.sources.push_back(Nd.name);
    B.weightBytes += Nd.paramBytes;
    Trained[BlockOf[V]] += Nd.gradBytes; // the trainable bytes the node owns (accountMemory)
    if (Nd.isForwardSide()) {
      B.forwardTime += Nd.accTime;
      B.forwardOverhead = std::max(B.forwardOverhead, Nd.workspaceBytes);
      if (ConstLike[V] && Nd.paramBytes == 0 && G.inEdges(V).empty()) B.weightBytes += Nd.outputBytes;
      else Outputs[BlockOf[V]] += Nd.outputBytes, Saved[BlockOf[V]] += Nd.savedBytes;
    } else {
      B.backwardTime += Nd.accTime;
      B.backwardWeightTime += WShare[V] * Nd.accTime;
      B.backwardOverhead = std::max(B.backwardOverhead, Nd.workspaceBytes);
    }
  }
  // a_l: the distinct tensors of non-constant forward nodes produced in a
  // block <= l and read by a forward node in a block > l. With seed 000's
  // separators only the separator's outputs cross; side inputs and cuts
  // inside a block (issue 24) make other tensors pass through.
  std::map<std::pair<int, std::string>, std::pair<int, double>> LastReader; // -> (block, bytes)
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    const CostEdge &E = G.edge(EId);
    int A = BlockOf[E.src], B = BlockOf[E.dst];
    if (B <= A || (ConstLike[E.src] && !Moved[E.src]) || !G.node(E.src).isForwardSide() ||
        !G.node(E.dst).isForwardSide())
      continue;
    std::string Key = E.tensor.empty() ? "#" + std::to_string(EId) : E.tensor;
    auto [It, New] = LastReader.try_emplace({E.src, Key}, B, E.bytes);
    if (!New) It->second.first = std::max(It->second.first, B);
  }
  for (const auto &[Key, Reader] : LastReader)
    for (int B = BlockOf[Key.first]; B < Reader.first; ++B) C.blocks[B].outputBytes += Reader.second;
  C.blocks[L - 1].outputBytes = G.node(Separators.back()).outputBytes;
  for (int B = 0; B < L; ++B) {
    ChainBlock &Blk = C.blocks[B];
    Blk.name = G.node(Separators[B]).name;
    Blk.storedBytes = std::max(Blk.outputBytes, Training ? Saved[B] : Outputs[B]);
    // Issue 37, item 4: the graph's trainability rule (Analysis/Trainable.h)
    // for the chain planners: what the block's nodes own no gradient for is
    // frozen (frozen parameters, constants that are no weights).
    if (Training) Blk.frozenBytes = std::clamp(Blk.weightBytes - Trained[B], 0.0, Blk.weightBytes);
  }
  Out.blockOf = std::move(BlockOf);
  return Out;
}

/// Bytes crossing a cut after each core position: distinct tensors made at
/// or before it and read by a forward node after it.
std::vector<double> crossingBytes(const CostGraph &G, const CoreOrder &C) {
  const size_t K = C.core.size();
  std::map<std::pair<int, std::string>, std::pair<int, double>> Last; // -> (last reader pos, bytes)
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    const CostEdge &E = G.edge(EId);
    int A = C.pos[E.src], B = C.pos[E.dst];
    if (A < 0 || B <= A) continue;
    std::string Key = E.tensor.empty() ? "#" + std::to_string(EId) : E.tensor;
    auto [It, New] = Last.try_emplace({E.src, Key}, B, E.bytes);
    if (!New) It->second.first = std::max(It->second.first, B);
  }
  std::vector<double> Diff(K + 1, 0);
  for (const auto &[Key, R] : Last) {
    Diff[C.pos[Key.first]] += R.second;
    Diff[R.first] -= R.second;
  }
  std::vector<double> Cross(K, 0);
  double Run = 0;
  for (size_t P = 0; P < K; ++P) Cross[P] = Run += Diff[P];
  return Cross;
}

/// The cut (a new block end) inside the block of core positions [Lo, Hi]:
/// fewest crossing bytes, halved at a layer-scope boundary, among the cuts
/// leaving no piece above 3/4 of the block's time; else the most balanced.
int chooseCut(const CostGraph &G, const CoreOrder &C, const std::vector<double> &Weight,
              const std::vector<double> &Cross, int Lo, int Hi) {
  double Total = 0;
  for (int P = Lo; P <= Hi; ++P) Total += Weight[P];
  int Best = -1, MostBalanced = Lo;
  double BestScore = INFINITY, BestMax = INFINITY, Left = 0;
  std::string Key = scopeKey(G.node(C.core[Lo]).name, Granularity::Block);
  for (int P = Lo; P < Hi; ++P) {
    Left += Weight[P];
    const double Max = std::max(Left, Total - Left);
    std::string Next = scopeKey(G.node(C.core[P + 1]).name, Granularity::Block);
    const double Score = Cross[P] * (Next != Key ? 0.5 : 1.0);
    Key = std::move(Next);
    if (Max < BestMax) BestMax = Max, MostBalanced = P;
    if (Max <= 0.75 * Total && Score < BestScore) BestScore = Score, Best = P;
  }
  return Best >= 0 ? Best : MostBalanced;
}

} // namespace

Expected<Linearization> onnxp::linearizeGraph(const CostGraph &GIn, const LinearizeOptions &O) {
  // Issue 22: the chain planners' simulators do not price replicated shared
  // parameters, so a chain keeps every shared parameter with its readers
  // (one block); node ids are unchanged.
  std::optional<CostGraph> Colocated;
  if (hasTiedParameters(GIn)) Colocated = colocateSharedParameters(GIn);
  const CostGraph &G = Colocated ? *Colocated : GIn;
  const int N = static_cast<int>(G.numNodes());
  if (N == 0) return makeError(G.sourceName, ": cannot linearize an empty graph");
  Expected<std::vector<int>> OrderOr = G.topologicalOrder();
  if (!OrderOr) return OrderOr.takeError();
  CoreOrder CO;
  CO.order = std::move(*OrderOr);

  // Step 1: constant-like forward nodes.
  CO.constLike = constantLikeNodes(G, O.dataFree);
  for (int V : CO.order)
    if (G.node(V).isForwardSide() && !CO.constLike[V]) CO.core.push_back(V);
  if (CO.core.empty()) { // a graph of constants only: they are the chain
    for (int V : CO.order)
      if (G.node(V).isForwardSide()) CO.core.push_back(V);
    std::fill(CO.constLike.begin(), CO.constLike.end(), 0);
  }
  if (CO.core.empty()) return makeError(G.sourceName, ": cannot linearize a graph without forward nodes");
  CO.pos.assign(N, -1);
  for (size_t P = 0; P < CO.core.size(); ++P) CO.pos[CO.core[P]] = static_cast<int>(P);

  // Step 2: separators (issue 24: side inputs ignored), then layers.
  std::vector<char> Side(N, 0);
  if (O.sideInputs) Side = sideProducers(G, CO, O.sideConeShare, O.sideSpanShare);
  std::vector<int> Ends = separatorEnds(G, CO, Side);
  if (O.layers) {
    std::vector<int> Merged;
    for (size_t I = 0; I + 1 < Ends.size(); ++I) {
      std::string A = scopeKey(G.node(CO.core[Ends[I]]).name, Granularity::Block);
      if (A.empty() || A != scopeKey(G.node(CO.core[Ends[I] + 1]).name, Granularity::Block))
        Merged.push_back(Ends[I]);
    }
    Merged.push_back(Ends.back());
    Ends = std::move(Merged);
  }

  Linearization Out = buildChain(G, O, CO, Ends);
  if (O.maxBlockShare > 0) {
    // Balance: cut the largest block above the share while it has two core
    // nodes (each round adds one end, so at most |core| rounds).
    std::vector<double> Cross = crossingBytes(G, CO), Weight(CO.core.size(), 0);
    for (int V = 0; V < N; ++V) {
      const CostNode &Nd = G.node(V);
      if (CO.pos[V] >= 0) Weight[CO.pos[V]] += Nd.accTime;
      else if (Nd.isBackward() && Nd.partner >= 0 && CO.pos[Nd.partner] >= 0)
        Weight[CO.pos[Nd.partner]] += Nd.accTime;
    }
    for (;;) {
      const Chain &C = Out.chain;
      const double Total = C.totalForwardTime() + C.totalBackwardTime();
      int Worst = -1;
      double WorstTime = O.maxBlockShare * Total;
      for (size_t B = 0; B < C.size(); ++B) {
        const double T = C.blocks[B].forwardTime + C.blocks[B].backwardTime;
        const int Lo = B == 0 ? 0 : Ends[B - 1] + 1;
        if (T > WorstTime && Ends[B] > Lo) Worst = static_cast<int>(B), WorstTime = T;
      }
      if (Worst < 0) break;
      const int Lo = Worst == 0 ? 0 : Ends[Worst - 1] + 1;
      Ends.insert(Ends.begin() + Worst, chooseCut(G, CO, Weight, Cross, Lo, Ends[Worst]));
      Out = buildChain(G, O, CO, Ends);
    }
    const Chain &C = Out.chain;
    const double Total = C.totalForwardTime() + C.totalBackwardTime();
    for (size_t B = 0; B < C.size(); ++B) {
      const double T = C.blocks[B].forwardTime + C.blocks[B].backwardTime;
      if (!(T > O.maxBlockShare * Total)) continue;
      char Share[32];
      std::snprintf(Share, sizeof Share, "%.1f%%", 100 * T / Total);
      Out.notes.push_back("chain block " + std::to_string(B + 1) + " '" + C.blocks[B].name + "' holds " +
                          Share + " of the chain's time; it is a single node and cannot be cut");
    }
  }
  for (char S : Side) Out.sideProducers += S;
  return Out;
}
