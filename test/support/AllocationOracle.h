//===- support/AllocationOracle.h - Brute force over pipeline allocations -===//
//
// The one enumeration of block-to-GPU allocations the pipeline tests use as
// their oracle: every allocation of a chain's blocks to at most P GPUs,
// labels canonical (block 0 on GPU 0; a block opens GPU g only after GPU
// g - 1 is used), in lexicographic order, optionally only those where each
// GPU holds one interval of blocks. On top of it, the two brute-force
// optima the pipeline-ilp tests compare with: the least allocation load
// (the period without a memory limit) and the best period of a modulo-
// scheduled pattern that fits a memory limit.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_SUPPORT_ALLOCATIONORACLE_H
#define ONNXP_TEST_SUPPORT_ALLOCATIONORACLE_H

#include "onnx-partition/Partition/PipelineSchedule.h"

#include <functional>
#include <vector>

namespace onnxp::test {

/// Calls Visit(GpuOfBlock) for every canonical allocation of Blocks blocks
/// to at most Gpus GPUs (Contiguous: only one interval per GPU).
void forEachAllocation(int Blocks, int Gpus, bool Contiguous,
                       const std::function<void(const std::vector<int> &)> &Visit);

/// min over the allocations of allocationLoad (per-GPU compute, per-link
/// traffic): the optimum without a memory limit.
double bruteForceLoad(const PipelineTasks &Tasks, int P, bool Contiguous);

/// Best period over the allocations whose modulo-scheduled pattern
/// (priceAllocation) fits in Mem bytes per GPU; +infinity when none does.
double bruteForceWithin(const PipelineTasks &Tasks, int P, double Mem);

} // namespace onnxp::test

#endif // ONNXP_TEST_SUPPORT_ALLOCATIONORACLE_H
