//===- Cost/OpRulesDense.cpp - FLOPs of contractions, convs, RNNs, pools ===//
//
// The ops that dominate CNNs and transformers. Counting convention: one
// multiply-add is two FLOPs (the convention of vendor peak numbers, so the
// roofline compares like with like). Bytes are the tensors the kernel reads
// and writes once each: a well-blocked kernel's DRAM traffic, not its cache
// traffic.
//
//===----------------------------------------------------------------------===//
#include "OpRuleHelpers.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;
using namespace onnxp::cost;

namespace {
void readWriteAll(const OpShapes &S, OpWork &W) {
  W.bytesRead = allInputBytes(S, W);
  W.bytesWritten = allOutputBytes(S, W);
}
} // namespace

void onnxp::cost::matMulRule(const OpShapes &S, OpWork &W) {
  // Y[..., M, N] = A[..., M, K] x B[..., K, N]: 2*K FLOPs per output element.
  // FusedMatMul (com.microsoft) may transpose A; 1-D operands are promoted.
  readWriteAll(S, W);
  std::vector<int64_t> A = dimsOf(S.inputs, 0, W);
  double Y = elems(S.outputs, 0, W);
  if (A.empty()) return;
  bool TransA = attrInt(S, "transA", 0) != 0;
  int64_t K = A.size() == 1 ? A[0] : (TransA ? A[A.size() - 2] : A.back());
  if (K < 0) {
    W.shapesKnown = false;
    return;
  }
  W.flops = 2.0 * Y * static_cast<double>(K);
}

void onnxp::cost::gemmRule(const OpShapes &S, OpWork &W) {
  // Y[M, N] = alpha * A' B' + beta * C: 2*K per output, plus one add for C.
  readWriteAll(S, W);
  std::vector<int64_t> A = dimsOf(S.inputs, 0, W);
  double Y = elems(S.outputs, 0, W);
  if (A.size() != 2) return;
  int64_t K = attrInt(S, "transA", 0) ? A[0] : A[1];
  if (K < 0) {
    W.shapesKnown = false;
    return;
  }
  W.flops = 2.0 * Y * static_cast<double>(K);
  if (S.inputs.size() > 2 && S.inputs[2]) W.flops += Y;
}

double onnxp::cost::convFlops(const std::vector<int64_t> &Y, const std::vector<int64_t> &Wt) {
  // Each output element is a dot product over C_in/group * prod(kernel).
  if (Y.empty() || Wt.size() < 2) return 0;
  return 2.0 * product(Y, 0, Y.size()) * product(Wt, 1, Wt.size());
}

void onnxp::cost::convRule(const OpShapes &S, OpWork &W) {
  readWriteAll(S, W);
  // QLinearConv's weight is input 3; Conv / ConvInteger have it at 1.
  size_t WSlot = S.op == "QLinearConv" ? 3 : 1;
  std::vector<int64_t> Y = dimsOf(S.outputs, 0, W);
  std::vector<int64_t> Wt = dimsOf(S.inputs, WSlot, W);
  W.flops = convFlops(Y, Wt);
  if (S.op == "Conv" && S.inputs.size() > 2 && S.inputs[2]) W.flops += product(Y, 0, Y.size());
  // ONNX Runtime's CPU kernel lowers a non-1x1 conv to im2col + GEMM: one
  // column buffer of C_in/group * prod(kernel) x prod(output spatial) per image.
  if (Y.size() >= 3 && Wt.size() >= 3 && product(Wt, 2, Wt.size()) > 1) {
    const TensorInfo *X = S.inputs.empty() ? nullptr : S.inputs[0];
    double Eb = X ? elementBytes(X->elemType) : 4;
    W.workspaceBytes = product(Wt, 1, Wt.size()) * product(Y, 2, Y.size()) * (Eb > 0 ? Eb : 4);
  }
}

void onnxp::cost::convTransposeRule(const OpShapes &S, OpWork &W) {
  // Every input element scatters into C_out/group * prod(kernel) outputs
  // (weight dims [C_in, C_out/group, k...]).
  readWriteAll(S, W);
  double X = elems(S.inputs, 0, W);
  std::vector<int64_t> Wt = dimsOf(S.inputs, 1, W);
  if (Wt.size() < 2) return;
  W.flops = 2.0 * X * product(Wt, 1, Wt.size());
  if (S.inputs.size() > 2 && S.inputs[2]) W.flops += elems(S.outputs, 0, W);
}

void onnxp::cost::einsumRule(const OpShapes &S, OpWork &W) {
  // The naive loop nest runs over every distinct index letter once: its
  // trip count is the product of their sizes. With a contracted index (one
  // that does not reach the output) each trip is a multiply-add (2 FLOPs);
  // otherwise it is one multiply (or copy, for a single operand).
  readWriteAll(S, W);
  std::string Eq = attrString(S, "equation", "");
  Eq.erase(std::remove(Eq.begin(), Eq.end(), ' '), Eq.end());
  size_t Arrow = Eq.find("->");
  std::string Lhs = Eq.substr(0, Arrow);
  std::vector<std::string> Terms;
  for (size_t Start = 0;;) {
    size_t Comma = Lhs.find(',', Start);
    Terms.push_back(Lhs.substr(Start, Comma == std::string::npos ? std::string::npos : Comma - Start));
    if (Comma == std::string::npos) break;
    Start = Comma + 1;
  }
  std::map<char, int64_t> Size;
  int64_t EllipsisSize = 1;
  for (size_t T = 0; T < Terms.size() && T < S.inputs.size(); ++T) {
    std::vector<int64_t> D = dimsOf(S.inputs, T, W);
    if (D.empty()) return;
    const std::string &Term = Terms[T];
    size_t Ell = Term.find("...");
    std::string Letters = Term;
    size_t EllRank = 0;
    if (Ell != std::string::npos) {
      Letters = Term.substr(0, Ell) + Term.substr(Ell + 3);
      EllRank = D.size() >= Letters.size() ? D.size() - Letters.size() : 0;
      // Broadcast dims of "...": the largest product over the operands.
      EllipsisSize = std::max<int64_t>(EllipsisSize, static_cast<int64_t>(product(D, Ell, Ell + EllRank)));
    }
    for (size_t I = 0, Dim = 0; I < Term.size(); ++I) {
      if (Term.compare(I, 3, "...") == 0) {
        I += 2;
        Dim += EllRank;
        continue;
      }
      if (Dim < D.size()) Size[Term[I]] = std::max(Size[Term[I]], D[Dim]);
      ++Dim;
    }
  }
  std::string Out = Arrow == std::string::npos ? "" : Eq.substr(Arrow + 2);
  std::set<char> OutLetters(Out.begin(), Out.end());
  if (Arrow == std::string::npos) // implicit output: letters seen exactly once
    for (auto &[C, N] : Size)
      if (std::count(Lhs.begin(), Lhs.end(), C) == 1) OutLetters.insert(C);
  double Trips = static_cast<double>(EllipsisSize);
  bool Contracts = false;
  for (auto &[C, N] : Size) {
    if (C == '.') continue;
    Trips *= static_cast<double>(N);
    Contracts |= !OutLetters.count(C);
  }
  W.flops = (Contracts && Terms.size() > 1 ? 2.0 : 1.0) * Trips;
}

void onnxp::cost::rnnRule(const OpShapes &S, OpWork &W) {
  // Per time step and direction: gates x (input + hidden) matmuls (2 FLOPs
  // per multiply-add) plus a few elementwise ops per gate element. LSTM has
  // 4 gates, GRU 3, RNN 1. X: [seq, batch, input]; hidden_size attribute.
  readWriteAll(S, W);
  std::vector<int64_t> X = dimsOf(S.inputs, 0, W);
  if (X.size() != 3) return;
  double Gates = S.op == "LSTM" ? 4 : S.op == "GRU" ? 3 : 1;
  double H = static_cast<double>(attrInt(S, "hidden_size", 0));
  double Dirs = attrString(S, "direction", "forward") == "bidirectional" ? 2 : 1;
  double Seq = static_cast<double>(X[0]), Batch = static_cast<double>(X[1]), In = static_cast<double>(X[2]);
  double PerStep = 2.0 * Batch * Gates * H * (In + H) + 8.0 * Batch * Gates * H;
  W.flops = Seq * Dirs * PerStep;
}

void onnxp::cost::poolRule(const OpShapes &S, OpWork &W) {
  // One compare or add per window element per output.
  readWriteAll(S, W);
  double Y = elems(S.outputs, 0, W);
  std::vector<int64_t> K = attrInts(S, "kernel_shape");
  double Window = K.empty() ? 1 : product(K, 0, K.size());
  W.flops = Y * Window;
  if (S.op == "AveragePool" || S.op == "LpPool") W.flops += Y; // the division / root
}

void onnxp::cost::attentionRule(const OpShapes &S, OpWork &W) {
  // com.microsoft Attention: input [B, S, H_in], weights [H_in, 3*H]: the
  // QKV projection, Q K^T and P V (each 2 FLOPs per multiply-add) and a
  // softmax (5 FLOPs per score). MultiHeadAttention takes projected Q, K, V.
  readWriteAll(S, W);
  std::vector<int64_t> X = dimsOf(S.inputs, 0, W);
  if (X.size() != 3) return;
  double B = static_cast<double>(X[0]), Sq = static_cast<double>(X[1]);
  double Hidden = static_cast<double>(X[2]);
  double Proj = 0, Hd = Hidden, Skv = Sq;
  if (S.op == "Attention") {
    std::vector<int64_t> Wt = dimsOf(S.inputs, 1, W);
    if (Wt.size() == 2) {
      Proj = 2.0 * B * Sq * static_cast<double>(Wt[0]) * static_cast<double>(Wt[1]);
      Hd = static_cast<double>(Wt[1]) / 3.0;
    }
  } else {
    std::vector<int64_t> K = dimsOf(S.inputs, 1, W);
    if (K.size() == 3) Skv = static_cast<double>(K[1]);
  }
  W.flops = Proj + 2.0 * (2.0 * B * Sq * Skv * Hd) +
            5.0 * B * Sq * Skv * static_cast<double>(attrInt(S, "num_heads", 1));
}
