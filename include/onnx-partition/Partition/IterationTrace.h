//===- Partition/IterationTrace.h - One iteration as a Chrome trace -*- C++ -*-===//
//
// --trace of a plan priced by the iteration simulator (issue 33): the
// replay of IterationSimulator.h drawn in Support/ChromeTrace.h's format,
// one process per accelerator ("acc3: stage 1 replica 0"), lane "compute"
// with F<m> and B<m> of each micro-batch it runs, then its optimizer step,
// lane "all-reduce" with its stage's gradient all-reduce. Times are the
// simulator's (an op starts at its end minus its stage's time).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_ITERATIONTRACE_H
#define ONNXP_PARTITION_ITERATIONTRACE_H

#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/IterationSimulator.h"
#include "onnx-partition/Support/ChromeTrace.h"

#include <vector>

namespace onnxp {

/// The trace of Price, the simulator's replay of Stages under R. Shards[s]
/// > 1 (issue 34, piper's tensor parallelism): each replica of stage s is
/// that many accelerators from its device on, each drawn ("shard k of t")
/// with the replica's timeline.
ChromeTrace traceIteration(const std::vector<IterationStage> &Stages, const Platform &P,
                           const IterationRequest &R, const IterationPrice &Price,
                           const std::vector<int> &Shards = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_ITERATIONTRACE_H
