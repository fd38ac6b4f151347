//===- Partition/eval/PiperEvaluator.h - A Piper plan's time per sample -*- C++ -*-===//
//
// Prices a plan of Piper's problem from the plan alone, independently of
// the DP (as Piper's getTPSForResult checks its runDP): stage i with d_i,
// t_i holds y_i = ceil((d_i + ... + d_last) / d_i) micro-batches; its time
// per sample is (boundary bytes / d_i + resync bytes) / bandwidth + compute
// / d_i, with boundary bytes 2 (c(u,v) + c^fw or c^bw) per edge leaving the
// stage and resync 4 (d_i - 1) w / d_i / N per layer (PipeDream's parameter
// server all-reduce, as algo.cpp models it).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_EVAL_PIPEREVALUATOR_H
#define ONNXP_PARTITION_EVAL_PIPEREVALUATOR_H

#include "onnx-partition/IR/PiperInstance.h"
#include "onnx-partition/Support/Error.h"

namespace onnxp {

struct PiperStagePrice {
  double timePerSample = 0; ///< seconds per sample
  double memory = 0;        ///< bytes per device at y
  int inFlight = 0;         ///< y
  bool fits = false;
};

struct PiperPlanPrice {
  double timePerSample = 0; ///< the slowest stage; +inf when a stage does not fit
  int devices = 0;          ///< sum of d t
  int sumDataParallel = 0;  ///< sum of d
  std::vector<PiperStagePrice> stages;
};

/// An error when the plan is malformed (a layer twice or missing, stages out
/// of topological order, a d not dividing N, too many devices, a TMPC the
/// layer lacks); +inf time when some stage exceeds the memory.
Expected<PiperPlanPrice> pricePiperPlan(const PiperInstance &I, const PiperPlan &P);

} // namespace onnxp

#endif // ONNXP_PARTITION_EVAL_PIPEREVALUATOR_H
