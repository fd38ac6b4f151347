//===- IR/ChainScheduleJson.cpp - Chain schedules to and from JSON --------===//
//
// See ChainScheduleJson.h. Each kind has a writer and a reader; the reader
// reads back everything the writer writes, so that plan -> JSON -> plan is
// the identity (ChainScheduleJsonTest). Numbers keep their C++ type (an int
// field is written as an integer, a double as a double), so a report is the
// same bytes whether its plan was made in this run or read back.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/ChainScheduleJson.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <stdexcept>
#include <type_traits>

using namespace onnxp;
using nlohmann::json;

namespace {

/// An int field: a JSON integer within int's range (nlohmann's get<int>
/// would convert 1e300 or 2^40 with undefined behaviour; these files may
/// be a user's).
int intOf(const json &J) {
  if (J.is_number_integer()) {
    const long long V = J.is_number_unsigned() && J.get<unsigned long long>() > (unsigned long long)INT_MAX
                            ? (long long)INT_MAX + 1
                            : J.get<long long>();
    if (V >= INT_MIN && V <= INT_MAX) return static_cast<int>(V);
  }
  throw std::invalid_argument("expected an integer (of at most 10 digits), got " + J.dump());
}

std::vector<int> intsOf(const json &J) {
  if (!J.is_array()) throw std::invalid_argument("expected a list of integers, got " + J.dump());
  std::vector<int> Out;
  for (const json &E : J) Out.push_back(intOf(E));
  return Out;
}

/// An int field that may be absent.
int intOr(const json &J, const char *Key, int Default) { return J.contains(Key) ? intOf(J[Key]) : Default; }

//===--- Periodic 1F1B pattern (pipeline-ilp, pipeline-pipedream) ---------===//

json patternJson(const PeriodicPattern &P) {
  json J;
  J["kind"] = chainScheduleKindName(ChainScheduleKind::Periodic1F1B);
  J["period_ms"] = P.period;
  J["bandwidth"] = P.bandwidth;
  J["gpus"] = P.numGpus;
  J["gpu_of_block"] = P.gpuOfBlock;
  J["task_start_ms"] = P.taskStart;
  J["task_delay"] = P.taskDelay;
  J["comm_start_ms"] = P.commStart;
  J["comm_delay"] = P.commDelay;
  return J;
}

bool isKind(const json &J, ChainScheduleKind K) {
  return J.is_object() && J.contains("kind") && J["kind"].is_string() &&
         J["kind"].get<std::string>() == chainScheduleKindName(K);
}

Expected<ChainSchedule> patternFromJson(const json &J) {
  if (!isKind(J, ChainScheduleKind::Periodic1F1B))
    return makeError("the plan's schedule is not a 1F1B pattern");
  PeriodicPattern P;
  try {
    P.period = J.at("period_ms").get<double>();
    P.bandwidth = J.at("bandwidth").get<double>();
    P.numGpus = intOf(J.at("gpus"));
    P.gpuOfBlock = intsOf(J.at("gpu_of_block"));
    P.taskStart = J.at("task_start_ms").get<std::vector<double>>();
    P.taskDelay = intsOf(J.at("task_delay"));
    P.commStart = J.at("comm_start_ms").get<std::vector<double>>();
    P.commDelay = intsOf(J.at("comm_delay"));
  } catch (const std::exception &E) { return makeError("the plan's 1F1B pattern is malformed: ", E.what()); }
  const size_t L = P.gpuOfBlock.size();
  if (L == 0 || P.taskStart.size() != 2 * L || P.taskDelay.size() != 2 * L ||
      P.commStart.size() != 2 * L - 1 || P.commDelay.size() != 2 * L - 1)
    return makeError("the plan's 1F1B pattern is malformed: ", L, " blocks need ", 2 * L,
                     " task starts and delays and ", L == 0 ? 0 : 2 * L - 1,
                     " communication starts and delays");
  return ChainSchedule(std::move(P));
}

//===--- PipeDream's replicated stages (pipeline-pipedream --replicate) ---===//

json replicatedJson(const ReplicatedSchedule &R) {
  json J;
  J["kind"] = chainScheduleKindName(ChainScheduleKind::Replicated);
  J["bandwidth"] = R.bandwidth;
  J["latency_ms"] = R.latencyMs;
  json Stages = json::array();
  for (const ReplicatedStage &S : R.stages)
    Stages.push_back({{"replicas", S.replicas}, {"devices", S.devices}});
  J["stages"] = Stages;
  return J;
}

Expected<ChainSchedule> replicatedFromJson(const json &J) {
  if (!isKind(J, ChainScheduleKind::Replicated))
    return makeError("the plan's schedule is not a replicated pipeline");
  ReplicatedSchedule R;
  try {
    R.bandwidth = J.at("bandwidth").get<double>();
    R.latencyMs = J.at("latency_ms").get<double>();
    for (const json &S : J.at("stages")) {
      ReplicatedStage RS;
      RS.replicas = intOf(S.at("replicas"));
      RS.devices = intsOf(S.at("devices"));
      R.stages.push_back(std::move(RS));
    }
  } catch (const std::exception &E) {
    return makeError("the plan's replicated pipeline is malformed: ", E.what());
  }
  return ChainSchedule(std::move(R));
}

//===--- Weight offloading (offload-weights, seed 002) --------------------===//

json transfersJson(const WeightOffloadSchedule &S) {
  json Tr = json::array();
  for (size_t X = 0; X < S.replay.transfers.size(); ++X) {
    const OffloadTransfer &T = S.replay.transfers[X];
    Tr.push_back({{"layer", T.layer},
                  {"kind", transferKindName(T.kind)},
                  {"stream", T.kind == TransferKind::Prefetch ? "host->gpu" : "gpu->host"},
                  {"bytes", T.bytes},
                  {"startMs", T.start},
                  {"endMs", T.end},
                  {"op", X < S.transferOps.size() ? S.transferOps[X] : ""},
                  {"opIndex", T.forOp}});
  }
  return Tr;
}

json weightOffloadJson(const WeightOffloadSchedule &S) {
  json J;
  J["algorithm"] = S.algorithm;
  J["layers"] = S.layers;
  J["memoryBytes"] = S.memoryBytes;
  J["bandwidthBytesPerMs"] = S.bandwidthBytesPerMs;
  J["minimumMemoryBytes"] = S.minimumMemoryBytes;
  J["noOffloadMemoryBytes"] = S.noOffloadMemoryBytes;
  J["computeMs"] = S.computeMs;
  J["cycleMs"] = S.replay.cycleTime;
  J["idleMs"] = S.idleMs;
  J["peakMemoryBytes"] = S.peakMemoryBytes;
  J["cutPoint"] = S.cutPoint;
  if (S.bound) {
    J["boundMs"] = S.bound->boundMs;
    J["boundOptimal"] = S.bound->optimal;
    J["gap"] = S.bound->gap;
  }
  json Layers = json::array();
  for (size_t K = 0; K < S.perLayer.size(); ++K) {
    const WeightOffloadLayer &L = S.perLayer[K];
    Layers.push_back({{"layer", (int)K + 1},
                      {"weightBytes", L.weightBytes},
                      {"offloadAfterForward", L.offloadAfterForward},
                      {"offloadAfterBackward", L.offloadAfterBackward},
                      {"idleBeforeForwardMs", L.idleBeforeForwardMs},
                      {"idleBeforeBackwardMs", L.idleBeforeBackwardMs}});
  }
  J["perLayer"] = Layers;
  J["transfers"] = transfersJson(S);
  json Drops = json::array();
  for (size_t X = 0; X < S.replay.drops.size(); ++X) {
    const OffloadDrop &D = S.replay.drops[X];
    Drops.push_back({{"layer", D.layer},
                     {"timeMs", D.time},
                     {"after", X < S.dropAfter.size() ? S.dropAfter[X] : ""},
                     {"afterIndex", D.afterOp}});
  }
  J["drops"] = Drops;
  // The replay's inputs: ops in cycle order B_L..B_1, F_1..F_L; the state
  // at the start per layer 1..L.
  J["opStartMs"] = S.replay.opStart;
  std::vector<int> Resident, Fresh;
  for (size_t K = 1; K < S.replay.residentAtStart.size(); ++K)
    Resident.push_back(S.replay.residentAtStart[K]);
  for (size_t K = 1; K < S.replay.hostFreshAtStart.size(); ++K) Fresh.push_back(S.replay.hostFreshAtStart[K]);
  J["residentAtStart"] = Resident;
  J["hostFreshAtStart"] = Fresh;
  return J;
}

/// The replay's part: cycle, op starts, state at the start, transfers, drops.
Error readOffloadReplay(const json &J, WeightOffloadSchedule &S) {
  OffloadSchedule &R = S.replay;
  R.cycleTime = J.at("cycleMs").get<double>();
  R.opStart = J.at("opStartMs").get<std::vector<double>>();
  std::vector<int> Resident = intsOf(J.at("residentAtStart"));
  std::vector<int> Fresh = intsOf(J.at("hostFreshAtStart"));
  const size_t L = Resident.size();
  if (Fresh.size() != L || R.opStart.size() != 2 * L)
    return makeError("offload schedule: residentAtStart has ", L, " layers, hostFreshAtStart ", Fresh.size(),
                     ", opStartMs ", R.opStart.size(), " ops (2 per layer)");
  R.residentAtStart.assign(L + 1, 0);
  R.hostFreshAtStart.assign(L + 1, 0);
  for (size_t K = 1; K <= L; ++K) {
    R.residentAtStart[K] = Resident[K - 1] != 0;
    R.hostFreshAtStart[K] = Fresh[K - 1] != 0;
  }
  for (const json &T : J.at("transfers")) {
    OffloadTransfer X;
    X.layer = intOf(T.at("layer"));
    std::string Kind = T.at("kind").get<std::string>();
    if (Kind == "prefetch") X.kind = TransferKind::Prefetch;
    else if (Kind == "offload") X.kind = TransferKind::Offload;
    else if (Kind == "upload") X.kind = TransferKind::Upload;
    else return makeError("offload schedule: unknown transfer kind '", Kind, "'");
    X.start = T.at("startMs").get<double>();
    X.end = T.at("endMs").get<double>();
    X.bytes = T.at("bytes").get<double>();
    X.forOp = intOr(T, "opIndex", -1);
    R.transfers.push_back(X);
    S.transferOps.push_back(T.value("op", std::string()));
  }
  for (const json &D : J.at("drops")) {
    R.drops.push_back({intOf(D.at("layer")), D.at("timeMs").get<double>(), intOr(D, "afterIndex", -1)});
    S.dropAfter.push_back(D.value("after", std::string()));
  }
  return Error::success();
}

/// The report's part: thresholds, per-layer choices and idle, the bound.
/// Absent fields keep their defaults (they are not replayed).
void readOffloadReport(const json &J, WeightOffloadSchedule &S) {
  S.algorithm = J.value("algorithm", std::string());
  S.layers = intOr(J, "layers", (int)S.replay.residentAtStart.size() - 1);
  S.memoryBytes = J.value("memoryBytes", 0.0);
  S.bandwidthBytesPerMs = J.value("bandwidthBytesPerMs", 0.0);
  S.minimumMemoryBytes = J.value("minimumMemoryBytes", 0.0);
  S.noOffloadMemoryBytes = J.value("noOffloadMemoryBytes", 0.0);
  S.computeMs = J.value("computeMs", 0.0);
  S.idleMs = J.value("idleMs", 0.0);
  S.peakMemoryBytes = J.value("peakMemoryBytes", 0.0);
  S.cutPoint = intOr(J, "cutPoint", 0);
  if (J.contains("boundMs"))
    S.bound = WeightOffloadBound{J.at("boundMs").get<double>(), J.value("boundOptimal", false),
                                 J.value("gap", 0.0)};
  if (J.contains("perLayer"))
    for (const json &L : J.at("perLayer"))
      S.perLayer.push_back({L.value("weightBytes", 0.0), L.value("offloadAfterForward", false),
                            L.value("offloadAfterBackward", false), L.value("idleBeforeForwardMs", 0.0),
                            L.value("idleBeforeBackwardMs", 0.0)});
}

Expected<ChainSchedule> weightOffloadFromJson(const json &J) {
  if (!J.is_object()) return makeError("offload schedule: not a JSON object");
  WeightOffloadSchedule S;
  try {
    ONNXP_RETURN_IF_ERROR(readOffloadReplay(J, S));
    readOffloadReport(J, S);
  } catch (const std::exception &Ex) { return makeError("offload schedule: ", Ex.what()); }
  return ChainSchedule(std::move(S));
}

//===--- Activation schedule (offload-activations, rotor; seed 001) -------===//

json activationJson(const ActivationSchedule &S) {
  json J;
  J["kind"] = chainScheduleKindName(ChainScheduleKind::Activation);
  J["resident_bytes"] = S.residentBytes;
  J["slot_bytes"] = S.slotBytes;
  J["budget_slots"] = S.budgetSlots;
  J["offload"] = S.offload;
  J["bandwidth_bytes_per_s"] = S.bandwidthBytesPerSec;
  J["loss_ms"] = S.lossMs;
  J["dp_makespan_ms"] = S.dpMakespanMs;
  json Ops = json::array();
  for (const RematOp &Op : S.ops) {
    json E = json::array({rematOpName(Op.kind)});
    if (Op.kind == RematOpKind::Idle) E.push_back(Op.idleMs);
    else E.push_back(Op.layer);
    if (Op.stored) E.push_back("stored");
    Ops.push_back(E);
  }
  J["ops"] = Ops;
  return J;
}

Expected<RematOp> rematOpFromJson(const json &E) {
  RematOp Op;
  std::string Name = E.at(0).get<std::string>();
  bool Found = false;
  for (RematOpKind K :
       {RematOpKind::ForwardAll, RematOpKind::ForwardCheck, RematOpKind::ForwardNoGrad, RematOpKind::Loss,
        RematOpKind::Backward, RematOpKind::Offload, RematOpKind::Prefetch, RematOpKind::Idle})
    if (Name == rematOpName(K)) Op.kind = K, Found = true;
  if (!Found) return makeError("activation schedule: unknown operation '", Name, "'");
  if (Op.kind == RematOpKind::Idle) Op.idleMs = E.at(1).get<double>();
  else Op.layer = intOf(E.at(1));
  Op.stored = E.size() > 2;
  return Op;
}

Expected<ChainSchedule> activationFromJson(const json &J) {
  if (!isKind(J, ChainScheduleKind::Activation))
    return makeError("activation schedule: the plan's schedule is not an activation schedule");
  ActivationSchedule S;
  try {
    S.slotBytes = J.at("slot_bytes").get<double>();
    S.residentBytes = J.value("resident_bytes", 0.0);
    S.budgetSlots = intOf(J.at("budget_slots"));
    S.offload = J.at("offload").get<bool>();
    S.bandwidthBytesPerSec = J.at("bandwidth_bytes_per_s").get<double>();
    S.lossMs = J.at("loss_ms").get<double>();
    // The DP's own value is reported, never replayed (null: not finite).
    if (J.contains("dp_makespan_ms") && J["dp_makespan_ms"].is_number())
      S.dpMakespanMs = J["dp_makespan_ms"].get<double>();
    for (const json &E : J.at("ops")) {
      Expected<RematOp> Op = rematOpFromJson(E);
      if (!Op) return Op.takeError();
      S.ops.push_back(*Op);
    }
  } catch (const std::exception &Ex) {
    return makeError("activation schedule: malformed schedule: ", Ex.what());
  }
  return ChainSchedule(std::move(S));
}

} // namespace

// ChainScheduleKind follows the variant's order (chainScheduleKind casts
// the index).
static_assert(std::is_same_v<std::variant_alternative_t<1, ChainSchedule>, PeriodicPattern>);
static_assert(std::is_same_v<std::variant_alternative_t<2, ChainSchedule>, ReplicatedSchedule>);
static_assert(std::is_same_v<std::variant_alternative_t<3, ChainSchedule>, WeightOffloadSchedule>);
static_assert(std::is_same_v<std::variant_alternative_t<4, ChainSchedule>, ActivationSchedule>);

json onnxp::chainScheduleToJson(const ChainSchedule &S) {
  switch (chainScheduleKind(S)) {
  case ChainScheduleKind::None: return json(nullptr);
  case ChainScheduleKind::Periodic1F1B: return patternJson(std::get<PeriodicPattern>(S));
  case ChainScheduleKind::Replicated: return replicatedJson(std::get<ReplicatedSchedule>(S));
  case ChainScheduleKind::WeightOffload: return weightOffloadJson(std::get<WeightOffloadSchedule>(S));
  case ChainScheduleKind::Activation: return activationJson(std::get<ActivationSchedule>(S));
  }
  return json(nullptr);
}

std::optional<ChainScheduleKind> onnxp::chainScheduleKindOf(const json &J) {
  if (J.is_null()) return ChainScheduleKind::None;
  if (!J.is_object()) return std::nullopt;
  for (ChainScheduleKind K :
       {ChainScheduleKind::Periodic1F1B, ChainScheduleKind::Replicated, ChainScheduleKind::Activation})
    if (isKind(J, K)) return K;
  if (!J.contains("kind") && J.contains("opStartMs") && J.contains("transfers"))
    return ChainScheduleKind::WeightOffload;
  return std::nullopt;
}

Expected<ChainSchedule> onnxp::parseChainSchedule(ChainScheduleKind K, const json &J) {
  switch (K) {
  case ChainScheduleKind::None:
    if (!J.is_null())
      return makeError("a plan without a chain schedule has schedule ", J.dump(), "; expected null");
    return ChainSchedule();
  case ChainScheduleKind::Periodic1F1B: return patternFromJson(J);
  case ChainScheduleKind::Replicated: return replicatedFromJson(J);
  case ChainScheduleKind::WeightOffload: return weightOffloadFromJson(J);
  case ChainScheduleKind::Activation: return activationFromJson(J);
  }
  return makeInternalError("unknown chain schedule kind");
}

Expected<ChainSchedule> onnxp::parseChainSchedule(ChainScheduleKind K, const std::string &Text) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded()) return makeError("the ", chainScheduleKindName(K), " schedule is not JSON");
  return parseChainSchedule(K, J);
}
