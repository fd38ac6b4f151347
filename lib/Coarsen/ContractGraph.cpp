//===- Coarsen/ContractGraph.cpp - Coarse graph of a grouping, auto -----===//
//
// contractGraph fuses the strongly connected components of the grouped
// graph first (grouping by scopes can close cycles: "/attn" -> "/attn/q" ->
// "/attn"), then sums the nodes of each group. Unnamed edges (JSON
// workloads) get a name per original producer before groups merge so the
// evaluator's transfer groups -- one transfer per (producer, tensor) -- are
// exactly those of the original graph.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Coarsen/Contraction.h"

#include "UnionFind.h"

#include "onnx-partition/IR/SharedParameters.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;
using namespace onnxp::coarsen;

const char *onnxp::granularityName(Granularity G) {
  switch (G) {
  case Granularity::Op: return "op";
  case Granularity::Const: return "const";
  case Granularity::Layer: return "layer";
  case Granularity::Block: return "block";
  case Granularity::Chain: return "chain";
  case Granularity::Auto: return "auto";
  case Granularity::Region: return "region";
  }
  return "?";
}

Expected<Granularity> onnxp::parseGranularity(const std::string &Name) {
  for (Granularity G : {Granularity::Op, Granularity::Const, Granularity::Layer, Granularity::Block,
                        Granularity::Chain, Granularity::Region, Granularity::Auto})
    if (Name == granularityName(G)) return G;
  return makeUsageError("--granularity '", Name, "' must be op, const, layer, block, chain, region or auto");
}

namespace {

/// Kosaraju on the group graph; returns the component of every group.
std::vector<int> components(const std::vector<std::vector<int>> &Succ, int &Num) {
  const int N = static_cast<int>(Succ.size());
  std::vector<std::vector<int>> Pred(N);
  for (int U = 0; U < N; ++U)
    for (int W : Succ[U]) Pred[W].push_back(U);
  std::vector<int> Finish;
  std::vector<char> Seen(N, 0);
  std::vector<std::pair<int, size_t>> Stack;
  for (int R = 0; R < N; ++R) {
    if (Seen[R]) continue;
    Seen[R] = 1;
    Stack.push_back({R, 0});
    while (!Stack.empty()) {
      auto &[U, I] = Stack.back();
      if (I < Succ[U].size()) {
        int W = Succ[U][I++];
        if (!Seen[W]) {
          Seen[W] = 1;
          Stack.push_back({W, 0});
        }
        continue;
      }
      Finish.push_back(U);
      Stack.pop_back();
    }
  }
  std::vector<int> Comp(N, -1);
  Num = 0;
  std::vector<int> Work;
  for (auto It = Finish.rbegin(); It != Finish.rend(); ++It) {
    if (Comp[*It] >= 0) continue;
    Work.push_back(*It);
    Comp[*It] = Num;
    while (!Work.empty()) {
      int U = Work.back();
      Work.pop_back();
      for (int W : Pred[U])
        if (Comp[W] < 0) {
          Comp[W] = Num;
          Work.push_back(W);
        }
    }
    ++Num;
  }
  return Comp;
}

/// Longest common '/'-bounded prefix of two names.
std::string commonScope(const std::string &A, const std::string &B) {
  size_t N = 0, LastSlash = 0;
  while (N < A.size() && N < B.size() && A[N] == B[N]) {
    if (A[N] == '/') LastSlash = N;
    ++N;
  }
  // One name is a whole scope of the other ("/l.0" and "/l.0/c").
  if (N == A.size() && (N == B.size() || B[N] == '/')) return A;
  if (N == B.size() && A[N] == '/') return B;
  return A.substr(0, LastSlash);
}

} // namespace

ContractedGraph onnxp::contractGraph(const CostGraph &G, const Grouping &Gr) {
  const int N = static_cast<int>(G.numNodes());
  ContractedGraph Out;
  // Fuse the cycles the grouping closed.
  std::vector<std::vector<int>> Succ(Gr.numGroups);
  for (const CostEdge &E : G.edges()) {
    int A = Gr.groupOf[E.src], B = Gr.groupOf[E.dst];
    if (A != B) Succ[A].push_back(B);
  }
  for (auto &S : Succ) {
    std::sort(S.begin(), S.end());
    S.erase(std::unique(S.begin(), S.end()), S.end());
  }
  int NumComp = 0;
  std::vector<int> Comp = components(Succ, NumComp);
  Grouping Final;
  Final.groupOf.resize(N);
  for (int V = 0; V < N; ++V) Final.groupOf[V] = Comp[Gr.groupOf[V]];
  Final.numGroups = NumComp;
  Final.normalize(); // numbered by first original node
  const int K = Final.numGroups;

  std::vector<std::vector<int>> Members(K);
  for (int V = 0; V < N; ++V) Members[Final.groupOf[V]].push_back(V);
  // Colocation classes: members' classes are joined.
  std::map<int, int> ClassIdx;
  for (int V = 0; V < N; ++V)
    if (G.node(V).colocClass >= 0) ClassIdx.try_emplace(G.node(V).colocClass, (int)ClassIdx.size());
  UnionFind ClassUF(static_cast<int>(ClassIdx.size()));
  std::vector<int> GroupClass(K, -1);
  for (int Gp = 0; Gp < K; ++Gp)
    for (int V : Members[Gp]) {
      int C = G.node(V).colocClass;
      if (C < 0) continue;
      int I = ClassIdx[C];
      if (GroupClass[Gp] < 0) GroupClass[Gp] = I;
      else ClassUF.unite(GroupClass[Gp], I);
    }

  std::set<std::string> Names;
  for (int Gp = 0; Gp < K; ++Gp) {
    const std::vector<int> &M = Members[Gp];
    CostNode C;
    const CostNode &F = G.node(M.front());
    if (M.size() == 1) {
      C = F;
    } else {
      bool AnyFw = false, AnyLoss = false, AnyBw = false;
      std::string Scope = F.name;
      C.accSupported = true;
      for (int V : M) {
        const CostNode &Nd = G.node(V);
        AnyFw |= Nd.isForwardSide();
        AnyLoss |= Nd.role == Role::Loss;
        AnyBw |= Nd.isBackward();
        Scope = commonScope(Scope, Nd.name);
        C.accTime += Nd.accTime;
        C.cpuTime += Nd.cpuTime;
        C.accSupported &= Nd.accSupported;
        C.flops += Nd.flops;
        C.kernels += Nd.accTime > 0 ? Nd.kernels : 0; // folded and fused members launch nothing
        C.paramBytes += Nd.paramBytes;
        C.outputBytes += Nd.outputBytes;
        C.workspaceBytes = std::max(C.workspaceBytes, Nd.workspaceBytes);
        C.memBytes += Nd.memBytes;
        C.bytesAccessed += Nd.bytesAccessed;
        C.gradBytes += Nd.gradBytes;
        C.optimizerBytes += Nd.optimizerBytes;
        C.savedBytes += Nd.savedBytes;
        C.onnxNodes.insert(C.onnxNodes.end(), Nd.onnxNodes.begin(), Nd.onnxNodes.end());
      }
      std::sort(C.onnxNodes.begin(), C.onnxNodes.end());
      C.role = AnyFw ? (AnyLoss ? Role::Loss : Role::Forward) : AnyBw ? Role::Backward : Role::Optimizer;
      C.op = "Group";
      C.costSource = F.costSource;
      C.name = (Scope.empty() || Scope == "/" ? F.name : Scope) + " (+" + std::to_string(M.size() - 1) + ")";
    }
    C.partner = -1;
    if (C.isBackward())
      for (int V : M) {
        int P = G.node(V).partner;
        if (P >= 0 && G.node(P).isForwardSide()) {
          C.partner = Final.groupOf[P];
          break;
        }
      }
    C.colocClass = GroupClass[Gp] >= 0 ? ClassUF.find(GroupClass[Gp]) : -1;
    std::string Base = C.name;
    for (int I = 2; !Names.insert(C.name).second; ++I) C.name = Base + " #" + std::to_string(I);
    Out.graph.addNode(std::move(C));
  }

  // Edges between groups; unnamed tensors get their producer's identity so
  // transfers are grouped per original producer.
  std::set<std::tuple<int, int, std::string>> Seen;
  for (int V = 0; V < N; ++V) {
    // The evaluator's rule (computeTransferGroups): unnamed out-edges of
    // equal cost are one transfer, else one each.
    bool SameCost = true;
    double First = -1;
    for (int EId : G.outEdges(V)) {
      const CostEdge &E = G.edge(EId);
      if (!E.tensor.empty()) continue;
      if (First < 0) First = E.commTime;
      else SameCost &= E.commTime == First;
    }
    for (int EId : G.outEdges(V)) {
      CostEdge E = G.edge(EId);
      int A = Final.groupOf[E.src], B = Final.groupOf[E.dst];
      if (A == B) continue;
      if (E.tensor.empty()) E.tensor = "#" + G.node(V).name + (SameCost ? "" : "#" + std::to_string(EId));
      if (!Seen.insert({A, B, E.tensor}).second) continue;
      E.src = A;
      E.dst = B;
      Out.graph.addEdge(std::move(E));
    }
  }
  Out.graph.sourceName = G.sourceName;
  Out.graph.timeUnit = G.timeUnit;
  mapSharedParameters(G, Final.groupOf, Out.graph); // issue 22, item 4
  Out.groupOf = std::move(Final.groupOf);
  return Out;
}

Expected<ContractedGraph> onnxp::contract(const CostGraph &G, const ContractionOptions &O) {
  Grouping Base = exactReductions(G, O.reductions);
  const size_t ExactMerged = G.numNodes() - Base.numGroups;
  auto Make = [&](Granularity Gr) -> Expected<ContractedGraph> {
    Expected<Grouping> S = structuralGrouping(G, Gr, Base, O.linearize);
    if (!S) return S.takeError();
    ContractedGraph C = contractGraph(G, *S);
    if (Gr == Granularity::Chain) {
      // The blocks form a sequence; make it explicit with zero-cost edges
      // (a tensor of their own: no transfer changes) so the forward graph
      // is a path with |blocks| + 1 ideals even where blocks share no
      // tensor (disconnected parts, dangling outputs).
      Expected<std::vector<int>> Order = C.graph.topologicalOrder();
      if (!Order) return Order.takeError();
      int Prev = -1;
      for (int U : *Order) {
        if (!C.graph.node(U).isForwardSide()) continue;
        if (Prev >= 0) C.graph.addEdge({Prev, U, "#chain-order", 0, 0});
        Prev = U;
      }
    }
    C.granularity = Gr;
    C.exactMerged = ExactMerged;
    return C;
  };
  if (O.granularity != Granularity::Auto) return Make(O.granularity);
  size_t PrevUnits = 0;
  for (Granularity Gr : {Granularity::Op, Granularity::Const, Granularity::Layer, Granularity::Block}) {
    Expected<ContractedGraph> C = Make(Gr);
    if (!C) return C.takeError();
    // A granularity that merges nothing more than the finer one is skipped.
    if (C->graph.numNodes() == PrevUnits) continue;
    PrevUnits = C->graph.numNodes();
    if (!O.fits || O.fits(C->graph)) return C;
  }
  return Make(Granularity::Chain);
}

Plan onnxp::expandPlan(const Plan &Coarse, const std::vector<int> &GroupOf) {
  Plan P = Coarse;
  P.device.assign(GroupOf.size(), -1);
  P.stage.assign(Coarse.stage.empty() ? 0 : GroupOf.size(), -1);
  for (size_t V = 0; V < GroupOf.size(); ++V) {
    P.device[V] = Coarse.device[GroupOf[V]];
    if (!Coarse.stage.empty()) P.stage[V] = Coarse.stage[GroupOf[V]];
  }
  return P;
}
