//===- Cost/RankCorrelation.cpp - Spearman's rho with tied ranks --------===//
//
// rho = Pearson(rank(X), rank(Y)). With ties the textbook shortcut
// 1 - 6 sum d^2 / (n (n^2 - 1)) is wrong, so we compute the Pearson
// correlation of the average ranks directly.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/RankCorrelation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace onnxp;

std::vector<double> onnxp::averageRanks(const std::vector<double> &Xs) {
  std::vector<size_t> Order(Xs.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) { return Xs[A] < Xs[B]; });
  std::vector<double> Rank(Xs.size());
  for (size_t I = 0; I < Order.size();) {
    size_t J = I;
    while (J + 1 < Order.size() && Xs[Order[J + 1]] == Xs[Order[I]]) ++J;
    double Avg = (static_cast<double>(I) + static_cast<double>(J)) / 2.0 + 1.0;
    for (size_t K = I; K <= J; ++K) Rank[Order[K]] = Avg;
    I = J + 1;
  }
  return Rank;
}

double onnxp::spearmanRho(const std::vector<double> &Xs, const std::vector<double> &Ys) {
  if (Xs.size() != Ys.size() || Xs.size() < 2) return NAN;
  std::vector<double> A = averageRanks(Xs), B = averageRanks(Ys);
  double N = static_cast<double>(A.size());
  double MeanA = std::accumulate(A.begin(), A.end(), 0.0) / N;
  double MeanB = std::accumulate(B.begin(), B.end(), 0.0) / N;
  double Cov = 0, VarA = 0, VarB = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    Cov += (A[I] - MeanA) * (B[I] - MeanB);
    VarA += (A[I] - MeanA) * (A[I] - MeanA);
    VarB += (B[I] - MeanB) * (B[I] - MeanB);
  }
  if (VarA == 0 || VarB == 0) return NAN;
  return Cov / std::sqrt(VarA * VarB);
}
