//===- Partition/PipeActions.h - Pipeline schedules as action lists -*- C++ -*-===//
//
// Issue 35: every pipeline schedule as one ordered list of actions per
// device, in the form of torch.distributed.pipelining's action IR: F
// (forward), I (backward for the input gradients, the zero-bubble paper's
// B), W (backward for the weight gradients) and B (the full backward, I
// and W together), each for one micro-batch and one virtual stage (a chunk
// of the model; a device holds one chunk, or several under the interleaved
// and V schedules).
//
// The lists are made by buildPipeProgram (pipeline/PipeActionSchedules.cpp:
// gpipe, 1f1b, interleaved-1f1b, zb-h1 written out; zb-h2 by a greedy list
// scheduler under a memory limit, pipeline/PipeGreedySchedule.cpp; zb-v and
// v-half by the zero-bubble paper's V construction, pipeline/
// PipeVShapeSchedule.cpp, or that greedy, the shorter replay), replayed by simulatePipeProgram (eval/
// PipeActionSimulator.cpp: each device runs its list in order, an action
// starts when the device is free and its inputs have arrived) and checked
// by checkPipeTimeline (eval/PipeActionCheck.cpp), which shares no code
// with either.
//
// Memory: a micro-batch's saved activations of a virtual stage are held
// from the start of its F to the end of its W (or B): the W still reads
// the layer inputs, so nothing is freed at I (conservative against the
// paper's M_W < M_B, Qi et al. ICLR'24 Table 1).
//
// Bubble: the zero-bubble paper's per-device measure (§2, and the
// controllable-memory paper's "longest stage time"): the largest, over
// devices, of the time from a device's first action's start to its last
// action's end less the device's busy time. Under post-validation of the
// optimizer (Qi et al. §4) iterations overlap by this parallelogram; the
// makespan (first start to last end over all devices) is what one
// iteration takes without it, and is what the iteration objective prices.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPEACTIONS_H
#define ONNXP_PARTITION_PIPEACTIONS_H

#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Support/ChromeTrace.h"
#include "onnx-partition/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace onnxp {

enum class PipeActionKind : unsigned char {
  Forward,      ///< "F"
  InputGrad,    ///< "I": the zero-bubble paper's B
  WeightGrad,   ///< "W"
  FullBackward, ///< "B": I and W together (gpipe, 1f1b, interleaved-1f1b)
};
/// torch.distributed.pipelining's names: "F", "I", "W", "B".
const char *pipeActionName(PipeActionKind K);

struct PipeAction {
  PipeActionKind kind = PipeActionKind::Forward;
  int micro = 0;
  int stage = 0; ///< virtual stage, 0 .. S-1 in model order
};

/// One virtual stage per micro-batch.
struct PipeStageCost {
  double forwardMs = 0;
  double inputGradMs = 0;     ///< B (I)
  double weightGradMs = 0;    ///< W
  double activationBytes = 0; ///< saved from F to W
  double outputBytes = 0;     ///< sent to the next virtual stage (its gradient comes back)
};

struct PipeProgram {
  PipelineScheduleKind kind = PipelineScheduleKind::OneFOneB;
  int devices = 0;
  int microbatches = 0;
  std::vector<int> deviceOfStage;               ///< virtual stage -> device
  std::vector<std::vector<PipeAction>> actions; ///< per device, in order
};

/// Milliseconds to move Bytes from device From to device To (0 when equal).
using PipeLinkMs = std::function<double(int From, int To, double Bytes)>;

struct PipeScheduleOptions {
  int virtualStages = 2; ///< chunks per device of interleaved-1f1b (v)
  /// Per device, the most saved-activation bytes the greedy schedules
  /// (zb-h2, zb-v, v-half) may hold; empty: the schedule's own limit (see
  /// buildPipeProgram).
  std::vector<double> activationLimit;
};

/// Whether K is priced as action lists here: interleaved-1f1b, the
/// zero-bubble kinds, v-half and auto. gpipe and 1f1b (and None) are not:
/// the pattern simulators and the iteration simulator, which runs no other
/// kind, price them.
bool isActionListSchedule(PipelineScheduleKind K);
/// How many virtual stages the schedule runs on D devices: D, v * D for
/// interleaved-1f1b, 2 * D for zb-v and v-half.
int pipeVirtualStages(PipelineScheduleKind K, int Devices, const PipeScheduleOptions &O);
/// Which device runs virtual stage S: S for one chunk per device, S mod D
/// (interleaved), the V for zb-v and v-half (S < D: S; else 2D - 1 - S).
int pipeDeviceOfStage(PipelineScheduleKind K, int Devices, int S);

/// The action lists of schedule K for M micro-batches over Stages (one
/// entry per virtual stage, pipeVirtualStages of them). Memory limits of
/// the greedy schedules, unless O gives them: zb-h2 2D - 1 micro-batches of
/// the device's largest chunk (Qi et al. §2.2), zb-v 2D chunks (the same
/// bytes as 1F1B's D whole-stage micro-batches, §5), v-half D + 2 chunks
/// ((D + 2) / 2 micro-batches, Qi et al. 2024, "Pipeline Parallelism with
/// Controllable Memory", Table 1). zb-h1 defers each stage's W while it
/// holds no more activation bytes than 1F1B's first stage (Qi et al.
/// §2.1): on equal stages stage s defers s of them.
Expected<PipeProgram> buildPipeProgram(PipelineScheduleKind K, const std::vector<PipeStageCost> &Stages,
                                       int Devices, int Microbatches, const PipeLinkMs &Link,
                                       const PipeScheduleOptions &O = {});

struct PipeTimedAction {
  PipeAction action;
  double start = 0, end = 0;
};

struct PipeTimeline {
  std::vector<std::vector<PipeTimedAction>> actions; ///< per device, in order
  double makespan = 0;
  double bubbleMs = 0;                     ///< see the file comment
  std::vector<double> busyMs;              ///< per device
  std::vector<int> peakInFlight;           ///< per device: (micro-batch, chunk) pairs held at once
  std::vector<double> peakActivationBytes; ///< per device
  double commBytes = 0; ///< pipeline communication: activations and their gradients between devices
  int commCount = 0;
};

/// Replays P (see the file comment). Errors on a malformed program (an
/// action twice or missing, a device out of range) and on a deadlock (an
/// action waiting for one that its device runs later).
Expected<PipeTimeline> simulatePipeProgram(const PipeProgram &P, const std::vector<PipeStageCost> &Stages,
                                           const PipeLinkMs &Link);

/// The independent check: every (micro-batch, virtual stage) has one F and
/// either one B or one I and one W, on the stage's device; F after the
/// previous stage's F (plus the link), I/B after its F and the next
/// stage's I/B (plus the link), W after its I; a device runs one action at
/// a time, each lasting its cost; the peaks recomputed from the times
/// equal the timeline's, and stay within Limit (bytes per device) when
/// given.
Error checkPipeTimeline(const PipeProgram &P, const std::vector<PipeStageCost> &Stages,
                        const PipeLinkMs &Link, const PipeTimeline &T,
                        const std::vector<double> *Limit = nullptr);

/// Whether K splits the backward into I and W (zb-h1, zb-h2, zb-v, v-half).
bool pipeScheduleSplitsBackward(PipelineScheduleKind K);

/// The actions of T drawn into Trace (--trace): one process per device
/// (named by DeviceNames when given), one slice per action named like the
/// action IR ("2F5": stage 2, F, micro-batch 5).
void drawPipeTimeline(const PipeProgram &P, const PipeTimeline &T, ChromeTrace &Trace,
                      const std::vector<std::string> &DeviceNames = {});

/// A as torch.distributed.pipelining's _Action prints it:
/// "<stage><kind><micro>" ("2F5": virtual stage 2, F, micro-batch 5).
std::string pipeActionLabel(const PipeAction &A);

/// P as torch.distributed.pipelining's action CSV: one row per device, one
/// column per action in order, each "<stage><kind><micro>" ("0F1", "3I0",
/// "3W0", "1B2"), as its schedules' _dump_csv/_load_csv write and read.
std::string pipeProgramCsv(const PipeProgram &P);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPEACTIONS_H
