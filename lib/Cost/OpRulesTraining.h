//===- Cost/OpRulesTraining.h - Rules for training ops and gradients -*- C++ -*-===//
//
// Private to lib/Cost. ONNX Runtime's gradient builder emits contrib ops
// (com.microsoft ConvGrad, ReluGrad, SoftmaxGrad_13, InPlaceAccumulatorV2,
// ...) whose cost follows from their forward counterpart; OpRules.cpp merges
// these rules into its table.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_COST_OPRULESTRAINING_H
#define ONNXP_LIB_COST_OPRULESTRAINING_H

#include "onnx-partition/Cost/OpWork.h"

#include <string>
#include <vector>

namespace onnxp::cost {

struct TrainingRule {
  std::string op;
  std::string rule;
  void (*fn)(const OpShapes &, OpWork &);
};

/// Rules for the ONNX Runtime training ops.
const std::vector<TrainingRule> &trainingRules();

/// For an op named "<Fwd>Grad" or "<Fwd>Grad_<n>" without a rule of its own
/// whose forward op <Fwd> has one: prices it as twice the forward op's FLOPs,
/// evaluated with the gradient's outputs as the forward inputs (dX has X's
/// shape) and its input 0 as the forward output (dY has Y's shape). Returns
/// false when the name does not have that form.
bool deriveUnknownGradOp(const OpShapes &S, OpWork &W);

} // namespace onnxp::cost

#endif // ONNXP_LIB_COST_OPRULESTRAINING_H
