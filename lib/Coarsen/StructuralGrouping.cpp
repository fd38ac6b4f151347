//===- Coarsen/StructuralGrouping.cpp - Scopes and chain blocks ---------===//
//
// Layer and block granularity read the module scopes exporters write into
// node names (torch.onnx "/layers.3/attn/q_proj/MatMul", tf2onnx
// "bert/encoder/layer_3/attention/self/query/MatMul"); ORT's backward nodes
// "<forward name>_Grad/<Op>_<i>" are scoped like their forward node. Names
// without a scope ("Conv_12") leave their node in its base group. Chain
// granularity merges by seed 000 §5 linearization blocks; region
// granularity by the maximal single-entry/single-exit regions of the graph
// the constant folding left (Coarsen/SeseRegions.h).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Coarsen/Linearize.h"

#include "SeseRegions.h"
#include "UnionFind.h"

#include <cctype>
#include <map>

using namespace onnxp;
using namespace onnxp::coarsen;

namespace {

std::vector<std::string> splitScopes(const std::string &Name) {
  std::vector<std::string> Parts;
  std::string Cur;
  for (char C : Name) {
    if (C == '/') {
      if (!Cur.empty()) Parts.push_back(Cur);
      Cur.clear();
    } else {
      Cur += C;
    }
  }
  if (!Cur.empty()) Parts.push_back(Cur);
  return Parts;
}

/// "layers.3", "layer_3", "h.3": a repeated, numbered module.
bool isNumbered(const std::string &Part) {
  size_t I = Part.size();
  while (I > 0 && std::isdigit(static_cast<unsigned char>(Part[I - 1]))) --I;
  return I < Part.size() && I >= 2 && (Part[I - 1] == '.' || Part[I - 1] == '_');
}

/// The forward node name an ORT backward node is named after.
std::string forwardName(const CostGraph &G, int V) {
  const CostNode &N = G.node(V);
  size_t P = N.name.find("_Grad/");
  if (P != std::string::npos) return N.name.substr(0, P);
  if (N.isBackward() && N.partner >= 0) return G.node(N.partner).name;
  return N.name;
}

/// Region granularity: unites the nodes of every maximal single-entry/
/// single-exit region of the forward units of Folded (the constant-folded
/// grouping), over data edges only. A constant the exporter shares between
/// all layers (one "/layers.0/.../Constant" read by 32 layers) would
/// otherwise be a side entry of every layer and make the whole stack one
/// region. Constants stay in their earliest reader's unit, before every
/// other reader, so their edges run forward between regions;
/// contractGraph fuses any cycle all the same.
Error uniteSeseRegions(const CostGraph &G, const std::vector<char> &ConstLike, const Grouping &Folded,
                       UnionFind &UF) {
  const int N = static_cast<int>(G.numNodes());
  ContractedGraph CB = contractGraph(G, Folded);
  const int U = static_cast<int>(CB.graph.numNodes());
  std::vector<char> Core(U, 0);
  for (int V = 0; V < N; ++V)
    if (G.node(V).isForwardSide() && !ConstLike[V]) Core[CB.groupOf[V]] = 1;
  std::vector<int> Dense(U, -1);
  int NumCore = 0;
  for (int I = 0; I < U; ++I)
    if (Core[I]) Dense[I] = NumCore++;
  std::vector<std::pair<int, int>> Edges;
  for (const CostEdge &E : G.edges()) {
    if (ConstLike[E.src]) continue;
    int A = Dense[CB.groupOf[E.src]], B = Dense[CB.groupOf[E.dst]];
    if (A >= 0 && B >= 0 && A != B) Edges.push_back({A, B});
  }
  Expected<SeseRegions> S = findSeseRegions(NumCore, Edges);
  if (!S) return S.takeError();
  std::vector<int> FirstOfRegion(S->numRegions, -1);
  for (int V = 0; V < N; ++V) {
    const int D = Dense[CB.groupOf[V]], R = D >= 0 ? S->regionOf[D] : -1;
    if (R < 0) continue;
    int &F = FirstOfRegion[R];
    if (F < 0) F = V;
    else UF.unite(F, V);
  }
  return Error::success();
}

} // namespace

std::string onnxp::scopeKey(const std::string &NodeName, Granularity Gr) {
  std::vector<std::string> Parts = splitScopes(NodeName);
  if (Parts.size() < 2) return ""; // no scope, only the node's own name
  Parts.pop_back();
  size_t Keep = Parts.size();
  if (Gr == Granularity::Block) {
    Keep = std::min<size_t>(2, Parts.size());
    for (size_t I = 0; I < Parts.size(); ++I)
      if (isNumbered(Parts[I])) {
        Keep = I + 1;
        break;
      }
  }
  std::string Key = NodeName.front() == '/' ? "/" : "";
  for (size_t I = 0; I < Keep; ++I) Key += (I ? "/" : "") + Parts[I];
  return Key;
}

Expected<Grouping> onnxp::structuralGrouping(const CostGraph &G, Granularity Gr, const Grouping &Base,
                                             const LinearizeOptions &Lin) {
  const int N = static_cast<int>(G.numNodes());
  if (Gr == Granularity::Op) return Base;
  if (Gr == Granularity::Auto)
    return makeUsageError("structuralGrouping: pick a granularity first (auto is contract's job)");
  UnionFind UF(N);
  std::vector<int> FirstOfBase(Base.numGroups, -1);
  for (int V = 0; V < N; ++V) {
    int &F = FirstOfBase[Base.groupOf[V]];
    if (F < 0) F = V;
    else UF.unite(F, V);
  }
  // Constant-like nodes join their earliest consumer (every level from
  // const on); in reverse topological order so constant trees follow.
  std::vector<char> ConstLike = constantLikeNodes(G, Lin.dataFree);
  {
    Expected<std::vector<int>> Order = G.topologicalOrder();
    if (!Order) return Order.takeError();
    std::vector<int> Pos(N);
    for (int I = 0; I < N; ++I) Pos[(*Order)[I]] = I;
    for (auto It = Order->rbegin(); It != Order->rend(); ++It) {
      int V = *It, Earliest = -1;
      if (!ConstLike[V]) continue;
      for (int EId : G.outEdges(V)) {
        int W = G.edge(EId).dst;
        if (G.node(W).isForwardSide() && (Earliest < 0 || Pos[W] < Pos[Earliest])) Earliest = W;
      }
      if (Earliest >= 0) UF.unite(Earliest, V);
    }
  }
  auto Current = [&] {
    Grouping Out;
    Out.groupOf.resize(N);
    for (int V = 0; V < N; ++V) Out.groupOf[V] = UF.find(V);
    Out.numGroups = N;
    Out.normalize();
    return Out;
  };
  if (Gr == Granularity::Const) return Current();
  if (Gr == Granularity::Region) {
    if (Error E = uniteSeseRegions(G, ConstLike, Current(), UF)) return E;
    return Current();
  }
  // Nodes that share a key and a side share a group.
  std::map<std::pair<std::string, int>, int> FirstOfKey;
  if (Gr == Granularity::Chain) {
    // Linearize the graph the exact reductions left (constants already sit
    // in their consumers), so blocks never split a base group.
    ContractedGraph CB = contractGraph(G, Base);
    LinearizeOptions LO;
    LO.inputBytes = Lin.inputBytes;
    if (Lin.dataFree.size() == static_cast<size_t>(N)) {
      LO.dataFree.assign(CB.graph.numNodes(), 1);
      for (int V = 0; V < N; ++V) LO.dataFree[CB.groupOf[V]] &= Lin.dataFree[V];
    }
    Expected<Linearization> L = linearizeGraph(CB.graph, LO);
    if (!L) return L.takeError();
    for (int V = 0; V < N; ++V) {
      int Blk = L->blockOf[CB.groupOf[V]];
      auto [It, New] = FirstOfKey.try_emplace({std::to_string(Blk), sideOfNode(G.node(V))}, V);
      if (!New) UF.unite(It->second, V);
    }
  } else {
    // Forward-side nodes only: a backward node follows its forward partner
    // through their colocation class already, and grouping backward nodes
    // by scope closes cycles between scopes whose fusion would merge whole
    // layers.
    for (int V = 0; V < N; ++V) {
      if (!G.node(V).isForwardSide()) continue;
      std::string Key = scopeKey(forwardName(G, V), Gr);
      if (Key.empty()) continue;
      auto [It, New] = FirstOfKey.try_emplace({Key, sideOfNode(G.node(V))}, V);
      if (!New) UF.unite(It->second, V);
    }
  }
  return Current();
}
