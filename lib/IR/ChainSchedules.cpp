//===- IR/ChainSchedules.cpp - The schedules of the chain planners --------===//
//
// See ChainSchedules.h: the names of the operations and transfers, and the
// JSON readers of the two chain schedules.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/ChainSchedules.h"

#include <nlohmann/json.hpp>

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

Expected<ActivationScheduleText> onnxp::parseActivationScheduleJson(const std::string &Text) {
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object() || J.value("kind", "") != "activation-schedule")
    return makeError("activation schedule: the plan's schedule is not an activation schedule");
  ActivationScheduleText S;
  RematPlan &R = S.plan;
  RematOptions &O = S.options;
  try {
    R.slotBytes = J.at("slot_bytes").get<double>();
    S.residentBytes = J.value("resident_bytes", 0.0);
    R.budgetSlots = J.at("budget_slots").get<int>();
    R.offload = J.at("offload").get<bool>();
    O.bandwidthBytesPerSec = J.at("bandwidth_bytes_per_s").get<double>();
    O.lossTimeMs = J.at("loss_ms").get<double>();
    for (const auto &E : J.at("ops")) {
      RematOp Op;
      std::string Name = E.at(0).get<std::string>();
      bool Found = false;
      for (RematOpKind K :
           {RematOpKind::ForwardAll, RematOpKind::ForwardCheck, RematOpKind::ForwardNoGrad, RematOpKind::Loss,
            RematOpKind::Backward, RematOpKind::Offload, RematOpKind::Prefetch, RematOpKind::Idle})
        if (Name == rematOpName(K)) Op.kind = K, Found = true;
      if (!Found) return makeError("activation schedule: unknown operation '", Name, "'");
      if (Op.kind == RematOpKind::Idle) Op.idleMs = E.at(1).get<double>();
      else Op.layer = E.at(1).get<int>();
      Op.stored = E.size() > 2;
      R.ops.push_back(Op);
    }
  } catch (const std::exception &Ex) {
    return makeError("activation schedule: malformed schedule: ", Ex.what());
  }
  O.offload = R.offload;
  R.feasible = true;
  return S;
}

const char *onnxp::transferKindName(TransferKind K) {
  switch (K) {
  case TransferKind::Prefetch: return "prefetch";
  case TransferKind::Offload: return "offload";
  case TransferKind::Upload: return "upload";
  }
  return "?";
}

Expected<OffloadSchedule> onnxp::parseOffloadScheduleJson(const std::string &Text, int L) {
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object()) return makeError("offload schedule: not a JSON object");
  OffloadSchedule S;
  try {
    S.cycleTime = J.at("cycleMs").get<double>();
    S.opStart = J.at("opStartMs").get<std::vector<double>>();
    std::vector<int> Resident = J.at("residentAtStart").get<std::vector<int>>();
    std::vector<int> Fresh = J.at("hostFreshAtStart").get<std::vector<int>>();
    if ((int)S.opStart.size() != 2 * L || (int)Resident.size() != L || (int)Fresh.size() != L)
      return makeError("offload schedule: made for ", Resident.size(), " layers, the chain has ", L);
    S.residentAtStart.assign(L + 1, 0);
    S.hostFreshAtStart.assign(L + 1, 0);
    for (int K = 1; K <= L; ++K) {
      S.residentAtStart[K] = Resident[K - 1] != 0;
      S.hostFreshAtStart[K] = Fresh[K - 1] != 0;
    }
    for (const nlohmann::json &T : J.at("transfers")) {
      OffloadTransfer X;
      X.layer = T.at("layer").get<int>();
      std::string Kind = T.at("kind").get<std::string>();
      if (Kind == "prefetch") X.kind = TransferKind::Prefetch;
      else if (Kind == "offload") X.kind = TransferKind::Offload;
      else if (Kind == "upload") X.kind = TransferKind::Upload;
      else return makeError("offload schedule: unknown transfer kind '", Kind, "'");
      X.start = T.at("startMs").get<double>();
      X.end = T.at("endMs").get<double>();
      X.bytes = T.at("bytes").get<double>();
      X.forOp = T.value("opIndex", -1);
      S.transfers.push_back(X);
    }
    for (const nlohmann::json &D : J.at("drops"))
      S.drops.push_back({D.at("layer").get<int>(), D.at("timeMs").get<double>(), D.value("afterIndex", -1)});
  } catch (const std::exception &Ex) { return makeError("offload schedule: ", Ex.what()); }
  return S;
}
