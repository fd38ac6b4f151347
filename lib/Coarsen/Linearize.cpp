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

#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/IR/OnnxModel.h"

#include <algorithm>
#include <map>
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

Expected<Linearization> onnxp::linearizeGraph(const CostGraph &G, const LinearizeOptions &O) {
  const int N = static_cast<int>(G.numNodes());
  if (N == 0) return makeError(G.sourceName, ": cannot linearize an empty graph");
  Expected<std::vector<int>> OrderOr = G.topologicalOrder();
  if (!OrderOr) return OrderOr.takeError();
  const std::vector<int> &Order = *OrderOr;

  // Step 1: constant-like forward nodes.
  std::vector<char> ConstLike = constantLikeNodes(G, O.dataFree);
  std::vector<int> Core;
  for (int V : Order)
    if (G.node(V).isForwardSide() && !ConstLike[V]) Core.push_back(V);
  if (Core.empty()) { // a graph of constants only: they are the chain
    for (int V : Order)
      if (G.node(V).isForwardSide()) Core.push_back(V);
    std::fill(ConstLike.begin(), ConstLike.end(), 0);
  }
  if (Core.empty()) return makeError(G.sourceName, ": cannot linearize a graph without forward nodes");

  // Step 2: separators and blocks of the core nodes.
  std::vector<int> Pos(N, -1);
  for (size_t P = 0; P < Core.size(); ++P) Pos[Core[P]] = static_cast<int>(P);
  std::vector<int> BlockOf(N, -1), Separators;
  int Block = 0;
  // s at position p is a separator when the furthest position reached by
  // an edge from positions < p is at most p.
  {
    std::vector<int> Reach(Core.size(), -1);
    for (size_t P = 0; P < Core.size(); ++P)
      for (int EId : G.outEdges(Core[P])) Reach[P] = std::max(Reach[P], Pos[G.edge(EId).dst]);
    int MaxBefore = -1;
    Block = 0;
    for (size_t P = 0; P < Core.size(); ++P) {
      BlockOf[Core[P]] = Block;
      if (MaxBefore <= static_cast<int>(P)) {
        Separators.push_back(Core[P]);
        ++Block;
      }
      MaxBefore = std::max(MaxBefore, Reach[P]);
    }
    // The last node is always a separator (nothing comes after it).
    assert(Separators.back() == Core.back());
  }
  const int L = Block;

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
  std::vector<double> Saved(L, 0), Outputs(L, 0);
  for (int V = 0; V < N; ++V) {
    const CostNode &Nd = G.node(V);
    ChainBlock &B = C.blocks[BlockOf[V]];
    B.nodes.push_back(V);
    B.sources.push_back(Nd.name);
    B.weightBytes += Nd.paramBytes;
    if (Nd.isForwardSide()) {
      B.forwardTime += Nd.accTime;
      B.forwardOverhead = std::max(B.forwardOverhead, Nd.workspaceBytes);
      if (ConstLike[V] && Nd.paramBytes == 0 && G.inEdges(V).empty()) B.weightBytes += Nd.outputBytes;
      else Outputs[BlockOf[V]] += Nd.outputBytes, Saved[BlockOf[V]] += Nd.savedBytes;
    } else {
      B.backwardTime += Nd.accTime;
      B.backwardOverhead = std::max(B.backwardOverhead, Nd.workspaceBytes);
    }
  }
  // a_l: distinct tensors from block l's non-constant nodes into later
  // forward blocks.
  std::vector<std::set<std::pair<int, std::string>>> Leaving(L);
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    const CostEdge &E = G.edge(EId);
    int A = BlockOf[E.src], B = BlockOf[E.dst];
    if (B <= A || ConstLike[E.src] || !G.node(E.src).isForwardSide() || !G.node(E.dst).isForwardSide())
      continue;
    std::string Key = E.tensor.empty() ? "#" + std::to_string(EId) : E.tensor;
    if (Leaving[A].insert({E.src, Key}).second) C.blocks[A].outputBytes += E.bytes;
  }
  C.blocks[L - 1].outputBytes = G.node(Separators.back()).outputBytes;
  for (int B = 0; B < L; ++B) {
    ChainBlock &Blk = C.blocks[B];
    Blk.name = G.node(Separators[B]).name;
    Blk.storedBytes = std::max(Blk.outputBytes, Training ? Saved[B] : Outputs[B]);
  }
  Out.blockOf = std::move(BlockOf);
  return Out;
}
