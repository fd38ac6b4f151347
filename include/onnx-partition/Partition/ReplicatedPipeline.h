//===- Partition/ReplicatedPipeline.h - PipeDream with replicas -*- C++ -*-===//
//
// PipeDream's optimizer with data-parallel replication of stages (Narayanan
// et al., SOSP'19, §3.1; `pipeline-pipedream --replicate`, issue 33). A plan
// cuts the chain's blocks -- or, when the chain carries edges, the DAG's
// ideals, as PipeDream's optimizer cuts its antichain DAG -- into stages run
// one after the other, stage s replicated over r_s accelerators, all P of
// them used. PipeDream's time per minibatch of stage s:
//   T_s = max( (C_s + 4 (r_s - 1) / r_s * W_s / B) / r_s,   compute + weight sync
//              2 a_in / (B r_s),  2 a_out / (B r_s) )        activation + gradient
// with C_s the stage's forward + backward time, W_s its weight bytes, a_in
// (a_out) the bytes crossing the cut before (after) the stage -- every
// tensor leaving the prefix ideal, as PipeDream's runtime forwards them --
// and B the link bandwidth; the period is max_s T_s. The weight sync is
// PipeDream's 4 (m-1)/m |w| / B (each replica sends and receives its
// (m-1)/m share twice over one link, §3.1), twice a ring all-reduce's
// 2 (m-1)/m on a full-duplex link; kept so that the plans are PipeDream's.
// A latency alpha adds 2 (r_s - 1) alpha to the sync (the ring's steps) and
// 2 alpha to each cut (two messages).
//
// The DP (pipeDreamReplicated) and the evaluator (priceReplicatedPipeline)
// are separate: the planners' numbers are the evaluator's.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_REPLICATEDPIPELINE_H
#define ONNXP_PARTITION_REPLICATEDPIPELINE_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace onnxp {

/// One uniform link between any two accelerators (PipeDream's model).
struct ReplicatedLinks {
  double bandwidth = 0; ///< bytes/s
  double latencyMs = 0; ///< per message
};

// ReplicatedStage (replica count, accelerators) is in IR/ChainSchedules.h.

/// A replicated pipeline: stage of every block, and the stages in order.
struct ReplicatedPipeline {
  std::vector<int> stageOfBlock;
  std::vector<ReplicatedStage> stages;
};

/// The evaluator's price of one stage, ms per minibatch.
struct ReplicatedStagePrice {
  double compute = 0;     ///< C_s, one minibatch on one replica
  double weightSync = 0;  ///< 4 (r-1)/r W_s / B (+ latency), per minibatch on each replica
  double inTransfer = 0;  ///< 2 a_in / (B r) (+ latency / r)
  double outTransfer = 0; ///< 2 a_out / (B r)
  double time = 0;        ///< T_s
  double weightBytes = 0;
  double storedBytes = 0;
  /// PipeDream §3.3: minibatches in flight on a replica (NOAM,
  /// ceil(accelerators of this stage and later / r_s)), each holding a
  /// weight version and its stash: memory = inFlight (W_s + stored_s).
  int inFlight = 1;
  double memory = 0;
  int blocks = 0;
};

struct ReplicatedPipelinePrice {
  double period = 0; ///< max_s T_s, ms per minibatch
  std::vector<ReplicatedStagePrice> stages;
};

/// Validates a plan against the chain (every block in a stage 0..S-1, each
/// stage non-empty, every edge going to the same or a later stage so each
/// prefix of stages is an ideal, replica counts >= 1 equal to their
/// device lists, devices distinct and below NumAccelerators) and prices it.
Expected<ReplicatedPipelinePrice> priceReplicatedPipeline(const Chain &C, const ReplicatedPipeline &Plan,
                                                          int NumAccelerators, const ReplicatedLinks &Links);

/// What the DP returns: the plan (stage s on the next r_s accelerators in
/// order) and its own period, which the evaluator must confirm.
struct ReplicatedOptimum {
  ReplicatedPipeline plan;
  double period = 0;
  long ideals = 0; ///< ideals of the chain's DAG the DP ran over
};

/// PipeDream's optimizer (§3.1): A[J][m] = min over K strictly inside J and
/// r < m of max(A[K][m - r], T(J \ K, r)), or J as one stage on m replicas;
/// J, K ideals of the chain's DAG (its prefixes without edges), exactly
/// NumGpus accelerators used. An error beyond MaxIdeals ideals; TimeUp,
/// asked once per ideal, stops it with an error.
Expected<ReplicatedOptimum> pipeDreamReplicated(const Chain &C, int NumGpus, const ReplicatedLinks &Links,
                                                long MaxIdeals = 50000,
                                                const std::function<bool()> &TimeUp = {});

} // namespace onnxp

#endif // ONNXP_PARTITION_REPLICATEDPIPELINE_H
