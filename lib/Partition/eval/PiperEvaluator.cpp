//===- Partition/eval/PiperEvaluator.cpp - A Piper plan's time per sample ===//
//
// Written from the paper's §3 cost model, stage by stage, without any of the
// DP's tables: the check that the DP's value is the value of its plan.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/PiperEvaluator.h"

#include <limits>

using namespace onnxp;

namespace {
/// Where each layer runs: its stage and, within it, its TMPC.
struct Placement {
  std::vector<int> stage;
  std::vector<const PiperTmpc *> tmpc;
};

Expected<Placement> place(const PiperInstance &I, const PiperPlan &P) {
  const size_t N = I.layers.size();
  Placement Pl{std::vector<int>(N, -1), std::vector<const PiperTmpc *>(N, nullptr)};
  for (size_t S = 0; S < P.stages.size(); ++S) {
    const PiperStage &St = P.stages[S];
    if (St.tmpc.size() != St.layers.size())
      return makeError("Piper plan: stage ", S, " has ", St.layers.size(), " layers and ", St.tmpc.size(),
                       " TMPC choices");
    if (St.dataParallel < 1 || St.tensorParallel < 1)
      return makeError("Piper plan: stage ", S, " has a degree below 1");
    if (I.mbsInBatch % St.dataParallel != 0)
      return makeError("Piper plan: stage ", S, "'s data-parallel degree ", St.dataParallel,
                       " does not divide the ", I.mbsInBatch, " micro-batches");
    for (size_t Q = 0; Q < St.layers.size(); ++Q) {
      const int V = St.layers[Q];
      if (V < 0 || static_cast<size_t>(V) >= N) return makeError("Piper plan: no layer ", V);
      if (Pl.stage[V] >= 0) return makeError("Piper plan: layer ", I.layers[V].fileId, " in two stages");
      auto It = I.layers[V].tmpcs.find(St.tensorParallel);
      if (It == I.layers[V].tmpcs.end() || St.tmpc[Q] < 0 ||
          static_cast<size_t>(St.tmpc[Q]) >= It->second.size())
        return makeError("Piper plan: layer ", I.layers[V].fileId, " has no TMPC ", St.tmpc[Q],
                         " at t = ", St.tensorParallel);
      Pl.stage[V] = static_cast<int>(S);
      Pl.tmpc[V] = &It->second[St.tmpc[Q]];
    }
  }
  for (size_t V = 0; V < N; ++V)
    if (Pl.stage[V] < 0) return makeError("Piper plan: layer ", I.layers[V].fileId, " is in no stage");
  for (const PiperEdge &E : I.edges)
    if (Pl.stage[E.from] > Pl.stage[E.to])
      return makeError("Piper plan: edge ", I.layers[E.from].fileId, " -> ", I.layers[E.to].fileId,
                       " goes back from stage ", Pl.stage[E.from], " to stage ", Pl.stage[E.to]);
  return Pl;
}
} // namespace

Expected<PiperPlanPrice> onnxp::pricePiperPlan(const PiperInstance &I, const PiperPlan &P) {
  if (P.stages.empty()) return makeError("Piper plan: no stages");
  Expected<Placement> Pl = place(I, P);
  if (!Pl) return Pl.takeError();
  PiperPlanPrice R;
  for (const PiperStage &St : P.stages) {
    R.devices += St.dataParallel * St.tensorParallel;
    R.sumDataParallel += St.dataParallel;
  }
  if (R.devices > I.maxDevices)
    return makeError("Piper plan: uses ", R.devices, " devices, ", I.maxDevices, " available");
  if (R.sumDataParallel > I.mbsInBatch)
    return makeError("Piper plan: the data-parallel degrees add up to ", R.sumDataParallel, ", above the ",
                     I.mbsInBatch, " micro-batches");
  int Suffix = R.sumDataParallel;
  for (size_t S = 0; S < P.stages.size(); ++S) {
    const PiperStage &St = P.stages[S];
    const int D = St.dataParallel;
    PiperStagePrice SP;
    SP.inFlight = (Suffix + D - 1) / D; // §3: micro-batches in flight under 1F1B-style weight stashing
    Suffix -= D;
    double Compute = 0, Boundary = 0, Resync = 0;
    for (int V : St.layers) {
      const PiperTmpc &C = *Pl->tmpc[V];
      Compute += C.timePerSample;
      for (const PiperEdge &E : I.edges) {
        if (E.to == V && Pl->stage[E.from] != static_cast<int>(S))
          Boundary += 2 * (E.bytes + C.syncFw.at(E.from));
        if (E.from == V && Pl->stage[E.to] != static_cast<int>(S))
          Boundary += 2 * (E.bytes + C.syncBw.at(E.to));
      }
      Resync += 4.0 * (D - 1) * C.parameterSize / D / I.mbsInBatch;
      SP.memory += C.memoryA * SP.inFlight + C.memoryB;
    }
    SP.fits = SP.memory <= I.maxMemoryPerDevice;
    SP.timePerSample = (Boundary / D + Resync) / I.bandwidth + Compute / D;
    R.timePerSample =
        std::max(R.timePerSample, SP.fits ? SP.timePerSample : std::numeric_limits<double>::infinity());
    R.stages.push_back(SP);
  }
  return R;
}
