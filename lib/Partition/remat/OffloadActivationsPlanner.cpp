//===- Partition/remat/OffloadActivationsPlanner.cpp - The registry's view -===//
//
// `--algo offload-activations` (seed 001's DP) and `--algo rotor` (rotor's
// table, offloading off) as chain planners (Partitioners.def): memory M is
// the accelerator's, beta the platform's host link, N from --memory-steps
// (default 50, the paper's). The plan puts every block on accelerator 0 and
// carries the operation sequence as JSON in Plan::schedule; the price
// function parses it back and replays it with the independent simulator
// (eval/ActivationScheduleSimulator), which sets the objective (iteration
// time) and the memory peak.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/ActivationScheduleSimulator.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/Remat.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace onnxp;

namespace {

Expected<RematOptions> optionsFor(const Platform &P, const PartitionOptions &O, bool Offload) {
  RematOptions R;
  R.memoryBytes = P.accMemory();
  if (!std::isfinite(R.memoryBytes))
    return makeUsageError("offload-activations: the accelerator memory is unlimited; give --memory");
  Expected<long long> N = O.paramInt("memory-steps", 50);
  if (!N) return N.takeError();
  // Range-checked before the cast: 4294967297 must not wrap to 1 (issue 25).
  if (*N < 1 || *N > 100000) return makeUsageError("--memory-steps must be between 1 and 100000, got ", *N);
  R.memorySteps = int(*N);
  R.offload = Offload && O.paramString("no-offload", "") == "";
  R.bandwidthBytesPerSec = P.hostLinkBandwidth;
  return R;
}

std::string scheduleJson(const RematPlan &P, const RematOptions &O) {
  nlohmann::json J;
  J["kind"] = "activation-schedule";
  J["slot_bytes"] = P.slotBytes;
  J["budget_slots"] = P.budgetSlots;
  J["offload"] = P.offload;
  J["bandwidth_bytes_per_s"] = P.offload ? O.bandwidthBytesPerSec : 0.0;
  J["loss_ms"] = O.lossTimeMs;
  J["dp_makespan_ms"] = P.makespanMs;
  nlohmann::json Ops = nlohmann::json::array();
  for (const RematOp &Op : P.ops) {
    nlohmann::json E = nlohmann::json::array({rematOpName(Op.kind)});
    if (Op.kind == RematOpKind::Idle) E.push_back(Op.idleMs);
    else E.push_back(Op.layer);
    if (Op.stored) E.push_back("stored");
    Ops.push_back(E);
  }
  J["ops"] = Ops;
  return J.dump();
}

Expected<Plan> toPlan(const Chain &C, Expected<RematPlan> R, const RematOptions &O) {
  if (!R) return R.takeError();
  if (!R->feasible)
    return makeError("offload-activations: no schedule of '", C.name, "' fits in ", O.memoryBytes, " bytes (",
                     R->budgetSlots, " slots of ", R->slotBytes, " bytes)");
  Plan Pl;
  Pl.device.assign(C.size(), 0);
  Pl.stage.assign(C.size(), 0);
  Pl.lowerBound = rematLowerBoundMs(C, O);
  Pl.schedule = scheduleJson(*R, O);
  Pl.stats["dp_states"] = double(R->statesExplored);
  Pl.stats["offloaded_bytes"] = R->offloadedBytes;
  int Recomputed = 0;
  for (const RematLayerReport &L : R->layers) Recomputed += L.recomputations;
  Pl.stats["recomputations"] = Recomputed;
  Pl.notes.push_back(formatRematReport(C, *R));
  return Pl;
}

} // namespace

namespace onnxp {

Expected<Plan> partitionOffloadActivations(const Chain &C, const Platform &P, const PartitionOptions &O) {
  Expected<RematOptions> R = optionsFor(P, O, true);
  if (!R) return R.takeError();
  return toPlan(C, planOffloadRemat(C, *R), *R);
}

Expected<Plan> partitionRotor(const Chain &C, const Platform &P, const PartitionOptions &O) {
  Expected<RematOptions> R = optionsFor(P, O, false);
  if (!R) return R.takeError();
  return toPlan(C, planRotor(C, *R), *R);
}

Expected<ActivationScheduleText> parseActivationScheduleJson(const std::string &Text) {
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object() || J.value("kind", "") != "activation-schedule")
    return makeError("activation schedule: the plan's schedule is not an activation schedule");
  ActivationScheduleText S;
  RematPlan &R = S.plan;
  RematOptions &O = S.options;
  try {
    R.slotBytes = J.at("slot_bytes").get<double>();
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

/// Parses Plan::schedule and replays it; never reads the DP's own value.
static Expected<ActivationReplay> replayPlan(const Chain &C, const Platform &P, const Plan &Pl) {
  Expected<ActivationScheduleText> S = parseActivationScheduleJson(Pl.schedule);
  if (!S) return S.takeError();
  if (S->plan.budgetSlots * S->plan.slotBytes > P.accMemory() * (1 + 1e-12))
    return makeError("activation schedule: the schedule assumes more memory than the accelerator has");
  return replayActivationSchedule(C, S->options, S->plan);
}

Error priceActivationSchedule(const Chain &C, const Platform &P, Plan &Pl) {
  Expected<ActivationReplay> Rep = replayPlan(C, P, Pl);
  if (!Rep) return Rep.takeError();
  Pl.objective = Rep->makespanMs;
  if (Pl.usage.empty()) Pl.usage.resize(1);
  Pl.usage[0].memory = Rep->peakBytes;
  Pl.usage[0].load = Rep->makespanMs;
  return Error::success();
}

/// --trace: the simulator's replay (compute, idle, both link lanes, memory).
Error traceActivationSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace) {
  Expected<ActivationReplay> Rep = replayPlan(C, P, Pl);
  if (!Rep) return Rep.takeError();
  Trace = activationTrace(*Rep);
  return Error::success();
}

} // namespace onnxp
