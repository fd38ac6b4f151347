//===- Partition/weightoffload/OffloadInstance.cpp - Eq. (1) and checks ---===//
//
// The memory model of seed 002 §3 and the two memory thresholds of the
// issue: below max_o M_o no schedule exists (the op's own weights, and for
// B_k its gradient, must be there); from max_o (M_o + sum_{i != k} |w_i|)
// on, nothing needs to leave the GPU.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/WeightOffload.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace onnxp;

std::string OffloadInstance::opName(int J) const {
  return (opIsBackward(J) ? "B" : "F") + std::to_string(opLayer(J));
}

double OffloadInstance::peak(int J) const {
  int K = opLayer(J);
  double Acts = 0;
  for (int Q = 0; Q <= K; ++Q) Acts += a[Q];
  // Eq. (1): during B_k the peak is reached while delta^{k-1} is computed,
  // with w_k and dw_k (|dw_k| = |w_k|) both present.
  return opIsBackward(J) ? 2 * w[K] + Acts + bOverhead[K] : w[K] + Acts + fOverhead[K];
}

double OffloadInstance::gapBefore(int J) const {
  int K = opLayer(J);
  double Acts = 0;
  // Before B_k: a^0..a^{k-1} and delta^k (|delta^k| = |a^k|); a^k itself was
  // freed by B_{k+1} once dw_{k+1} was computed. Before F_k: a^0..a^{k-1}.
  int Last = opIsBackward(J) ? K : K - 1;
  for (int Q = 0; Q <= Last; ++Q) Acts += a[Q];
  return Acts;
}

double OffloadInstance::totalCompute() const {
  double S = 0;
  for (int K = 1; K <= L; ++K) S += uF[K] + uB[K];
  return S;
}

double OffloadInstance::totalWeights() const {
  double S = 0;
  for (int K = 1; K <= L; ++K) S += w[K];
  return S;
}

int OffloadInstance::minimumMemoryOp() const {
  int Best = 0;
  for (int J = 1; J < numOps(); ++J)
    if (peak(J) > peak(Best)) Best = J;
  return Best;
}

double OffloadInstance::minimumMemory() const { return peak(minimumMemoryOp()); }

double OffloadInstance::noOffloadMemory() const {
  double W = totalWeights(), Best = 0;
  for (int J = 0; J < numOps(); ++J) Best = std::max(Best, peak(J) + W - w[opLayer(J)]);
  return Best;
}

Error OffloadInstance::validate() const {
  if (L < 1) return makeError(name, ": weight offloading needs at least one layer");
  auto Bad = [](double V) { return !std::isfinite(V) || V < 0; };
  if (!std::isfinite(bandwidth) || bandwidth <= 0)
    return makeError(name, ": the host link bandwidth must be positive, got ", formatNumber(bandwidth));
  if (Bad(memory))
    return makeError(name, ": GPU memory must be a non-negative number, got ", formatNumber(memory));
  for (int K = 0; K <= L; ++K) {
    if (Bad(a[K])) return makeError(name, ": activation a", K, " must be finite and non-negative");
    if (K == 0) continue;
    if (Bad(uF[K]) || Bad(uB[K]) || Bad(w[K]) || Bad(fOverhead[K]) || Bad(bOverhead[K]))
      return makeError(name, ": layer ", K, " has a negative or non-finite time or size");
  }
  return Error::success();
}

Expected<OffloadInstance> onnxp::makeOffloadInstance(const Chain &C, double MemoryBytes,
                                                     double BandwidthBytesPerMs) {
  ONNXP_RETURN_IF_ERROR(C.validate());
  OffloadInstance I;
  I.name = C.name.empty() ? C.sourceName : C.name;
  I.L = (int)C.size();
  I.uF.assign(I.L + 1, 0);
  I.uB.assign(I.L + 1, 0);
  I.w.assign(I.L + 1, 0);
  I.fOverhead.assign(I.L + 1, 0);
  I.bOverhead.assign(I.L + 1, 0);
  I.a.assign(I.L + 1, 0);
  I.a[0] = C.inputBytes;
  for (int K = 1; K <= I.L; ++K) {
    const ChainBlock &B = C.blocks[K - 1];
    I.uF[K] = B.forwardTime;
    I.uB[K] = B.backwardTime;
    I.w[K] = B.weightBytes;
    I.a[K] = B.outputBytes;
    I.fOverhead[K] = B.forwardOverhead;
    I.bOverhead[K] = B.backwardOverhead;
  }
  I.memory = MemoryBytes;
  I.bandwidth = BandwidthBytesPerMs;
  ONNXP_RETURN_IF_ERROR(I.validate());
  return I;
}

static std::string megabytes(double B) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.2f MB", B / 1e6);
  return Buf;
}

Error onnxp::checkOffloadFeasible(const OffloadInstance &I) {
  ONNXP_RETURN_IF_ERROR(I.validate());
  double Need = I.minimumMemory();
  if (I.memory < Need) {
    int J = I.minimumMemoryOp();
    return makeDoesNotFitError(
        I.name, ": GPU memory ", megabytes(I.memory), " is too small for weight offloading: ", I.opName(J),
        " alone needs ", megabytes(Need), " (", exactBytes(Need),
        ": its weights, their gradient and the activations of eq. (1)) even with every "
        "other layer's weights on the host");
  }
  return Error::success();
}

int OffloadSelection::count() const {
  int N = 0;
  for (size_t K = 0; K < afterForward.size(); ++K) N += afterForward[K] + afterBackward[K];
  return N;
}

bool onnxp::selectionCoversMemory(const OffloadInstance &I, const OffloadSelection &S) {
  // An op o of layer q holds w_i (i != q) unless a choice of i covers it:
  // (i,1) covers the ops of layers > i, (i,0) those of layers < i (§5).
  for (int J = 0; J < I.numOps(); ++J) {
    int Q = I.opLayer(J);
    double Held = 0;
    for (int K = 1; K <= I.L; ++K) {
      if (K == Q) continue;
      bool Covered = (K < Q && S.afterForward[K]) || (K > Q && S.afterBackward[K]);
      if (!Covered) Held += I.w[K];
    }
    if (I.peak(J) + Held > I.memory * (1 + 1e-12)) return false;
  }
  return true;
}
