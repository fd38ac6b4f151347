//===- Partition/PlanEvaluator.h - Price any plan ---------------*- C++ -*-===//
//
// Prices a plan under the cost model of seed 004 §3, independently of the
// algorithm that produced it: an accelerator's load is its incoming transfers
// + processing + outgoing transfers; a CPU's load is its processing. A node's
// output is charged once on the sending accelerator when any of its edges
// leaves the device, and once on every other accelerator that receives it
// (the semantics the published Table 1 carries, see workloads/msr/README.md).
// With Platform::overlapComm an accelerator's load is the max of compute and
// communication instead of their sum (App. C.1).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PLANEVALUATOR_H
#define ONNXP_PARTITION_PLANEVALUATOR_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

/// Objectives the evaluator knows.
///  - "max-load": max over devices of the device load (time per sample);
///    for training this is max over devices of FW+BW (seed 004 App. A).
///  - "gpipe": max over devices of the forward load + max of the backward load.
struct Evaluation {
  double objective = 0;
  double maxForwardLoad = 0;
  double maxBackwardLoad = 0;
  std::vector<DeviceUsage> usage;
};

/// Prices Pl on G and P. Errors on a plan that does not fit the graph.
Expected<Evaluation> evaluatePlan(const CostGraph &G, const Platform &P,
                                  const Plan &Pl,
                                  const std::string &Objective = "max-load");

/// Evaluates and stores objective and usage into Pl.
Error evaluateInto(const CostGraph &G, const Platform &P, Plan &Pl,
                   const std::string &Objective = "max-load");

} // namespace onnxp

#endif // ONNXP_PARTITION_PLANEVALUATOR_H
