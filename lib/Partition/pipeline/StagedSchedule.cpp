//===- Partition/pipeline/StagedSchedule.cpp - --schedule gpipe|1f1b ------===//
//
// See StagedSchedule.h. GPipe's allocation must be contiguous (it is
// defined on a sequence of stages); 1F1B's modulo pattern places any (a
// graph plan's device running several stages, issue 37 item 6).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/StagedSchedule.h"
#include "onnx-partition/Partition/GpipeSimulator.h"
#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/PipelineSchedule.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <sstream>

using namespace onnxp;

Expected<StagedSchedulePrice> onnxp::priceStagedSchedule(const Chain &C, const std::vector<int> &Gpu,
                                                         const PipelineLinks &Links,
                                                         PipelineScheduleKind Schedule, int Microbatches,
                                                         ChromeTrace *Trace,
                                                         std::vector<std::string> GpuNames) {
  ONNXP_RETURN_IF_ERROR(C.validate());
  if (Schedule == PipelineScheduleKind::None) return makeUsageError("--schedule names no schedule");
  if (Microbatches < 1) return makeUsageError("--microbatches must be at least 1, got ", Microbatches);
  if (!(Links.bandwidth > 0)) return makeError("--schedule needs a positive link bandwidth between devices");
  if (Gpu.size() != C.size())
    return makeInternalError("allocation of ", Gpu.size(), " blocks for a chain of ", C.size());
  int NumGpus = Gpu.empty() ? 0 : *std::max_element(Gpu.begin(), Gpu.end()) + 1;
  // Contiguity is checked here for GPipe and the action lists: one run of
  // blocks per GPU. 1F1B's modulo pattern places any allocation (a GPU's
  // runs share its period; issue 37, item 6).
  const bool AnyAllocation = Schedule == PipelineScheduleKind::OneFOneB;
  for (size_t I = 1; I < Gpu.size() && !AnyAllocation; ++I)
    if (Gpu[I] != Gpu[I - 1])
      for (size_t J = 0; J + 1 < I; ++J)
        if (Gpu[J] == Gpu[I])
          return makeUsageError("--schedule prices contiguous stages; device ", Gpu[I], " holds blocks ",
                                J + 1, " and ", I + 1,
                                " but not all between (pipeline-ilp plans carry "
                                "their own 1F1B pattern: see --trace)");
  if (isActionListSchedule(Schedule)) {
    // Issue 35: the action-list schedules (default options; --virtual-stages
    // reaches them through API/ScheduleOutput).
    PipeProgram Program;
    PipeTimeline Timeline;
    std::vector<std::string> Names = GpuNames;
    Expected<StagedSchedulePrice> R =
        priceActionSchedule(C, Gpu, Links, Schedule, Microbatches, PipeScheduleOptions{}, std::move(GpuNames),
                            &Program, &Timeline);
    if (R && Trace) drawPipeTimeline(Program, Timeline, *Trace, Names);
    return R;
  }
  PipelineTasks Tasks(C, Links);
  StagedSchedulePrice S;
  S.schedule = Schedule;
  S.microbatches = Microbatches;
  S.gpuNames = std::move(GpuNames);
  if (Schedule == PipelineScheduleKind::Gpipe) {
    GpipeSimOptions O;
    O.microbatches = Microbatches;
    O.trace = Trace;
    Expected<GpipeSimResult> R = simulateGpipe(Tasks, Gpu, NumGpus, O);
    if (!R) return R.takeError();
    S.iterationTime = R->iterationTime;
    S.peakMemory = R->peakMemory;
    S.gpus = std::move(R->gpus);
  } else {
    // The allocation's load is the shortest period; with several runs of
    // blocks on a GPU their reservations may leave no gap long enough at it:
    // the period grows until the modulo schedule fits (at the sum of all
    // work it always does: one micro-batch at a time).
    const double Load = allocationLoad(Tasks, Gpu, NumGpus);
    Expected<PeriodicPattern> Pat = buildModuloPattern(Tasks, Gpu, NumGpus, Load);
    for (double T = Load * 1.01; !Pat && AnyAllocation && T < 2 * Tasks.numTasks() * Load; T *= 1.01) {
      (void)Pat.takeError();
      Pat = buildModuloPattern(Tasks, Gpu, NumGpus, T);
    }
    if (!Pat) return Pat.takeError();
    PipelineSimOptions O;
    O.numBatches = Microbatches;
    O.trace = Trace;
    Expected<PipelineSimResult> R = simulatePipeline(Tasks, *Pat, O);
    if (!R) return R.takeError();
    S.iterationTime = R->makespan;
    S.period = Pat->period;
    S.peakMemory = R->peakMemory;
    S.gpus = std::move(R->gpus);
  }
  return S;
}

namespace {
/// Bytes in the largest binary unit that keeps the number at least 1.
std::string human(double Bytes) {
  const char *Units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int U = 0;
  while (U < 4 && Bytes >= 1024) Bytes /= 1024, ++U;
  std::ostringstream OS;
  OS << std::setprecision(U == 0 ? 12 : 4) << Bytes << " " << Units[U];
  return OS.str();
}
/// Issue 37, item 5: a GPU's figure in the device table's terms, which add
/// up to its peak, then how it stands to the device table's own figure.
std::string deviceMemoryLine(const StagedSchedulePrice &S, size_t G) {
  const DeviceMemory &M = S.deviceMemory[G];
  const int Held = std::max(1, S.gpus[G].maxStashedMicrobatches);
  std::string Out = "peak " + humanBytes(M.peak) + " =";
  bool First = true;
  auto Add = [&](const std::string &Name, double B) {
    if (!(B > 0)) return;
    Out += (First ? " " : " + ") + Name + " " + humanBytes(B);
    First = false;
  };
  Add("weights", M.weights);
  Add("gradients", M.gradients);
  Add("optimizer state", M.optimizerState);
  Add("saved activations", M.savedActivations);
  Add("transient", M.transient);
  Add("saved activations of " + std::to_string(Held - 1) + " more micro-batch(es) in flight", M.inFlight);
  if (First) Out += " 0 bytes";
  const double Checked = G < S.checkedPeak.size() ? S.checkedPeak[G] : -1;
  const int Counted = G < S.checkedInFlight.size() ? S.checkedInFlight[G] : -1;
  if (Checked < 0 || Counted < 0) return Out;
  if (Held == Counted) return Out + " (the device table's figure)";
  return Out + " (the device table's " + humanBytes(Checked) + " counts " + std::to_string(Counted) +
         " micro-batch(es) in flight, this schedule holds " + std::to_string(Held) + ")";
}
} // namespace

std::string onnxp::describeStagedSchedule(const StagedSchedulePrice &S) {
  std::ostringstream OS;
  OS << std::setprecision(6);
  OS << "schedule " << pipelineScheduleName(S.schedule) << ", " << S.microbatches
     << " micro-batches: iteration " << S.iterationTime << " ms (" << S.iterationTime / S.microbatches
     << " ms per micro-batch";
  if (S.period > 0) OS << ", period " << S.period << " ms";
  if (S.bubbleMs >= 0)
    OS << ", bubble " << S.bubbleMs << " ms, " << S.virtualStages
       << " virtual stages, pipeline communication " << human(S.commBytes);
  // Issue 37, item 5: with the device table's figures, in its units.
  OS << "), peak memory " << (S.deviceMemory.empty() ? human(S.peakMemory) : humanBytes(S.peakMemory));
  if (S.bubbleMs >= 0) OS << ", peak saved activations " << human(S.peakActivation);
  OS << "\n";
  for (const std::string &N : S.notes) OS << "  note: " << N << "\n";
  for (size_t G = 0; G < S.gpus.size(); ++G) {
    const PipelineGpuMemory &M = S.gpus[G];
    if (M.blocks == 0) continue;
    OS << "  " << (G < S.gpuNames.size() ? S.gpuNames[G] : "GPU " + std::to_string(G)) << ": ";
    if (G < S.deviceMemory.size()) {
      OS << deviceMemoryLine(S, G) << "\n";
      continue;
    }
    OS << "peak " << human(M.peak);
    // Issue 37, item 6: a GPU whose steps hold nothing has no peak step;
    // item 5: the iteration simulator's stages (no step named) hold their
    // model states and the activations of the micro-batches in flight.
    if (M.peakTask.empty() && M.peak > M.weights) {
      OS << " = weights, gradients and optimizer state " << human(M.weights) << " + saved activations of "
         << M.maxStashedMicrobatches << " micro-batch(es) in flight " << human(M.peak - M.weights) << "\n";
      continue;
    }
    if (M.peakTask.empty()) {
      OS << " (no step holds memory: weights " << human(M.weights) << ")\n";
      continue;
    }
    OS << " at " << M.peakTask << " = weights " << human(M.weights) << " + buffers " << human(M.buffers)
       << " + stash " << human(M.peakStash) << " + kept outputs " << human(M.peakDirect) << " + running step "
       << human(M.peakTaskIo);
    if (M.optimizerState > 0) OS << " + optimizer state " << human(M.optimizerState);
    OS << "\n";
  }
  return OS.str();
}

std::string onnxp::stagedScheduleJson(const StagedSchedulePrice &S) {
  nlohmann::json J;
  J["schedule"] = pipelineScheduleName(S.schedule);
  J["microbatches"] = S.microbatches;
  J["iteration_ms"] = S.iterationTime;
  J["per_microbatch_ms"] = S.iterationTime / S.microbatches;
  if (S.period > 0) J["period_ms"] = S.period;
  if (S.bubbleMs >= 0) {
    J["bubble_ms"] = S.bubbleMs;
    J["virtual_stages"] = S.virtualStages;
    J["pipeline_communication_bytes"] = S.commBytes;
    J["peak_activation_bytes"] = S.peakActivation;
  }
  J["peak_memory_bytes"] = S.peakMemory;
  nlohmann::json Gpus = nlohmann::json::array();
  for (size_t G = 0; G < S.gpus.size(); ++G) {
    const PipelineGpuMemory &M = S.gpus[G];
    if (M.blocks == 0) continue;
    const std::string Name = G < S.gpuNames.size() ? S.gpuNames[G] : "GPU " + std::to_string(G);
    if (G < S.deviceMemory.size()) {
      // Issue 37, item 5: the device table's terms (memory_model "liveness").
      const DeviceMemory &D = S.deviceMemory[G];
      Gpus.push_back({{"device", Name},
                      {"memory_model", "liveness"},
                      {"peak_bytes", D.peak},
                      {"weights_bytes", D.weights},
                      {"gradients_bytes", D.gradients},
                      {"optimizer_state_bytes", D.optimizerState},
                      {"saved_activations_bytes", D.savedActivations},
                      {"transient_bytes", D.transient},
                      {"in_flight_bytes", D.inFlight},
                      {"microbatches_in_flight", std::max(1, M.maxStashedMicrobatches)},
                      {"compute_ms", M.computeLoad}});
      continue;
    }
    Gpus.push_back({{"device", Name},
                    {"peak_bytes", M.peak},
                    {"peak_at", M.peakTask},
                    {"weights_bytes", M.weights},
                    {"buffers_bytes", M.buffers},
                    {"stash_bytes", M.peakStash},
                    {"kept_outputs_bytes", M.peakDirect},
                    {"running_step_bytes", M.peakTaskIo},
                    {"optimizer_state_bytes", M.optimizerState},
                    {"compute_ms", M.computeLoad}});
  }
  J["devices"] = Gpus;
  return J.dump();
}
