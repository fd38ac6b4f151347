//===- API/MemorySweepOutput.cpp - --memory-sweep -----------------------===//
//
// `--algo pipeline-ilp --memory-sweep OUT.svg` (issue 12 item 4, seed 000
// Figures 6-11): the period pipeline-ilp reaches and the period of
// PipeDream's best straight pipeline at each of --sweep-points memory
// limits, evenly spaced from 0.5x to 1.25x the peak memory of PipeDream's
// P-stage straight pipeline (the range of tools/bench/bench_pipeline), one
// table row per limit on stdout and the chart (memorySweepSvg) in OUT.svg.
// Every period and peak is the simulator's (PipelineSweep.h); the peaks hold
// the stash of the micro-batches each GPU has in flight under its plan's
// 1F1B pattern, which the rows list per GPU (issue 22, PatternInFlight.h).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/Outputs.h"

#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/PatternInFlight.h"
#include "onnx-partition/Partition/PipelineBaseline.h"
#include "onnx-partition/Partition/PipelineSweep.h"
#include "onnx-partition/Support/FileIO.h"

#include <cmath>
#include <iomanip>
#include <ostream>

using namespace onnxp;

namespace {
/// "4,3,2,1": per used GPU, the micro-batches it holds in flight; "-" for
/// no plan.
std::string inFlightList(const std::vector<int> &PerGpu) {
  std::string S;
  for (int K : PerGpu)
    if (K > 0) S += (S.empty() ? "" : ",") + std::to_string(K);
  return S.empty() ? "-" : S;
}
} // namespace

Expected<std::string> onnxp::memorySweepChart(const Chain &C, const Platform &P, const OutputOptions &O,
                                              std::ostream &OS) {
  Expected<const PartitionerInfo *> Info = findPartitioner(O.algo);
  if (!Info || !(*Info)->facts.sweepsMemory)
    return makeUsageError(
        "--memory-sweep compares pipeline-ilp with PipeDream's pipelines; give --algo pipeline-ilp");
  // Issue 39, item 2: every point runs pipeline-ilp, so the sweep takes the
  // chains it takes (its size limit, Partitioners.def), checked before any work.
  if (const size_t Limit = (*Info)->facts.sizeLimit; Limit > 0 && C.size() > Limit)
    return makeUsageError("--memory-sweep runs --algo ", (*Info)->name,
                          " at every point, which handles chains of at most ", Limit,
                          " blocks; this input has ", C.size(),
                          " (merge consecutive blocks, or coarsen the model with --granularity)");
  ONNXP_RETURN_IF_ERROR(checkChainOnPlatform(C, P));
  if (!(P.peerLinkBandwidth > 0)) return makeError("--memory-sweep needs a positive peer link bandwidth");
  PipelineTasks Tasks(C, PipelineLinks::of(P)); // by link on several nodes (issue 21)
  const Deadline &RunEnd = O.partition.deadline;
  Expected<PipelinePlan> Base =
      pipeDreamBaseline(Tasks, P.accelerators, [&RunEnd] { return RunEnd.expired(); });
  if (!Base) return Base.takeError().withContext("--memory-sweep");
  std::vector<double> Limits =
      memoryLimits(0.5 * Base->peakMemory(), 1.25 * Base->peakMemory(), O.sweepPoints);
  PipelineIlpOptions IO;
  IO.numGpus = P.accelerators;
  IO.deadline = O.partition.deadline; // what is left of the run's limit, shared by the points
  IO.relativeGap = O.partition.relativeGap;
  IO.threads = O.partition.threads;
  // The straight pipeline has at most one stage per block (issue 22: the
  // header named P stages on a chain of fewer blocks). Peaks count the stash
  // of the micro-batches each GPU holds in flight under 1F1B (seed 000 §4.2.2).
  OS << "memory sweep of '" << C.name << "', " << P.accelerators << " GPUs (PipeDream "
     << Base->pattern.usedGpus() << "-stage peak " << formatNumber(Base->peakMemory())
     << " bytes with the stash of " << inFlightList(patternInFlight(Tasks, Base->pattern))
     << " micro-batches in flight per GPU)\n";
  OS << std::setw(14) << "limit_bytes" << std::setw(14) << "ilp_ms" << std::setw(14) << "bound_ms"
     << std::setw(14) << "baseline_ms" << std::setw(8) << "stages" << std::setw(12) << "ilp_flight"
     << std::setw(12) << "base_flight"
     << "\n";
  auto Row = [&](const MemorySweepPoint &Pt) {
    OS << std::setw(14) << formatNumber(Pt.memoryBytes) << std::setw(14)
       << (Pt.ilpInfeasible           ? std::string("infeasible")
           : std::isnan(Pt.ilpPeriod) ? std::string("none found")
                                      : formatNumber(Pt.ilpPeriod))
       << std::setw(14) << formatNumber(Pt.ilpBound) << std::setw(14)
       << (std::isnan(Pt.baselinePeriod) ? std::string("none fits") : formatNumber(Pt.baselinePeriod))
       << std::setw(8) << Pt.baselineStages << std::setw(12) << inFlightList(Pt.ilpInFlight) << std::setw(12)
       << inFlightList(Pt.baselineInFlight) << "\n";
    OS.flush();
  };
  Expected<std::vector<MemorySweepPoint>> Sweep = memorySweep(Tasks, Limits, IO, Row);
  if (!Sweep) return Sweep.takeError();
  std::string Title = C.name + ", " + std::to_string(P.accelerators) + " GPUs, " +
                      formatNumber(P.peerLinkBandwidth / 1e9) + " GB/s";
  if (P.multiNode())
    Title = C.name + ", " + std::to_string(P.accelerators) + " GPUs on " + std::to_string(P.nodes) +
            " nodes, peer " + formatNumber(P.peerLinkBandwidth / 1e9) + " GB/s + " +
            formatNumber(P.peerLinkLatencyMs) + " ms, network " + formatNumber(P.networkBandwidth / 1e9) +
            " GB/s + " + formatNumber(P.networkLatencyMs) + " ms";
  return memorySweepSvg(*Sweep, Title);
}
