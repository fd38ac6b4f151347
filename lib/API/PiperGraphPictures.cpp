//===- API/PiperGraphPictures.cpp - --dot and --trace of a piper plan ----===//
//
// See PiperGraphPictures.h.
//
//===----------------------------------------------------------------------===//
#include "PiperGraphPictures.h"

#include "onnx-partition/Partition/IterationTrace.h"

using namespace onnxp;

std::string onnxp::piperGraphDot(const CostGraph &G, const PiperGraphRun &Run, const PiperGraphPlan &Pl,
                                 const Platform &P, DotOptions O) {
  Plan Drawn;
  Drawn.algorithm = "piper";
  Drawn.objectiveKind = Objective::Iteration;
  Drawn.objective = Pl.price.iterationMs;
  Drawn.device.assign(G.numNodes(), -1);
  Drawn.stage.assign(G.numNodes(), -1);
  O.stageNotes.clear();
  for (size_t S = 0; S < Pl.stages.size(); ++S) {
    const PiperGraphStage &St = Pl.stages[S];
    int Recomputed = 0;
    for (size_t Q = 0; Q < St.layers.size(); ++Q) {
      Recomputed += Q < St.recompute.size() && St.recompute[Q];
      for (int V : Run.layers[St.layers[Q]].nodes) {
        Drawn.device[V] = St.firstDevice;
        Drawn.stage[V] = static_cast<int>(S);
      }
    }
    const int Last = St.firstDevice + St.dataParallel * St.tensorParallel - 1;
    O.stageNotes.push_back("PP " + std::to_string(S + 1) + "/" + std::to_string(Pl.stages.size()) + " x DP " +
                           std::to_string(St.dataParallel) + " x TP " + std::to_string(St.tensorParallel) +
                           " on " + P.deviceName(St.firstDevice) +
                           (Last > St.firstDevice ? "-" + P.deviceName(Last) : "") + ", " +
                           std::to_string(St.layers.size()) + (St.layers.size() == 1 ? " layer" : " layers") +
                           ", " + std::to_string(Recomputed) + " recomputed");
  }
  return planToDot(G, Drawn, P, O);
}

Expected<std::string> onnxp::piperGraphTrace(const PiperGraphRun &Run, const PiperGraphPlan &Pl,
                                             const Platform &P, const PiperGraphOptions &PO) {
  Expected<std::vector<IterationStage>> Stages = piperGraphIterationStages(Run.layers, Pl.stages, P, PO);
  if (!Stages) return Stages.takeError().withContext("--trace");
  const IterationRequest Req = piperGraphIterationRequest(PO); // as the plan was priced
  Expected<IterationPrice> Price = simulateIteration(*Stages, P, Req);
  if (!Price) return Price.takeError().withContext("--trace");
  std::vector<int> Shards;
  for (const PiperGraphStage &St : Pl.stages) Shards.push_back(St.tensorParallel);
  return traceIteration(*Stages, P, Req, *Price, Shards).toJson();
}
