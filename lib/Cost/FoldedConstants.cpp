//===- Cost/FoldedConstants.cpp - Folded nodes leave the plan ------------===//
//
// See FoldedConstants.h. The graph is rebuilt from the nodes that stay;
// the ONNX side (which node reads which tensor) decides what a folded
// tensor costs the nodes that stay.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/FoldedConstants.h"

#include "onnx-partition/Analysis/Trainable.h"
#include "onnx-partition/Analysis/TrainingGraph.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

namespace {
/// Direct and outer-scope readers of every tensor, by ONNX node.
struct TensorReaders {
  std::unordered_map<std::string, std::vector<int>> readers;
  std::unordered_set<std::string> readThroughSubgraph;

  const std::vector<int> &of(const std::string &Tensor) const {
    static const std::vector<int> None;
    auto It = readers.find(Tensor);
    return It == readers.end() ? None : It->second;
  }
};

TensorReaders tensorReaders(const onnx::GraphProto &OG) {
  TensorReaders T;
  for (int I = 0; I < OG.node_size(); ++I) {
    const onnx::NodeProto &ON = OG.node(I);
    std::set<std::string> Direct(ON.input().begin(), ON.input().end());
    for (const std::string &In : nodeDataInputs(ON)) {
      T.readers[In].push_back(I);
      if (!Direct.count(In) || hasSubgraph(ON)) T.readThroughSubgraph.insert(In);
    }
  }
  return T;
}

/// The folded forward nodes whose outputs nothing but the graph's nodes
/// read (no graph output, no subgraph), reading no parameter when
/// training, and their derived backward twins (the gradient of a constant
/// is never computed).
std::vector<char> nodesToRemove(const CostGraph &G, const onnx::GraphProto &OG,
                                const std::vector<std::string> &Marks, const TensorReaders &T,
                                const std::unordered_set<std::string> &Params, FoldedRemoval &R) {
  const size_t N = G.numNodes();
  std::unordered_set<std::string> GraphOutputs;
  for (const auto &O : OG.output()) GraphOutputs.insert(O.name());
  const bool Training = G.isTraining();
  std::vector<char> Remove(N, 0);
  for (size_t V = 0; V < N; ++V) {
    const CostNode &C = G.node(V);
    if (Marks[V] != "folded" || C.onnxNodes.size() != 1 || C.role != Role::Forward) continue;
    const onnx::NodeProto &ON = OG.node(C.onnxNodes[0]);
    bool Free = true;
    for (const std::string &O : ON.output())
      Free &= O.empty() || (!GraphOutputs.count(O) && !T.readThroughSubgraph.count(O));
    if (Training)
      for (const std::string &In : ON.input()) Free &= !Params.count(In);
    Remove[V] = Free;
  }
  for (size_t V = 0; V < N; ++V) {
    const CostNode &C = G.node(V);
    if (C.isBackward() && C.onnxNodes.empty() && C.partner >= 0 && Remove[C.partner]) {
      Remove[V] = 1;
      ++R.twins;
    }
  }
  return Remove;
}

/// Parameters a removed node owned (the builder gives a parameter to its
/// first reader) pass to the first reader that stays: bytes per old node.
std::vector<double> inheritedParameters(const OnnxModel &M, const std::vector<int> &CostOf,
                                        const std::vector<char> &Remove, const TensorReaders &T,
                                        const std::unordered_set<std::string> &Params) {
  const onnx::GraphProto &OG = M.graph();
  std::vector<double> ExtraParam(Remove.size(), 0);
  std::unordered_set<std::string> Seen;
  for (int I = 0; I < OG.node_size(); ++I)
    for (const std::string &In : OG.node(I).input()) {
      if (!Params.count(In) || !Seen.insert(In).second) continue;
      int Owner = CostOf[I];
      if (Owner < 0 || !Remove[Owner]) continue;
      for (int J : T.of(In))
        if (CostOf[J] >= 0 && !Remove[CostOf[J]]) {
          ExtraParam[CostOf[J]] += M.tensorBytesOrZero(In);
          break;
        }
    }
  return ExtraParam;
}

/// A folded tensor the remaining nodes read: a constant on each device
/// holding a reader (its first reader owns the first copy).
struct Constant {
  std::string name;
  double bytes = 0;
  std::vector<int> readers; // old cost-node ids, graph order of their ONNX nodes
};

std::vector<Constant> foldedConstants(const CostGraph &G, const OnnxModel &M, const std::vector<int> &CostOf,
                                      const std::vector<char> &Remove, const TensorReaders &T) {
  const onnx::GraphProto &OG = M.graph();
  std::vector<Constant> Constants;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    if (!Remove[V] || G.node(V).onnxNodes.empty()) continue;
    for (const std::string &O : OG.node(G.node(V).onnxNodes[0]).output()) {
      if (O.empty()) continue;
      Constant K{O, M.tensorBytesOrZero(O), {}};
      std::set<int> Seen;
      for (int J : T.of(O))
        if (CostOf[J] >= 0 && !Remove[CostOf[J]] && Seen.insert(CostOf[J]).second)
          K.readers.push_back(CostOf[J]);
      if (!K.readers.empty()) Constants.push_back(std::move(K));
    }
  }
  return Constants;
}

/// The graph of the nodes that stay (NewId: old node -> new, -1 when
/// removed), with the inherited parameter bytes; the removed ONNX nodes
/// go to R.
CostGraph keptGraph(const CostGraph &G, const std::vector<char> &Remove,
                    const std::vector<double> &ExtraParam, std::vector<int> &NewId, FoldedRemoval &R) {
  const size_t N = G.numNodes();
  NewId.assign(N, -1);
  CostGraph Out;
  Out.sourceName = G.sourceName;
  Out.timeUnit = G.timeUnit;
  for (size_t V = 0; V < N; ++V) {
    if (Remove[V]) {
      for (int I : G.node(V).onnxNodes) R.onnxNodes.push_back(I);
      continue;
    }
    NewId[V] = Out.addNode(G.node(V));
  }
  for (size_t V = 0; V < N; ++V) {
    if (NewId[V] < 0) continue;
    CostNode &C = Out.node(NewId[V]);
    C.partner = C.partner >= 0 ? NewId[C.partner] : -1;
    C.paramBytes += ExtraParam[V];
    C.memBytes += ExtraParam[V];
  }
  for (const CostEdge &E : G.edges())
    if (NewId[E.src] >= 0 && NewId[E.dst] >= 0) {
      CostEdge F = E;
      F.src = NewId[E.src];
      F.dst = NewId[E.dst];
      Out.addEdge(std::move(F));
    }
  // Tied parameters: readers and sinks that stay; the owner passes on with
  // the parameter's bytes (ExtraParam above).
  for (const SharedParameter &SP : G.sharedParameters) {
    SharedParameter S = SP;
    auto Map = [&](const std::vector<int> &Vs) {
      std::vector<int> Kept;
      for (int V : Vs)
        if (NewId[V] >= 0) Kept.push_back(NewId[V]);
      return Kept;
    };
    S.readers = Map(SP.readers);
    S.sinks = Map(SP.sinks);
    S.derived = Map(SP.derived);
    S.owner = SP.owner >= 0 ? NewId[SP.owner] : -1;
    if (S.owner < 0 && !S.readers.empty()) S.owner = S.readers.front();
    Out.sharedParameters.push_back(std::move(S));
  }
  return Out;
}

/// Each folded constant charged to its first remaining reader, and shared
/// (copied, marked folded) when several read it.
void addConstants(const std::vector<Constant> &Constants, const std::vector<int> &NewId, CostGraph &Out,
                  FoldedRemoval &R) {
  for (const Constant &K : Constants) {
    const int Owner = NewId[K.readers.front()];
    Out.node(Owner).paramBytes += K.bytes;
    Out.node(Owner).memBytes += K.bytes;
    ++R.constantTensors;
    R.constantBytes += K.bytes;
    if (K.readers.size() < 2) continue;
    SharedParameter S;
    S.name = K.name;
    S.weightBytes = K.bytes;
    S.owner = Owner;
    S.folded = true;
    for (int V : K.readers) S.readers.push_back(NewId[V]);
    std::sort(S.readers.begin(), S.readers.end());
    Out.sharedParameters.push_back(std::move(S));
    ++R.replicatedTensors;
  }
}
} // namespace

FoldedRemoval onnxp::removeFoldedNodes(CostGraph &G, const OnnxModel &M,
                                       const std::vector<std::string> &Marks) {
  FoldedRemoval R;
  const onnx::GraphProto &OG = M.graph();
  const size_t N = G.numNodes();
  if (Marks.size() != N) return R;

  std::unordered_set<std::string> Params, Weights;
  for (const ParameterInfo &P : findParameters(M)) Params.insert(P.name);
  // Issue 37, item 4: a node reading a weight held in a Constant node stays
  // when training, as one reading an initializer does (it owns the weight's
  // gradient: Analysis/Trainable.h).
  Weights = Params;
  for (const ParameterInfo &P : constantNodeWeights(M)) Weights.insert(P.name);
  const TensorReaders T = tensorReaders(OG);
  // Cost node of each ONNX node (before renumbering).
  std::vector<int> CostOf(OG.node_size(), -1);
  for (size_t V = 0; V < N; ++V)
    for (int I : G.node(V).onnxNodes)
      if (I >= 0 && I < OG.node_size()) CostOf[I] = static_cast<int>(V);

  const std::vector<char> Remove = nodesToRemove(G, OG, Marks, T, Weights, R);
  const std::vector<double> ExtraParam = inheritedParameters(M, CostOf, Remove, T, Params);
  const std::vector<Constant> Constants = foldedConstants(G, M, CostOf, Remove, T);

  // Rebuild the graph from the nodes that stay.
  std::vector<int> NewId;
  CostGraph Out = keptGraph(G, Remove, ExtraParam, NewId, R);
  addConstants(Constants, NewId, Out, R);
  Out.normalizeClasses();
  std::sort(R.onnxNodes.begin(), R.onnxNodes.end());
  G = std::move(Out);
  return R;
}
