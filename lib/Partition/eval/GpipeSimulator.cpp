//===- Partition/eval/GpipeSimulator.cpp - Replays a GPipe schedule --------===//
//
// A discrete-event replay (GpipeSimulator.h): each GPU has a fixed sequence
// (its stage's forward steps for micro-batches 0..M-1, then the backward
// steps for M-1..0); each link keeps the transfers whose producer has ended
// and serves the one that can start first. Events are committed in order of
// start time, so a transfer committed at t never overtakes one that could
// have started earlier: every producer that starts by t is already known.
// Memory is then swept per GPU over its operations in time order, with the
// same bookkeeping as the 1F1B simulator (PipelineSimulator.cpp) apart from
// the weights factor.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/GpipeSimulator.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace onnxp;

namespace {
struct Op {
  int Task;
  int Micro;
  double Start = 0, End = 0;
};

std::string taskName(const PipelineTasks &Tasks, int K) {
  return std::string(Tasks.isForward(K) ? "F" : "B") + std::to_string(Tasks.blockOf(K) + 1);
}

struct Transfer {
  int K, Micro;
  double ProducerEnd, Start = 0, End = 0;
};
using Link = std::pair<int, int>;

/// Each GPU's first and last block (-1 when it holds none): a GPU's blocks
/// must be one contiguous run.
Error stageRanges(const std::vector<int> &Gpu, int NumGpus, std::vector<int> &Lo, std::vector<int> &Hi) {
  const int L = (int)Gpu.size();
  Lo.assign(NumGpus, -1);
  Hi.assign(NumGpus, -1);
  for (int I = 0; I < L; ++I) {
    int G = Gpu[I];
    if (G < 0 || G >= NumGpus) return makeInternalError("allocation names GPU ", G, " of ", NumGpus);
    if (Lo[G] >= 0 && Hi[G] != I - 1)
      return makeUsageError("GPipe runs contiguous stages; GPU ", G, " holds blocks ", Hi[G] + 1, " and ",
                            I + 1, " but not the ones between");
    if (Lo[G] < 0) Lo[G] = I;
    Hi[G] = I;
  }
  return Error::success();
}

/// Each GPU's sequence of operations: GPipe (every forward, then every
/// backward in reverse) or 1F1B with a flush.
std::vector<std::vector<Op>> gpuSequences(const PipelineTasks &Tasks, const std::vector<int> &Gpu,
                                          int NumGpus, const std::vector<int> &Lo, const std::vector<int> &Hi,
                                          int M, StagedOrder Order) {
  const int L = Tasks.numBlocks();
  std::vector<std::vector<Op>> Seq(NumGpus);
  // 1F1B with a flush: a stage's position is its place in chain order.
  int Stages = 0;
  std::vector<int> Position(NumGpus, -1);
  for (int I = 0; I < L; ++I)
    if (Lo[Gpu[I]] == I) Position[Gpu[I]] = Stages++;
  for (int G = 0; G < NumGpus; ++G) {
    if (Lo[G] < 0) continue;
    auto Forward = [&](int Mb) {
      for (int I = Lo[G]; I <= Hi[G]; ++I) Seq[G].push_back({Tasks.forwardTask(I), Mb});
    };
    auto Backward = [&](int Mb) {
      for (int I = Hi[G]; I >= Lo[G]; --I) Seq[G].push_back({Tasks.backwardTask(I), Mb});
    };
    if (Order == StagedOrder::Gpipe) {
      for (int Mb = 0; Mb < M; ++Mb) Forward(Mb);
      for (int Mb = M - 1; Mb >= 0; --Mb) Backward(Mb);
      continue;
    }
    const int Warm = std::min(Stages - Position[G], M);
    for (int Mb = 0; Mb < Warm; ++Mb) Forward(Mb);
    for (int Mb = 0; Mb < M; ++Mb) {
      Backward(Mb);
      if (Mb + Warm < M) Forward(Mb + Warm);
    }
  }
  return Seq;
}

/// A link's transfers waiting to run, in arrival order (issue 39, item 9:
/// a scan and an erase of one vector per event made 30,000 micro-batches
/// quadratic). The one served is the one a scan in arrival order with a
/// strict "earlier start" would pick: start = max(link free, producer end),
/// so among those whose producer ended by the time the link is free (all
/// tied at that time) the earliest arrival, else the earliest producer end
/// (earliest arrival among equals). Released moves a transfer from
/// Waiting once its producer end is at most the link's free time, which
/// only grows: each transfer moves once.
class LinkQueue {
public:
  void push(const Transfer &T) { Waiting.emplace(std::make_pair(T.ProducerEnd, Seq++), T); }
  bool empty() const { return Waiting.empty() && Released.empty(); }
  /// The start time of the transfer next(Free) returns (+inf when empty).
  double nextStart(double Free) {
    release(Free);
    if (!Released.empty()) return Free;
    return Waiting.empty() ? INFINITY : std::max(Free, Waiting.begin()->first.first);
  }
  Transfer pop(double Free) {
    release(Free);
    if (!Released.empty()) {
      Transfer T = Released.begin()->second;
      Released.erase(Released.begin());
      return T;
    }
    Transfer T = Waiting.begin()->second;
    Waiting.erase(Waiting.begin());
    return T;
  }

private:
  void release(double Free) {
    while (!Waiting.empty() && Waiting.begin()->first.first <= Free) {
      Released.emplace(Waiting.begin()->first.second, Waiting.begin()->second);
      Waiting.erase(Waiting.begin());
    }
  }
  std::map<std::pair<double, long>, Transfer> Waiting; // by (producer end, arrival)
  std::map<long, Transfer> Released;                   // by arrival
  long Seq = 0;
};

/// The discrete-event replay: sets every operation's start and end in Seq
/// and returns the transfers each link carried, in the order it ran them.
Expected<std::map<Link, std::vector<Transfer>>> replayEvents(const PipelineTasks &Tasks,
                                                             const std::vector<int> &Gpu, int NumGpus, int M,
                                                             std::vector<std::vector<Op>> &Seq) {
  const int N = Tasks.numTasks();
  auto GpuOf = [&](int K) { return Gpu[Tasks.blockOf(K)]; };
  auto LinkOf = [&](int K) {
    int G = GpuOf(K), H = GpuOf(K + 1);
    return std::make_pair(std::min(G, H), std::max(G, H));
  };

  // Input arrival of (task, micro-batch); NaN while unknown.
  std::vector<std::vector<double>> Ready(N, std::vector<double>(M, NAN));
  for (int Mb = 0; Mb < M; ++Mb) Ready[0][Mb] = 0;
  std::map<Link, LinkQueue> Pending;
  std::map<Link, std::vector<Transfer>> Done;
  std::map<Link, double> LinkFree;
  std::vector<size_t> Next(NumGpus, 0);
  std::vector<double> GpuFree(NumGpus, 0);
  size_t Remaining = 0;
  for (auto &S : Seq) Remaining += S.size();

  while (Remaining > 0) {
    double Best = INFINITY;
    int BestGpu = -1;
    Link BestLink{-1, -1};
    for (int G = 0; G < NumGpus; ++G) {
      if (Next[G] == Seq[G].size()) continue;
      const Op &Nx = Seq[G][Next[G]];
      double R = Ready[Nx.Task][Nx.Micro];
      if (std::isnan(R)) continue;
      double S = std::max(GpuFree[G], R);
      if (S < Best) Best = S, BestGpu = G;
    }
    for (auto &[Key, Q] : Pending) {
      double S = Q.nextStart(LinkFree[Key]);
      if (S < Best) Best = S, BestGpu = -1, BestLink = Key;
    }
    if (std::isinf(Best))
      return makeInternalError("GPipe replay is stuck with ", Remaining, " operations left");
    if (BestGpu >= 0) {
      Op &Nx = Seq[BestGpu][Next[BestGpu]++];
      Nx.Start = Best;
      Nx.End = Best + Tasks.duration(Nx.Task);
      GpuFree[BestGpu] = Nx.End;
      --Remaining;
      if (Nx.Task + 1 < N) {
        if (GpuOf(Nx.Task) == GpuOf(Nx.Task + 1)) Ready[Nx.Task + 1][Nx.Micro] = Nx.End;
        else Pending[LinkOf(Nx.Task)].push({Nx.Task, Nx.Micro, Nx.End});
      }
    } else {
      Transfer T = Pending[BestLink].pop(LinkFree[BestLink]);
      T.Start = Best;
      T.End = Best + Tasks.commDuration(T.K, GpuOf(T.K), GpuOf(T.K + 1));
      LinkFree[BestLink] = T.End;
      Ready[T.K + 1][T.Micro] = T.End;
      Done[BestLink].push_back(T);
    }
  }
  return Done;
}

/// Static terms per GPU: weights x2 (one version and its gradient) and
/// buffers.
void staticMemory(const PipelineTasks &Tasks, const std::vector<int> &Gpu, GpipeSimResult &R) {
  const int L = Tasks.numBlocks(), N = Tasks.numTasks();
  auto GpuOf = [&](int K) { return Gpu[Tasks.blockOf(K)]; };
  for (int I = 0; I < L; ++I) {
    PipelineGpuMemory &Mm = R.gpus[Gpu[I]];
    Mm.weights += 2 * Tasks.weightBytes(I);
    ++Mm.blocks;
    Mm.computeLoad += Tasks.duration(Tasks.forwardTask(I)) + Tasks.duration(Tasks.backwardTask(I));
  }
  for (int K = 0; K + 1 < N; ++K)
    if (GpuOf(K) != GpuOf(K + 1)) {
      R.gpus[GpuOf(K)].buffers += Tasks.outputBytes(K);
      R.gpus[GpuOf(K + 1)].buffers += Tasks.outputBytes(K);
    }
}

/// GPU G's memory swept over its operations in time order (and its compute
/// lane of the trace, when there is one).
void sweepGpuMemory(const PipelineTasks &Tasks, const std::vector<int> &Gpu, int G,
                    const std::vector<Op> &Seq, double First, PipelineGpuMemory &Mm, ChromeTrace *Tr) {
  const int N = Tasks.numTasks();
  auto GpuOf = [&](int K) { return Gpu[Tasks.blockOf(K)]; };
  if (Tr) {
    Tr->nameProcess(G + 1, "GPU " + std::to_string(G));
    Tr->nameThread(G + 1, 0, "compute");
  }
  double Stash = 0, Direct = 0;
  int Stashed = 0;
  for (const Op &X : Seq) { // a GPU's sequence is in time order
    int K = X.Task;
    if (K > 0 && GpuOf(K - 1) == G) Direct -= Tasks.outputBytes(K - 1); // becomes the input
    double Io = Tasks.inputBytes(K) + Tasks.outputBytes(K);
    const double Total = Mm.noteTaskStart(Stash, Direct, Io, taskName(Tasks, K));
    if (Tr) {
      Tr->addSlice(
          G + 1, 0, taskName(Tasks, K), Tasks.isForward(K) ? "forward" : "backward", X.Start - First,
          X.End - X.Start,
          {{"microbatch", std::to_string(X.Micro)}, {"memory_bytes", std::to_string((long long)Total)}});
      Tr->addCounter(G + 1, "memory", X.Start - First, Total);
    }
    if (Tasks.isForward(K)) Stash += Tasks.stashBytes(Tasks.blockOf(K));
    else Stash -= Tasks.stashBytes(Tasks.blockOf(K));
    // Micro-batches stashed here: counted at the first block's forward,
    // released with its stash at that block's backward.
    const int Blk = Tasks.blockOf(K);
    if (Blk == 0 || Gpu[Blk - 1] != G) {
      Stashed += Tasks.isForward(K) ? 1 : -1;
      Mm.maxStashedMicrobatches = std::max(Mm.maxStashedMicrobatches, Stashed);
    }
    if (K + 1 < N && GpuOf(K + 1) == G) Direct += Tasks.outputBytes(K);
  }
}

/// Each link's transfers as a lane of the trace.
void traceTransfers(const PipelineTasks &Tasks, const std::map<Link, std::vector<Transfer>> &Done,
                    double First, ChromeTrace &Tr) {
  for (auto &[Key, V] : Done) {
    int Tid = 1 + Key.second;
    Tr.nameThread(Key.first + 1, Tid, "link to GPU " + std::to_string(Key.second));
    for (const Transfer &T : V)
      Tr.addSlice(Key.first + 1, Tid, taskName(Tasks, T.K) + " out", "communication", T.Start - First,
                  T.End - T.Start,
                  {{"microbatch", std::to_string(T.Micro)},
                   {"bytes", std::to_string((long long)Tasks.outputBytes(T.K))}});
  }
}
} // namespace

Expected<GpipeSimResult> onnxp::simulateGpipe(const PipelineTasks &Tasks, const std::vector<int> &Gpu,
                                              int NumGpus, const GpipeSimOptions &O) {
  const int L = Tasks.numBlocks(), M = O.microbatches;
  if (M < 1) return makeUsageError("GPipe needs at least one micro-batch, got ", M);
  if ((int)Gpu.size() != L) return makeInternalError("allocation of ", Gpu.size(), " blocks for ", L);
  std::vector<int> Lo, Hi;
  ONNXP_RETURN_IF_ERROR(stageRanges(Gpu, NumGpus, Lo, Hi));
  std::vector<std::vector<Op>> Seq = gpuSequences(Tasks, Gpu, NumGpus, Lo, Hi, M, O.order);
  Expected<std::map<Link, std::vector<Transfer>>> Done = replayEvents(Tasks, Gpu, NumGpus, M, Seq);
  if (!Done) return Done.takeError();

  GpipeSimResult R;
  R.microbatches = M;
  R.gpus.resize(NumGpus);
  double First = INFINITY, Last = 0;
  for (int G = 0; G < NumGpus; ++G)
    for (const Op &X : Seq[G]) First = std::min(First, X.Start), Last = std::max(Last, X.End);
  R.iterationTime = Last - First;

  staticMemory(Tasks, Gpu, R);
  for (int G = 0; G < NumGpus; ++G) {
    PipelineGpuMemory &Mm = R.gpus[G];
    if (Mm.blocks == 0) continue;
    sweepGpuMemory(Tasks, Gpu, G, Seq[G], First, Mm, O.trace);
    R.peakMemory = std::max(R.peakMemory, Mm.peak);
  }
  if (O.trace) traceTransfers(Tasks, *Done, First, *O.trace);
  return R;
}
