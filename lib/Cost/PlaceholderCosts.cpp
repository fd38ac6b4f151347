//===- Cost/PlaceholderCosts.cpp - Byte-proportional stand-in costs -----===//
#include "onnx-partition/Cost/PlaceholderCosts.h"

using namespace onnxp;

namespace {
double memoryTimeMs(double Bytes, const DeviceSpec &D) {
  return D.kernelOverheadMs + (D.memBandwidth > 0 ? Bytes / D.memBandwidth * 1e3 : 0);
}
} // namespace

void onnxp::applyPlaceholderCosts(CostGraph &G, const Platform &P) {
  const bool Training = G.isTraining();
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    double InBytes = N.paramBytes;
    for (int EId : G.inEdges(V)) InBytes += G.edge(EId).bytes;
    double Bytes = InBytes + N.outputBytes;
    N.accTime = memoryTimeMs(Bytes, P.accelerator);
    N.cpuTime = memoryTimeMs(Bytes, P.cpu);
    N.memBytes = N.paramBytes * (Training ? 2 : 1) + N.outputBytes;
    N.costSource = "placeholder";
  }
  // Derived backward nodes (no ONNX node of their own) cost twice their
  // forward partner.
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    if (!N.isBackward() || !N.onnxNodes.empty() || N.partner < 0) continue;
    const CostNode &F = G.node(N.partner);
    N.accTime = 2 * F.accTime;
    N.cpuTime = 2 * F.cpuTime;
    N.memBytes = F.paramBytes + N.outputBytes;
  }
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    CostEdge &E = G.edge(EId);
    E.commTime = P.hostTransferMs(E.bytes);
  }
}
