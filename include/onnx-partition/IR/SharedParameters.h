//===- IR/SharedParameters.h - Tied parameters on the graph alone -*- C++ -*-===//
//
// The graph-only half of issue 22 item 4's tied weights (a plan's half,
// replication and its all-reduce, is Partition/eval/TiedWeights.h): whether
// a graph has shared parameters, the graph that keeps each one's readers and
// sinks together, and the shared parameters carried through a contraction.
// Here, below Coarsen/ and Partition/, because both use them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_SHAREDPARAMETERS_H
#define ONNXP_IR_SHAREDPARAMETERS_H

#include "onnx-partition/IR/CostGraph.h"

#include <vector>

namespace onnxp {

/// Whether G has a shared parameter that is not a folded constant (those
/// are always copied: Cost/FoldedConstants.h).
bool hasTiedParameters(const CostGraph &G);

/// G with every shared parameter's readers and sinks joined into one
/// colocation class: the plans that never replicate (today's behaviour).
/// Folded constants stay apart, copied to their readers.
CostGraph colocateSharedParameters(const CostGraph &G);

/// Maps the shared parameters of G through a node map (contraction:
/// OldToNew[v] is v's group in the new graph) into Out. A sink stays a sink
/// only when its group holds nothing but sinks of that parameter.
void mapSharedParameters(const CostGraph &G, const std::vector<int> &OldToNew, CostGraph &Out);

} // namespace onnxp

#endif // ONNXP_IR_SHAREDPARAMETERS_H
