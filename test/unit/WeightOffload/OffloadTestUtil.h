//===- unit/WeightOffload/OffloadTestUtil.h - Instances for seed 002 tests ===//
//
// Builders shared by the weight-offloading tests: Theorem 1's reduction
// instance and the BERT-32 chain of the Piper file (small random chains are
// test/support's randomChain with offloadChainSpec).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_WEIGHTOFFLOAD_OFFLOADTESTUTIL_H
#define ONNXP_TEST_WEIGHTOFFLOAD_OFFLOADTESTUTIL_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Partition/WeightOffload.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace onnxp::offloadtest {

/// Seed 002 Theorem 1 (Fig. 2): L = 5m; u_F = 0 and |a| = 0 except
/// u_{F_2m} = m; layers 2k-1 (k <= m): |w| = V, u_B = 0; layers 2k: |w| = 0,
/// u_B = 1; layers 2m+1..5m: u = 0, |w| = x_i; M_GPU = mV + V, beta = V.
OffloadInstance theorem1Instance(int M, double V, const std::vector<double> &X);

/// BERT-32 from ../shared/workloads/piper/bert32a100.json for batch B, or
/// nullopt when the shared folder is absent.
std::optional<Chain> bert32Chain(double Batch = 8);

} // namespace onnxp::offloadtest

#endif
