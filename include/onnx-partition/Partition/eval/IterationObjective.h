//===- Partition/eval/IterationObjective.h - Price a plan's iteration -*- C++ -*-===//
//
// Objectives `iteration` and `throughput` on a cost-graph plan (issue 33):
// the plan's stages (stagesAsChain: Plan::stage, forward nodes in
// topological order) become IterationSimulator stages, stage s on its
// device and the accelerators lent to it as replicas (Plan::replicas: a
// device with r replicas runs them on itself and the next r - 1 devices,
// seed 004 App. C.2), per micro-batch of b samples:
//   forward / backward ms   the stage's nodes' times on its device
//   gradient bytes          the trainable parameters' gradients it holds
//                           (CostNode::gradBytes, in the precision priced)
//   optimizer bytes         gradient bytes x Plan::optimizerTraffic
//   state bytes             parameters + gradients + optimizer state
//                           (memBytes for graphs without parameter bytes)
//   activation bytes        saved activations (CostNode::savedBytes)
//   output bytes            forward tensors leaving it for a later stage
// and simulateIteration replays M = Plan::globalMicrobatches of them.
// iteration = the simulator's ms; throughput = its ms / (M b) per sample.
//
// The universal bound (any plan on the accelerators, any schedule): every
// micro-batch runs every node once on some accelerator and every replica
// runs its stage's optimizer step after its own backwards, so the busy time
// of the N accelerators sums to at least M W + S, W the graph's
// accelerator time per micro-batch, S the optimizer step of all parameters
// on one device; iteration >= (M W + S) / N, and >= the longest path of
// one micro-batch (forward then backward). Transfers and the all-reduce
// are left out (a plan may need none). Throughput: M W / N / (M b) and the
// path / (M b).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_EVAL_ITERATIONOBJECTIVE_H
#define ONNXP_PARTITION_EVAL_ITERATIONOBJECTIVE_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/IterationSimulator.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp {

bool isIterationObjective(Objective O); ///< iteration or throughput

/// Bytes node V holds on every replica of its stage all iteration: its
/// parameters, and in training their gradients and optimizer state; a graph
/// without parameter bytes (JSON workloads) charges each node's memBytes
/// (seed 004's m_v). AnyParams: hasParameterBytes(G), asked once.
double iterationStateBytes(const CostNode &N, bool AnyParams, bool Training);
bool hasParameterBytes(const CostGraph &G);

/// The simulator's request for Pl (M, schedule, training or not).
IterationRequest iterationRequest(const CostGraph &G, const Plan &Pl);
/// The simulator's stages for Pl (see the file comment).
Expected<std::vector<IterationStage>> iterationStages(const CostGraph &G, const Platform &P, const Plan &Pl);
/// The simulator's price of Pl; an error when Pl has no global batch
/// (Plan::globalMicrobatches 0) or does not fit.
Expected<IterationPrice> priceIterationPlan(const CostGraph &G, const Platform &P, const Plan &Pl);
/// The objective's value from the simulator's price.
double iterationObjectiveValue(const Plan &Pl, const IterationPrice &Price);

/// The universal bound of the file comment; NaN without a global batch.
double iterationBound(const CostGraph &G, const Platform &P, const Plan &Pl);
const char *iterationBoundDescription(Objective O);

} // namespace onnxp

#endif // ONNXP_PARTITION_EVAL_ITERATIONOBJECTIVE_H
