//===- Partition/pipeline/PipeDreamReplicated.cpp - PipeDream's optimizer -===//
//
// PipeDream's optimizer with replication (SOSP'19 §3.1): a DP over the
// ideals of the chain's DAG (its prefixes when the chain has no edges) and
// the number of accelerators, the last stage of each ideal replicated r
// ways. Formulas in ReplicatedPipeline.h; the plan is priced again by
// priceReplicatedPipeline (eval/), never by the numbers below.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ReplicatedPipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_set>

using namespace onnxp;

namespace {
/// The ideals of the chain's DAG (non-empty, by size), with their compute,
/// weights and the bytes leaving them.
struct IdealSet {
  bool path = true; ///< no edges: ideal i is blocks [0, size[i])
  int words = 0;
  std::vector<uint64_t> bits; ///< words per ideal (DAG only)
  std::vector<int> size;
  std::vector<double> compute, weights, leaving;
  int count() const { return static_cast<int>(size.size()); }
  bool has(int I, int B) const { return (bits[size_t(I) * words + B / 64] >> (B % 64)) & 1; }
  /// K strictly inside J.
  bool inside(int K, int J) const {
    if (size[K] >= size[J]) return false;
    if (path) return true;
    for (int W = 0; W < words; ++W)
      if (bits[size_t(K) * words + W] & ~bits[size_t(J) * words + W]) return false;
    return true;
  }
};

Expected<IdealSet> idealsOf(const Chain &C, long MaxIdeals, const std::function<bool()> &TimeUp) {
  const int L = static_cast<int>(C.size());
  IdealSet S;
  auto Block = [&](int B) { return C.blocks[B].forwardTime + C.blocks[B].backwardTime; };
  if (C.edges.empty()) {
    double Comp = 0, W = 0;
    for (int J = 1; J <= L; ++J) {
      Comp += Block(J - 1);
      W += C.blocks[J - 1].weightBytes;
      S.size.push_back(J);
      S.compute.push_back(Comp);
      S.weights.push_back(W);
      S.leaving.push_back(J < L ? C.blocks[J - 1].outputBytes : 0);
    }
    return S;
  }
  S.path = false;
  S.words = (L + 63) / 64;
  std::vector<std::vector<uint64_t>> Pred(L, std::vector<uint64_t>(S.words, 0));
  std::vector<std::vector<int>> Succ(L);
  for (auto [U, V] : C.edges) {
    Pred[V][U / 64] |= uint64_t(1) << (U % 64);
    Succ[U].push_back(V);
  }
  // Breadth-first from the empty ideal, one ready block at a time.
  std::vector<std::vector<uint64_t>> Found;
  std::unordered_set<std::string> Seen;
  auto Key = [](const std::vector<uint64_t> &Bits) {
    return std::string(reinterpret_cast<const char *>(Bits.data()), Bits.size() * sizeof(uint64_t));
  };
  Found.push_back(std::vector<uint64_t>(S.words, 0));
  Seen.insert(Key(Found[0]));
  for (size_t Next = 0; Next < Found.size(); ++Next) {
    if (TimeUp && TimeUp()) return makeError("the time limit stopped the enumeration of the DAG's ideals");
    std::vector<uint64_t> I = Found[Next];
    for (int V = 0; V < L; ++V) {
      if ((I[V / 64] >> (V % 64)) & 1) continue;
      bool Ready = true;
      for (int W = 0; W < S.words && Ready; ++W) Ready = (Pred[V][W] & ~I[W]) == 0;
      if (!Ready) continue;
      std::vector<uint64_t> J = I;
      J[V / 64] |= uint64_t(1) << (V % 64);
      if (!Seen.insert(Key(J)).second) continue;
      if (static_cast<long>(Found.size()) > MaxIdeals)
        return makeUsageError("the chain's DAG has more than ", MaxIdeals,
                              " ideals; PipeDream's replicated optimizer plans on them: read the profile "
                              "with --chain-recipe separators (a path of separator blocks)");
      Found.push_back(std::move(J));
    }
  }
  std::vector<int> Order;
  std::vector<int> Size(Found.size());
  for (size_t I = 1; I < Found.size(); ++I) { // the empty ideal is no stage
    int N = 0;
    for (uint64_t W : Found[I]) N += __builtin_popcountll(W);
    Size[I] = N;
    Order.push_back(static_cast<int>(I));
  }
  std::stable_sort(Order.begin(), Order.end(), [&](int A, int B) { return Size[A] < Size[B]; });
  for (int I : Order) {
    const std::vector<uint64_t> &Bits = Found[I];
    auto In = [&](int B) { return (Bits[B / 64] >> (B % 64)) & 1; };
    double Comp = 0, W = 0, Leaving = 0;
    for (int B = 0; B < L; ++B) {
      if (!In(B)) continue;
      Comp += Block(B);
      W += C.blocks[B].weightBytes;
      if (std::any_of(Succ[B].begin(), Succ[B].end(), [&](int V) { return !In(V); }))
        Leaving += C.blocks[B].outputBytes;
    }
    S.bits.insert(S.bits.end(), Bits.begin(), Bits.end());
    S.size.push_back(Size[I]);
    S.compute.push_back(Comp);
    S.weights.push_back(W);
    S.leaving.push_back(Leaving);
  }
  return S;
}
} // namespace

Expected<ReplicatedOptimum> onnxp::pipeDreamReplicated(const Chain &C, int NumGpus,
                                                       const ReplicatedLinks &Links, long MaxIdeals,
                                                       const std::function<bool()> &TimeUp) {
  ONNXP_RETURN_IF_ERROR(C.validate());
  if (NumGpus < 1) return makeError("PipeDream's optimizer needs at least one accelerator");
  if (!(Links.bandwidth > 0)) return makeError("PipeDream's optimizer needs a positive link bandwidth");
  Expected<IdealSet> Found = idealsOf(C, MaxIdeals, TimeUp);
  if (!Found) return Found.takeError();
  const IdealSet &S = *Found;
  const int N = S.count(), P = NumGpus, L = static_cast<int>(C.size());
  const double MsPerByte = 1000.0 / Links.bandwidth;
  // §3.1: T(stage, r) = max((C + 4 (r-1)/r W / B) / r, 2 a_in / (B r), 2 a_out / (B r)).
  auto StageTime = [&](double Comp, double W, double In, double Out, int R) {
    double Sync = R > 1 ? 4.0 * (R - 1) / R * W * MsPerByte + 2.0 * (R - 1) * Links.latencyMs : 0;
    double T = (Comp + Sync) / R;
    if (In > 0) T = std::max(T, 2 * (In * MsPerByte + Links.latencyMs) / R);
    if (Out > 0) T = std::max(T, 2 * (Out * MsPerByte + Links.latencyMs) / R);
    return T;
  };
  const double Inf = std::numeric_limits<double>::infinity();
  std::vector<double> A(size_t(N) * P, Inf);
  std::vector<int> FromIdeal(size_t(N) * P, -1), Replicas(size_t(N) * P, 0);
  for (int J = 0; J < N; ++J) {
    if (TimeUp && TimeUp()) return makeError("the time limit stopped PipeDream's replicated optimizer");
    const double Out = S.size[J] == L ? 0 : S.leaving[J];
    for (int M = 1; M <= P; ++M) {
      A[size_t(J) * P + M - 1] = StageTime(S.compute[J], S.weights[J], 0, Out, M);
      Replicas[size_t(J) * P + M - 1] = M;
    }
    for (int K = 0; K < J; ++K) {
      if (!S.inside(K, J)) continue;
      for (int R = 1; R < P; ++R) {
        double T = StageTime(S.compute[J] - S.compute[K], S.weights[J] - S.weights[K], S.leaving[K], Out, R);
        for (int M = R + 1; M <= P; ++M) {
          double V = std::max(A[size_t(K) * P + M - R - 1], T);
          double &Best = A[size_t(J) * P + M - 1];
          if (V < Best * (1 - 1e-12)) {
            Best = V;
            FromIdeal[size_t(J) * P + M - 1] = K;
            Replicas[size_t(J) * P + M - 1] = R;
          }
        }
      }
    }
  }
  const int Full = N - 1; // the only ideal of L blocks
  if (S.size[Full] != L) return makeInternalError("the DAG's ideals miss the whole chain");
  ReplicatedOptimum Opt;
  Opt.period = A[size_t(Full) * P + P - 1];
  Opt.ideals = N;
  if (!std::isfinite(Opt.period)) return makeError("no replicated pipeline has a finite period");
  // Trace back: stages from the last to the first.
  std::vector<std::pair<int, int>> Stages; // (ideal, replicas) of each stage's end, last first
  std::vector<int> Start;                  // the ideal before it, -1 for none
  for (int J = Full, M = P; J >= 0;) {
    int K = FromIdeal[size_t(J) * P + M - 1], R = Replicas[size_t(J) * P + M - 1];
    Stages.emplace_back(J, R);
    Start.push_back(K);
    M -= R;
    J = K;
  }
  std::reverse(Stages.begin(), Stages.end());
  std::reverse(Start.begin(), Start.end());
  Opt.plan.stageOfBlock.assign(L, -1);
  int Device = 0;
  for (size_t St = 0; St < Stages.size(); ++St) {
    auto [J, R] = Stages[St];
    int K = Start[St];
    for (int B = 0; B < L; ++B) {
      bool InJ = S.path ? B < S.size[J] : S.has(J, B);
      bool InK = K >= 0 && (S.path ? B < S.size[K] : S.has(K, B));
      if (InJ && !InK) Opt.plan.stageOfBlock[B] = static_cast<int>(St);
    }
    ReplicatedStage RS;
    RS.replicas = R;
    for (int I = 0; I < R; ++I) RS.devices.push_back(Device++);
    Opt.plan.stages.push_back(std::move(RS));
  }
  if (Device != P)
    return makeInternalError("PipeDream's replicated plan uses ", Device, " of ", P, " accelerators");
  return Opt;
}
