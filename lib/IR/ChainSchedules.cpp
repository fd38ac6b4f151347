//===- IR/ChainSchedules.cpp - The schedules of the chain planners --------===//
//
// See ChainSchedules.h: the names of the operations and transfers, and what
// the schedules' consumers derive from them. Their JSON is
// ChainScheduleJson.cpp's.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/ChainSchedules.h"

#include <set>

using namespace onnxp;

const char *onnxp::rematOpName(RematOpKind K) {
  switch (K) {
  case RematOpKind::ForwardAll: return "F_all";
  case RematOpKind::ForwardCheck: return "F_ck";
  case RematOpKind::ForwardNoGrad: return "F_nograd";
  case RematOpKind::Loss: return "Loss";
  case RematOpKind::Backward: return "B";
  case RematOpKind::Offload: return "Offload";
  case RematOpKind::Prefetch: return "Prefetch";
  case RematOpKind::Idle: return "Idle";
  }
  return "?";
}

RematPlan ActivationSchedule::rematPlan() const {
  RematPlan R;
  R.feasible = true;
  R.slotBytes = slotBytes;
  R.budgetSlots = budgetSlots;
  R.offload = offload;
  R.ops = ops;
  return R;
}

RematOptions ActivationSchedule::rematOptions() const {
  RematOptions O;
  O.bandwidthBytesPerSec = bandwidthBytesPerSec;
  O.lossTimeMs = lossMs;
  O.offload = offload;
  return O;
}

const char *onnxp::transferKindName(TransferKind K) {
  switch (K) {
  case TransferKind::Prefetch: return "prefetch";
  case TransferKind::Offload: return "offload";
  case TransferKind::Upload: return "upload";
  }
  return "?";
}

Error onnxp::checkWeightOffloadLayers(const WeightOffloadSchedule &S, int L) {
  const OffloadSchedule &R = S.replay;
  if ((int)R.opStart.size() != 2 * L || (int)R.residentAtStart.size() != L + 1 ||
      (int)R.hostFreshAtStart.size() != L + 1)
    return makeError("offload schedule: made for ",
                     R.residentAtStart.empty() ? 0 : R.residentAtStart.size() - 1, " layers, the chain has ",
                     L);
  return Error::success();
}

int PeriodicPattern::usedGpus() const {
  return static_cast<int>(std::set<int>(gpuOfBlock.begin(), gpuOfBlock.end()).size());
}

ChainScheduleKind onnxp::chainScheduleKind(const ChainSchedule &S) {
  // The enum follows the variant's order.
  return static_cast<ChainScheduleKind>(S.index());
}

const char *onnxp::chainScheduleKindName(ChainScheduleKind K) {
  switch (K) {
  case ChainScheduleKind::None: return "none";
  case ChainScheduleKind::Periodic1F1B: return "1f1b-periodic";
  case ChainScheduleKind::Replicated: return "pipedream-replicated";
  case ChainScheduleKind::WeightOffload: return "weight-offload";
  case ChainScheduleKind::Activation: return "activation-schedule";
  }
  return "?";
}
