//===- Partition/pipeline/ActionStagedSchedule.cpp - --schedule zb-h1 ... --===//
//
// See StagedSchedule.h, priceActionSchedule: a contiguous allocation of a
// chain priced by the action-list schedules of PipeActions.h, replayed
// and checked (checkPipeTimeline) before any figure is reported.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipeActions.h"
#include "onnx-partition/Partition/StagedSchedule.h"

#include "onnx-partition/IR/Platform.h"

#include <algorithm>

using namespace onnxp;

namespace {

struct WholeStage {
  PipeStageCost cost;
  double weightBytes = 0;
  int gpu = 0;
};

/// The GPUs' runs of blocks in chain order, each one stage.
std::vector<WholeStage> wholeStages(const Chain &C, const std::vector<int> &Gpu) {
  std::vector<WholeStage> Out;
  for (size_t B = 0; B < C.size(); ++B) {
    if (B == 0 || Gpu[B] != Gpu[B - 1]) {
      Out.emplace_back();
      Out.back().gpu = Gpu[B];
    }
    const ChainBlock &Blk = C.blocks[B];
    PipeStageCost &S = Out.back().cost;
    S.forwardMs += Blk.forwardTime;
    S.weightGradMs += Blk.backwardWeightTime;
    S.inputGradMs += std::max(0.0, Blk.backwardTime - Blk.backwardWeightTime);
    S.activationBytes += Blk.storedBytes;
    S.outputBytes = Blk.outputBytes;
    Out.back().weightBytes += Blk.weightBytes;
  }
  return Out;
}

} // namespace

Expected<StagedSchedulePrice> onnxp::priceActionSchedule(const Chain &C, const std::vector<int> &Gpu,
                                                         const PipelineLinks &Links, PipelineScheduleKind K,
                                                         int M, const PipeScheduleOptions &O,
                                                         std::vector<std::string> GpuNames,
                                                         PipeProgram *ProgramOut, PipeTimeline *TimelineOut,
                                                         const Chain *Chunked) {
  if (Gpu.size() != C.size())
    return makeInternalError("allocation of ", Gpu.size(), " blocks for ", C.size());
  std::vector<WholeStage> Whole = wholeStages(C, Gpu);
  const int P = static_cast<int>(Whole.size());
  const int S = pipeVirtualStages(K, P, O);
  const int Chunks = S / P;
  if (Chunked && static_cast<int>(Chunked->size()) != S)
    return makeInternalError(pipelineScheduleName(K), " over ", P, " stages has ", S,
                             " virtual stages, given ", Chunked->size(), " chunks");
  // Virtual stage k is part k mod Chunks of whole stage k / Chunks, in
  // model order (Chunked's block k, else an equal part); its device is the
  // schedule's (round-robin, V).
  std::vector<PipeStageCost> Stages(S);
  std::vector<double> Weights(P, 0);
  for (int K2 = 0; K2 < S; ++K2) {
    PipeStageCost &V = Stages[K2];
    if (Chunked) {
      Chain Block;
      Block.blocks.push_back(Chunked->blocks[K2]);
      const WholeStage One = wholeStages(Block, {0}).front();
      V = One.cost;
      Weights[pipeDeviceOfStage(K, P, K2)] += One.weightBytes;
      continue;
    }
    const WholeStage &W = Whole[K2 / Chunks];
    V = W.cost;
    V.forwardMs /= Chunks, V.inputGradMs /= Chunks, V.weightGradMs /= Chunks, V.activationBytes /= Chunks;
    Weights[pipeDeviceOfStage(K, P, K2)] += W.weightBytes / Chunks;
  }
  // Device d of the program is GPU Whole[d].gpu: the links between them.
  const PipeLinkMs Link = [&](int A, int B, double Bytes) {
    if (A == B || !(Bytes > 0)) return 0.0;
    const int GA = Whole[A].gpu, GB = Whole[B].gpu;
    if (!Links.perLink()) return Links.latencyMs + Bytes / Links.bandwidth * 1000.0;
    auto Dev = [&](int X) { return X < (int)Links.device.size() ? Links.device[X] : X; };
    const Platform &Pl = *Links.platform;
    return Pl.linkMs(Pl.linkBetween(Dev(GA), Dev(GB)), Bytes);
  };
  Expected<PipeProgram> Prog = buildPipeProgram(K, Stages, P, M, Link, O);
  if (!Prog) return Prog.takeError();
  Expected<PipeTimeline> T = simulatePipeProgram(*Prog, Stages, Link);
  if (!T) return T.takeError();
  if (Error E = checkPipeTimeline(*Prog, Stages, Link, *T))
    return makeInternalError("the ", pipelineScheduleName(K), " timeline fails its check: ", E.message());
  StagedSchedulePrice R;
  R.schedule = K;
  R.microbatches = M;
  R.iterationTime = T->makespan;
  R.bubbleMs = T->bubbleMs;
  R.commBytes = T->commBytes;
  R.virtualStages = S;
  const int NumGpus = Gpu.empty() ? 0 : *std::max_element(Gpu.begin(), Gpu.end()) + 1;
  R.gpus.assign(NumGpus, PipelineGpuMemory{});
  R.gpuNames = std::move(GpuNames);
  for (int D = 0; D < P; ++D) {
    PipelineGpuMemory &G = R.gpus[Whole[D].gpu];
    G.blocks = 1;
    G.weights = 2 * Weights[D]; // one version and its gradient (GpipeSimulator's terms)
    G.peakStash = T->peakActivationBytes[D];
    G.maxStashedMicrobatches = T->peakInFlight[D];
    G.computeLoad = T->busyMs[D];
    G.peak = G.weights + G.peakStash;
    G.peakTask =
        std::to_string(T->peakInFlight[D]) + (Chunks > 1 ? " chunk" : "") + " micro-batches in flight";
    R.peakMemory = std::max(R.peakMemory, G.peak);
    R.peakActivation = std::max(R.peakActivation, G.peakStash);
  }
  if (pipeScheduleSplitsBackward(K)) {
    bool AnyW = false;
    for (const ChainBlock &B : C.blocks) AnyW |= B.backwardWeightTime > 0;
    if (!AnyW)
      R.notes.push_back(std::string("no block has a weight-gradient time (backwardWeightTime): ") +
                        pipelineScheduleName(K) + " runs the whole backward as I (B)");
  }
  if (Chunks > 1)
    R.notes.push_back("each stage cut into " + std::to_string(Chunks) +
                      (Chunked ? " chunks of about equal forward time" : " equal chunks") +
                      " in model order, dealt " +
                      (K == PipelineScheduleKind::Interleaved1F1B ? "round-robin" : "in a V") + " to the " +
                      std::to_string(P) + " devices");
  if (ProgramOut) *ProgramOut = *Prog;
  if (TimelineOut) *TimelineOut = *T;
  return R;
}
