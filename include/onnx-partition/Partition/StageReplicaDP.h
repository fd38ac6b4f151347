//===- Partition/StageReplicaDP.h - Per-stage replica counts -----*- C++ -*-===//
//
// pipeline-dp's second search (issue 33, item 3): every stage of the
// pipeline chooses its own data-parallel degree, seed 004 App. C.2's
//   dp[I][k] = min over I' < I, k'' <= k of max(dp[I'][k - k''], acc(I \ I', k''))
// run over the suffixes of a chain of blocks: f[i][W] is the best cost of
// blocks [i, n) on exactly W accelerators, the last W of the platform, so
// a stage [i, j) on d replicas with W' = W - d accelerators after it sits
// on accelerators [N - W' - d, N - W'), its placement (and so its
// all-reduce) and its 1F1B window (the later stages' replicas, W') are
// known inside the recurrence:
//   f[i][W] = min over j > i, 1 <= d <= min(W, M) of
//             max(f[j][W - d], cost(i, j, d, W - d)),   f[n][0] = 0.
//
// cost is a lower bound, valid for any schedule the simulator runs, on the
// iteration of every pipeline holding that stage (IterationSimulator.h):
// its busiest replica runs ceil(M / d) micro-batches and cannot start before
// the first micro-batch's forward through the blocks before it;
//   training:  fwd[0, i) + ceil(M / d) (F + B)[i, j)
//                + max(all-reduce + optimizer step, bwd[0, i))
//   (the replica's last backward is followed by its step, and by the
//    backwards of the earlier stages for the same micro-batch);
//   inference: fwd[0, i) + ceil(M / d) F[i, j) + fwd[j, n)
//   (the last micro-batch it forwards still crosses the later stages).
// Transfers are left out, so max over stages <= the simulator's iteration
// for every layout (IterationPlannerTest checks it against brute force);
// memory is the simulator's exactly: state + the micro-batches a replica
// holds (GPipe ceil(M / d); 1F1B min(floor(W' / d) + 1, ceil(M / d))).
// The planner prices each W's layout with the simulator beside its
// uniform layouts and keeps the best.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_STAGEREPLICADP_H
#define ONNXP_PARTITION_STAGEREPLICADP_H

#include "onnx-partition/IR/Platform.h"

#include <optional>
#include <vector>

namespace onnxp {

/// A chain of blocks as prefix sums (size + 1 entries each, 0 first), per
/// micro-batch; bytes per replica.
struct StageChain {
  int size = 0;
  std::vector<double> forward, backward; ///< ms on an accelerator
  std::vector<double> state;             ///< weights, gradients, optimizer state
  std::vector<double> saved;             ///< activations saved for the backward
  std::vector<double> gradient;          ///< all-reduced after the last backward
  double span(const std::vector<double> &Prefix, int I, int J) const { return Prefix[J] - Prefix[I]; }
};

struct StageReplicaRequest {
  int microbatches = 1;        ///< M
  bool gpipe = false;          ///< else 1f1b
  bool training = true;        ///< false: forwards only
  double memory = 0;           ///< per accelerator, bytes
  double optimizerTraffic = 0; ///< bytes the step moves per gradient byte
};

/// Stage s is blocks [bounds[s], bounds[s + 1]) on replicas[s] accelerators
/// from base[s] on.
struct StageReplicaLayout {
  std::vector<int> bounds, replicas, base;
  double cost = 0; ///< max over its stages of stageReplicaCost
};

/// cost(I, J, D, After) of the file comment; +inf when the stage does not
/// fit memory or D exceeds M or the accelerators.
double stageReplicaCost(const StageChain &C, const Platform &P, const StageReplicaRequest &R, int I, int J,
                        int D, int After);

/// Entry W (0..N) is the best layout of the whole chain on exactly the last
/// W accelerators, nullopt when none fits.
std::vector<std::optional<StageReplicaLayout>> stageReplicaLayouts(const StageChain &C, const Platform &P,
                                                                   const StageReplicaRequest &R);

} // namespace onnxp

#endif // ONNXP_PARTITION_STAGEREPLICADP_H
