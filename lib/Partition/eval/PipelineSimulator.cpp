//===- Partition/eval/PipelineSimulator.cpp - Replays a 1F1B pattern -------===//
//
// Unrolls a PeriodicPattern over many minibatches and checks it like a
// machine would run it (PipelineSimulator.h). Memory is swept per GPU over
// its task instances in time order: a forward task adds its stash after it
// starts, a backward task frees it after it ran, an output kept for the next
// task on the same GPU lives until that task starts (where it becomes the
// task's input). The total at each task start is what §4.2's eq. (36)
// bounds for that task.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipelineSimulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

using namespace onnxp;

namespace {
struct Instance {
  double Start, End;
  int Task; // task index, or communication index for links
  long Batch;
};

std::string taskName(const PipelineTasks &Tasks, int K) {
  return std::string(Tasks.isForward(K) ? "F" : "B") + std::to_string(Tasks.blockOf(K) + 1);
}

bool byTime(const Instance &A, const Instance &B) {
  if (A.Start != B.Start) return A.Start < B.Start;
  if (A.End != B.End) return A.End < B.End;
  // Zero-length tasks at one instant: chain order (the order the ILP's
  // warm start and the pattern builder give them too).
  if (A.Task != B.Task) return A.Task < B.Task;
  return A.Batch < B.Batch;
}

using LinkInstances = std::map<std::pair<int, int>, std::vector<Instance>>;

/// The trace's steady-state window [from, to) and the time tolerance.
struct Window {
  double from, to, eps;
  bool contains(double Start) const { return Start >= from - eps && Start < to - eps; }
};

/// Dependencies, batch by batch: every task instance on its GPU, every
/// transfer on its link, each after what it needs.
Error unrollInstances(const PipelineTasks &Tasks, const PeriodicPattern &P, long NB, double Eps,
                      std::vector<std::vector<Instance>> &OnGpu, LinkInstances &OnLink) {
  const int N = Tasks.numTasks();
  for (long B = 0; B < NB; ++B)
    for (int K = 0; K < N; ++K) {
      double S = P.taskTime(K, B), E = S + Tasks.duration(K);
      int G = P.gpuOfTask(Tasks, K);
      OnGpu[G].push_back({S, E, K, B});
      if (K + 1 == N) continue;
      double Ready = E;
      if (P.isCut(Tasks, K)) {
        double CS = P.commTime(K, B), CE = CS + P.commDuration(Tasks, K);
        if (CS < E - Eps)
          return makeError("the output of ", taskName(Tasks, K), " for minibatch ", B, " is sent at ", CS,
                           " ms, before the task ends at ", E, " ms");
        int H = P.gpuOfTask(Tasks, K + 1);
        OnLink[{std::min(G, H), std::max(G, H)}].push_back({CS, CE, K, B});
        Ready = CE;
      }
      double Next = P.taskTime(K + 1, B);
      if (Next < Ready - Eps)
        return makeError(taskName(Tasks, K + 1), " for minibatch ", B, " starts at ", Next,
                         " ms, before its input is there at ", Ready, " ms");
    }
  return Error::success();
}

/// Exclusivity on GPUs and links (sorts each one's instances by time).
Error checkExclusive(const PipelineTasks &Tasks, const PeriodicPattern &P, double Eps,
                     std::vector<std::vector<Instance>> &OnGpu, LinkInstances &OnLink) {
  for (int G = 0; G < P.numGpus; ++G) {
    auto &V = OnGpu[G];
    std::sort(V.begin(), V.end(), byTime);
    // Overlap is measured against the running instance that ends last, so a
    // zero-length task a rounding error before another's start is no clash.
    size_t Run = 0;
    for (size_t I = 1; I < V.size(); ++I) {
      if (std::min(V[Run].End, V[I].End) - V[I].Start > Eps)
        return makeError("GPU ", G, " runs ", taskName(Tasks, V[I].Task), " (minibatch ", V[I].Batch, ") at ",
                         V[I].Start, " ms while ", taskName(Tasks, V[Run].Task), " (minibatch ", V[Run].Batch,
                         ") runs until ", V[Run].End, " ms");
      if (V[I].End > V[Run].End) Run = I;
    }
  }
  for (auto &[Key, V] : OnLink) {
    std::sort(V.begin(), V.end(), byTime);
    size_t Run = 0;
    for (size_t I = 1; I < V.size(); ++I) {
      if (std::min(V[Run].End, V[I].End) - V[I].Start > Eps)
        return makeError("link ", Key.first, "-", Key.second, " carries the output of ",
                         taskName(Tasks, V[I].Task), " at ", V[I].Start, " ms while it still carries ",
                         taskName(Tasks, V[Run].Task), "'s until ", V[Run].End, " ms");
      if (V[I].End > V[Run].End) Run = I;
    }
  }
  return Error::success();
}

/// Static terms: weights x3 (eq. 33) and buffers (eqs. 34-35), and each
/// GPU's compute load.
void staticMemory(const PipelineTasks &Tasks, const PeriodicPattern &P, PipelineSimResult &R) {
  const int N = Tasks.numTasks();
  for (int I = 0; I < Tasks.numBlocks(); ++I) {
    PipelineGpuMemory &M = R.gpus[P.gpuOfBlock[I]];
    M.weights += 3 * Tasks.weightBytes(I);
    ++M.blocks;
  }
  for (int K = 0; K + 1 < N; ++K) {
    if (!P.isCut(Tasks, K)) continue;
    R.gpus[P.gpuOfTask(Tasks, K)].buffers += Tasks.outputBytes(K);
    R.gpus[P.gpuOfTask(Tasks, K + 1)].buffers += Tasks.outputBytes(K);
  }
  for (int K = 0; K < N; ++K) R.gpus[P.gpuOfTask(Tasks, K)].computeLoad += Tasks.duration(K);
}

/// GPU G's memory swept over its task instances in time order (and its
/// compute lane of the trace inside the window).
void sweepGpuMemory(const PipelineTasks &Tasks, const PeriodicPattern &P, int G,
                    const std::vector<Instance> &On, const Window &W, PipelineGpuMemory &M, ChromeTrace *Tr) {
  const int N = Tasks.numTasks();
  double Stash = 0, Direct = 0;
  int Stashed = 0;
  std::map<long, double> StashOf; // per micro-batch, its stash on this GPU
  for (const Instance &In : On) {
    int K = In.Task;
    if (K > 0 && !P.isCut(Tasks, K - 1)) Direct -= Tasks.outputBytes(K - 1); // becomes the input
    double Io = Tasks.inputBytes(K) + Tasks.outputBytes(K);
    const double PeakBefore = M.peak;
    const double Total = M.noteTaskStart(Stash, Direct, Io, taskName(Tasks, K));
    if (M.peak > PeakBefore) {
      M.peakStashOneBatch = 0;
      for (const auto &[Batch, Bytes] : StashOf) M.peakStashOneBatch = std::max(M.peakStashOneBatch, Bytes);
    }
    if (Tr && W.contains(In.Start)) {
      std::map<std::string, std::string> Args{{"minibatch", std::to_string(In.Batch)},
                                              {"memory_bytes", std::to_string((long long)Total)}};
      Tr->addSlice(G + 1, 0, taskName(Tasks, K), Tasks.isForward(K) ? "forward" : "backward",
                   In.Start - W.from, In.End - In.Start, Args);
      Tr->addCounter(G + 1, "memory", In.Start - W.from, Total);
    }
    if (Tasks.isForward(K)) Stash += Tasks.stashBytes(Tasks.blockOf(K));
    else Stash -= Tasks.stashBytes(Tasks.blockOf(K));
    StashOf[In.Batch] += (Tasks.isForward(K) ? 1 : -1) * Tasks.stashBytes(Tasks.blockOf(K));
    if (std::fabs(StashOf[In.Batch]) < 0.5) StashOf.erase(In.Batch); // released (whole bytes)
    // Micro-batches stashed here: counted at the first block's forward,
    // released with its stash at that block's backward.
    const int Blk = Tasks.blockOf(K);
    if (Blk == 0 || P.gpuOfBlock[Blk - 1] != G) {
      Stashed += Tasks.isForward(K) ? 1 : -1;
      M.maxStashedMicrobatches = std::max(M.maxStashedMicrobatches, Stashed);
    }
    if (K + 1 < N && !P.isCut(Tasks, K)) Direct += Tasks.outputBytes(K);
  }
}

/// Each link's transfers inside the window as a lane of the trace.
void traceLinks(const PipelineTasks &Tasks, const LinkInstances &OnLink, const Window &W, ChromeTrace &Tr) {
  for (auto &[Key, V] : OnLink) {
    // A link shows on the lane "link to H" of its lower GPU.
    int Tid = 1 + Key.second;
    Tr.nameThread(Key.first + 1, Tid, "link to GPU " + std::to_string(Key.second));
    for (const Instance &In : V)
      if (W.contains(In.Start))
        Tr.addSlice(Key.first + 1, Tid, taskName(Tasks, In.Task) + " out", "communication", In.Start - W.from,
                    In.End - In.Start,
                    {{"minibatch", std::to_string(In.Batch)},
                     {"bytes", std::to_string((long long)Tasks.outputBytes(In.Task))}});
  }
}
} // namespace

Expected<PipelineSimResult> onnxp::simulatePipeline(const PipelineTasks &Tasks, const PeriodicPattern &P,
                                                    const PipelineSimOptions &O) {
  const int N = Tasks.numTasks();
  const double T = P.period;
  // Solver tolerances leave ~1e-6 relative noise in an ILP's times.
  const double Eps = 1e-6 * std::max(1.0, T);
  if (!(T > 0)) return makeError("pattern has period ", T);
  if ((int)P.gpuOfBlock.size() != Tasks.numBlocks() || (int)P.taskStart.size() != N ||
      (int)P.taskDelay.size() != N || (int)P.commStart.size() != N - 1 || (int)P.commDelay.size() != N - 1)
    return makeInternalError("pattern sizes do not match a chain of ", Tasks.numBlocks(), " blocks");
  int MaxDelay = 0, MinDelay = 0;
  for (int D : P.taskDelay) MaxDelay = std::max(MaxDelay, D), MinDelay = std::min(MinDelay, D);
  for (int D : P.commDelay) MaxDelay = std::max(MaxDelay, D), MinDelay = std::min(MinDelay, D);
  if (MinDelay < 0) return makeError("pattern has a negative delay");
  const long NB = O.numBatches > 0 ? O.numBatches : 4L * MaxDelay + 8;

  PipelineSimResult R;
  R.numBatches = (int)NB;
  R.gpus.resize(P.numGpus);
  std::vector<std::vector<Instance>> OnGpu(P.numGpus);
  LinkInstances OnLink;
  ONNXP_RETURN_IF_ERROR(unrollInstances(Tasks, P, NB, Eps, OnGpu, OnLink));
  ONNXP_RETURN_IF_ERROR(checkExclusive(Tasks, P, Eps, OnGpu, OnLink));
  staticMemory(Tasks, P, R);

  // The steady-state window the trace shows: after every delay has elapsed.
  const double TraceFrom = (MaxDelay + 1) * T;
  const Window W{TraceFrom, TraceFrom + O.tracePeriods * T, Eps};
  ChromeTrace *Tr = O.trace;
  if (Tr)
    for (int G = 0; G < P.numGpus; ++G) {
      if (R.gpus[G].blocks == 0) continue;
      Tr->nameProcess(G + 1, "GPU " + std::to_string(G));
      Tr->nameThread(G + 1, 0, "compute");
    }

  // Memory sweep per GPU.
  for (int G = 0; G < P.numGpus; ++G) {
    PipelineGpuMemory &M = R.gpus[G];
    if (M.blocks == 0) continue;
    sweepGpuMemory(Tasks, P, G, OnGpu[G], W, M, Tr);
    R.peakMemory = std::max(R.peakMemory, M.peak);
  }
  if (Tr) traceLinks(Tasks, OnLink, W, *Tr);

  // The period a user sees: completions of the last task, one per T.
  double First = P.taskTime(N - 1, 0), Last = P.taskTime(N - 1, NB - 1);
  R.period = NB > 1 ? (Last - First) / (NB - 1) : T;
  double Begin = INFINITY, End = -INFINITY;
  for (const auto &V : OnGpu)
    for (const Instance &In : V) Begin = std::min(Begin, In.Start), End = std::max(End, In.End);
  R.makespan = End - Begin;
  return R;
}
