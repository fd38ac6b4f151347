//===- Partition/eval/UniversalBound.h - A bound valid for any plan -*- C++ -*-===//
//
// Issue 11, item 6: every plan reports a lower bound that holds for *any*
// plan of its objective on the same graph and platform, contiguous or not,
// whichever algorithm made it. With min-time(v) the accelerator time, or
// the CPU time when that is smaller and there are CPUs (or the node cannot
// run on an accelerator):
//   work   = sum_v min-time(v) / (k + l)          every device is sequential
//   class  = max over colocation classes of min(acc time, cpu time)
//   path   = longest path of min-times             (latency, makespan)
//   max-load, gpipe: max(work, class); class is dropped with replicas
//     (a replicated class is spread over its replicas) -- gpipe splits a
//     class into its forward and backward parts, each at most its phase's
//     maximum, so the class bound still holds.
//   makespan (seed 003 emulator: every device runs one node at a time):
//     max(work, class, path).
//   latency (seed 004 §4: CPUs are a pool that never makes a node wait):
//     path, and max(work, class) when there are no CPUs.
// On a mixed platform of accelerators (no CPUs, no replicas) work is also
// bounded by the reference work over the devices' best-case capacity and by
// the dual of the LP relaxation of placing the colocation classes on the
// kinds (issue 21: T >= sum_i min_k lambda_k t_ik for any lambda >= 0 with
// sum_k n_k lambda_k = 1; UniversalBound.cpp kindDualBound).
// Transfers are left out (a plan may need none), so the bound is never
// above the optimum. Chain objectives (pipeline-period, iteration-time)
// have none here: NaN.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_EVAL_UNIVERSALBOUND_H
#define ONNXP_PARTITION_EVAL_UNIVERSALBOUND_H

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"

namespace onnxp {

/// The bound of the file comment for objective Obj (ms); NaN when Obj has
/// none. Replicate: plans may replicate stages (seed 004 App. C.2).
double universalBound(const CostGraph &G, const Platform &P, Objective Obj, bool Replicate);

/// One line saying what universalBound adds up, for notes and --help.
const char *universalBoundDescription(Objective Obj);

} // namespace onnxp

#endif // ONNXP_PARTITION_EVAL_UNIVERSALBOUND_H
