//===- IR/CostGraph.cpp - Cost graph storage, order and dump ------------===//
//
// Adjacency lists are kept in insertion order so that every walk, and so the
// dump and every plan, is deterministic.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/CostGraph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <queue>
#include <set>

using namespace onnxp;

const char *onnxp::roleName(Role R) {
  switch (R) {
  case Role::Forward: return "forward";
  case Role::Loss: return "loss";
  case Role::Backward: return "backward";
  case Role::Optimizer: return "optimizer";
  }
  return "?";
}

std::string onnxp::formatNumber(double V) {
  if (std::isinf(V)) return V > 0 ? "inf" : "-inf";
  if (std::isnan(V)) return "nan";
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.6g", V);
  return Buf;
}

int CostGraph::addNode(CostNode N) {
  Nodes.push_back(std::move(N));
  Out.emplace_back();
  In.emplace_back();
  return static_cast<int>(Nodes.size()) - 1;
}

int CostGraph::addEdge(CostEdge E) {
  assert(E.src >= 0 && E.src < (int)Nodes.size() && "edge source out of range");
  assert(E.dst >= 0 && E.dst < (int)Nodes.size() && "edge target out of range");
  int Id = static_cast<int>(Edges.size());
  Out[E.src].push_back(Id);
  In[E.dst].push_back(Id);
  Edges.push_back(std::move(E));
  return Id;
}

int CostGraph::findNode(const std::string &Name) const {
  for (size_t I = 0; I < Nodes.size(); ++I)
    if (Nodes[I].name == Name) return static_cast<int>(I);
  return -1;
}

Expected<std::vector<int>> CostGraph::topologicalOrder() const {
  // Kahn's algorithm with a min-heap on node id: the order is unique for a
  // given graph, which keeps every consumer deterministic.
  std::vector<int> InDeg(Nodes.size(), 0);
  for (const CostEdge &E : Edges) ++InDeg[E.dst];
  std::priority_queue<int, std::vector<int>, std::greater<int>> Ready;
  for (size_t I = 0; I < Nodes.size(); ++I)
    if (InDeg[I] == 0) Ready.push(static_cast<int>(I));
  std::vector<int> Order;
  Order.reserve(Nodes.size());
  while (!Ready.empty()) {
    int N = Ready.top();
    Ready.pop();
    Order.push_back(N);
    for (int EId : Out[N])
      if (--InDeg[Edges[EId].dst] == 0) Ready.push(Edges[EId].dst);
  }
  if (Order.size() != Nodes.size()) {
    for (size_t I = 0; I < Nodes.size(); ++I)
      if (InDeg[I] > 0) return makeError("graph has a cycle through node '", Nodes[I].name, "'");
  }
  return Order;
}

bool CostGraph::isTraining() const { return countRole(Role::Backward) > 0; }

size_t CostGraph::countRole(Role R) const {
  return std::count_if(Nodes.begin(), Nodes.end(), [R](const CostNode &N) { return N.role == R; });
}

void CostGraph::normalizeClasses() {
  std::map<int, int> Dense;
  int Next = 0;
  for (CostNode &N : Nodes) {
    if (N.colocClass < 0) {
      N.colocClass = Next++;
      continue;
    }
    auto [It, Inserted] = Dense.try_emplace(N.colocClass, -1);
    if (Inserted) It->second = Next++;
    N.colocClass = It->second;
  }
}

int CostGraph::classOf(int N) const {
  // Classes are dense after normalizeClasses(); before it, a node without a
  // class is its own class, numbered after the largest explicit class.
  if (Nodes[N].colocClass >= 0) return Nodes[N].colocClass;
  int Max = -1;
  for (const CostNode &M : Nodes) Max = std::max(Max, M.colocClass);
  return Max + 1 + N;
}

int CostGraph::numClasses() const {
  int Max = -1;
  for (size_t I = 0; I < Nodes.size(); ++I) Max = std::max(Max, classOf(static_cast<int>(I)));
  return Max + 1;
}

void CostGraph::print(std::ostream &OS) const {
  OS << "costgraph nodes=" << Nodes.size() << " edges=" << Edges.size() << " unit=" << timeUnit << "\n";
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const CostNode &N = Nodes[I];
    OS << "node " << I << " '" << N.name << "' op=" << (N.op.empty() ? "-" : N.op)
       << " role=" << roleName(N.role) << " partner=";
    if (N.partner >= 0) OS << N.partner;
    else OS << "-";
    OS << " class=";
    if (N.colocClass >= 0) OS << N.colocClass;
    else OS << "-";
    OS << " acc=" << (N.accSupported ? formatNumber(N.accTime) : std::string("unsupported"))
       << " cpu=" << formatNumber(N.cpuTime) << " param=" << formatNumber(N.paramBytes)
       << " out=" << formatNumber(N.outputBytes) << " mem=" << formatNumber(N.memBytes) << "\n";
  }
  for (size_t I = 0; I < Edges.size(); ++I) {
    const CostEdge &E = Edges[I];
    OS << "edge " << E.src << " -> " << E.dst;
    if (!E.tensor.empty()) OS << " '" << E.tensor << "'";
    OS << " bytes=" << formatNumber(E.bytes) << " comm=" << formatNumber(E.commTime) << "\n";
  }
}

ReplicaHolders onnxp::replicaHolders(const CostGraph &G, const SharedParameter &SP,
                                     const std::vector<int> &Device) {
  ReplicaHolders H;
  if (Device.size() != G.numNodes()) return H;
  std::set<int> Readers;
  for (int V : SP.readers) Readers.insert(Device[V]);
  if (Readers.size() < 2) return H;
  std::set<int> Weight = Readers;
  for (int D : SP.derived)
    for (int EId : G.outEdges(D)) Weight.insert(Device[G.edge(EId).dst]);
  std::set<int> All = Weight;
  for (int S : SP.sinks) {
    All.insert(Device[S]);
    for (int EId : G.inEdges(S)) All.insert(Device[G.edge(EId).src]);
  }
  H.devices.assign(All.begin(), All.end());
  H.weightDevices.assign(Weight.begin(), Weight.end());
  return H;
}
