//===- Partition/pipeline/PipeGreedySchedule.cpp - Greedy action lists -----===//
//
// See PipeGreedySchedule.h. The scheduler commits one action at a time: of
// every device's best next action, the one that can start earliest (so an
// action is committed only after every action it could wait for).
//
//===----------------------------------------------------------------------===//
#include "PipeGreedySchedule.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <utility>

using namespace onnxp;

namespace {

struct Variant {
  bool laterGradFirst = true;    ///< among ready I, the later virtual stage first
  bool laterForwardFirst = true; ///< among allowed F, the later virtual stage first
  bool reserve = false;          ///< an F of a device's earlier chunk keeps room for its later chunks
  bool forwardFirst = false;     ///< an F before an I that can start at the same time
  /// The share of the device's limit its first chunk's saved activations
  /// may take (1: no cap): room kept for the V's second chunk.
  double firstChunkShare = 1;
};

struct Candidate {
  double start = std::numeric_limits<double>::infinity();
  int rank = 3; ///< 0 I, 1 F, 2 W
  int order = 0;
  PipeActionKind kind = PipeActionKind::Forward;
  int stage = -1;
  bool better(const Candidate &O) const {
    const double Eps = 1e-9 * std::max(1.0, std::fabs(start));
    if (start < O.start - Eps) return true;
    if (start > O.start + Eps) return false;
    return std::tie(rank, order) < std::tie(O.rank, O.order);
  }
};

class Greedy {
public:
  Greedy(const PipeProgram &P, const std::vector<PipeStageCost> &Stages, const PipeLinkMs &Link,
         const std::vector<double> &Limit, Variant V)
      : P(P), Stages(Stages), Link(Link), Limit(Limit), V(V), S(static_cast<int>(Stages.size())),
        M(P.microbatches), NF(S, 0), NI(S, 0), FEnd(size_t(S) * M, 0), IEnd(FEnd), Free(P.devices, 0),
        Held(P.devices, 0), HeldFirst(P.devices, 0), PendingW(P.devices), StagesOf(P.devices) {
    for (int St = 0; St < S; ++St) StagesOf[P.deviceOfStage[St]].push_back(St);
  }

  /// The program, or an empty optional on a deadlock (the limit too tight
  /// for this variant).
  bool run(std::vector<std::vector<PipeAction>> &Out) {
    Out.assign(P.devices, {});
    const size_t Total = size_t(3) * S * M;
    for (size_t Done = 0; Done < Total; ++Done) {
      int BestDev = -1;
      Candidate Best;
      for (int D = 0; D < P.devices; ++D) {
        Candidate C = bestOf(D);
        if (C.stage >= 0 && (BestDev < 0 || C.better(Best))) Best = C, BestDev = D;
      }
      if (BestDev < 0) return false;
      commit(BestDev, Best, Out[BestDev]);
    }
    return true;
  }

private:
  const PipeProgram &P;
  const std::vector<PipeStageCost> &Stages;
  const PipeLinkMs &Link;
  const std::vector<double> &Limit;
  Variant V;
  int S, M;
  std::vector<int> NF, NI;
  std::vector<double> FEnd, IEnd, Free, Held, HeldFirst;
  std::vector<std::deque<std::pair<int, int>>> PendingW; // (stage, micro) in I order
  std::vector<std::vector<int>> StagesOf;

  double arrival(const std::vector<double> &End, int From, int To, int Mb, double Bytes) const {
    const int A = P.deviceOfStage[From], B = P.deviceOfStage[To];
    const double T = End[size_t(From) * M + Mb];
    return A == B ? T : T + Link(A, B, Bytes);
  }

  double reserveFor(int D, int St) const {
    double R = 0;
    if (V.reserve)
      for (int Later : StagesOf[D])
        if (Later > St) R += Stages[Later].activationBytes;
    return R;
  }

  Candidate bestOf(int D) const {
    Candidate Best;
    for (int St : StagesOf[D]) {
      const int Order = V.laterGradFirst ? -St : St;
      if (NI[St] < NF[St]) { // the next I: its F ran; its output gradient?
        const int Mb = NI[St];
        bool Ready = St + 1 == S || NI[St + 1] > Mb;
        if (Ready) {
          double T = std::max(Free[D], FEnd[size_t(St) * M + Mb]);
          if (St + 1 < S) T = std::max(T, arrival(IEnd, St + 1, St, Mb, Stages[St].outputBytes));
          Candidate C{T, V.forwardFirst ? 1 : 0, Order, PipeActionKind::InputGrad, St};
          if (C.better(Best)) Best = C;
        }
      }
      if (NF[St] < M && (St == 0 || NF[St - 1] > NF[St])) {
        const double Need = Held[D] + Stages[St].activationBytes + reserveFor(D, St);
        const bool First = StagesOf[D].size() > 1 && St == StagesOf[D].front();
        const bool UnderShare =
            !First || HeldFirst[D] + Stages[St].activationBytes <= V.firstChunkShare * Limit[D] * (1 + 1e-9);
        if (Need <= Limit[D] * (1 + 1e-9) && UnderShare) {
          const int Mb = NF[St];
          double T = Free[D];
          if (St > 0) T = std::max(T, arrival(FEnd, St - 1, St, Mb, Stages[St - 1].outputBytes));
          Candidate C{T, V.forwardFirst ? 0 : 1, V.laterForwardFirst ? -St : St, PipeActionKind::Forward, St};
          if (C.better(Best)) Best = C;
        }
      }
    }
    if (!PendingW[D].empty()) {
      Candidate C{Free[D], 2, 0, PipeActionKind::WeightGrad, PendingW[D].front().first};
      if (C.better(Best)) Best = C;
    }
    return Best;
  }

  void commit(int D, const Candidate &C, std::vector<PipeAction> &Out) {
    const PipeStageCost &Cost = Stages[C.stage];
    int Mb = 0;
    double End = C.start;
    switch (C.kind) {
    case PipeActionKind::Forward:
      Mb = NF[C.stage]++;
      End += Cost.forwardMs;
      FEnd[size_t(C.stage) * M + Mb] = End;
      Held[D] += Cost.activationBytes;
      if (StagesOf[D].size() > 1 && C.stage == StagesOf[D].front()) HeldFirst[D] += Cost.activationBytes;
      break;
    case PipeActionKind::InputGrad:
      Mb = NI[C.stage]++;
      End += Cost.inputGradMs;
      IEnd[size_t(C.stage) * M + Mb] = End;
      PendingW[D].emplace_back(C.stage, Mb);
      break;
    default:
      Mb = PendingW[D].front().second;
      PendingW[D].pop_front();
      End += Cost.weightGradMs;
      Held[D] -= Cost.activationBytes;
      if (StagesOf[D].size() > 1 && C.stage == StagesOf[D].front()) HeldFirst[D] -= Cost.activationBytes;
      break;
    }
    Free[D] = End;
    Out.push_back(PipeAction{C.kind, Mb, C.stage});
  }
};

} // namespace

std::vector<double> onnxp::pipeActivationLimits(const PipeProgram &P,
                                                const std::vector<PipeStageCost> &Stages) {
  const int D = P.devices;
  std::vector<double> Sum(D, 0), Largest(D, 0);
  for (size_t St = 0; St < Stages.size(); ++St) {
    Sum[P.deviceOfStage[St]] += Stages[St].activationBytes;
    Largest[P.deviceOfStage[St]] = std::max(Largest[P.deviceOfStage[St]], Stages[St].activationBytes);
  }
  std::vector<double> L(D, 0);
  for (int I = 0; I < D; ++I) {
    switch (P.kind) {
    case PipelineScheduleKind::ZbH2: L[I] = (2.0 * D - 1) * Largest[I]; break; // Qi et al. §2.2
    case PipelineScheduleKind::ZbV: L[I] = D * Sum[I]; break;                  // 1F1B's p M_B, §5
    default: L[I] = (D + 2) / 2 * Sum[I]; break; // V-Half: (p + 2) / 2 micro-batches, Qi et al. 2024 Table 1
    }
    L[I] = std::max(L[I], Sum[I]);
  }
  return L;
}

Expected<PipeProgram> onnxp::greedyPipeProgram(PipeProgram P, const std::vector<PipeStageCost> &Stages,
                                               const PipeLinkMs &Link,
                                               const std::vector<double> &GivenLimit) {
  std::vector<double> Limit = GivenLimit.empty() ? pipeActivationLimits(P, Stages) : GivenLimit;
  if (Limit.size() != size_t(P.devices))
    return makeInternalError("activation limits for the wrong device count");
  bool Found = false;
  double BestSpan = 0, BestBubble = 0;
  PipeProgram Best = P;
  const bool Chunked = P.deviceOfStage.size() > size_t(P.devices);
  for (int Bits = 0; Bits < 16 * 4; ++Bits) {
    static const double Shares[] = {1, 0.75, 0.6, 0.5};
    if (!Chunked && Bits >= 16) break;
    Variant V{(Bits & 1) != 0, (Bits & 2) != 0, (Bits & 4) != 0, (Bits & 8) != 0, Shares[Bits / 16]};
    PipeProgram Try = P;
    if (!Greedy(P, Stages, Link, Limit, V).run(Try.actions)) continue;
    Expected<PipeTimeline> T = simulatePipeProgram(Try, Stages, Link);
    if (!T) return T.takeError();
    const bool Better = !Found || T->makespan < BestSpan * (1 - 1e-12) ||
                        (T->makespan <= BestSpan * (1 + 1e-12) && T->bubbleMs < BestBubble * (1 - 1e-12));
    if (!Better) continue;
    Found = true;
    BestSpan = T->makespan;
    BestBubble = T->bubbleMs;
    Best = std::move(Try);
  }
  if (!Found)
    return makeError(pipelineScheduleName(P.kind), ": no schedule of ", P.microbatches,
                     " micro-batches fits the activation limit of its devices");
  return Best;
}
