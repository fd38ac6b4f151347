//===- Coarsen/StructuralGrouping.cpp - Scopes and chain blocks ---------===//
//
// Layer and block granularity read the module scopes exporters write into
// node names (torch.onnx "/layers.3/attn/q_proj/MatMul", tf2onnx
// "bert/encoder/layer_3/attention/self/query/MatMul"); ORT's backward nodes
// "<forward name>_Grad/<Op>_<i>" are scoped like their forward node. Names
// without a scope ("Conv_12") leave their node in its base group. Chain
// granularity merges by seed 000 §5 linearization blocks.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Coarsen/Contraction.h"
#include "onnx-partition/Coarsen/Linearize.h"

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

Expected<Grouping> onnxp::structuralGrouping(const CostGraph &G, Granularity Gr,
                                             const Grouping &Base) {
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
  // Nodes that share a key and a side share a group.
  std::map<std::pair<std::string, int>, int> FirstOfKey;
  if (Gr == Granularity::Chain) {
    Expected<Linearization> Lin = linearizeGraph(G);
    if (!Lin) return Lin.takeError();
    for (int V = 0; V < N; ++V) {
      auto [It, New] = FirstOfKey.try_emplace({std::to_string(Lin->blockOf[V]), sideOfNode(G.node(V))}, V);
      if (!New) UF.unite(It->second, V);
    }
  } else {
    for (int V = 0; V < N; ++V) {
      std::string Key = scopeKey(forwardName(G, V), Gr);
      if (Key.empty()) continue;
      auto [It, New] = FirstOfKey.try_emplace({Key, sideOfNode(G.node(V))}, V);
      if (!New) UF.unite(It->second, V);
    }
  }
  Grouping Out;
  Out.groupOf.resize(N);
  for (int V = 0; V < N; ++V) Out.groupOf[V] = UF.find(V);
  Out.numGroups = N;
  Out.normalize();
  return Out;
}
