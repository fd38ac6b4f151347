//===- Partition/remat/RematChain.h - A chain in memory slots ---*- C++ -*-===//
//
// The discretized chain both activation DPs work on (seed 001 App. B.4:
// memory in N_GPU values). Layers are 1-based as in the supplement: layer k
// reads a^{k-1} and writes a^k; layer L+1 is the loss, which stores nothing.
// Sizes are whole slots, each tensor rounded up separately.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_REMAT_REMATCHAIN_H
#define ONNXP_PARTITION_REMAT_REMATCHAIN_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Partition/Remat.h"
#include "onnx-partition/Support/Error.h"

#include <vector>

namespace onnxp::remat {

struct SlotChain {
  int L = 0;      ///< layers; L+1 is the loss
  int budget = 0; ///< M in slots (counts a^0)
  double slotBytes = 0;
  double beta = 0; ///< slots per ms; 0 with offloading off
  bool offload = false;
  bool infiniteBeta = false;
  std::vector<int> a;          ///< a[0..L+1], a[L+1] = 0 (also the gradient sizes)
  std::vector<int> abar;       ///< abar[1..L+1], abar[L+1] = 0; abar[k] >= a[k]
  std::vector<int> oF, oB;     ///< transient overheads [1..L+1]
  std::vector<double> uF, uB;  ///< times [1..L+1]; the loss time is in uB[L+1]
  std::vector<double> prefixF; ///< prefixF[k] = uF[1] + ... + uF[k]

  double sumF(int I, int J) const { return J < I ? 0 : prefixF[J] - prefixF[I - 1]; }
};

/// Slot size and budget from the options, then every tensor rounded up.
Expected<SlotChain> discretize(const Chain &C, const RematOptions &O);

} // namespace onnxp::remat

#endif // ONNXP_PARTITION_REMAT_REMATCHAIN_H
