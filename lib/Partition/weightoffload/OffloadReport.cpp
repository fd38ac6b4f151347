//===- Partition/weightoffload/OffloadReport.cpp - A plan as report JSON --===//
//
// What `--algo offload-weights` puts in --report (issue item 6): the
// instance's thresholds, the cycle and its idle time, per layer the choices
// made and the idle time spent waiting before F_k and B_k, every transfer
// (layer, kind, bytes, stream = link direction, start, end, the op it serves)
// and, when computed, the §6 bound and the gap to it. It also carries what
// the simulator needs to replay the schedule (op starts, the state at the
// start of the iteration, op indices), so it is the Plan::schedule text of
// `--algo offload-weights` and parseOffloadScheduleJson reads it back.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"

#include "onnx-partition/IR/CostGraph.h"

#include <nlohmann/json.hpp>

using namespace onnxp;

std::string onnxp::offloadReportJson(const OffloadInstance &I, const OffloadPlan &P, const OffloadBound *B) {
  nlohmann::ordered_json J;
  J["algorithm"] = P.algorithm;
  J["layers"] = I.L;
  J["memoryBytes"] = I.memory;
  J["bandwidthBytesPerMs"] = I.bandwidth;
  J["minimumMemoryBytes"] = I.minimumMemory();
  J["noOffloadMemoryBytes"] = I.noOffloadMemory();
  J["computeMs"] = I.totalCompute();
  J["cycleMs"] = P.cycleTime;
  J["idleMs"] = P.idleTime;
  J["peakMemoryBytes"] = P.peakMemory;
  J["cutPoint"] = P.cut;
  if (B) {
    J["boundMs"] = B->bound;
    J["boundOptimal"] = B->optimal;
    J["gap"] = B->bound > 0 ? P.cycleTime / B->bound - 1 : 0;
  }
  nlohmann::ordered_json Layers = nlohmann::ordered_json::array();
  for (int K = 1; K <= I.L; ++K) {
    nlohmann::ordered_json L;
    L["layer"] = K;
    L["weightBytes"] = I.w[K];
    L["offloadAfterForward"] = (bool)P.selection.afterForward[K];
    L["offloadAfterBackward"] = (bool)P.selection.afterBackward[K];
    L["idleBeforeForwardMs"] = P.idleBeforeF[K];
    L["idleBeforeBackwardMs"] = P.idleBeforeB[K];
    Layers.push_back(L);
  }
  J["perLayer"] = Layers;
  nlohmann::ordered_json Tr = nlohmann::ordered_json::array();
  for (const OffloadTransfer &T : P.schedule.transfers) {
    nlohmann::ordered_json X;
    X["layer"] = T.layer;
    X["kind"] = transferKindName(T.kind);
    X["stream"] = T.kind == TransferKind::Prefetch ? "host->gpu" : "gpu->host";
    X["bytes"] = T.bytes;
    X["startMs"] = T.start;
    X["endMs"] = T.end;
    X["op"] = T.forOp >= 0 ? I.opName(T.forOp) : "";
    Tr.push_back(X);
  }
  J["transfers"] = Tr;
  nlohmann::ordered_json Drops = nlohmann::ordered_json::array();
  for (const OffloadDrop &D : P.schedule.drops)
    Drops.push_back({{"layer", D.layer},
                     {"timeMs", D.time},
                     {"after", D.afterOp >= 0 ? I.opName(D.afterOp) : ""},
                     {"afterIndex", D.afterOp}});
  J["drops"] = Drops;
  // The replay's inputs: ops in cycle order B_L..B_1, F_1..F_L.
  J["opStartMs"] = P.schedule.opStart;
  std::vector<int> Resident, Fresh;
  for (int K = 1; K <= I.L; ++K) {
    Resident.push_back(P.schedule.residentAtStart[K]);
    Fresh.push_back(P.schedule.hostFreshAtStart[K]);
  }
  J["residentAtStart"] = Resident;
  J["hostFreshAtStart"] = Fresh;
  for (size_t X = 0; X < P.schedule.transfers.size(); ++X)
    J["transfers"][X]["opIndex"] = P.schedule.transfers[X].forOp;
  return J.dump(2);
}
