//===- support/AllocationOracle.cpp - Brute force over pipeline allocations ===//
//
// See AllocationOracle.h. Written once for AllocationSearchTest,
// PipelineIlpTest and PipelineExhaustive (issue 32).
//
//===----------------------------------------------------------------------===//
#include "AllocationOracle.h"

#include "onnx-partition/Partition/PipelineBaseline.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

namespace {
void enumerate(std::vector<int> &A, int I, int Used, int Gpus, bool Contiguous,
               const std::function<void(const std::vector<int> &)> &Visit) {
  if (I == static_cast<int>(A.size())) return Visit(A);
  for (int G = 0; G <= std::min(Used, Gpus - 1); ++G) {
    // Contiguous: stay on the previous block's GPU or open a new one.
    if (Contiguous && I > 0 && G != A[I - 1] && G != Used) continue;
    A[I] = G;
    enumerate(A, I + 1, std::max(Used, G + 1), Gpus, Contiguous, Visit);
  }
}
} // namespace

void onnxp::test::forEachAllocation(int Blocks, int Gpus, bool Contiguous,
                                    const std::function<void(const std::vector<int> &)> &Visit) {
  std::vector<int> A(Blocks, 0);
  enumerate(A, 0, 0, Gpus, Contiguous, Visit);
}

double onnxp::test::bruteForceLoad(const PipelineTasks &Tasks, int P, bool Contiguous) {
  double Best = INFINITY;
  forEachAllocation(Tasks.numBlocks(), P, Contiguous,
                    [&](const std::vector<int> &A) { Best = std::min(Best, allocationLoad(Tasks, A, P)); });
  return Best;
}

double onnxp::test::bruteForceWithin(const PipelineTasks &Tasks, int P, double Mem) {
  double Best = INFINITY;
  forEachAllocation(Tasks.numBlocks(), P, /*Contiguous=*/false, [&](const std::vector<int> &A) {
    Expected<PipelinePlan> Plan = priceAllocation(Tasks, A, P, "brute");
    if (!Plan) {
      (void)Plan.takeError(); // no pattern for this allocation
      return;
    }
    if (Plan->peakMemory() <= Mem) Best = std::min(Best, Plan->period());
  });
  return Best;
}
