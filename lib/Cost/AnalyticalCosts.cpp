//===- Cost/AnalyticalCosts.cpp - Price a cost graph from shapes --------===//
//
// A contracted node (several ONNX nodes) is priced as the sum of its
// members' work: each member is a kernel of its own, so the overhead is
// paid per member too. A node with neither an ONNX node nor a forward
// partner (cannot happen for ONNX inputs today) gets the fallback source
// and the overhead only, never a silent zero.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/AnalyticalCosts.h"

#include "onnx-partition/Cost/Roofline.h"

#include <algorithm>
#include <set>

using namespace onnxp;

namespace {
/// Adds the work of one ONNX node to that of the cost node it belongs to.
void addWork(OpWork &W, const OpWork &Part) {
  W.flops += Part.flops;
  W.bytesRead += Part.bytesRead;
  W.bytesWritten += Part.bytesWritten;
  W.workspaceBytes = std::max(W.workspaceBytes, Part.workspaceBytes);
  W.fallback |= Part.fallback;
  W.shapesKnown &= Part.shapesKnown;
  W.rule = W.rule.empty() ? Part.rule : (W.rule == Part.rule ? W.rule : "mixed");
}
} // namespace

OpWork onnxp::nodeWork(const CostGraph &G, int V, const OnnxModel &M) {
  const CostNode &N = G.node(V);
  const onnx::GraphProto &OG = M.graph();
  OpWork W;
  if (!N.onnxNodes.empty()) {
    for (int O : N.onnxNodes) { addWork(W, estimateOpWork(opShapesOf(M, OG.node(O)))); }
    return W;
  }
  if (N.isBackward() && N.partner >= 0) {
    const CostNode &F = G.node(N.partner);
    for (int O : F.onnxNodes) { addWork(W, estimateGradientWork(opShapesOf(M, OG.node(O)))); }
    if (!F.onnxNodes.empty()) return W;
  }
  W.rule = "fallback";
  W.fallback = true;
  return W;
}

namespace {
/// nodeRooflineMs with the node's summed work W already computed.
double pricedMs(const CostGraph &G, int V, const OnnxModel &M, const DeviceSpec &D, const OpWork &W) {
  const CostNode &N = G.node(V);
  if (!D.opKinds.empty() && N.onnxNodes.size() > 1) {
    double T = 0;
    for (int O : N.onnxNodes) {
      const onnx::NodeProto &ON = M.graph().node(O);
      T += rooflineMs(estimateOpWork(opShapesOf(M, ON)), D, ON.op_type());
    }
    return T;
  }
  // A contracted node pays one kernel overhead per member.
  double Kernels = static_cast<double>(std::max<size_t>(1, N.onnxNodes.size()));
  return rooflineMs(W, D, N.op) + (Kernels - 1) * D.kernelOverheadMs;
}
} // namespace

double onnxp::nodeRooflineMs(const CostGraph &G, int V, const OnnxModel &M, const DeviceSpec &D) {
  return pricedMs(G, V, M, D, nodeWork(G, V, M));
}

AnalyticalSummary onnxp::applyAnalyticalCosts(CostGraph &G, const OnnxModel &M, const Platform &P,
                                              Precision Prec) {
  AnalyticalSummary Sum;
  std::set<std::string> FallbackOps;
  // Issue 33: kernels read and write the precision's bytes; matrix ops run
  // at the accelerator's tensor-core peak (Cost/Precision.h).
  const double ByteRatio = Prec == Precision::Model ? 1 : precisionBytes(Prec) / modelFloatBytes(M);
  const DeviceSpec Matrix = matrixDevice(P.accelerator, Prec);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    OpWork W = nodeWork(G, static_cast<int>(V), M);
    CostNode &N = G.node(V);
    W.bytesRead *= ByteRatio;
    W.bytesWritten *= ByteRatio;
    const bool OnTensorCores = Prec != Precision::Model && isMatrixOp(N.op);
    N.accTime = pricedMs(G, static_cast<int>(V), M, OnTensorCores ? Matrix : P.accelerator, W);
    N.cpuTime = pricedMs(G, static_cast<int>(V), M, P.cpu, W);
    N.flops = W.flops;
    N.bytesAccessed = W.bytes();
    N.kernels = static_cast<double>(std::max<size_t>(1, N.onnxNodes.size())); // launches (issue 21)
    N.workspaceBytes = W.workspaceBytes;
    N.costSource = W.fallback ? "analytical-fallback" : "analytical";
    if (W.fallback) {
      ++Sum.fallbackNodes;
      FallbackOps.insert(N.op.empty() ? "(none)" : N.op);
    }
    if (!W.shapesKnown) ++Sum.unknownShapeNodes;
  }
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    CostEdge &E = G.edge(EId);
    E.commTime = P.hostTransferMs(E.bytes);
  }
  Sum.fallbackOps.assign(FallbackOps.begin(), FallbackOps.end());
  return Sum;
}
