//===- Partition/piper/PiperPartitioner.cpp - --algo piper ---------------===//
//
// The DP's plan leaves priced by the evaluator, never by the DP's own value
// (which is kept in PiperResult::dpValue for the check that they agree).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/piper/PiperPartitioner.h"

#include <chrono>
#include <cmath>

using namespace onnxp;

Error onnxp::partitionPiper(const PiperInstance &I, const PartitionOptions &O, PiperRun &Run) {
  PiperOptions PO;
  PO.deadline = O.deadline;
  PO.idealLimit = std::min<size_t>(O.idealLimit, PO.idealLimit);
  const auto Start = std::chrono::steady_clock::now();
  Expected<PiperResult> R = planPiper(I, PO);
  if (!R) return R.takeError();
  Run = PiperRun();
  Run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  Run.result = std::move(*R);
  if (Run.result.plan.stages.empty())
    return makeError("piper: no plan fits in ", I.maxMemoryPerDevice, " bytes per device with ", I.maxDevices,
                     " devices (every stage's least-memory TMPCs exceed it)");
  Expected<PiperPlanPrice> Price = pricePiperPlan(I, Run.result.plan);
  if (!Price) return makeInternalError("piper: the DP's plan is invalid: ", Price.takeError().message());
  Run.price = std::move(*Price);
  const double Dp = Run.result.dpValue, Ev = Run.price.timePerSample;
  if (!(std::fabs(Dp - Ev) <= 1e-9 * std::fabs(Ev)))
    return makeInternalError("piper: the DP's value ", Dp, " differs from its plan's price ", Ev);
  Run.baseline = piperEqualSplitBaseline(I, true);
  if (!Run.baseline.stages.empty())
    if (Expected<PiperPlanPrice> B = pricePiperPlan(I, Run.baseline)) Run.baselinePrice = std::move(*B);
  return Error::success();
}
