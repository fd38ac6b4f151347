//===- Partition/MemoryFit.h - What would fit (issue 22) --------*- C++ -*-===//
//
// Private to lib/Partition: runPartitioner and runChainPlanner append
// whatWouldFit's sentence to a "does not fit" error.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_MEMORYFIT_H
#define ONNXP_PARTITION_MEMORYFIT_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <string>

namespace onnxp {

/// Whether E is a planner's "does not fit" (Error::doesNotFit) on a
/// platform with finite memory (and not raised inside a search of
/// whatWouldFit).
bool isMemoryFailure(const Error &E, const Platform &P);

/// Whether whatWouldFit's search is running: its trials only ask whether a
/// plan exists (issue 38: offload-activations then returns rotor's plan as
/// soon as rotor finds one).
bool inMemoryFitSearch();

/// Runs algorithm Name on a platform; true when it returns a valid plan.
using FitTrial = std::function<bool(const std::string &Name, const CostGraph &G, const Platform &P,
                                    const PartitionOptions &O, const Chain *C)>;

/// "; dp finds a plan on 4 accelerators with 13.1 GiB each (...), or on 7
/// accelerators with 8 GiB each": the least memory per accelerator at P's
/// count and the least count at P's memory, each found by running Try
/// (doubling, then bisection to 2%; at most 60 s, less under --time-limit).
std::string whatWouldFit(const std::string &Name, const CostGraph &G, const Platform &P,
                         const PartitionOptions &O, const Chain *C, const FitTrial &Try);

} // namespace onnxp

#endif // ONNXP_PARTITION_MEMORYFIT_H
