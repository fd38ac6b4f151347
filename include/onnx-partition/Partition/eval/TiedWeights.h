//===- Partition/eval/TiedWeights.h - Replicated shared parameters -*- C++ -*-===//
//
// Issue 22, item 4. A shared (tied) parameter (IR/CostGraph.h
// SharedParameter) whose readers a plan places on several devices is
// replicated, as Megatron-LM's embedding group does: every device holding a
// reader keeps a copy (its weights, gradient buffer and optimizer state are
// charged on each: Cost/MemoryAccounting.h livenessMemory), sums its local
// partial gradients with its own copy of the parameter's sink nodes, and the
// copies all-reduce the gradient once per iteration over the links between
// them. The all-reduce is a ring (2(n-1) steps of bytes/n each, the slowest
// ring link per step); per-sample objectives (max-load, gpipe) charge it
// divided by the micro-batches of one iteration (Plan::iterationMicrobatches).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_EVAL_TIEDWEIGHTS_H
#define ONNXP_PARTITION_EVAL_TIEDWEIGHTS_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/IR/SharedParameters.h"

#include <string>
#include <vector>

namespace onnxp {

/// One shared parameter a placement replicates.
struct ReplicatedParameter {
  int index = -1; ///< into CostGraph::sharedParameters
  std::string name;
  std::vector<int> devices; ///< the devices holding a copy, ascending (>= 2): the all-reduce group
  /// Those holding the weight itself (a reader, or a reader of a derived
  /// tensor); the others hold only the gradient (IR/CostGraph.h replicaHolders).
  std::vector<int> weightDevices;
  double gradientBytes = 0; ///< bytes all-reduced per iteration
};

/// Devices holding a reader of shared parameter SP under Device.
std::vector<int> readerDevices(const SharedParameter &SP, const std::vector<int> &Device);

/// The shared parameters of G that Device replicates (readers on >= 2
/// devices), in sharedParameters order; folded constants are not listed
/// (no all-reduce, no sink, allowed under every objective).
std::vector<ReplicatedParameter> replicatedParameters(const CostGraph &G, const std::vector<int> &Device);

/// Per edge of G: true when Device replicates a shared parameter and the edge
/// enters one of its sinks (a partial gradient: the device producing it
/// holds the gradient and its own copy of the sink reads it) or leaves one
/// of its derived nodes (a weight-derived tensor: the reader's device runs
/// its own copy of the node). Nothing crosses a link for these edges.
std::vector<char> replicaLocalEdges(const CostGraph &G, const std::vector<int> &Device);

/// For each sink of SP (SP.sinks order): the devices other than its own
/// that run a copy of it, i.e. that produce one of its inputs (a node
/// placed there or a copy of an earlier sink). Ascending.
std::vector<std::vector<int>> sinkCopyDevices(const CostGraph &G, const SharedParameter &SP,
                                              const std::vector<int> &Device);
/// For each derived node of SP (SP.derived order): the devices other than
/// its own holding a reader of its output, each running a copy. Ascending.
std::vector<std::vector<int>> derivedCopyDevices(const CostGraph &G, const SharedParameter &SP,
                                                 const std::vector<int> &Device);

/// Per device: the extra compute (ms, from Platform::nodeTimeMs) of the
/// sink and derived-node copies, once per sample (the written stages run
/// them on every micro-batch), split by forward side (derived nodes and
/// forward-role sinks) / backward role, and the all-reduce time per sample
/// (divided by Microbatches). Index [device].
struct ReplicaLoad {
  std::vector<double> sinkForward, sinkBackward, allReduce;
};
ReplicaLoad replicaLoad(const CostGraph &G, const Platform &P, const std::vector<int> &Device,
                        int Microbatches);

/// Ring all-reduce of Bytes among Devices (ascending): 2(n-1) steps, each
/// moving Bytes/n over every ring link at once, so the slowest link prices a
/// step. 0 for fewer than two devices.
double ringAllReduceMs(const Platform &P, double Bytes, const std::vector<int> &Devices);

} // namespace onnxp

#endif // ONNXP_PARTITION_EVAL_TIEDWEIGHTS_H
