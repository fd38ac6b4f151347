//===- Cost/AllReduce.cpp - Ring and hierarchical all-reduce -------------===//
//
// See AllReduce.h and docs/cost-model.md ("Gradient all-reduce").
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/AllReduce.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

AllReducePrice onnxp::priceAllReduce(const Platform &P, double Bytes, const std::vector<int> &Devices) {
  AllReducePrice R;
  const std::set<int> Group(Devices.begin(), Devices.end());
  R.replicas = static_cast<int>(Group.size());
  std::map<int, int> PerNode;
  for (int D : Group) ++PerNode[P.nodeOf(D)];
  R.nodes = static_cast<int>(PerNode.size());
  if (R.replicas < 2 || !(Bytes > 0)) return R;
  int Most = 0, Fewest = R.replicas;
  for (auto [Node, N] : PerNode) Most = std::max(Most, N), Fewest = std::min(Fewest, N);
  const double PeerMsPerByte = 1e3 / P.peerLinkBandwidth;
  if (R.nodes == 1) {
    // Ring: reduce-scatter then all-gather, n - 1 steps of S / n each.
    const double N = R.replicas;
    R.intraNodeMs = 2 * (N - 1) * (P.peerLinkLatencyMs + Bytes / N * PeerMsPerByte);
    return R;
  }
  // Hierarchical: reduce-scatter and all-gather inside each node (g - 1
  // steps of S / g each), between them a ring over the k nodes of each
  // shard S / g' (2 (k - 1) steps of S / (g' k)).
  const double G = Most;
  if (Most > 1) R.intraNodeMs = 2 * (G - 1) * (P.peerLinkLatencyMs + Bytes / G * PeerMsPerByte);
  const double K = R.nodes, Shard = Bytes / Fewest;
  R.interNodeMs = 2 * (K - 1) * (P.networkLatencyMs + Shard / K * 1e3 / P.networkBandwidth);
  return R;
}

double onnxp::allReduceMs(const Platform &P, double Bytes, const std::vector<int> &Devices) {
  return priceAllReduce(P, Bytes, Devices).total();
}
