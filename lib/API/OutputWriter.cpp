//===- API/OutputWriter.cpp - Model out, summary out ---===//
//
// The run summary (issue 11, item 7): what the objective is and measures,
// the bound valid for any plan with its gap and, separately, the
// algorithm's own bound with what it bounds; with `--algo all` (or auto)
// the algorithms side by side; then one table of the devices with
// compute, transfers and memory in human units, the speed-up over one
// device, and warnings a person would want: devices that buy nothing, a
// cost model that finds a CPU core faster than the accelerator. The
// annotated model, the stage models and --load-plan live in WriteBack.cpp
// and PlanLoading.cpp.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/OutputWriter.h"

#include "onnx-partition/Cost/EstimatedSizes.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/IterationPlanner.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/UniversalBound.h"
#include "onnx-partition/Partition/io/TopologySummary.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/HumanUnits.h"
#include "onnx-partition/Support/SummaryText.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>

using namespace onnxp;

namespace {

std::string percent(double Fraction) {
  if (!std::isfinite(Fraction)) return "-";
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f%%", 100 * Fraction);
  return Buf;
}

/// A time with three significant digits (the unit is the graph's).
std::string time3(double T) {
  if (!std::isfinite(T)) return "-";
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.4g", T);
  return Buf;
}

std::string seconds(double S) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.3f", S);
  return Buf;
}

/// S left-aligned in a column of W characters; a longer S keeps one space
/// before the next column (issue 37: stages "1,2,4,6" ran into the node
/// count, "1,2,4,6222").
std::string pad(std::string S, size_t W) {
  S.append(S.size() < W ? W - S.size() : 1, ' ');
  return S;
}

/// The time of everything on accelerator 0 (the baseline of the
/// speed-up), or NaN when that plan cannot be priced (unsupported nodes, no
/// accelerator, chain objectives).
double oneDeviceTime(const PassContext &Ctx, const Plan &P) {
  const CostGraph &G = Ctx.graph;
  if (Ctx.platform.accelerators < 1 || P.objectiveKind == Objective::PipelinePeriod ||
      P.objectiveKind == Objective::IterationTime || isIterationObjective(P.objectiveKind))
    return NAN;
  double Total = 0;
  for (const CostNode &N : G.nodes()) {
    if (!N.accSupported) return NAN;
    Total += N.accTime;
  }
  return Total; // one device: no transfers, every objective is the sum of its times
}

/// Issue 37, item 9: dp's optimum over its unit graph (sinks absorbed,
/// compute evened out after the DP) can lie above the plan the evaluator
/// prices (LoRA on 2 A100s: 0.250724 against 0.240424). Then it bounds
/// nothing; it is not called a lower bound. (A bound over the plans that
/// colocate shared parameters, above a replicating plan, still is one.)
bool ownOptimumAbovePlan(const Plan &P) {
  return P.lowerBound > P.objective * (1 + 1e-9) && P.lowerBoundScope != Plan::kAnyPlan &&
         P.lowerBoundScope.find("colocate shared parameters") == std::string::npos;
}

void printBounds(std::ostream &OS, const Plan &P, const std::string &Unit) {
  OS << "  objective " << objectiveName(P.objectiveKind) << ": " << objectiveMeaning(P.objectiveKind) << "\n";
  if (std::isfinite(P.universalBound))
    OS << "  bound " << formatNumber(P.universalBound) << " " << Unit << ", gap " << percent(P.universalGap())
       << ": "
       << (P.lowerBoundScope == Plan::kAnyPlan ? "the algorithm's bound, valid for any plan"
                                               : universalBoundDescription(P.objectiveKind))
       << "\n";
  if (std::isfinite(P.lowerBound) && P.lowerBoundScope != Plan::kAnyPlan && !ownOptimumAbovePlan(P))
    OS << "  algorithm bound " << formatNumber(P.lowerBound) << ": holds only among "
       << (P.lowerBoundScope.empty() ? std::string("the plans this algorithm considers") : P.lowerBoundScope)
       << "\n";
}

void printAlternatives(std::ostream &OS, const Plan &P) {
  if (P.alternatives.empty()) return;
  OS << "  algorithms side by side (" << objectiveName(P.objectiveKind) << "; * = kept, written by -o):\n";
  OS << "    " << pad("algorithm", 14) << pad("objective", 11) << pad("bound", 11) << pad("gap", 8)
     << pad("alg. bound", 11) << pad("devices", 8) << pad("stages", 7) << pad("cpu s", 8) << "wall s\n";
  for (const AlgorithmOutcome &A : P.alternatives) {
    OS << "    " << pad(A.algorithm + (A.kept ? " *" : ""), 14);
    if (!A.status.empty()) {
      OS << A.status << "\n";
      continue;
    }
    const double Gap = A.objective != 0 ? (A.objective - A.universalBound) / A.objective : NAN;
    OS << pad(formatNumber(A.objective), 11) << pad(formatNumber(A.universalBound), 11)
       << pad(percent(Gap), 8) << pad(std::isfinite(A.lowerBound) ? formatNumber(A.lowerBound) : "-", 11)
       << pad(std::to_string(A.devicesUsed), 8) << pad(A.stages ? std::to_string(A.stages) : "-", 7)
       << pad(seconds(A.cpuSeconds), 8) << seconds(A.wallSeconds) << "\n";
  }
}

void printDevices(std::ostream &OS, const PassContext &Ctx, const Plan &P, const std::string &Unit) {
  const CostGraph &G = Ctx.graph;
  std::map<int, int> Count;
  std::map<int, std::set<int>> Stages;
  for (size_t V = 0; V < P.device.size(); ++V) {
    ++Count[P.device[V]];
    if (V < P.stage.size()) Stages[P.device[V]].insert(P.stage[V]);
  }
  const bool Makespan = P.objectiveKind == Objective::Makespan;
  // Issue 21: on several nodes, each device's node and the part of its
  // transfers that crosses nodes.
  const std::vector<double> Net = networkMsByDevice(G, Ctx.platform, P);
  OS << "    " << pad("device", 8) << (Net.empty() ? "" : pad("node", 6)) << pad("stage", 7)
     << pad("nodes", 7) << pad("compute", 12) << pad("transfers", 12)
     << (Net.empty() ? "" : pad("network", 12)) << pad(Makespan ? "busy" : "load", 12) << pad("memory", 12)
     << "(times in " << Unit << ")\n";
  for (auto &[D, N] : Count) {
    std::string Stage = "-";
    if (Stages.count(D) && !Stages[D].empty()) {
      Stage.clear();
      for (int S : Stages[D]) Stage += (Stage.empty() ? "" : ",") + std::to_string(S);
    }
    OS << "    " << pad(Ctx.platform.deviceName(D), 8)
       << (Net.empty()
               ? ""
               : pad(Ctx.platform.isAccelerator(D) ? std::to_string(Ctx.platform.nodeOf(D)) : "host", 6))
       << pad(Stage, 7) << pad(std::to_string(N), 7);
    if (D < (int)P.usage.size()) {
      const DeviceUsage &U = P.usage[D];
      OS << pad(time3(U.compute), 12) << pad(time3(U.commIn + U.commOut), 12)
         << (Net.empty() ? "" : pad(Net[D] > 0 ? time3(Net[D]) : "-", 12)) << pad(time3(U.load), 12)
         << humanBytes(U.memory);
    }
    OS << "\n";
  }
  // Issue 22, item 5: memory by term (Cost/MemoryAccounting.h).
  const std::vector<DeviceMemory> Terms = planMemoryByTerm(G, Ctx.platform, P);
  for (auto &[D, N] : Count)
    if (Ctx.platform.isAccelerator(D) && D < static_cast<int>(Terms.size()) && hasMemoryTerms(Terms[D]))
      OS << "    memory " << Ctx.platform.deviceName(D) << " (" << memoryModelName(P.memoryModel)
         << "): " << describeDeviceMemory(Terms[D]) << "\n";
  // Issue 22, item 1: the pipeline whose in-flight micro-batches those count.
  if ((P.memoryModel == MemoryModel::Liveness || !P.scheduleMemory.empty()) &&
      P.device.size() == G.numNodes())
    if (const std::string InFlight = describeInFlight(G, Ctx.platform, P); !InFlight.empty())
      OS << "    in flight (saved activations per micro-batch held at once): " << InFlight << "\n";
  if (Makespan)
    OS << "    (busy = compute + transfers in and out per device, the max-load model's figure; the "
          "makespan overlaps transfers with computation across devices, so a device can be busy longer "
          "than the makespan)\n";
  if (P.objectiveKind == Objective::PipelinePeriod)
    OS << "    (load = compute + transfers in and out per device, the max-load model's figure; in the 1F1B "
          "period transfers run on the links while the devices compute, so load can exceed the period)\n";
}

/// Issue 33: the iteration objectives' speed-up, against the same global
/// batch, schedule and optimizer step on one accelerator -- or, when one
/// cannot hold the model, on the pipeline of the fewest accelerators that
/// can (iterationBaseline), priced by the same simulator. Then the layout.
void printIterationSpeedup(std::ostream &OS, const PassContext &Ctx, const Plan &P, const std::string &Unit) {
  PartitionOptions O = Ctx.options.partition;
  O.objective = P.objectiveKind;
  O.globalMicrobatches = P.globalMicrobatches;
  O.microbatchSamples = P.microbatchSamples;
  O.optimizerTraffic = P.optimizerTraffic;
  O.pipelineSchedule = P.pipelineSchedule;
  Expected<Plan> Base = iterationBaseline(Ctx.graph, Ctx.platform, O);
  Expected<std::vector<IterationStage>> Stages = iterationStages(Ctx.graph, Ctx.platform, P);
  if (Stages) {
    Expected<IterationPrice> Price = simulateIteration(*Stages, Ctx.platform, iterationRequest(Ctx.graph, P));
    if (Price) {
      const IterationStagePrice *Last = &Price->stages.front();
      for (const IterationStagePrice &S : Price->stages)
        if (S.end > Last->end) Last = &S;
      OS << "  iteration (simulated): " << describeIterationLayout(*Stages, iterationRequest(Ctx.graph, P))
         << " of " << P.microbatchSamples << " sample(s): " << formatNumber(Price->iterationMs) << " "
         << Unit;
      if (iterationRequest(Ctx.graph, P).training)
        OS << "; the last stage to finish ends its backward at " << formatNumber(Last->lastBackwardEnd) << " "
           << Unit << ", then all-reduce " << formatNumber(Last->allReduceMs) << " and optimizer step "
           << formatNumber(Last->optimizerMs) << " " << Unit;
      else
        OS << ", " << formatNumber(1e3 * P.globalMicrobatches * P.microbatchSamples / Price->iterationMs)
           << " samples/s";
      OS << "\n";
    } else {
      (void)Price.takeError();
    }
  } else {
    (void)Stages.takeError();
  }
  if (!Base) {
    OS << "  speed-up: none to report (" << Base.takeError().message() << ")\n";
    return;
  }
  if (!(P.objective > 0)) return;
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.2fx", Base->objective / P.objective);
  int Used = 0;
  for (int D : std::set<int>(Base->device.begin(), Base->device.end())) Used += Ctx.platform.isAccelerator(D);
  if (Used == 1)
    OS << "  speed-up over one device: " << Buf << " (" << formatNumber(Base->objective) << " " << Unit
       << " on one accelerator, the same global batch, schedule and optimizer step)\n";
  else
    OS << "  speed-up over the smallest plan that fits (" << Used << " stages on " << Used
       << " accelerators; one accelerator cannot hold the model): " << Buf << " ("
       << formatNumber(Base->objective) << " " << Unit
       << ", the same global batch, schedule and optimizer step)\n";
}

void printSpeedupAndWarnings(std::ostream &OS, const PassContext &Ctx, const Plan &P,
                             const std::string &Unit) {
  const Platform &Pf = Ctx.platform;
  const double One = oneDeviceTime(Ctx, P);
  bool Warned = false;
  if (isIterationObjective(P.objectiveKind)) {
    printIterationSpeedup(OS, Ctx, P, Unit);
  } else if (std::isfinite(One) && P.objective > 0) {
    char Buf[64];
    std::snprintf(Buf, sizeof(Buf), "%.2fx", One / P.objective);
    OS << "  speed-up over one device: " << Buf << " (" << formatNumber(One) << " " << Unit
       << " on one accelerator, transfers none)\n";
    if (Pf.accelerators > 1 && One / P.objective < 1.05 && (Warned = true))
      OS << "  warning: " << Pf.accelerators
         << " accelerators are no faster than one under this cost model: more devices buy nothing\n";
  }
  std::set<int> Used(P.device.begin(), P.device.end());
  int AccUsed = 0;
  // Issue 33: a device's data-parallel replicas run on the accelerators lent to it.
  for (int D : Used)
    AccUsed +=
        Pf.isAccelerator(D) ? (D < static_cast<int>(P.replicas.size()) ? std::max(1, P.replicas[D]) : 1) : 0;
  // Issue 33: an iteration plan leaves accelerators idle when no layout
  // using them priced better (a stage count that does not divide them).
  if (Pf.accelerators > 1 && AccUsed < Pf.accelerators && !Warned)
    OS << "  warning: the plan uses " << AccUsed << " of " << Pf.accelerators
       << (isIterationObjective(P.objectiveKind)
               ? " accelerators: no layout using more was faster under the iteration simulator\n"
               : " accelerators: more devices buy nothing for this graph (transfers cost more than they "
                 "save)\n");
  // Issue 37, item 6: a used accelerator with almost nothing to do (BLOOM-3
  // on 4 devices: two held 2-3 nodes of 0.015 and 0.025 ms) is a device the
  // plan does not really use; say so.
  double MaxCompute = 0;
  for (const DeviceUsage &U : P.usage) MaxCompute = std::max(MaxCompute, U.compute);
  std::string Idle;
  int IdleCount = 0;
  for (int D : Used) {
    if (!Pf.isAccelerator(D) || D >= static_cast<int>(P.usage.size()) || AccUsed < 2) continue;
    if (!(P.usage[D].compute < 0.01 * MaxCompute)) continue;
    int Nodes = static_cast<int>(std::count(P.device.begin(), P.device.end(), D));
    Idle += std::string(IdleCount++ ? ", " : "") + Pf.deviceName(D) + " (" + std::to_string(Nodes) +
            " nodes, " + formatNumber(P.usage[D].compute) + " " + Unit + ")";
  }
  if (IdleCount)
    OS << "  warning: " << Idle << (IdleCount > 1 ? " compute" : " computes")
       << " under 1% of the busiest device's " << formatNumber(MaxCompute) << " " << Unit
       << ": the plan effectively uses " << AccUsed - IdleCount << " of its " << AccUsed << " accelerators\n";
  // The cost model's view of CPU against accelerator, over the nodes both
  // run. Issue 23: only nodes whose two times come from the same kind of
  // source (a profile measures one kind; the other stays analytical), and
  // without the per-kernel overheads: a graph of tiny kernels is faster on a
  // core that dispatches faster than a GPU launches, which is no sign of a
  // wrong --platform; a core out-computing the accelerator is.
  double Acc = 0, Cpu = 0;
  int Faster = 0;
  for (const CostNode &N : Ctx.graph.nodes()) {
    if (!N.accSupported || N.costSource == "profile" || N.costSource == "profile-scaled") continue;
    if (N.accTime == 0 && N.cpuTime == 0) continue; // folded or fused: no kernel
    double Kernels = std::max<size_t>(1, N.onnxNodes.size());
    Acc += std::max(0.0, N.accTime - Kernels * Pf.accelerator.kernelOverheadMs);
    Cpu += std::max(0.0, N.cpuTime - Kernels * Pf.cpu.kernelOverheadMs);
    Faster += N.cpuTime < N.accTime;
  }
  if (Pf.accelerators > 0 && Acc > 0 && Cpu > 0 && Cpu < Acc)
    OS << "  warning: the cost model thinks one CPU core runs this graph faster than the accelerator ("
       << formatNumber(Cpu) << " against " << formatNumber(Acc) << " " << Unit
       << " of compute and memory time, kernel overheads left out); check --platform and --cost-model\n";
  else if (Pf.cpus > 0 && Faster > 0)
    OS << "  note: the cost model prices " << Faster
       << " node(s) faster on a CPU core than on the accelerator\n";
  // Issue 23: never a silent guess behind the objective.
  if (Ctx.model && P.objective > 0) {
    EstimatedSizeDependence D = estimatedSizeDependence(Ctx.graph, *Ctx.model, P, Pf);
    if (D.time > 0.01 * P.objective)
      OS << "  warning: the objective depends on " << D.tensors
         << " tensor size(s) shape inference could not determine (estimated from their producers): "
         << D.nodes << " node(s) and their transfers account for " << formatNumber(D.time) << " " << Unit
         << " of work summed over all devices (the objective is " << formatNumber(P.objective) << " " << Unit
         << ")\n";
  }
}

} // namespace

void onnxp::printRunSummary(std::ostream &OS, const PassContext &Ctx, const OutputOptions &O) {
  const Plan &P = *Ctx.plan;
  const CostGraph &G = Ctx.graph;
  const std::string &Unit = G.timeUnit;
  OS << "onnx-partition: " << O.input << ": " << G.numNodes() << " nodes, " << G.numEdges() << " edges"
     << (G.isTraining() ? " (training)" : " (inference)") << "\n";
  OS << "  algorithm " << P.algorithm << ": " << objectiveName(P.objectiveKind) << " "
     << formatNumber(P.objective) << " " << Unit;
  if (ownOptimumAbovePlan(P))
    OS << ", its own optimum " << formatNumber(P.lowerBound)
       << " (in its model; the plan as evaluated prices lower)";
  else if (!std::isnan(P.lowerBound)) OS << ", lower bound " << formatNumber(P.lowerBound);
  // Issue 22: a bound over a family this plan is not in (ip's bound over the
  // plans that colocate shared parameters, above its replicating plan).
  if (P.lowerBound > P.objective && !P.lowerBoundScope.empty() && P.lowerBoundScope != Plan::kAnyPlan &&
      !ownOptimumAbovePlan(P))
    OS << " (among " << P.lowerBoundScope << "; this plan is not one)";
  OS << ", solved in " << humanSeconds(P.solveSeconds) << "\n";
  printBounds(OS, P, Unit);
  printAlternatives(OS, P);
  printDevices(OS, Ctx, P, Unit);
  printSpeedupAndWarnings(OS, Ctx, P, Unit);
  if (wantsTopologySummary(G, Ctx.platform)) printTopologySummary(OS, G, Ctx.platform, P); // issue 21
  for (const std::string &N : Ctx.notes) OS << noteLine(N);
  for (const std::string &N : P.notes) OS << noteLine(N);
  if (!O.output.empty()) OS << "  wrote " << O.output << "\n";
  if (!O.report.empty()) OS << "  wrote " << O.report << "\n";
  if (!O.trace.empty()) OS << "  wrote " << O.trace << "\n";
}
