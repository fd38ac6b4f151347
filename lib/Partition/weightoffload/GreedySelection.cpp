//===- Partition/weightoffload/GreedySelection.cpp - Algorithm 1 ----------===//
//
// Seed 002 §5, Algorithm 1: every operation o has an excess E_o of memory
// over M_GPU; while some E_o > 0, pick the choice (k,d) of best profit =
// (sum over the ops it covers of min(E_o, |w_k|)) / (transfer cost), and
// lower the excess of the ops it covers by |w_k|.
//
// Corrections to the printed algorithm (the item 3):
//  - E_o = M_o + sum_i |w_i| - M_GPU counts the op's own weights twice: M_o
//    of eq. (1) already holds w_k (and dw_k for B_k). We use
//    E_o = M_o + sum_{i != k} |w_i| - M_GPU.
//  - Only positive excess is a benefit: min(max(E_o, 0), |w_k|). The printed
//    initial E_o can be negative, which would make covering an op that
//    already fits a penalty.
//  - The printed profit lines lost their factors in OCR; the text says it:
//    cost 2|w_k| (there and back), halved to |w_k| when (k,1-d) is already
//    chosen (the discount). Greedy* (Discount = false) always pays 2|w_k|.
// Ties go to the lower layer, then d = 1, so the result is deterministic.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>

using namespace onnxp;

Expected<OffloadSelection> onnxp::selectGreedy(const OffloadInstance &I, bool Discount) {
  ONNXP_RETURN_IF_ERROR(checkOffloadFeasible(I));
  const int N = I.numOps();
  double W = I.totalWeights();
  std::vector<double> E(N);
  for (int J = 0; J < N; ++J) E[J] = I.peak(J) + W - I.w[I.opLayer(J)] - I.memory;

  // Ops covered by (k,1): those of layers > k; by (k,0): layers < k.
  auto Covers = [&](int K, int D, int J) {
    int Q = I.opLayer(J);
    return D == 1 ? Q > K : Q < K;
  };
  OffloadSelection S(I.L);
  // A relative tolerance keeps float noise in byte sums from forcing an
  // extra choice when memory fits exactly.
  double Tol = 1e-9 * std::max(1.0, I.memory);
  while (*std::max_element(E.begin(), E.end()) > Tol) {
    double BestProfit = 0;
    int BestK = 0, BestD = 0;
    for (int K = 1; K <= I.L; ++K) {
      if (I.w[K] <= 0) continue;
      for (int D = 1; D >= 0; --D) {
        bool Chosen = D == 1 ? S.afterForward[K] : S.afterBackward[K];
        if (Chosen) continue;
        bool Other = D == 1 ? S.afterBackward[K] : S.afterForward[K];
        double Benefit = 0;
        for (int J = 0; J < N; ++J)
          if (Covers(K, D, J)) Benefit += std::min(std::max(E[J], 0.0), I.w[K]);
        double Cost = (Discount && Other) ? I.w[K] : 2 * I.w[K];
        double Profit = Benefit / Cost;
        if (Profit > BestProfit * (1 + 1e-12)) {
          BestProfit = Profit;
          BestK = K;
          BestD = D;
        }
      }
    }
    if (BestK == 0) {
      int Worst = int(std::max_element(E.begin(), E.end()) - E.begin());
      return makeInternalError(I.name, ": Algorithm 1 found no useful choice while ", I.opName(Worst),
                               " still exceeds GPU memory by ", exactBytes(E[Worst]));
    }
    (BestD == 1 ? S.afterForward : S.afterBackward)[BestK] = 1;
    for (int J = 0; J < N; ++J)
      if (Covers(BestK, BestD, J)) E[J] = std::max(E[J] - I.w[BestK], 0.0);
  }
  return S;
}
