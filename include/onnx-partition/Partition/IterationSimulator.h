//===- Partition/IterationSimulator.h - One synchronous iteration -*- C++ -*-===//
//
// Objectives `iteration` and `throughput` (issue 33): the wall time of one
// synchronous iteration of a global batch of B samples, run as M = B / b
// micro-batches of b samples through a pipeline of P stages, stage s
// replicated over d_s accelerators.
//
// Replicas: replica r of stage s runs the micro-batches m = r (mod d_s).
// Order on each replica (a fixed list, executed one op at a time):
//  - gpipe (Huang et al., NeurIPS'19): all its forwards in increasing m,
//    then all its backwards in decreasing m, then the flush;
//  - 1f1b (PipeDream-Flush, Narayanan et al. ICML'21 §2; Megatron-LM's
//    non-interleaved schedule): a replica runs F(m') before B(m) iff
//    m' <= m + W_s, W_s = sum_{t > s} d_t (the replicas of the later
//    stages). With one replica per stage W_s = P - s - 1: the usual
//    warm-up of P - s - 1 forwards, then one forward and one backward in
//    turn, then the cool-down. With d replicas everywhere W_s = (P - s - 1) d
//    on the global index, which is P - s - 1 of each replica's own
//    micro-batches: the d replica chains each run plain 1F1B, and each
//    replica holds at most P - s micro-batches in flight.
// Both orders are sorted by a key that every dependency has a smaller
// value of (F(s,m) after F(s-1,m); B(s,m) after B(s+1,m) and F(s,m)), so
// the replicas never deadlock and one pass in key order is an exact replay:
// op start = max(the replica's previous op end, each input's arrival).
// A cross-stage transfer (activation forward, its gradient back: the cut's
// bytes per micro-batch) arrives Platform::linkMs after its producer ends,
// on the link between the two replicas' devices; links are not modelled
// as contended (each replica pair has its own peer or network link).
//
// After stage s's last backward on every replica, its gradients are
// all-reduced over its d_s replicas (Cost/AllReduce.h: ring in a node,
// hierarchical across nodes), starting as soon as that stage is done: it
// overlaps the backward of the earlier stages, as Megatron-LM and
// DeepSpeed bucket gradients per stage (Shoeybi et al. 2019; Rasley et al.
// 2020); a stage's own backward is not overlapped (one bucket per stage).
// Then the optimizer step, memory-bound: the bytes it reads and writes
// (per parameter byte: optimizerTrafficRatio) / the accelerator's memory
// bandwidth (DeviceSpec::memBandwidth, the roofline's). The iteration ends
// when the last stage's step ends. Inference (no backward): forwards only,
// no all-reduce, no step.
//
// Memory: each replica holds its stage's state (weights, gradients,
// optimizer state) plus the saved activations of the micro-batches it has
// forwarded and not yet backwarded, at the most at once in the replay.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_ITERATIONSIMULATOR_H
#define ONNXP_PARTITION_ITERATIONSIMULATOR_H

#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

/// One stage of the pipeline, per micro-batch of b samples.
struct IterationStage {
  double forwardMs = 0;
  double backwardMs = 0;
  double gradientBytes = 0;   ///< all-reduced after the last backward (the weights' bytes)
  double optimizerBytes = 0;  ///< read and written by the optimizer step on each replica
  double stateBytes = 0;      ///< weights, gradients, optimizer state on each replica
  double activationBytes = 0; ///< saved for the backward, per micro-batch in flight
  double outputBytes = 0;     ///< crossing the cut to the next stage, per micro-batch
  std::vector<int> devices;   ///< accelerators of its replicas (d_s of them)
};

/// The schedule is IR/Plan.h's PipelineScheduleKind; None runs as 1f1b.

struct IterationRequest {
  int microbatches = 1; ///< M = B / b
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  bool training = true; ///< false: forwards only (throughput)
  bool checkMemory = true;
};

struct IterationStagePrice {
  double lastBackwardEnd = 0; ///< over its replicas (inference: last forward end)
  double allReduceMs = 0;
  double optimizerMs = 0;
  double end = 0;
  double busyMs = 0;     ///< compute on its busiest replica
  int peakInFlight = 0;  ///< micro-batches held at once on its busiest replica
  double peakMemory = 0; ///< bytes on its busiest replica
};

struct IterationPrice {
  double iterationMs = 0; ///< max over stages of end
  std::vector<IterationStagePrice> stages;
  /// End of F(s, m) and B(s, m), [stage][micro-batch] (B empty in
  /// inference): the replay's timeline, which --trace draws
  /// (IterationTrace.h); an op starts at its end minus its stage's time.
  std::vector<std::vector<double>> forwardEnd, backwardEnd;
};

/// Replays one iteration (see the file comment). Errors on an empty
/// pipeline, a stage without devices, a device used twice, a device that
/// is not an accelerator, M < 1, and (checkMemory) a replica above its
/// accelerator's memory ("does not fit").
Expected<IterationPrice> simulateIteration(const std::vector<IterationStage> &Stages, const Platform &P,
                                           const IterationRequest &R);

/// A one-line description: "P stages x replicas [..], M micro-batches (1f1b)".
std::string describeIterationLayout(const std::vector<IterationStage> &Stages, const IterationRequest &R);

} // namespace onnxp

#endif // ONNXP_PARTITION_ITERATIONSIMULATOR_H
