//===- Partition/LatencyEvaluator.h - Single-sample latency of a plan -*- C++ -*-===//
//
// Prices any plan for one sample fed at a time (seed 004 §4), independently
// of the algorithm that produced it, by simulating the mode of computation
// of §4: an accelerator runs contiguous subgraphs; a subgraph is invoked
// once all its inputs are in host RAM, reads them in (sum of the transfer
// costs of the distinct outside nodes it reads), processes its nodes, writes
// the outputs that leave it back (sum over its nodes with an edge leaving
// it), and only then are those outputs available. An accelerator runs its
// subgraphs one after the other (Fig. 4, constraint (14)). CPU nodes start
// as soon as their inputs are in RAM and pay no transfers; like the paper
// (§4, "l is no smaller than the width of G"), CPU cores are a pool that
// never makes a node wait.
//
// Which subgraphs: if the plan carries stages (latency-ip writes the
// subgraph slot of each accelerator node into Plan::stage), the nodes of
// one accelerator with one stage form a subgraph and stages run in
// increasing order; each must be contiguous and the order must respect the
// data dependencies, or the plan is rejected. Without stages, each
// accelerator's nodes are cut into the fewest layers that are contiguous
// and ordered: a node's layer is one more than that of any node of the same
// accelerator it depends on through another device. When those per-device
// layers wait on each other in a cycle, a global layering (level + 1 at
// every device change) is used instead, which always yields a schedule.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_LATENCYEVALUATOR_H
#define ONNXP_PARTITION_LATENCYEVALUATOR_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp {

struct LatencySubgraph {
  int device = -1;
  int index = 0;          ///< position in the device's sequence
  std::vector<int> nodes; ///< in increasing node id
  double start = 0;       ///< all inputs in RAM and the device free
  double commIn = 0, compute = 0, commOut = 0;
  double finish = 0; ///< outputs back in RAM
};

struct LatencySchedule {
  double latency = 0;                     ///< max over nodes of finish
  std::vector<double> finish;             ///< per node: when its output is in RAM
  std::vector<int> subgraphOf;            ///< per node: index into subgraphs, -1 on CPUs
  std::vector<LatencySubgraph> subgraphs; ///< by device, then index
  bool usedStages = false;                ///< subgraphs came from Plan::stage
};

/// Simulates Pl (see the file comment). Errors on a plan that does not fit
/// G and P, a stage subgraph that is not contiguous, or stages whose order
/// contradicts the data dependencies.
Expected<LatencySchedule> simulateLatency(const CostGraph &G, const Platform &P, const Plan &Pl);

/// The single-sample latency of Pl (simulateLatency(...).latency).
Expected<double> evaluateLatency(const CostGraph &G, const Platform &P, const Plan &Pl);

/// Per accelerator node, its subgraph index in the canonical decomposition
/// (see the file comment); -1 for CPU nodes. Always schedulable.
Expected<std::vector<int>> canonicalSubgraphs(const CostGraph &G, const Platform &P,
                                              const std::vector<int> &Device);

} // namespace onnxp

#endif // ONNXP_PARTITION_LATENCYEVALUATOR_H
