//===- Partition/piper/PiperGraphPlanner.cpp - Piper on an ONNX graph ----===//
//
// See PiperGraphPlanner.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/piper/PiperGraphPlanner.h"

#include "onnx-partition/Cost/TensorParallel.h"
#include "onnx-partition/Partition/piper/PiperPlanner.h"

#include "MegatronLayouts.h"

#include <algorithm>
#include <numeric>

using namespace onnxp;

namespace {
constexpr const char *kVanilla = "vanilla";
constexpr const char *kRecompute = "activation recomp";

int acceleratorsPerNode(const Platform &P) {
  return P.acceleratorsPerNode > 0 ? std::min(P.acceleratorsPerNode, P.accelerators) : P.accelerators;
}

/// The degree a layer is split at in a stage of degree T: T where
/// Megatron's split allows it, else whole on each GPU.
int splitDegree(const MegatronLayer &L, int T) {
  return std::find(L.degrees.begin(), L.degrees.end(), T) != L.degrees.end() ? T : 1;
}

PiperTmpc tmpcOf(const MegatronLayer &L, int T, bool Recompute, const Platform &P,
                 const PiperGraphOptions &O) {
  const TensorParallelPrice C = priceTensorParallel(L.costs, splitDegree(L, T), Recompute, P);
  const double B = std::max(1, O.microbatchSamples);
  PiperTmpc Tm;
  Tm.id = Recompute ? kRecompute : kVanilla;
  Tm.timePerSample = (C.forwardMs + C.backwardMs) / 1e3 / B; // Piper §3: p, seconds per sample
  Tm.parameterSize = C.gradientBytes;
  Tm.memoryA = C.activationBytes;
  Tm.memoryB = C.stateBytes;
  return Tm;
}

/// Stage order on the accelerators: larger t first, so every group of t
/// consecutive accelerators starts at a multiple of t.
Error layOut(std::vector<PiperGraphStage> &Stages, const Platform &P) {
  std::vector<size_t> Order(Stages.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return Stages[A].tensorParallel > Stages[B].tensorParallel; });
  int Next = 0;
  for (size_t S : Order) {
    PiperGraphStage &St = Stages[S];
    St.firstDevice = Next;
    Next += St.dataParallel * St.tensorParallel;
    for (int R = 0; R < St.dataParallel; ++R) {
      const int First = St.firstDevice + R * St.tensorParallel, Last = First + St.tensorParallel - 1;
      if (Last >= P.accelerators) return makeError("the plan needs ", Next, " accelerators");
      if (P.nodeOf(First) != P.nodeOf(Last))
        return makeError("a tensor-parallel group of stage ", S, " would span two nodes");
    }
  }
  return Error::success();
}

PiperGraphPlan planAtCap(const std::vector<MegatronLayer> &Layers, const Platform &P,
                         const PiperGraphOptions &O, int Cap) {
  PiperGraphPlan Out;
  Out.maxTensorParallel = Cap;
  const PiperInstance I = piperInstanceForLayers(Layers, P, O, Cap);
  PiperOptions PO;
  PO.deadline = O.deadline;
  PO.idealLimit = O.idealLimit;
  Expected<PiperResult> R = planPiper(I, PO);
  if (!R) {
    Out.status = R.takeError().message();
    return Out;
  }
  Out.ideals = R->ideals;
  if (R->plan.stages.empty()) {
    Out.status = "no plan fits in memory";
    return Out;
  }
  Out.dpTimePerSample = R->dpValue;
  for (const PiperStage &St : R->plan.stages) {
    PiperGraphStage G;
    G.layers = St.layers;
    G.dataParallel = St.dataParallel;
    G.tensorParallel = St.tensorParallel;
    for (size_t Q = 0; Q < St.layers.size(); ++Q)
      G.recompute.push_back(I.layers[St.layers[Q]].tmpcs.at(St.tensorParallel)[St.tmpc[Q]].id == kRecompute);
    Out.stages.push_back(std::move(G));
  }
  if (Error E = layOut(Out.stages, P)) {
    Out.status = E.message();
    return Out;
  }
  pricePiperGraphPlan(Layers, Out, P, O);
  return Out;
}
} // namespace

IterationRequest onnxp::piperGraphIterationRequest(const PiperGraphOptions &O) {
  IterationRequest Req;
  Req.microbatches = O.microbatches;
  Req.schedule = O.schedule;
  Req.training = true;
  return Req;
}

void onnxp::pricePiperGraphPlan(const std::vector<MegatronLayer> &Layers, PiperGraphPlan &Pl,
                                const Platform &P, const PiperGraphOptions &O) {
  Expected<std::vector<IterationStage>> Sim = piperGraphIterationStages(Layers, Pl.stages, P, O);
  if (!Sim) {
    Pl.status = Sim.takeError().message();
    return;
  }
  Expected<IterationPrice> Price = simulateIteration(*Sim, P, piperGraphIterationRequest(O));
  if (!Price) Pl.status = Price.takeError().message();
  else Pl.price = std::move(*Price);
}

bool PiperGraphPlan::usesTensorParallel() const {
  return std::any_of(stages.begin(), stages.end(),
                     [](const PiperGraphStage &S) { return S.tensorParallel > 1; });
}

std::string PiperGraphPlan::layout() const {
  if (stages.empty()) return "no plan";
  bool Uniform = true;
  std::string Per;
  for (const PiperGraphStage &S : stages) {
    Uniform &=
        S.dataParallel == stages.front().dataParallel && S.tensorParallel == stages.front().tensorParallel;
    Per += std::string(Per.empty() ? "" : ", ") + "DP " + std::to_string(S.dataParallel) + " x TP " +
           std::to_string(S.tensorParallel);
  }
  const std::string PP = "PP " + std::to_string(stages.size()) + " x ";
  if (Uniform)
    return PP + "DP " + std::to_string(stages.front().dataParallel) + " x TP " +
           std::to_string(stages.front().tensorParallel);
  return PP + "[" + Per + "]";
}

PiperInstance onnxp::piperInstanceForLayers(const std::vector<MegatronLayer> &Layers, const Platform &P,
                                            const PiperGraphOptions &O, int MaxT) {
  PiperInstance I;
  I.maxDevices = P.accelerators;
  I.maxMemoryPerDevice = P.accMemory();
  I.mbsInBatch = O.microbatches;
  I.bandwidth = P.nodes > 1 ? std::min(P.peerLinkBandwidth, P.networkBandwidth) : P.peerLinkBandwidth;
  const int Cap = std::min(MaxT, acceleratorsPerNode(P));
  const double B = std::max(1, O.microbatchSamples);
  for (size_t V = 0; V < Layers.size(); ++V) {
    PiperLayer L;
    L.fileId = static_cast<long>(V);
    L.name = Layers[V].name;
    for (int T : {1, 2, 4, 8}) {
      if (T > Cap) break;
      std::vector<PiperTmpc> &Opts = L.tmpcs[T];
      Opts.push_back(tmpcOf(Layers[V], T, false, P, O));
      Opts.push_back(tmpcOf(Layers[V], T, true, P, O));
      for (PiperTmpc &Tm : Opts) {
        if (V > 0) Tm.syncFw[static_cast<int>(V) - 1] = 0;
        if (V + 1 < Layers.size()) Tm.syncBw[static_cast<int>(V) + 1] = 0;
      }
    }
    I.layers.push_back(std::move(L));
    if (V > 0)
      I.edges.push_back({static_cast<int>(V) - 1, static_cast<int>(V), Layers[V - 1].costs.outputBytes / B});
  }
  return I;
}

Expected<std::vector<IterationStage>>
onnxp::piperGraphIterationStages(const std::vector<MegatronLayer> &Layers,
                                 const std::vector<PiperGraphStage> &Stages, const Platform &P,
                                 const PiperGraphOptions &O) {
  std::vector<IterationStage> Out;
  for (const PiperGraphStage &St : Stages) {
    if (St.layers.size() != St.recompute.size() || St.layers.empty())
      return makeError("piper: a stage without layers or without a recompute choice per layer");
    IterationStage S;
    for (size_t Q = 0; Q < St.layers.size(); ++Q) {
      const MegatronLayer &L = Layers.at(St.layers[Q]);
      const TensorParallelPrice C =
          priceTensorParallel(L.costs, splitDegree(L, St.tensorParallel), St.recompute[Q] != 0, P);
      S.forwardMs += C.forwardMs;
      S.backwardMs += C.backwardMs;
      S.gradientBytes += C.gradientBytes;
      S.stateBytes += C.stateBytes;
      S.activationBytes += C.activationBytes;
    }
    S.optimizerBytes = S.gradientBytes * O.optimizerTraffic;
    S.outputBytes = Layers.at(St.layers.back()).costs.outputBytes;
    // Replica r is the r-th group of t; its first accelerator stands for it
    // (the t shards' data-parallel all-reduces run side by side).
    for (int R = 0; R < St.dataParallel; ++R) S.devices.push_back(St.firstDevice + R * St.tensorParallel);
    Out.push_back(std::move(S));
  }
  return Out;
}

Expected<PiperGraphRun> onnxp::planPiperGraph(const CostGraph &G, const OnnxModel &M, const Platform &P,
                                              const PiperGraphOptions &O) {
  if (P.accelerators < 1) return makeUsageError("--algo piper plans on accelerators; the platform has none");
  if (P.mixed())
    return makeUsageError(
        "--algo piper on an ONNX model needs one accelerator kind; the platform mixes kinds");
  if (O.microbatches < 1) return makeUsageError("--algo piper needs at least one micro-batch per iteration");
  Expected<std::vector<MegatronLayer>> L = megatronLayers(G, M, acceleratorsPerNode(P));
  if (!L) return L.takeError();
  PiperGraphRun Run;
  Run.layers = std::move(*L);
  for (int Cap : {1, 2, 4, 8}) {
    if (Cap > acceleratorsPerNode(P)) break;
    Run.instance = piperInstanceForLayers(Run.layers, P, O, Cap);
    PiperGraphPlan Dp = planAtCap(Run.layers, P, O, Cap);
    PiperGraphPlan Uniform = bestUniformLayout(Run.layers, P, O, Cap);
    const bool UniformBetter = Uniform.ok() && (!Dp.ok() || Uniform.price.iterationMs < Dp.price.iterationMs);
    Run.plans.push_back(UniformBetter ? std::move(Uniform) : std::move(Dp));
    const PiperGraphPlan &Pl = Run.plans.back();
    if (Pl.ok() && (Run.best < 0 || Pl.price.iterationMs < Run.plans[Run.best].price.iterationMs))
      Run.best = static_cast<int>(Run.plans.size()) - 1;
  }
  if (Run.best < 0)
    return makeDoesNotFitError("piper: no plan fits on ", P.accelerators, " accelerators of ", P.accMemory(),
                               " bytes (", Run.plans.front().status, ")");
  return Run;
}
