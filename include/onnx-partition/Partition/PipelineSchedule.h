//===- Partition/PipelineSchedule.h - Periodic 1F1B patterns on chains -*- C++ -*-===//
//
// Seed 000 §3: a chain of L blocks trains as 2L compute tasks T_1..T_2L
// (T_l = F_l for l <= L, T_l = B_{2L-l+1} after) and 2L-1 communications
// T^c_{l,l+1}. A 1F1B schedule (Definition 1/2) repeats a pattern of period T:
// every task and communication appears once in the pattern, task k of
// minibatch b runs at (b + delay_k) T + start_k. This header holds that
// pattern as a value (PeriodicPattern), the task numbering shared by the ILP,
// the simulator and the baselines, and a builder that turns any allocation
// of blocks to GPUs into a valid pattern of a given period by modulo list
// scheduling (every task as early as its dependencies and the resource's
// reservation table modulo T allow), with the smallest delays (Lemma 8's
// remark: given the times, the smallest index shifts need the least memory).
//
// Indices here are 0-based: task k = 0..2L-1 is F_{k+1} for k < L and
// B_{2L-k} for k >= L; communication k carries task k's output to task k+1.
// Times are ms, sizes bytes, bandwidth bytes/s (Chain.h's units).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_PIPELINESCHEDULE_H
#define ONNXP_PARTITION_PIPELINESCHEDULE_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace onnxp {

struct Platform;

/// What a communication between two GPUs costs (issue 21). Seed 000's model
/// is one bandwidth beta for every pair and no latency. A one-node platform
/// of accelerators gets uniform links too, at the peer link's price
/// latency + bytes / beta (Platform::linkMs(Peer, bytes); a bandwidth alone,
/// as seed 000's references are built, has no latency, so they stay).
/// On a platform with several nodes (or where a GPU index stands for a CPU
/// device) every cut is priced by the link it crosses, through the
/// platform's one price function: Platform::linkMs(linkBetween(a, b), bytes)
/// (latency + bytes / bandwidth of the peer link, the network or the host
/// link), with GPU index g standing for platform device device[g].
struct PipelineLinks {
  PipelineLinks() = default;
  /// A bandwidth alone is seed 000's uniform links of Beta bytes/s.
  PipelineLinks(double Beta) : bandwidth(Beta) {} // NOLINT: implicit on purpose

  double bandwidth = 0;                     ///< beta, bytes/s: the peer link of the uniform model
  double latencyMs = 0;                     ///< of every uniform link, per transfer of > 0 bytes
  std::shared_ptr<const Platform> platform; ///< set: priced per link
  std::vector<int> device;                  ///< GPU index -> platform device (empty: identity)

  bool perLink() const { return platform != nullptr; }
  /// The links of P's accelerators for GPU indices standing for Devices
  /// (empty: GPU g is accelerator g): uniform (the peer link's bandwidth
  /// and latency) on one node with accelerators only, per link otherwise.
  static PipelineLinks of(const Platform &P, std::vector<int> Devices = {});
};

/// The task view of a chain (seed 000 §3.1 notation, 0-based).
struct PipelineTasks {
  explicit PipelineTasks(const Chain &C, double BandwidthBytesPerSec);
  PipelineTasks(const Chain &C, PipelineLinks Links);

  int numBlocks() const { return L; }
  int numTasks() const { return 2 * L; }
  bool isForward(int K) const { return K < L; }
  /// The block (0-based) whose forward or backward step task K is.
  int blockOf(int K) const { return K < L ? K : 2 * L - 1 - K; }
  int forwardTask(int Block) const { return Block; }
  int backwardTask(int Block) const { return 2 * L - 1 - Block; }
  /// d_k: the task's duration, ms.
  double duration(int K) const { return Durations[K]; }
  /// Bytes task K reads (a_{l-1} for F_l, the gradient of a_l for B_l).
  double inputBytes(int K) const;
  /// Bytes task K writes (a_l for F_l, the gradient of a_{l-1} for B_l);
  /// communication K carries them.
  double outputBytes(int K) const;
  /// a_i for block i's input: what F_i stashes until B_i (§4.2.2).
  double stashBytes(int Block) const { return Act[Block]; }
  double weightBytes(int Block) const { return Weights[Block]; }
  /// \tilde d_k when task K runs on GPU G and task K+1 on GPU H: a/beta
  /// (seed 000), or the price of the link between them (issue 21); 0 on
  /// one GPU.
  double commDuration(int K, int G, int H) const;
  /// \tilde d_k on the cheapest link between any two GPUs (a/beta with
  /// uniform links): what the ILP and the period bounds use, a lower bound
  /// on commDuration(K, G, H) for every G != H.
  double commDuration(int K) const;
  double bandwidth() const { return Bandwidth; }
  const PipelineLinks &links() const { return Links; }

private:
  double uniformMs(int K) const; ///< communication K on a uniform link

  int L;
  double Bandwidth;
  PipelineLinks Links;
  std::vector<double> Durations, Act, Weights; // Act[i] = a_i, i = 0..L
};

// PeriodicPattern, one period of a 1F1B schedule, is a chain schedule of
// Plan (IR/ChainSchedules.h).

/// Replaces the delays of P by the smallest ones its start times allow
/// (batch 0's F_1 in period 0, then each task or communication in the first
/// period at or after its input is ready). Co-located communications get the
/// start and delay of the end of their producer.
void assignMinimalDelays(const PipelineTasks &Tasks, PeriodicPattern &P);

/// A valid pattern of period T for an allocation: modulo list scheduling in
/// chain order (F_1, its communication, F_2, ..., B_1), each operation at the
/// earliest time its input is ready and its GPU or link is free modulo T,
/// then normalised (F_1 at 0, every start in [-d, T-d]) with minimal delays.
/// Fails when T is below a GPU's or a link's load or when fragmentation of a
/// reservation table leaves no gap long enough.
Expected<PeriodicPattern> buildModuloPattern(const PipelineTasks &Tasks, const std::vector<int> &GpuOfBlock,
                                             int NumGpus, double Period);

/// The period lower bound of an allocation: the largest GPU compute load and
/// the largest link load (2 a / beta per cut, both directions share a link).
double allocationLoad(const PipelineTasks &Tasks, const std::vector<int> &GpuOfBlock, int NumGpus);

/// Human-readable pattern: one line per GPU with its tasks in pattern order
/// ("F3@0+0 B3@12.5+1": task, start, delay), then one line per used link.
std::string describePattern(const PipelineTasks &Tasks, const PeriodicPattern &P);

} // namespace onnxp

#endif // ONNXP_PARTITION_PIPELINESCHEDULE_H
