//===- Cost/MeasuredCosts.cpp - Measured and tabulated times override ---===//
//
// Matching is by cost-graph node name, which is the ONNX node name (ONNX
// Runtime profiles name kernels after it; run ORT with graph optimizations
// disabled so that no node is fused away or renamed, as test/ort/profile.js
// does). A table's `bytes` replaces memBytes, the number partitioners
// charge. A measured time replaces one device kind's time; the other kind
// keeps its analytical time.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/MeasuredCosts.h"

#include <set>

using namespace onnxp;

namespace {
const CostEntry *lookup(const CostTable *T, const CostNode &N) {
  if (!T) return nullptr;
  if (auto It = T->byNode.find(N.name); It != T->byNode.end()) return &It->second;
  if (auto It = T->byOp.find(N.op); It != T->byOp.end()) return &It->second;
  return nullptr;
}
} // namespace

MeasuredSummary onnxp::applyMeasuredCosts(CostGraph &G, const OrtProfile *Profile, const CostTable *Table,
                                          MeasuredDevice ProfileDevice) {
  MeasuredSummary S;
  // Analytical times before any override: the backward/forward ratio of a
  // derived node is taken from them.
  std::vector<double> Acc(G.numNodes()), Cpu(G.numNodes());
  for (size_t V = 0; V < G.numNodes(); ++V) {
    Acc[V] = G.node(V).accTime;
    Cpu[V] = G.node(V).cpuTime;
  }
  std::set<std::string> UsedNodeKeys, UsedOpKeys, UsedProfile;
  auto MeasuredTime = [&](int V) -> const OrtNodeTiming * {
    if (!Profile) return nullptr;
    auto It = Profile->nodes.find(G.node(V).name);
    return It == Profile->nodes.end() ? nullptr : &It->second;
  };
  auto NoteTableUse = [&](const CostNode &N) {
    if (Table && Table->byNode.count(N.name)) UsedNodeKeys.insert(N.name);
    else if (Table && Table->byOp.count(N.op)) UsedOpKeys.insert(N.op);
  };
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    const bool Derived = N.isBackward() && N.onnxNodes.empty() && N.partner >= 0;
    const CostNode *Owner = Derived ? &G.node(N.partner) : &N;
    const CostEntry *E = lookup(Table, *Owner);
    if (E) NoteTableUse(*Owner);
    bool FromTable = false;
    if (E) {
      const std::optional<double> &AccMs = Derived ? E->backwardMs : E->forwardMs;
      const std::optional<double> &CpuMs = Derived ? E->cpuBackwardMs : E->cpuForwardMs;
      if (AccMs) N.accTime = *AccMs;
      if (CpuMs) N.cpuTime = *CpuMs;
      if (E->bytes) N.memBytes = *E->bytes;
      FromTable = AccMs || CpuMs;
      if (FromTable || E->bytes) N.costSource = "table";
    }
    if (const OrtNodeTiming *T = MeasuredTime(Derived ? N.partner : static_cast<int>(V))) {
      UsedProfile.insert(Owner->name);
      if (!Derived) {
        (ProfileDevice == MeasuredDevice::Accelerator ? N.accTime : N.cpuTime) = T->meanMs();
        N.costSource = "profile";
      } else if (!FromTable) {
        const std::vector<double> &Base = ProfileDevice == MeasuredDevice::Accelerator ? Acc : Cpu;
        double Ratio = Base[N.partner] > 0 ? Base[V] / Base[N.partner] : 1;
        (ProfileDevice == MeasuredDevice::Accelerator ? N.accTime : N.cpuTime) = T->meanMs() * Ratio;
        N.costSource = "profile-scaled";
      }
    }
    ++S.nodesBySource[N.costSource];
  }
  if (Profile)
    for (auto &[Name, T] : Profile->nodes)
      if (!UsedProfile.count(Name)) S.unmatchedProfileNodes.push_back(Name);
  if (Table) {
    for (auto &[Key, E] : Table->byNode)
      if (!UsedNodeKeys.count(Key)) S.unmatchedTableNodes.push_back(Key);
    for (auto &[Key, E] : Table->byOp)
      if (!UsedOpKeys.count(Key)) S.unmatchedTableOps.push_back(Key);
  }
  return S;
}
