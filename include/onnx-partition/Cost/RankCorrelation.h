//===- Cost/RankCorrelation.h - How well a model ranks measured ops -*- C++ -*-===//
//
// A partitioner balances loads, so what matters most in a cost model is
// that it orders operators like the hardware does; absolute scale is a
// single factor. Spearman's rho (the Pearson correlation of ranks, ties
// given their average rank) measures exactly that; docs/cost-model.md
// reports it for the analytical CPU model against ONNX Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_RANKCORRELATION_H
#define ONNXP_COST_RANKCORRELATION_H

#include <vector>

namespace onnxp {

/// 1-based ranks of Xs, ties sharing their average rank.
std::vector<double> averageRanks(const std::vector<double> &Xs);

/// Spearman's rank correlation of paired samples; NaN when fewer than two
/// pairs or when either side is constant.
double spearmanRho(const std::vector<double> &Xs, const std::vector<double> &Ys);

} // namespace onnxp

#endif // ONNXP_COST_RANKCORRELATION_H
