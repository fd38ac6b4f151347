//===- Cost/TensorParallel.cpp - A layer split t ways ----------------------===//
//
// See TensorParallel.h and docs/cost-model.md ("Tensor parallelism").
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/TensorParallel.h"

#include "onnx-partition/Cost/AllReduce.h"

#include <algorithm>

using namespace onnxp;

std::vector<int> onnxp::tensorParallelGroup(const Platform &P, int T) {
  std::vector<int> Group;
  for (int D = 0; D < T && D < P.accelerators; ++D) Group.push_back(D);
  return Group;
}

TensorParallelPrice onnxp::priceTensorParallel(const TensorParallelLayer &L, int T, bool Recompute,
                                               const Platform &P) {
  const double Share = 1.0 / std::max(1, T);
  // The sharded part / t, the rest whole (TensorParallel.h).
  auto Split = [&](double Whole, double Sharded) { return Whole - Sharded + Sharded * Share; };
  TensorParallelPrice R;
  double OneWayMs = 0; // the all-reduces of one direction: one per block (Megatron §3, f and g)
  if (T > 1 && !L.allReduceBytes.empty()) {
    const std::vector<int> Group = tensorParallelGroup(P, T);
    for (double Bytes : L.allReduceBytes) OneWayMs += allReduceMs(P, Bytes, Group);
  }
  const bool Sharded = T > 1 && !L.allReduceBytes.empty();
  const double Forward = Sharded ? Split(L.forwardMs, L.shardedForwardMs) + OneWayMs : L.forwardMs;
  const double Backward = Sharded ? Split(L.backwardMs, L.shardedBackwardMs) + OneWayMs : L.backwardMs;
  R.forwardMs = Forward;
  R.backwardMs = Backward + (Recompute ? Forward : 0);
  R.allReduceMs = OneWayMs * (Recompute ? 3 : 2);
  R.stateBytes = Sharded ? Split(L.stateBytes, L.shardedStateBytes) : L.stateBytes;
  R.gradientBytes = Sharded ? Split(L.gradientBytes, L.shardedGradientBytes) : L.gradientBytes;
  const double Saved = Sharded ? Split(L.activationBytes, L.shardedActivationBytes) : L.activationBytes;
  R.activationBytes = Recompute ? std::min(Saved, L.inputBytes) : Saved;
  return R;
}
