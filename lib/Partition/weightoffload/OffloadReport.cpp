//===- Partition/weightoffload/OffloadReport.cpp - A plan as its schedule -===//
//
// What `--algo offload-weights` puts in --report (issue item 6): the
// instance's thresholds, the cycle and its idle time, per layer the choices
// made and the idle time spent waiting before F_k and B_k, every transfer
// (layer, kind, bytes, stream = link direction, start, end, the op it serves)
// and, when computed, the §6 bound and the gap to it. It also carries what
// the simulator needs to replay the schedule (op starts, the state at the
// start of the iteration, op indices): the WeightOffloadSchedule that is
// Plan::schedule of `--algo offload-weights` (IR/ChainScheduleJson.cpp
// writes it as JSON).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"

#include "onnx-partition/IR/CostGraph.h"

using namespace onnxp;

WeightOffloadSchedule onnxp::weightOffloadScheduleOf(const OffloadInstance &I, const OffloadPlan &P,
                                                     const OffloadBound *B) {
  WeightOffloadSchedule S;
  S.algorithm = P.algorithm;
  S.layers = I.L;
  S.memoryBytes = I.memory;
  S.bandwidthBytesPerMs = I.bandwidth;
  S.minimumMemoryBytes = I.minimumMemory();
  S.noOffloadMemoryBytes = I.noOffloadMemory();
  S.computeMs = I.totalCompute();
  S.idleMs = P.idleTime;
  S.peakMemoryBytes = P.peakMemory;
  S.cutPoint = P.cut;
  if (B) S.bound = WeightOffloadBound{B->bound, B->optimal, B->bound > 0 ? P.cycleTime / B->bound - 1 : 0};
  for (int K = 1; K <= I.L; ++K)
    S.perLayer.push_back({I.w[K], P.selection.afterForward[K] != 0, P.selection.afterBackward[K] != 0,
                          P.idleBeforeF[K], P.idleBeforeB[K]});
  // The replay's inputs as the report has always carried them: the cycle
  // is the simulator's (P.cycleTime), the state at the start is 0 or 1 per
  // layer 1..L (entry 0 unused, 0).
  S.replay = P.schedule;
  S.replay.cycleTime = P.cycleTime;
  S.replay.residentAtStart.assign(I.L + 1, 0);
  S.replay.hostFreshAtStart.assign(I.L + 1, 0);
  for (int K = 1; K <= I.L; ++K) {
    S.replay.residentAtStart[K] = P.schedule.residentAtStart[K] != 0;
    S.replay.hostFreshAtStart[K] = P.schedule.hostFreshAtStart[K] != 0;
  }
  for (const OffloadTransfer &T : P.schedule.transfers)
    S.transferOps.push_back(T.forOp >= 0 ? I.opName(T.forOp) : "");
  for (const OffloadDrop &D : P.schedule.drops)
    S.dropAfter.push_back(D.afterOp >= 0 ? I.opName(D.afterOp) : "");
  return S;
}
