//===- Partition/piper/PiperGraphPlanner.h - Piper on an ONNX graph -*- C++ -*-===//
//
// Issue 34, item 2: `--algo piper` on an ONNX training graph. The graph's
// layers (MegatronLayers.h) become Piper's problem (IR/PiperInstance.h):
// per layer and tensor-parallel degree t in {1, 2, 4, 8} (at most a node's
// accelerators) two TMPCs, "vanilla" and "activation recomp", priced by
// Cost/TensorParallel.h (a layer without Megatron's structure runs whole
// on each of a stage's t GPUs), in Piper's units (seconds and bytes per
// sample; w = the gradient bytes the data-parallel resync moves, a = the
// saved activations per micro-batch, b = weights, gradients and optimizer
// state); the devices and memory are the platform's, the micro-batches the
// iteration's M, the bandwidth the peer link's (the network's when lower
// and the platform has several nodes).
//
// Piper's DP (PiperPlanner.h, NeurIPS'21 §4) plans it once per cap on t
// (1, 2, 4, 8), beside the uniform PP x DP x TP layouts of Megatron-LM
// (MegatronLayouts.h, private); per cap the better of the two by the
// simulator is kept. The cap 1 is the best plan without tensor parallelism.
// Each plan is laid out on the accelerators (stages of larger t first, so
// each group of t consecutive accelerators stays inside a node; replica r
// of a stage is its r-th group) and priced by the iteration simulator
// (Partition/IterationSimulator.h, objective `iteration`), independent of
// the DP: per stage and micro-batch its layers' forward and backward
// times at t (the all-reduces and recomputation included), the gradients
// it all-reduces over its d replicas (its shard's: / t), the optimizer's
// traffic, the state and the saved activations per GPU, the activation to
// the next stage. The plan of least iteration time is the result.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPER_PIPERGRAPHPLANNER_H
#define ONNXP_PARTITION_PIPER_PIPERGRAPHPLANNER_H

#include "onnx-partition/IR/PiperInstance.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/IterationSimulator.h"
#include "onnx-partition/Partition/piper/MegatronLayers.h"
#include "onnx-partition/Support/Deadline.h"

#include <string>
#include <vector>

namespace onnxp {

struct PiperGraphOptions {
  int microbatches = 1;        ///< M, the iteration's micro-batches
  int microbatchSamples = 1;   ///< b, samples per micro-batch (one run of the graph)
  double optimizerTraffic = 0; ///< optimizer bytes per gradient byte (Plan::optimizerTraffic)
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  size_t idealLimit = 40000;
  Deadline deadline;
};

struct PiperGraphStage {
  std::vector<int> layers; ///< indices into the run's layers
  std::vector<char> recompute;
  int dataParallel = 1, tensorParallel = 1;
  int firstDevice = 0; ///< its d t accelerators follow (group r: firstDevice + r t ...)
};

/// A plan at a cap on t, priced by the simulator.
struct PiperGraphPlan {
  int maxTensorParallel = 1;
  std::string method = "piper-dp"; ///< piper-dp (Piper's DP) or uniform (MegatronLayouts.h)
  std::vector<PiperGraphStage> stages;
  double dpTimePerSample = 0; ///< Piper's own value (seconds per sample)
  long long ideals = 0;
  IterationPrice price; ///< the simulator's
  std::string status;   ///< empty: priced; else why there is no plan
  bool ok() const { return status.empty() && !stages.empty(); }
  bool usesTensorParallel() const;
  /// "PP P x DP d x TP t" when every stage has the same d and t, else per
  /// stage "PP P x [DP d0 x TP t0, ...]".
  std::string layout() const;
};

struct PiperGraphRun {
  std::vector<MegatronLayer> layers;
  PiperInstance instance;            ///< at the largest cap
  std::vector<PiperGraphPlan> plans; ///< the better per cap, ascending (plans[0]: cap 1)
  int best = -1;                     ///< least iteration among the priced plans; -1: none fits
};

/// Piper's instance for the layers at cap MaxT (see the file comment).
PiperInstance piperInstanceForLayers(const std::vector<MegatronLayer> &Layers, const Platform &P,
                                     const PiperGraphOptions &O, int MaxT);

/// The simulator's stages for a plan (laid out as the file comment says).
Expected<std::vector<IterationStage>> piperGraphIterationStages(const std::vector<MegatronLayer> &Layers,
                                                                const std::vector<PiperGraphStage> &Stages,
                                                                const Platform &P,
                                                                const PiperGraphOptions &O);

/// The simulator's request for a plan under O (training, O's M and schedule).
IterationRequest piperGraphIterationRequest(const PiperGraphOptions &O);

/// Prices Pl's stages (laid out already) with the simulator: sets
/// Pl.price, or Pl.status when they do not fit.
void pricePiperGraphPlan(const std::vector<MegatronLayer> &Layers, PiperGraphPlan &Pl, const Platform &P,
                         const PiperGraphOptions &O);

/// The run (see the file comment). Fails when no plan fits.
Expected<PiperGraphRun> planPiperGraph(const CostGraph &G, const OnnxModel &M, const Platform &P,
                                       const PiperGraphOptions &O);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPER_PIPERGRAPHPLANNER_H
