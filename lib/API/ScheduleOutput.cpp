//===- API/ScheduleOutput.cpp - --schedule gpipe|1f1b ----===//
//
// See ScheduleOutput.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/ScheduleOutput.h"

#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Partition/IterationTrace.h"
#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/StagedPlanChain.h"
#include "onnx-partition/Partition/VirtualStagePlan.h"
#include "onnx-partition/Partition/eval/IterationObjective.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Pass/WrittenPlacement.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <set>

using namespace onnxp;

namespace {
/// Issue 33: under the iteration objectives the schedule's iteration is the
/// iteration simulator's (replicas, all-reduce and optimizer step
/// included), so the line "schedule NAME, M micro-batches: iteration X ms"
/// prints the objective; one row per stage, its busiest replica's memory;
/// Trace, when set, gets the replay (IterationTrace.h).
Expected<StagedSchedulePrice> iterationSchedule(const PassContext &Ctx, const Plan &Pl, ChromeTrace *Trace) {
  Expected<std::vector<IterationStage>> Stages = iterationStages(Ctx.graph, Ctx.platform, Pl);
  if (!Stages) return Stages.takeError().withContext("--schedule");
  const IterationRequest Req = iterationRequest(Ctx.graph, Pl);
  Expected<IterationPrice> Price = simulateIteration(*Stages, Ctx.platform, Req);
  if (!Price) return Price.takeError().withContext("--schedule");
  if (Trace) *Trace = traceIteration(*Stages, Ctx.platform, Req, *Price);
  StagedSchedulePrice R;
  R.schedule = Req.schedule;
  R.microbatches = Req.microbatches;
  R.iterationTime = Price->iterationMs;
  for (size_t S = 0; S < Stages->size(); ++S) {
    const IterationStage &St = (*Stages)[S];
    std::string Name = "stage " + std::to_string(S) + " (" + Ctx.platform.deviceName(St.devices.front());
    if (St.devices.size() > 1) Name += " x" + std::to_string(St.devices.size()) + " replicas";
    R.gpuNames.push_back(Name + ")");
    PipelineGpuMemory M;
    M.blocks = 1;
    M.peak = Price->stages[S].peakMemory;
    M.weights = St.stateBytes;
    M.maxStashedMicrobatches = Price->stages[S].peakInFlight;
    R.gpus.push_back(M);
    R.peakMemory = std::max(R.peakMemory, M.peak);
  }
  return R;
}

/// The GPUs of a graph plan's stages when each device is one GPU: gpu[s]
/// numbers devices in the order of their first stage (a plan of one stage
/// per device keeps gpu[s] = s and the stage's name); device[g] is GPU g's
/// platform device; a device of several stages is named with them.
struct DeviceGpus {
  std::vector<int> gpu, device;
  std::vector<std::string> names;
  std::vector<std::vector<int>> stages; ///< per GPU
};

DeviceGpus deviceGpus(const Chain &Stages, const std::vector<int> &DeviceOfStage, const Platform &P) {
  DeviceGpus D;
  std::vector<std::vector<int>> &StagesOf = D.stages;
  for (size_t S = 0; S < DeviceOfStage.size(); ++S) {
    auto It = std::find(D.device.begin(), D.device.end(), DeviceOfStage[S]);
    if (It == D.device.end()) {
      D.device.push_back(DeviceOfStage[S]);
      StagesOf.emplace_back();
      It = D.device.end() - 1;
    }
    D.gpu.push_back(static_cast<int>(It - D.device.begin()));
    StagesOf[D.gpu.back()].push_back(static_cast<int>(S));
  }
  for (size_t G = 0; G < D.device.size(); ++G) {
    if (StagesOf[G].size() == 1) {
      D.names.push_back(Stages.blocks[StagesOf[G].front()].name);
      continue;
    }
    std::string List;
    for (int S : StagesOf[G]) List += (List.empty() ? "" : ", ") + std::to_string(S);
    D.names.push_back(P.deviceName(D.device[G]) + " (stages " + List + ")");
  }
  return D;
}

/// Issue 37, item 5: a training graph plan's memory per GPU of R in the
/// terms of the device table (Cost/MemoryAccounting.h livenessMemory, the
/// memory check's model): the nodes of each stage (Stages, on GPU
/// GpuOfStage[s], platform device DeviceOfGpu[g]) as one device, with the
/// micro-batches R's simulator measured in flight there. The chain
/// simulators' own terms (seed 000 eq. 33: every weight x3 or x2, whether
/// it trains or not; only the boundary activation stashed) are replaced,
/// so a GPU has one figure, and where it is one device of the table, the
/// table's figure when both count the same micro-batches.
void chargeDeviceMemory(const PassContext &Ctx, const Chain &Stages, const std::vector<int> &GpuOfStage,
                        const std::vector<int> &DeviceOfGpu, StagedSchedulePrice &R) {
  const CostGraph &G = Ctx.graph;
  const int NumGpus = static_cast<int>(R.gpus.size());
  std::vector<int> Row(G.numNodes(), 0);
  for (size_t S = 0; S < Stages.size(); ++S)
    for (int V : Stages.blocks[S].nodes) Row[V] = GpuOfStage[S];
  LivenessOptions LO;
  for (const PipelineGpuMemory &M : R.gpus) LO.inFlight.push_back(std::max(1, M.maxStashedMicrobatches));
  R.deviceMemory = livenessMemory(G, Row, NumGpus, {}, LO);
  const int D = Ctx.platform.numDevices();
  const std::vector<DeviceMemory> Table = planMemoryByTerm(G, Ctx.platform, *Ctx.plan);
  const std::vector<int> Counted = inFlightMicrobatches(G, *Ctx.plan, D);
  std::vector<int> GpusOn(D, 0);
  for (int Dev : DeviceOfGpu)
    if (Dev >= 0 && Dev < D) ++GpusOn[Dev];
  R.checkedPeak.assign(NumGpus, -1);
  R.checkedInFlight.assign(NumGpus, -1);
  R.peakMemory = 0;
  for (int Gp = 0; Gp < NumGpus; ++Gp) {
    R.gpus[Gp].peak = R.deviceMemory[Gp].peak;
    if (R.gpus[Gp].blocks > 0) R.peakMemory = std::max(R.peakMemory, R.gpus[Gp].peak);
    const int Dev = Gp < static_cast<int>(DeviceOfGpu.size()) ? DeviceOfGpu[Gp] : -1;
    // The table's figure stands for this GPU alone when the GPU is its
    // device's only one (host memory is not in the table).
    if (Dev < 0 || Dev >= D || GpusOn[Dev] != 1 || !Ctx.platform.isAccelerator(Dev) ||
        Dev >= static_cast<int>(Table.size()))
      continue;
    R.checkedPeak[Gp] = Table[Dev].peak;
    R.checkedInFlight[Gp] = Counted[Dev];
  }
}

PipeScheduleOptions pipeOptions(const OutputOptions &O) {
  PipeScheduleOptions P;
  P.virtualStages = O.virtualStages;
  return P;
}

/// Issue 35: interleaved-1f1b, zb-v and v-half run each of a graph plan's
/// Stages (on Devices) as chunks: the chain of those chunks, one block per
/// virtual stage, cut by virtualStagePlan as the write-back writes them;
/// nullopt for one chunk per stage, or with Why when the nodes cannot be
/// cut so (the pricer then takes equal parts).
std::optional<Chain> chunkChain(const PassContext &Ctx, const Plan &Pl, const Chain &Stages,
                                const std::vector<int> &Devices, PipelineScheduleKind K,
                                const PipeScheduleOptions &O, std::string &Why) {
  const int P = static_cast<int>(Stages.size());
  const int S = pipeVirtualStages(K, P, O);
  if (S <= P) return std::nullopt;
  Expected<Plan> VP = virtualStagePlan(Ctx.graph, Ctx.platform, Pl, Stages, Devices, K, S);
  if (!VP) {
    Why = VP.takeError().message();
    return std::nullopt;
  }
  Expected<Chain> C = stagesAsChain(Ctx.graph, Ctx.platform, *VP);
  if (!C) {
    Why = C.takeError().message();
    return std::nullopt;
  }
  if (static_cast<int>(C->size()) != S) {
    Why = "the chunks make " + std::to_string(C->size()) + " stages, not " + std::to_string(S);
    return std::nullopt;
  }
  return std::move(*C);
}

/// Issue 35, --schedule auto: the plan's cut (made under 1F1B's in-flight
/// memory, Cost/PipelineInFlight.h) priced under every schedule that fits:
/// memory checked by the plan validator with the schedule's own in-flight
/// micro-batches (Fits), and one that cannot run (interleaved-1f1b when M
/// is not a multiple of the devices) skipped; the shortest iteration wins,
/// ties to the earlier schedule in PipelineScheduleKind's order. Price(K)
/// prices the cut under K.
/// Chosen, when a named kind, is the schedule auto already chose with the
/// cut (API/ScheduleCut.h) and the write-back wrote: it is the result, the
/// others still priced beside it for the note.
template <typename PriceFn, typename FitsFn>
Expected<StagedSchedulePrice> autoSchedule(PriceFn Price, FitsFn Fits, PipelineScheduleKind Chosen) {
  const bool Fixed = Chosen != PipelineScheduleKind::None && Chosen != PipelineScheduleKind::Auto;
  std::optional<StagedSchedulePrice> Best;
  std::string Tried;
  for (PipelineScheduleKind K : namedPipelineSchedules()) {
    const std::string Name = pipelineScheduleName(K);
    Error Fit = Fits(K);
    if (Fit) {
      Tried += "; " + Name + ": " + Fit.message();
      continue;
    }
    Expected<StagedSchedulePrice> R = Price(K);
    if (!R) {
      Tried += "; " + Name + ": " + R.takeError().message();
      continue;
    }
    Tried += "; " + Name + " " + formatNumber(R->iterationTime) + " ms";
    if (Fixed ? K == Chosen : !Best || R->iterationTime < Best->iterationTime * (1 - 1e-12))
      Best = std::move(*R);
  }
  if (!Best) return makeError("--schedule auto: no schedule fits the plan", Tried);
  Best->notes.push_back(std::string("auto chose ") + pipelineScheduleName(Best->schedule) + " (" +
                        Tried.substr(2) + ")");
  return *Best;
}
} // namespace

Expected<StagedSchedulePrice> onnxp::scheduleGraphPlan(const PassContext &Ctx, const OutputOptions &O,
                                                       ChromeTrace *Trace) {
  // Issue 35: the stages priced are the ones the write-back writes (a
  // device may run several), with or without -o: one plan, one price.
  const Plan Pl = withWrittenStages(Ctx, *Ctx.plan);
  if (isIterationObjective(Pl.objectiveKind)) {
    if (isActionListSchedule(O.schedule))
      return makeUsageError("--schedule ", pipelineScheduleName(O.schedule),
                            ": the iteration objectives (--global-batch) simulate gpipe and 1f1b only");
    return iterationSchedule(Ctx, Pl, Trace);
  }
  std::vector<int> Devices;
  Expected<Chain> Stages = stagesAsChain(Ctx.graph, Ctx.platform, Pl, &Devices);
  if (!Stages) return Stages.takeError().withContext("--schedule");
  std::vector<int> Gpu(Stages->size());
  std::vector<std::string> Names;
  for (size_t S = 0; S < Gpu.size(); ++S) {
    Gpu[S] = static_cast<int>(S);
    Names.push_back(Stages->blocks[S].name);
  }
  // Stage s is GPU s, standing for the device it runs on: the link between
  // two stages is the platform's between their devices (issue 21).
  const PipelineLinks Links = PipelineLinks::of(Ctx.platform, Devices);
  // Issue 37, item 6: under 1f1b the stages of one device share it (its
  // period holds all their work; BLOOM-3's acc2 ran two stages, 16.79 ms,
  // under a 13.92 ms period when each stage was a GPU of its own).
  const DeviceGpus OnDevices = deviceGpus(*Stages, Devices, Ctx.platform);
  auto PriceAs = [&](PipelineScheduleKind K) -> Expected<StagedSchedulePrice> {
    if (!isActionListSchedule(K)) {
      Expected<StagedSchedulePrice> R =
          K == PipelineScheduleKind::OneFOneB
              ? priceStagedSchedule(*Stages, OnDevices.gpu, PipelineLinks::of(Ctx.platform, OnDevices.device),
                                    K, O.microbatches, Trace, OnDevices.names)
              : priceStagedSchedule(*Stages, Gpu, Links, K, O.microbatches, Trace, Names);
      if (!R) return R;
      // The pattern simulators price gpipe and 1f1b; their action lists
      // (fixed orders, independent of the costs) are for pipeline.json.
      const int P = static_cast<int>(Stages->size());
      Expected<PipeProgram> Program = buildPipeProgram(K, std::vector<PipeStageCost>(P), P, R->microbatches,
                                                       [](int, int, double) { return 0.0; });
      if (!Program) return Program.takeError();
      R->program = std::make_shared<const PipeProgram>(std::move(*Program));
      R->programDevices = Devices;
      return R;
    }
    PipeProgram Program;
    PipeTimeline Timeline;
    std::string NotCut;
    const std::optional<Chain> Chunked = chunkChain(Ctx, Pl, *Stages, Devices, K, pipeOptions(O), NotCut);
    Expected<StagedSchedulePrice> R =
        priceActionSchedule(*Stages, Gpu, Links, K, O.microbatches, pipeOptions(O), Names, &Program,
                            &Timeline, Chunked ? &*Chunked : nullptr);
    if (R && Trace) drawPipeTimeline(Program, Timeline, *Trace, Names);
    if (R && !NotCut.empty()) {
      R->notes.push_back("the stages' nodes cannot be cut into its chunks (" + NotCut + ")");
      R->equalChunks = true;
    }
    if (R) {
      R->program = std::make_shared<const PipeProgram>(std::move(Program));
      R->programDevices = Devices;
    }
    return R;
  };
  auto Fits = [&](PipelineScheduleKind K) { return scheduleFits(Ctx, Pl, K); };
  if (O.schedule == PipelineScheduleKind::Auto && Trace)
    return makeUsageError("--schedule auto: --trace needs a named schedule");
  Expected<StagedSchedulePrice> R = O.schedule == PipelineScheduleKind::Auto
                                        ? autoSchedule(PriceAs, Fits, Pl.pipelineSchedule)
                                        : PriceAs(O.schedule);
  if (!R) return R.takeError().withContext("--schedule");
  // Issue 37, item 5: the optimizer state memory accounting charged the
  // stage's nodes (--optimizer) is resident all iteration: it adds to every
  // instant, so to the peak, as in the liveness figure.
  const bool OnDevice = R->schedule == PipelineScheduleKind::OneFOneB;
  if (OnDevice) R->gpuStages = OnDevices.stages;
  // Issue 37, item 5: one memory figure per device on training graphs.
  // Schedules of chunks deal a stage's nodes over several devices, which
  // the GPUs here do not say: they keep the pricer's terms.
  // Plans checked by another model (a periodic pattern's "schedule") keep
  // the simulators' terms, which their device table shows too.
  if (Ctx.graph.isTraining() && Ctx.plan->memoryModel == MemoryModel::Liveness &&
      R->virtualStages <= static_cast<int>(Stages->size())) {
    chargeDeviceMemory(Ctx, *Stages, OnDevice ? OnDevices.gpu : Gpu, OnDevice ? OnDevices.device : Devices,
                       *R);
    return R;
  }
  for (size_t S = 0; S < Stages->size(); ++S) {
    const size_t G = OnDevice ? OnDevices.gpu[S] : S;
    if (G >= R->gpus.size()) continue;
    for (int V : Stages->blocks[S].nodes) R->gpus[G].optimizerState += Ctx.graph.node(V).optimizerBytes;
  }
  for (PipelineGpuMemory &M : R->gpus) {
    M.peak += M.optimizerState;
    R->peakMemory = std::max(R->peakMemory, M.peak);
  }
  return R;
}

std::vector<PipelineScheduleKind> onnxp::namedPipelineSchedules() {
  std::vector<PipelineScheduleKind> Named;
  for (const std::string &Name : pipelineScheduleNames()) {
    const PipelineScheduleKind K = *parsePipelineSchedule(Name);
    if (K != PipelineScheduleKind::Auto && K != PipelineScheduleKind::None) Named.push_back(K);
  }
  return Named;
}

Error onnxp::scheduleFits(const PassContext &Ctx, const Plan &Pl, PipelineScheduleKind K) {
  Plan Copy = Pl;
  Copy.pipelineSchedule = K;
  return validatePlan(Ctx.graph, Ctx.platform, Copy);
}

Expected<StagedSchedulePrice> onnxp::scheduleChainPlan(const Chain &C, const Platform &P,
                                                       const Plan &BlockPlan, const OutputOptions &O,
                                                       ChromeTrace *Trace) {
  if (BlockPlan.device.size() != C.size())
    return makeUsageError("--schedule: the plan of '", BlockPlan.algorithm, "' places ",
                          BlockPlan.device.size(), " blocks of ", C.size());
  std::vector<std::string> Names;
  int Max = 0;
  for (int D : BlockPlan.device) Max = std::max(Max, D);
  for (int D = 0; D <= Max; ++D) Names.push_back(P.deviceName(D));
  auto PriceAs = [&](PipelineScheduleKind K) -> Expected<StagedSchedulePrice> {
    if (!isActionListSchedule(K))
      return priceStagedSchedule(C, BlockPlan.device, PipelineLinks::of(P), K, O.microbatches, Trace, Names);
    PipeProgram Program;
    PipeTimeline Timeline;
    Expected<StagedSchedulePrice> R =
        priceActionSchedule(C, BlockPlan.device, PipelineLinks::of(P), K, O.microbatches, pipeOptions(O),
                            Names, &Program, &Timeline);
    if (R && Trace) drawPipeTimeline(Program, Timeline, *Trace, Names);
    return R;
  };
  if (O.schedule == PipelineScheduleKind::Auto && Trace)
    return makeUsageError("--schedule auto: --trace needs a named schedule");
  // A chain plan's memory is its planner's (the chain has no liveness to
  // re-check per schedule): every schedule is a candidate.
  Expected<StagedSchedulePrice> R =
      O.schedule == PipelineScheduleKind::Auto
          ? autoSchedule(
                PriceAs, [](PipelineScheduleKind) { return Error::success(); }, PipelineScheduleKind::Auto)
          : PriceAs(O.schedule);
  if (!R) return R.takeError().withContext("--schedule");
  return R;
}

std::string onnxp::withStagedSchedule(const std::string &ReportJson, const StagedSchedulePrice &S) {
  nlohmann::json J = nlohmann::json::parse(ReportJson);
  J["staged_schedule"] = nlohmann::json::parse(stagedScheduleJson(S));
  return J.dump(2) + "\n";
}

namespace {
/// Why the ranks of P (on the devices RankDevice) are not the written
/// stages' devices one to one, so that a runner cannot run the lists on the
/// stage models; empty when they are.
std::string notRunnable(const PassContext &Ctx, const PipeProgram &P,
                        const std::vector<std::string> &RankDevice) {
  const size_t Chunks = P.deviceOfStage.size() / static_cast<size_t>(std::max(1, P.devices));
  const std::vector<int> &Virtual = Ctx.placement->stageVirtual;
  if (Chunks > 1 && !Virtual.empty()) {
    // The stage models are the chunks (WriteBackPasses.cpp
    // scheduledPlacement): each on its virtual stage's rank.
    for (const StageModel &SM : Ctx.stages->stages) {
      const int V = SM.stage < static_cast<int>(Virtual.size()) ? Virtual[SM.stage] : -1;
      if (V < 0 || V >= static_cast<int>(P.deviceOfStage.size()) ||
          RankDevice[P.deviceOfStage[V]] != Ctx.placement->deviceNames[SM.device])
        return "stage " + SM.name + " is not on the rank of its chunk";
    }
    return "";
  }
  if (Chunks > 1)
    return std::string(pipelineScheduleName(P.kind)) + " prices the plan's stages cut into " +
           std::to_string(Chunks) + " chunks each, dealt " +
           (P.kind == PipelineScheduleKind::Interleaved1F1B ? "round-robin" : "in a V") +
           " to the devices; the stage models are the plan's cut, not re-placed so" +
           (Ctx.placement->notVirtual.empty() ? "" : " (" + Ctx.placement->notVirtual + ")");
  std::set<std::string> Seen;
  for (const std::string &D : RankDevice)
    if (!Seen.insert(D).second) return "device " + D + " runs two of the plan's pipeline stages";
  for (const StageModel &SM : Ctx.stages->stages)
    if (Ctx.placement->replicasOf(SM.device).size() >= 2)
      return "stage " + SM.name + " runs as data-parallel replicas";
  return "";
}
} // namespace

Expected<std::string> onnxp::withScheduleActions(const PassContext &Ctx, const OutputOptions &O,
                                                 const std::string &PipelineJson, std::string &Csv) {
  Csv.clear();
  if (O.schedule == PipelineScheduleKind::None || !Ctx.plan || !Ctx.stages || !Ctx.placement ||
      isIterationObjective(Ctx.plan->objectiveKind))
    return PipelineJson;
  Expected<StagedSchedulePrice> S = scheduleGraphPlan(Ctx, O);
  if (!S) return S.takeError();
  if (!S->program) return PipelineJson;
  const PipeProgram &P = *S->program;
  if (S->programDevices.size() != static_cast<size_t>(P.devices))
    return makeInternalError("the ", pipelineScheduleName(P.kind), " program has ", P.devices, " ranks for ",
                             S->programDevices.size(), " devices");
  std::vector<std::string> RankDevice;
  for (int D : S->programDevices) RankDevice.push_back(Ctx.platform.deviceName(D));
  const std::string Why = notRunnable(Ctx, P, RankDevice);
  nlohmann::json Ranks = nlohmann::json::array();
  for (int R = 0; R < P.devices; ++R) {
    nlohmann::json Actions = nlohmann::json::array();
    for (const PipeAction &A : P.actions[R]) Actions.push_back(pipeActionLabel(A));
    // The written stages the rank's actions run: its device's (the runner
    // runs the forward ones at F, the backward ones at I or B).
    // Under chunks, "virtual_stages" pairs each with its chunk (the runner
    // runs at <v>F only the forward stages of chunk v).
    nlohmann::json Written = nlohmann::json::array(), VirtualOf = nlohmann::json::array();
    const std::vector<int> &Virtual = Ctx.placement->stageVirtual;
    if (Why.empty())
      for (const StageModel &SM : Ctx.stages->stages)
        if (Ctx.placement->deviceNames[SM.device] == RankDevice[R]) {
          Written.push_back(SM.stage);
          if (!Virtual.empty()) VirtualOf.push_back({SM.stage, Virtual[SM.stage]});
        }
    Ranks.push_back({{"rank", R}, {"device", RankDevice[R]}, {"stages", Written}, {"actions", Actions}});
    if (!VirtualOf.empty()) Ranks.back()["virtual_stages"] = VirtualOf;
  }
  nlohmann::json A = {{"schedule", pipelineScheduleName(P.kind)},
                      {"microbatches", P.microbatches},
                      {"format", "<stage><F|I|W|B><micro-batch>"},
                      {"stage_ranks", P.deviceOfStage},
                      {"splits_backward", pipeScheduleSplitsBackward(P.kind)},
                      {"csv", kPipelineActionsCsv},
                      {"runnable", Why.empty()},
                      {"ranks", Ranks}};
  if (!Why.empty()) A["not_runnable"] = Why;
  nlohmann::json J = nlohmann::json::parse(PipelineJson);
  J["schedule_actions"] = std::move(A);
  Csv = pipeProgramCsv(P);
  return J.dump(2) + "\n";
}
