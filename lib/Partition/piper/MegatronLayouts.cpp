//===- Partition/piper/MegatronLayouts.cpp - Uniform PP x DP x TP layouts ===//
//
// See MegatronLayouts.h.
//
//===----------------------------------------------------------------------===//
#include "MegatronLayouts.h"

#include "onnx-partition/Cost/TensorParallel.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

namespace {

/// Prefix sums of the layers at one t, without and with recomputation.
struct Prefix {
  std::vector<double> ms, state, act, msRecompute, actRecompute;
  double sum(const std::vector<double> &V, int A, int B) const { return V[B] - V[A]; }
};

Prefix prefixAt(const std::vector<MegatronLayer> &Layers, int T, const Platform &P) {
  Prefix X;
  for (auto *V : {&X.ms, &X.state, &X.act, &X.msRecompute, &X.actRecompute}) V->assign(1, 0.0);
  for (const MegatronLayer &L : Layers) {
    const bool Split = std::find(L.degrees.begin(), L.degrees.end(), T) != L.degrees.end();
    const TensorParallelPrice N = priceTensorParallel(L.costs, Split ? T : 1, false, P);
    const TensorParallelPrice R = priceTensorParallel(L.costs, Split ? T : 1, true, P);
    X.ms.push_back(X.ms.back() + N.forwardMs + N.backwardMs);
    X.state.push_back(X.state.back() + N.stateBytes);
    X.act.push_back(X.act.back() + N.activationBytes);
    X.msRecompute.push_back(X.msRecompute.back() + R.forwardMs + R.backwardMs);
    X.actRecompute.push_back(X.actRecompute.back() + R.activationBytes);
  }
  return X;
}

/// Stages [start, end) from the last, packed under LimitMs; empty when the
/// layers do not fit in Stages stages.
std::vector<PiperGraphStage> pack(const Prefix &X, int Layers, int Stages, int InFlightCap, double Memory,
                                  double LimitMs) {
  std::vector<PiperGraphStage> FromEnd;
  int End = Layers;
  for (int K = 1; K <= Stages && End > 0; ++K) {
    const int Held = std::min(K, InFlightCap);
    auto Fits = [&](int A, bool Recompute) {
      const double Ms = X.sum(Recompute ? X.msRecompute : X.ms, A, End);
      const double Bytes = X.sum(X.state, A, End) + Held * X.sum(Recompute ? X.actRecompute : X.act, A, End);
      return Ms <= LimitMs && Bytes <= Memory;
    };
    int Start = End;
    while (Start > 0 && (Fits(Start - 1, false) || Fits(Start - 1, true))) --Start;
    if (Start == End) return {};
    PiperGraphStage St;
    const bool Recompute = !Fits(Start, false);
    for (int L = Start; L < End; ++L) {
      St.layers.push_back(L);
      St.recompute.push_back(Recompute);
    }
    FromEnd.push_back(std::move(St));
    End = Start;
  }
  if (End > 0) return {};
  return {FromEnd.rbegin(), FromEnd.rend()};
}

/// The cut of least largest stage time for (t, d, P); empty: none fits.
std::vector<PiperGraphStage> bestCut(const Prefix &X, int Layers, int Stages, int InFlightCap,
                                     double Memory) {
  double Hi = X.msRecompute.back() + X.ms.back();
  if (pack(X, Layers, Stages, InFlightCap, Memory, Hi).empty()) return {};
  double Lo = 0;
  for (int I = 0; I < 60 && Hi - Lo > 1e-9 * Hi; ++I) {
    const double Mid = (Lo + Hi) / 2;
    (pack(X, Layers, Stages, InFlightCap, Memory, Mid).empty() ? Lo : Hi) = Mid;
  }
  return pack(X, Layers, Stages, InFlightCap, Memory, Hi);
}

} // namespace

PiperGraphPlan onnxp::bestUniformLayout(const std::vector<MegatronLayer> &Layers, const Platform &P,
                                        const PiperGraphOptions &O, int MaxT) {
  PiperGraphPlan Best;
  Best.maxTensorParallel = MaxT;
  Best.method = "uniform";
  Best.status = "no uniform layout fits";
  const int N = P.accelerators, L = static_cast<int>(Layers.size());
  const int PerNode = P.acceleratorsPerNode > 0 ? P.acceleratorsPerNode : N;
  for (int T : {1, 2, 4, 8}) {
    if (T > MaxT || T > PerNode || PerNode % T != 0) break;
    const Prefix X = prefixAt(Layers, T, P);
    for (int D = 1; D * T <= N && D <= O.microbatches; ++D)
      for (int S = 1; S * D * T <= N && S <= L; ++S) {
        if (O.deadline.expired()) return Best;
        const int InFlightCap = (O.microbatches + D - 1) / D;
        PiperGraphPlan Pl;
        Pl.maxTensorParallel = MaxT;
        Pl.method = "uniform";
        Pl.stages = bestCut(X, L, S, InFlightCap, P.accMemory());
        if (Pl.stages.empty()) continue;
        for (size_t K = 0; K < Pl.stages.size(); ++K) {
          Pl.stages[K].dataParallel = D;
          Pl.stages[K].tensorParallel = T;
          Pl.stages[K].firstDevice = static_cast<int>(K) * D * T;
        }
        pricePiperGraphPlan(Layers, Pl, P, O);
        if (Pl.ok() && (!Best.ok() || Pl.price.iterationMs < Best.price.iterationMs)) Best = std::move(Pl);
      }
  }
  return Best;
}
