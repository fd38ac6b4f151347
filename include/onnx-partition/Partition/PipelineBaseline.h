//===- Partition/PipelineBaseline.h - Contiguous 1F1B plans on chains -*- C++ -*-===//
//
// What users run today, priced with seed 000's memory model: PipeDream's
// optimizer in straight-pipeline mode (optimizer_graph_hierarchical.py with
// no replication: contiguous stages, exactly P of them, a cut costs
// 2 a / beta for the activation and its gradient, the period is the largest
// stage time or cut time), its 1F1B memory check through the simulator, and
// the closed form of a single GPU. Any contiguous (or other) allocation is
// priced by buildModuloPattern + simulatePipeline, so dp's stage plans and
// the ILP's warm starts are checked the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPELINEBASELINE_H
#define ONNXP_PARTITION_PIPELINEBASELINE_H

#include "onnx-partition/Partition/PipelineSchedule.h"
#include "onnx-partition/Partition/PipelineSimulator.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// A pipelined plan: the pattern and what the simulator measured on it.
struct PipelinePlan {
  std::string algorithm;
  PeriodicPattern pattern;
  PipelineSimResult sim;
  double lowerBound = 0; ///< proven lower bound on the period (ILP), ms
  std::vector<std::string> notes;
  std::map<std::string, double> stats;
  double period() const { return sim.period; }
  double peakMemory() const { return sim.peakMemory; }
};

/// PipeDream's straight-pipeline optimum: contiguous stages, exactly
/// NumStages of them (NumStages <= L). Returns the allocation (stage of each
/// block) and the optimizer's period max(stage compute, 2 a_cut / beta).
/// TimeUp, when set, is asked once per row of the DP (O(L) work each); when
/// it says yes the DP stops and returns the optimum of the most stages it
/// completed (stages < NumStages, stopped = true): every row of the DP is
/// the exact optimum of its stage count (issue 21 item 4, --time-limit).
struct StraightPipeline {
  std::vector<int> stageOfBlock;
  double period = 0;
  int stages = 0;       ///< stages of this pipeline
  bool stopped = false; ///< TimeUp stopped the DP before NumStages
};
Expected<StraightPipeline> pipeDreamStraightPipeline(const PipelineTasks &Tasks, int NumStages,
                                                     const std::function<bool()> &TimeUp = {});

/// Builds the 1F1B pattern of an allocation at its load period and replays
/// it (the "1F1B memory check").
Expected<PipelinePlan> priceAllocation(const PipelineTasks &Tasks, const std::vector<int> &GpuOfBlock,
                                       int NumGpus, const std::string &Algorithm);

/// Issue 21, several nodes: the GPUs of Gpu (an allocation whose GPU numbers
/// are only classes, like the ILP's) moved onto the platform's nodes so that
/// the allocation's load (allocationLoad: compute, and each link's traffic
/// at that link's price) is least. Nodes are interchangeable and GPUs of
/// one node too, so only which classes share a node matters: every such
/// grouping within the nodes' capacity is tried, up to MaxGroupings, and
/// the first of the least load kept (the identity when it is among them).
/// Uniform links: Gpu unchanged.
std::vector<int> placeOnNodes(const PipelineTasks &Tasks, const std::vector<int> &Gpu, int NumGpus,
                              long MaxGroupings = 50000);

/// The PipeDream baseline priced: straight pipeline of P stages, its pattern
/// and simulated memory. TimeUp as for pipeDreamStraightPipeline (a note
/// says how many stages the DP completed).
Expected<PipelinePlan> pipeDreamBaseline(const PipelineTasks &Tasks, int NumGpus,
                                         const std::function<bool()> &TimeUp = {});

/// The best contiguous plan that fits in Memory bytes per GPU among
/// PipeDream's straight pipelines of 1..NumGpus stages; an error when none
/// fits. The ILP warm-starts from it. TimeUp, when set, stops the stage
/// counts after the first (a count's DP stopped early gives fewer stages).
Expected<PipelinePlan> bestContiguousWithin(const PipelineTasks &Tasks, int NumGpus, double Memory,
                                            const std::function<bool()> &TimeUp = {});

/// A memory-aware contiguous plan for the ILP's warm start: PipeDream's
/// straight pipelines optimise time and ignore memory, so at a tight limit
/// the fastest one that fits is often a single GPU while a slower split of
/// more stages fits. For every stage count 2..NumGpus this starts from
/// PipeDream's split and moves stage boundaries (steepest descent on
/// (memory overflow, period), every candidate priced by priceAllocation;
/// again from the best split of S - 1 stages with its heaviest stage cut
/// in two), or tries every split when there are at most ExhaustiveSplits;
/// returns the best that fits, bestContiguousWithin's included. At most
/// MaxEvaluations allocations are priced.
/// TimeUp, when set, is asked before each evaluation; true stops the search
/// with what it has (issue 24: the planner's deadline).
Expected<PipelinePlan> memoryAwareContiguousWithin(const PipelineTasks &Tasks, int NumGpus, double Memory,
                                                   long MaxEvaluations = 40000, long ExhaustiveSplits = 10000,
                                                   const std::function<bool()> &TimeUp = {});

/// Seed 000 on one GPU (closed form of the §4 model with every task in
/// chain order, all shifts 0): the period is the total compute and the peak
/// is 3W + max_l (a_0 + ... + a_l + a_{l-1}), reached at B_l, which holds
/// the stashes a_0..a_{l-1}, its input gradient a_l and its output a_{l-1}.
double singleGpuPeriod(const PipelineTasks &Tasks);
double singleGpuPeakMemory(const PipelineTasks &Tasks);

/// The 1F1B schedule of any staged plan (issue 15 item 4's `--trace`): a
/// plan's stages reduce to a chain with one block per stage (the stage's
/// forward and backward time, the activation leaving it, its weights),
/// stage s on GPU s. Builds the pattern at the plan's load period, replays
/// it and writes Periods steady-state periods into Trace; returns the
/// simulation (period, per-GPU peak memory).
Expected<PipelineSimResult> traceStagedPlan(const Chain &Stages, const PipelineLinks &Links,
                                            ChromeTrace &Trace, int Periods = 4);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPELINEBASELINE_H
