//===- Partition/remat/RematSequence.cpp - Plan summaries and report ----===//
//
// The per-layer report of issue 14 item 5: for each layer the variant the
// forward phase chose, how often it was recomputed in the backward phase,
// and whether its input was offloaded.
//
//===----------------------------------------------------------------------===//
#include "RematSequence.h"

#include "onnx-partition/IR/CostGraph.h"

#include <cmath>
#include <sstream>

using namespace onnxp;
using namespace onnxp::remat;

void onnxp::remat::finishPlan(const Chain &C, const SlotChain &S, RematPlan &P) {
  P.layers.assign(C.size(), RematLayerReport());
  P.offloadedBytes = 0;
  bool AfterLoss = false;
  std::vector<bool> Seen(C.size() + 2, false);
  for (const RematOp &Op : P.ops) {
    switch (Op.kind) {
    case RematOpKind::Loss: AfterLoss = true; break;
    case RematOpKind::ForwardAll:
    case RematOpKind::ForwardCheck:
    case RematOpKind::ForwardNoGrad:
      if (Op.layer < 1 || Op.layer > int(C.size())) break;
      if (AfterLoss) {
        ++P.layers[Op.layer - 1].recomputations;
      } else if (!Seen[Op.layer]) {
        Seen[Op.layer] = true;
        P.layers[Op.layer - 1].forwardVariant = Op.kind;
      }
      break;
    case RematOpKind::Offload: {
      double Bytes = Op.layer == 0 ? C.inputBytes
                     : Op.stored
                         ? std::max(C.blocks[Op.layer - 1].storedBytes, C.blocks[Op.layer - 1].outputBytes)
                         : C.blocks[Op.layer - 1].outputBytes;
      P.offloadedBytes += Bytes;
      if (Op.layer < int(C.size())) {
        P.layers[Op.layer].inputOffloaded = true;
        P.layers[Op.layer].inputBytes = Bytes;
      }
      break;
    }
    default: break;
    }
  }
  (void)S;
}

std::string onnxp::formatRematReport(const Chain &C, const RematPlan &P) {
  std::ostringstream OS;
  OS << "activation schedule: " << (P.offload ? "offloading + rematerialization" : "rematerialization only")
     << ", budget " << P.budgetSlots << " slots of " << formatNumber(P.slotBytes) << " bytes";
  if (P.offload) OS << ", link " << formatNumber(P.bandwidthBytesPerSec) << " B/s";
  OS << "\n";
  if (!P.feasible) {
    OS << "infeasible: no schedule fits in the memory budget\n";
    return OS.str();
  }
  OS << "makespan " << formatNumber(P.makespanMs) << " ms, offloaded " << formatNumber(P.offloadedBytes)
     << " bytes\n";
  for (size_t K = 0; K < C.size(); ++K) {
    const RematLayerReport &R = P.layers[K];
    OS << "layer " << K + 1 << " '" << C.blocks[K].name << "' " << rematOpName(R.forwardVariant)
       << " recomputed=" << R.recomputations;
    if (R.inputOffloaded) OS << " input-offloaded=" << formatNumber(R.inputBytes);
    OS << "\n";
  }
  return OS.str();
}
