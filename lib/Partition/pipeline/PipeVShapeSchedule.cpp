//===- Partition/pipeline/PipeVShapeSchedule.cpp - ZB-V's constructed lists ===//
//
// See PipeVShapeSchedule.h. Device d holds leg 0 (virtual stage d) and leg
// 1 (stage 2p-1-d) of the V. In the backward the legs swap: the gradient
// reaches stage 2p-1-d first (the I of "backward leg 0"), stage d later.
// Every put appends one action to its device's list at the earliest time
// its device is free and its input has arrived; a put whose input has no
// time yet, or a forward beyond the memory limit with no W left to free
// it, abandons the attempt.
//
//===----------------------------------------------------------------------===//
#include "PipeVShapeSchedule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <utility>

using namespace onnxp;

namespace {

const double Unknown = std::numeric_limits<double>::quiet_NaN();

class VBuilder {
public:
  VBuilder(const PipeProgram &P, const std::vector<PipeStageCost> &Stages, const PipeLinkMs &Link,
           const std::vector<double> &Limit, bool FillF, bool FillB, const std::vector<double> &Approved)
      : P(P), Stages(Stages), Link(Link), Limit(Limit), FillF(FillF), FillB(FillB), Approved(Approved),
        D(P.devices), S(2 * D), M(P.microbatches), FEnd(size_t(S) * M, Unknown), IEnd(FEnd), Free(D, 0),
        Held(D, 0), Bubble(D, 0), CntF(D, std::array<int, 2>{0, 0}), CntI(D, std::array<int, 2>{0, 0}),
        PendingW(D), Lists(D) {
    MaxApproved = Approved.empty() ? -1 : *std::max_element(Approved.begin(), Approved.end());
  }

  /// The lists, or false when this attempt breaks a rule (see the file
  /// comment); bubbles() then holds each device's idle time.
  bool run() { return warmUp() && catchUp() && steady() && flush(); }
  const std::vector<std::vector<PipeAction>> &lists() const { return Lists; }
  const std::vector<double> &bubbles() const { return Bubble; }
  double maxBubble() const { return *std::max_element(Bubble.begin(), Bubble.end()); }

private:
  const PipeProgram &P;
  const std::vector<PipeStageCost> &Stages;
  const PipeLinkMs &Link;
  const std::vector<double> &Limit;
  bool FillF, FillB;
  const std::vector<double> &Approved;
  double MaxApproved = -1;
  int D, S, M;
  std::vector<double> FEnd, IEnd, Free, Held, Bubble;
  std::vector<std::array<int, 2>> CntF, CntI;
  std::vector<std::deque<std::pair<int, int>>> PendingW; // (stage, micro) in I order
  std::vector<std::vector<PipeAction>> Lists;

  int forwardStage(int Dev, int Leg) const { return Leg == 0 ? Dev : S - 1 - Dev; }
  int backwardStage(int Dev, int Leg) const { return Leg == 0 ? S - 1 - Dev : Dev; }
  double &at(std::vector<double> &V, int St, int Mb) { return V[size_t(St) * M + Mb]; }
  double linkTime(int From, int To, double Bytes) const {
    const int A = P.deviceOfStage[From], B = P.deviceOfStage[To];
    return A == B ? 0.0 : Link(A, B, Bytes);
  }
  /// When the input of F (stage St, micro Mb) arrives; -inf for stage 0.
  double forwardInput(int St, int Mb) {
    if (St == 0) return -std::numeric_limits<double>::infinity();
    return at(FEnd, St - 1, Mb) + linkTime(St - 1, St, Stages[St - 1].outputBytes);
  }
  /// When the output gradient of I (stage St, micro Mb) arrives; the F's end
  /// for the last stage.
  double backwardInput(int St, int Mb) {
    if (St + 1 == S) return at(FEnd, St, Mb);
    return std::max(at(FEnd, St, Mb), at(IEnd, St + 1, Mb) + linkTime(St + 1, St, Stages[St].outputBytes));
  }
  /// The idle time device Dev may still take (the paper's repeated pass
  /// over the bubbles a previous attempt approved).
  double budget(int Dev) const {
    double B = maxBubble();
    if (MaxApproved >= 0) B = std::max(B, MaxApproved - Approved[Dev]);
    return B - Bubble[Dev];
  }

  void place(int Dev, PipeActionKind K, int St, int Mb, double Ready, double Cost) {
    const double Start = std::max(Free[Dev], Ready);
    if (CntF[Dev][0] > 0) Bubble[Dev] += Start - Free[Dev];
    Free[Dev] = Start + Cost;
    Lists[Dev].push_back(PipeAction{K, Mb, St});
  }
  bool putForward(int Dev, int Leg) {
    const int St = forwardStage(Dev, Leg), Mb = CntF[Dev][Leg];
    if (Mb >= M) return false;
    const double In = forwardInput(St, Mb);
    if (std::isnan(In)) return false;
    while (Held[Dev] + Stages[St].activationBytes > Limit[Dev] * (1 + 1e-9))
      if (!putWeight(Dev)) return false;
    place(Dev, PipeActionKind::Forward, St, Mb, In, Stages[St].forwardMs);
    at(FEnd, St, Mb) = Free[Dev];
    Held[Dev] += Stages[St].activationBytes;
    ++CntF[Dev][Leg];
    return true;
  }
  bool putGrad(int Dev, int Leg) {
    const int St = backwardStage(Dev, Leg), Mb = CntI[Dev][Leg];
    if (Mb >= M) return false;
    const double In = backwardInput(St, Mb);
    if (std::isnan(In)) return false;
    place(Dev, PipeActionKind::InputGrad, St, Mb, In, Stages[St].inputGradMs);
    at(IEnd, St, Mb) = Free[Dev];
    PendingW[Dev].emplace_back(St, Mb);
    ++CntI[Dev][Leg];
    return true;
  }
  bool putWeight(int Dev) {
    if (PendingW[Dev].empty()) return false;
    const auto [St, Mb] = PendingW[Dev].front();
    PendingW[Dev].pop_front();
    place(Dev, PipeActionKind::WeightGrad, St, Mb, Free[Dev], Stages[St].weightGradMs);
    Held[Dev] -= Stages[St].activationBytes;
    return true;
  }
  /// Before an action whose input arrives at In: W's fill a wait at least a
  /// W long; one more W when the wait left exceeds the device's budget
  /// (Extra: whether this kind of action takes that W).
  void fill(int Dev, double In, bool Extra) {
    while (!PendingW[Dev].empty() && !std::isnan(In) &&
           In >= Free[Dev] + Stages[PendingW[Dev].front().first].weightGradMs)
      putWeight(Dev);
    if (Extra && !PendingW[Dev].empty() && !std::isnan(In) && In - Free[Dev] > budget(Dev)) putWeight(Dev);
  }

  /// Every device's first forward; then, last device first, each device
  /// fills the wait for its second leg's first forward with first-leg
  /// forwards (the devices before it running theirs), keeping room for
  /// 2 + 2d more chunks.
  bool warmUp() {
    for (int Dev = 0; Dev < D; ++Dev)
      if (!putForward(Dev, 0)) return false;
    for (int Dev = D - 1; Dev >= 0; --Dev) {
      if (Dev + 1 < D) {
        const int Prev = forwardStage(Dev + 1, 1);
        const double Arrive = at(FEnd, Prev, 0) + linkTime(Prev, Prev + 1, Stages[Prev].outputBytes);
        const double A = Stages[Dev].activationBytes;
        while (Held[Dev] + (2 + 2 * Dev) * A <= Limit[Dev] * (1 + 1e-9) &&
               Free[Dev] + Stages[Dev].forwardMs <= Arrive * (1 + 1e-12) && CntF[Dev][0] < M)
          for (int J = 0; J <= Dev; ++J)
            if (CntF[J][0] < M && !putForward(J, 0)) return false;
      }
      if (!putForward(Dev, 1)) return false;
    }
    return true;
  }
  /// Each device after the first runs forwards, legs in turn, until it has
  /// as many as the device before it.
  bool catchUp() {
    int Leg = 0;
    for (int Dev = 1; Dev < D; ++Dev) {
      auto Behind = [&] {
        return CntF[Dev][0] + CntF[Dev][1] < CntF[Dev - 1][0] + CntF[Dev - 1][1] ||
               (CntF[Dev][1] <= CntF[Dev - 1][1] && CntF[Dev - 1][1] < M);
      };
      for (int Idle = 0; Behind(); Leg = 1 - Leg) {
        bool Put = false;
        for (int J = D - 1; J >= Dev; --J)
          if (CntF[J][Leg] < M && forwardReady(J, Leg)) Put |= putForward(J, Leg);
        if (Put) Idle = 0;
        else if (++Idle > 2) return false;
      }
    }
    return true;
  }
  bool forwardReady(int Dev, int Leg) {
    const int St = forwardStage(Dev, Leg), Mb = CntF[Dev][Leg];
    return Mb < M && !std::isnan(forwardInput(St, Mb));
  }
  /// 2M rounds of one I then one F per device (the paper's steady state).
  bool steady() {
    for (int Round = 0; Round < 2 * M; ++Round) {
      std::vector<std::pair<int, int>> Late, Early; // (device, leg)
      for (int Dev = 0; Dev < D; ++Dev) {
        if (CntI[Dev][0] >= M && CntI[Dev][1] >= M) continue;
        if (CntI[Dev][1] >= CntI[Dev][0]) Early.emplace_back(Dev, 0);
        else if (Dev + 1 == D || CntI[Dev][0] >= M || !std::isnan(at(IEnd, Dev + 1, CntI[Dev][1])))
          Late.emplace_back(Dev, 1);
        else Early.emplace_back(Dev, 0);
      }
      std::vector<std::pair<int, int>> Order(Late.rbegin(), Late.rend());
      Order.insert(Order.end(), Early.begin(), Early.end());
      for (const auto &[Dev, Leg] : Order) {
        if (CntI[Dev][Leg] >= M) continue;
        const double In = backwardInput(backwardStage(Dev, Leg), CntI[Dev][Leg]);
        fill(Dev, In, Leg == 1 || FillB);
        if (!putGrad(Dev, Leg)) return false;
      }
      for (int Dev = 0; Dev < D; ++Dev) {
        if (CntF[Dev][1] >= M) continue;
        int Leg = -1;
        if (CntF[Dev][1] >= CntF[Dev][0]) Leg = 0;
        else if (Dev + 1 == D || !std::isnan(at(FEnd, forwardStage(Dev + 1, 1), CntF[Dev][1]))) Leg = 1;
        else if (CntF[Dev][0] < M && forwardReady(Dev, 0)) Leg = 0;
        if (Leg < 0 || !forwardReady(Dev, Leg)) continue;
        const int St = forwardStage(Dev, Leg);
        while (Held[Dev] + Stages[St].activationBytes > Limit[Dev] * (1 + 1e-9))
          if (!putWeight(Dev)) return false;
        fill(Dev, forwardInput(St, CntF[Dev][Leg]), FillF);
        if (!putForward(Dev, Leg)) return false;
      }
    }
    return true;
  }
  bool flush() {
    for (int Dev = 0; Dev < D; ++Dev) {
      while (putWeight(Dev)) {}
      if (CntF[Dev][0] < M || CntF[Dev][1] < M || CntI[Dev][0] < M || CntI[Dev][1] < M) return false;
    }
    return true;
  }
};

} // namespace

std::optional<PipeProgram> onnxp::vShapeProgram(const PipeProgram &P,
                                                const std::vector<PipeStageCost> &Stages,
                                                const PipeLinkMs &Link, const std::vector<double> &Limit) {
  if (P.deviceOfStage.size() != size_t(2 * P.devices) || Limit.size() != size_t(P.devices))
    return std::nullopt;
  for (int St = 0; St < 2 * P.devices; ++St)
    if (P.deviceOfStage[St] != (St < P.devices ? St : 2 * P.devices - 1 - St)) return std::nullopt;
  std::optional<PipeProgram> Best;
  double BestBubble = 0;
  for (int Bits = 0; Bits < 4; ++Bits) {
    // The paper's generator repeats an attempt with the bubbles the last
    // one approved while that lowers the largest.
    std::vector<double> Approved;
    for (int Pass = 0; Pass < 8; ++Pass) {
      VBuilder B(P, Stages, Link, Limit, (Bits & 1) != 0, (Bits & 2) != 0, Approved);
      if (!B.run()) break;
      const double Bubble = B.maxBubble();
      const bool Better = !Best || Bubble < BestBubble - 1e-9 * std::max(1.0, BestBubble);
      if (Better) {
        Best = P;
        Best->actions = B.lists();
        BestBubble = Bubble;
      }
      if (!Approved.empty() && !(Bubble < *std::max_element(Approved.begin(), Approved.end()))) break;
      Approved = B.bubbles();
    }
  }
  return Best;
}
