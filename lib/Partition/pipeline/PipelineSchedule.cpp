//===- Partition/pipeline/PipelineSchedule.cpp - Periodic 1F1B patterns ---===//
//
// Task numbering, minimal delays and the modulo list scheduler that turns
// any allocation into a valid pattern (PipelineSchedule.h). The builder is
// what prices contiguous plans (the PipeDream baseline, dp's stage plans)
// under a 1F1B schedule and what warm-starts the ILP; its patterns, like the
// ILP's, are only ever reported after the simulator replayed them.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipelineSchedule.h"
#include "onnx-partition/IR/Platform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

using namespace onnxp;

PipelineLinks PipelineLinks::of(const Platform &P, std::vector<int> Devices) {
  PipelineLinks K(P.peerLinkBandwidth);
  K.latencyMs = P.peerLinkLatencyMs; // issue 21: priced whenever the platform gives one
  bool Cpu = std::any_of(Devices.begin(), Devices.end(), [&](int D) { return !P.isAccelerator(D); });
  if (!P.multiNode() && !Cpu) return K;
  K.platform = std::make_shared<const Platform>(P);
  K.device = std::move(Devices);
  return K;
}

PipelineTasks::PipelineTasks(const Chain &C, double BandwidthBytesPerSec)
    : PipelineTasks(C, PipelineLinks(BandwidthBytesPerSec)) {}

PipelineTasks::PipelineTasks(const Chain &C, PipelineLinks Links)
    : L(static_cast<int>(C.size())), Bandwidth(Links.bandwidth), Links(std::move(Links)) {
  Durations.resize(2 * L);
  for (int K = 0; K < 2 * L; ++K)
    Durations[K] = K < L ? C.blocks[K].forwardTime : C.blocks[2 * L - 1 - K].backwardTime;
  for (int I = 0; I <= L; ++I) Act.push_back(C.activationBytes(I));
  for (const ChainBlock &B : C.blocks) Weights.push_back(B.weightBytes);
}

double PipelineTasks::inputBytes(int K) const { return K < L ? Act[K] : Act[blockOf(K) + 1]; }

double PipelineTasks::outputBytes(int K) const { return K < L ? Act[K + 1] : Act[blockOf(K)]; }

double PipelineTasks::uniformMs(int K) const {
  // Platform::linkMs's rule: latency + bytes / bandwidth, nothing for no bytes.
  const double Bytes = outputBytes(K);
  return Bytes > 0 ? Links.latencyMs + Bytes / Bandwidth * 1000.0 : 0;
}

double PipelineTasks::commDuration(int K, int G, int H) const {
  if (G == H) return 0;
  if (!Links.perLink()) return uniformMs(K);
  auto Dev = [&](int X) { return X >= 0 && X < (int)Links.device.size() ? Links.device[X] : X; };
  const Platform &P = *Links.platform;
  // Issue 21: the platform's one price (Platform::transferMs of an
  // analytically priced tensor: latency + bytes / bandwidth of the link).
  return P.linkMs(P.linkBetween(Dev(G), Dev(H)), outputBytes(K));
}

double PipelineTasks::commDuration(int K) const {
  if (!Links.perLink()) return uniformMs(K);
  const Platform &P = *Links.platform;
  const double Bytes = outputBytes(K);
  // The cheapest link any two of the GPUs could use.
  double Best = std::numeric_limits<double>::infinity();
  int Cpus = 0;
  for (int D : Links.device) Cpus += !P.isAccelerator(D);
  if (P.accelerators > 1) Best = std::min(Best, P.linkMs(LinkKind::Peer, Bytes));
  if (P.multiNode()) Best = std::min(Best, P.linkMs(LinkKind::Network, Bytes));
  if (Cpus > 0) Best = std::min(Best, P.linkMs(LinkKind::Host, Bytes));
  if (Cpus > 1) Best = 0; // two CPU devices share RAM (seed 004 §3)
  return std::isfinite(Best) ? Best : uniformMs(K);
}

namespace {
// The simulator's tolerance: a solver's times carry ~1e-7 relative noise, so
// an input ready that little after a start still counts as ready.
double epsFor(double T) { return 1e-6 * std::max(1.0, T); }

/// A whole number of periods as an int: NaN (0/0, inf/inf) is 0 and
/// anything beyond +-2^30 is clamped, so no cast is undefined (issue 25;
/// the importers' limits keep real patterns far inside that range).
long periodsToLong(double V) {
  if (std::isnan(V)) return 0;
  return static_cast<long>(std::clamp(V, -1073741824.0, 1073741824.0));
}

/// Smallest h with h T + Start >= Ready (up to rounding).
int firstPeriodAtOrAfter(double Ready, double Start, double T) {
  return static_cast<int>(periodsToLong(std::ceil((Ready - Start - epsFor(T)) / T)));
}
} // namespace

void onnxp::assignMinimalDelays(const PipelineTasks &Tasks, PeriodicPattern &P) {
  const int N = Tasks.numTasks();
  const double T = P.period;
  P.taskDelay.assign(N, 0);
  P.commDelay.assign(N - 1, 0);
  P.commStart.resize(N - 1, 0);
  double Ready = P.taskStart[0] + Tasks.duration(0);
  for (int K = 0; K + 1 < N; ++K) {
    if (P.isCut(Tasks, K)) {
      P.commDelay[K] = firstPeriodAtOrAfter(Ready, P.commStart[K], T);
      Ready = P.commTime(K, 0) + P.commDuration(Tasks, K);
    } else {
      // A co-located communication is the producer's end (§4.1.3: duration 0).
      P.commStart[K] = P.taskStart[K] + Tasks.duration(K);
      P.commDelay[K] = P.taskDelay[K];
    }
    P.taskDelay[K + 1] = firstPeriodAtOrAfter(Ready, P.taskStart[K + 1], T);
    Ready = P.taskTime(K + 1, 0) + Tasks.duration(K + 1);
  }
}

double onnxp::allocationLoad(const PipelineTasks &Tasks, const std::vector<int> &Gpu, int NumGpus) {
  std::vector<double> Compute(NumGpus, 0);
  std::map<std::pair<int, int>, double> Link;
  for (int K = 0; K < Tasks.numTasks(); ++K) {
    int G = Gpu[Tasks.blockOf(K)];
    Compute[G] += Tasks.duration(K);
    if (K + 1 < Tasks.numTasks()) {
      int H = Gpu[Tasks.blockOf(K + 1)];
      if (G != H) Link[{std::min(G, H), std::max(G, H)}] += Tasks.commDuration(K, G, H);
    }
  }
  double Load = *std::max_element(Compute.begin(), Compute.end());
  for (auto &[Key, V] : Link) Load = std::max(Load, V);
  return Load;
}

namespace {
/// A resource's reservation table modulo T: intervals [s, s + d) with s in
/// [0, T); copies shifted by multiples of T are implied.
class ModuloTable {
public:
  explicit ModuloTable(double T) : T(T), Eps(epsFor(T)) {}

  /// Earliest absolute start >= Ready where [start, start + D) meets no
  /// reserved interval, or NaN when none exists within one period.
  double earliest(double Ready, double D) const {
    double Start = Ready;
    for (int Iter = 0; Iter < 4 * static_cast<int>(Busy.size()) + 4; ++Iter) {
      double Moved = conflictEnd(Start, D);
      if (std::isnan(Moved)) return Start;
      Start = Moved;
      if (Start > Ready + T + Eps) break;
    }
    return NAN;
  }
  void reserve(double Start, double D) {
    double S = std::fmod(Start, T);
    if (S < 0) S += T;
    Busy.push_back({S, D});
  }

private:
  /// The end of a reserved copy that [Start, Start + D) overlaps, or NaN.
  double conflictEnd(double Start, double D) const {
    long K0 = periodsToLong(std::floor(Start / T)) - 1;
    long K1 = periodsToLong(std::floor((Start + D) / T)) + 1;
    for (auto [S, BD] : Busy)
      for (long K = K0; K <= K1; ++K) {
        double B0 = S + K * T, B1 = B0 + BD;
        bool Overlap = std::max(Start, B0) < std::min(Start + D, B1) - Eps;
        // Zero-length operations are instants: one must not fall strictly
        // inside the other (the ILP's ordering rows (5)-(6) say the same).
        if (D == 0 && B0 + Eps < Start && Start < B1 - Eps) Overlap = true;
        if (BD == 0 && Start + Eps < B0 && B0 < Start + D - Eps) Overlap = true;
        if (Overlap) return std::max(B1, Start + Eps);
      }
    return NAN;
  }
  double T, Eps;
  std::vector<std::pair<double, double>> Busy;
};

/// Start in [0, T), moved to [-d, 0) when the operation would end after T.
std::pair<double, int> normalise(double Abs, double D, double T) {
  int Delay = static_cast<int>(periodsToLong(std::floor(Abs / T + 1e-12)));
  double S = Abs - Delay * T;
  if (S < 0) { // rounding just below a period boundary
    S += T;
    --Delay;
  }
  if (S + D > T + epsFor(T)) {
    S -= T;
    ++Delay;
  }
  return {S, Delay};
}
} // namespace

Expected<PeriodicPattern> onnxp::buildModuloPattern(const PipelineTasks &Tasks, const std::vector<int> &Gpu,
                                                    int NumGpus, double T) {
  const int N = Tasks.numTasks();
  if (static_cast<int>(Gpu.size()) != Tasks.numBlocks())
    return makeInternalError("allocation has ", Gpu.size(), " entries for ", Tasks.numBlocks(), " blocks");
  for (int G : Gpu)
    if (G < 0 || G >= NumGpus) return makeInternalError("allocation names GPU ", G, " of ", NumGpus);
  double Load = allocationLoad(Tasks, Gpu, NumGpus);
  if (!(T > 0) || Load > T * (1 + 1e-12) + epsFor(T))
    return makeError("period ", T, " ms is below the allocation's load ", Load, " ms");

  std::vector<ModuloTable> GpuTable(NumGpus, ModuloTable(T));
  std::map<std::pair<int, int>, ModuloTable> LinkTable;
  std::vector<double> TaskAbs(N), CommAbs(N - 1, 0);
  double Ready = 0;
  for (int K = 0; K < N;) {
    // A run of consecutive tasks on one GPU is placed as one interval:
    // placing them one by one could leave gaps too short for the rest (a
    // fully loaded GPU has exactly the room of its forward and backward runs).
    int G = Gpu[Tasks.blockOf(K)];
    int End = K + 1;
    double D = Tasks.duration(K);
    while (End < N && Gpu[Tasks.blockOf(End)] == G) D += Tasks.duration(End++);
    double S = GpuTable[G].earliest(Ready, D);
    if (std::isnan(S)) return makeError("no room for task ", K, " on GPU ", G, " modulo ", T, " ms");
    GpuTable[G].reserve(S, D);
    for (int J = K; J < End; ++J) {
      TaskAbs[J] = S;
      S += Tasks.duration(J);
      if (J + 1 < End) CommAbs[J] = S;
    }
    Ready = S;
    K = End;
    if (K == N) break;
    int H = Gpu[Tasks.blockOf(K)];
    auto Key = std::make_pair(std::min(G, H), std::max(G, H));
    auto It = LinkTable.try_emplace(Key, ModuloTable(T)).first;
    const double Dc = Tasks.commDuration(K - 1, G, H);
    double C = It->second.earliest(Ready, Dc);
    if (std::isnan(C)) return makeError("no room for communication ", K - 1, " on link ", G, "-", H);
    It->second.reserve(C, Dc);
    CommAbs[K - 1] = C;
    Ready = C + Dc;
  }

  PeriodicPattern P;
  P.numGpus = NumGpus;
  P.period = T;
  P.bandwidth = Tasks.bandwidth();
  P.gpuOfBlock = Gpu;
  P.taskStart.resize(N);
  P.commStart.resize(N - 1);
  for (int K = 0; K < N; ++K) P.taskStart[K] = normalise(TaskAbs[K], Tasks.duration(K), T).first;
  for (int K = 0; K + 1 < N; ++K) P.commStart[K] = normalise(CommAbs[K], P.commDuration(Tasks, K), T).first;
  assignMinimalDelays(Tasks, P);
  return P;
}

std::string onnxp::describePattern(const PipelineTasks &Tasks, const PeriodicPattern &P) {
  std::ostringstream OS;
  OS << "period " << P.period << " ms\n";
  const int L = Tasks.numBlocks();
  auto Name = [&](int K) {
    return std::string(Tasks.isForward(K) ? "F" : "B") + std::to_string(Tasks.blockOf(K) + 1);
  };
  for (int G = 0; G < P.numGpus; ++G) {
    std::vector<int> Ks;
    for (int K = 0; K < 2 * L; ++K)
      if (P.gpuOfTask(Tasks, K) == G) Ks.push_back(K);
    if (Ks.empty()) continue;
    std::stable_sort(Ks.begin(), Ks.end(), [&](int A, int B) { return P.taskStart[A] < P.taskStart[B]; });
    OS << "gpu " << G << ":";
    for (int K : Ks) OS << " " << Name(K) << "@" << P.taskStart[K] << "+" << P.taskDelay[K];
    OS << "\n";
  }
  for (int K = 0; K + 1 < 2 * L; ++K)
    if (P.isCut(Tasks, K))
      OS << "link " << P.gpuOfTask(Tasks, K) << "->" << P.gpuOfTask(Tasks, K + 1) << ": " << Name(K)
         << " out@" << P.commStart[K] << "+" << P.commDelay[K] << "\n";
  return OS.str();
}
