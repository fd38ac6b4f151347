//===- Partition/eval/TiedWeights.cpp - Replicated shared parameters ------===//
//
// See TiedWeights.h. Megatron-LM's embedding group (Shoeybi et al. 2019;
// Narayanan et al. 2021 §2.2) is the reference: a copy of the tied
// embedding on the first and the last stage, its gradient all-reduced
// between them once per iteration.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/TiedWeights.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace onnxp;

std::vector<int> onnxp::readerDevices(const SharedParameter &SP, const std::vector<int> &Device) {
  std::set<int> Devs;
  for (int V : SP.readers)
    if (V >= 0 && static_cast<size_t>(V) < Device.size()) Devs.insert(Device[V]);
  return {Devs.begin(), Devs.end()};
}

std::vector<ReplicatedParameter> onnxp::replicatedParameters(const CostGraph &G,
                                                             const std::vector<int> &Device) {
  std::vector<ReplicatedParameter> Out;
  if (Device.size() != G.numNodes()) return Out;
  for (size_t I = 0; I < G.sharedParameters.size(); ++I) {
    const SharedParameter &SP = G.sharedParameters[I];
    if (SP.folded) continue; // a folded constant: copied for free, nothing to reduce
    ReplicaHolders H = replicaHolders(G, SP, Device);
    if (H.devices.size() < 2) continue;
    ReplicatedParameter R;
    R.index = static_cast<int>(I);
    R.name = SP.name;
    R.devices = std::move(H.devices);
    R.weightDevices = std::move(H.weightDevices);
    R.gradientBytes = SP.gradBytes;
    Out.push_back(std::move(R));
  }
  return Out;
}

std::vector<char> onnxp::replicaLocalEdges(const CostGraph &G, const std::vector<int> &Device) {
  std::vector<char> Local(G.numEdges(), 0);
  for (const ReplicatedParameter &R : replicatedParameters(G, Device)) {
    const SharedParameter &SP = G.sharedParameters[R.index];
    // Every device feeding a sink holds the gradient and runs its own copy
    // of the sink (replicaHolders), every reader of a derived tensor its
    // own copy of the derived node: nothing crosses a link for them.
    for (int S : SP.sinks)
      for (int EId : G.inEdges(S)) Local[EId] = 1;
    for (int D : SP.derived)
      for (int EId : G.outEdges(D)) Local[EId] = 1;
  }
  return Local;
}

std::vector<std::vector<int>> onnxp::sinkCopyDevices(const CostGraph &G, const SharedParameter &SP,
                                                     const std::vector<int> &Device) {
  // A copy of sink S runs where one of its inputs is produced: by a node
  // placed there, or by a copy of an earlier sink (to a fixpoint: sinks
  // are few and their chains short).
  std::vector<std::set<int>> Runs(SP.sinks.size());
  auto SinkIndex = [&](int V) {
    auto It = std::find(SP.sinks.begin(), SP.sinks.end(), V);
    return It == SP.sinks.end() ? -1 : static_cast<int>(It - SP.sinks.begin());
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (size_t I = 0; I < SP.sinks.size(); ++I)
      for (int EId : G.inEdges(SP.sinks[I])) {
        const int Src = G.edge(EId).src, J = SinkIndex(Src);
        std::set<int> From = J < 0 ? std::set<int>{Device[Src]} : Runs[J];
        if (J >= 0) From.insert(Device[Src]);
        for (int Dev : From)
          if (Dev != Device[SP.sinks[I]] && Runs[I].insert(Dev).second) Changed = true;
      }
  }
  std::vector<std::vector<int>> Out;
  for (const std::set<int> &S : Runs) Out.emplace_back(S.begin(), S.end());
  return Out;
}

std::vector<std::vector<int>> onnxp::derivedCopyDevices(const CostGraph &G, const SharedParameter &SP,
                                                        const std::vector<int> &Device) {
  std::vector<std::vector<int>> Out;
  for (int D : SP.derived) {
    std::set<int> Devs;
    for (int EId : G.outEdges(D))
      if (Device[G.edge(EId).dst] != Device[D]) Devs.insert(Device[G.edge(EId).dst]);
    Out.emplace_back(Devs.begin(), Devs.end());
  }
  return Out;
}

ReplicaLoad onnxp::replicaLoad(const CostGraph &G, const Platform &P, const std::vector<int> &Device,
                               int Microbatches) {
  const int D = P.numDevices();
  ReplicaLoad L{std::vector<double>(D, 0), std::vector<double>(D, 0), std::vector<double>(D, 0)};
  const double M = std::max(1, Microbatches);
  for (const ReplicatedParameter &R : replicatedParameters(G, Device)) {
    const SharedParameter &SP = G.sharedParameters[R.index];
    // Copies run once per sample: the written stage runs them on every
    // micro-batch, as it runs everything else.
    const std::vector<std::vector<int>> Sinks = sinkCopyDevices(G, SP, Device);
    for (size_t I = 0; I < SP.sinks.size(); ++I) {
      const CostNode &S = G.node(SP.sinks[I]);
      for (int Dev : Sinks[I]) (S.isBackward() ? L.sinkBackward : L.sinkForward)[Dev] += P.nodeTimeMs(S, Dev);
    }
    const std::vector<std::vector<int>> Copies = derivedCopyDevices(G, SP, Device);
    for (size_t I = 0; I < SP.derived.size(); ++I)
      for (int Dev : Copies[I]) L.sinkForward[Dev] += P.nodeTimeMs(G.node(SP.derived[I]), Dev);
    // Once per iteration, so 1/M of it per sample.
    const double Ms = ringAllReduceMs(P, R.gradientBytes, R.devices) / M;
    for (int Dev : R.devices) L.allReduce[Dev] += Ms;
  }
  return L;
}

double onnxp::ringAllReduceMs(const Platform &P, double Bytes, const std::vector<int> &Devices) {
  const size_t N = Devices.size();
  if (N < 2 || Bytes <= 0) return 0;
  // Patarasuk & Yuan 2009: reduce-scatter then all-gather, n-1 steps each.
  double Step = 0;
  for (size_t I = 0; I < N; ++I)
    Step = std::max(Step, P.linkMs(P.linkBetween(Devices[I], Devices[(I + 1) % N]), Bytes / N));
  return 2.0 * static_cast<double>(N - 1) * Step;
}
