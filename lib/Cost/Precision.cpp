//===- Cost/Precision.cpp - Mixed-precision pricing ---------------------===//
//
// Issue 33's --precision (Cost/Precision.h; docs/cost-model.md gives the
// formulas and the datasheets of the tensor-core peaks).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/Precision.h"

#include "onnx-partition/Support/HumanUnits.h"

#include <onnx/onnx_pb.h>

#include <map>

using namespace onnxp;

Expected<Precision> onnxp::parsePrecision(const std::string &Name) {
  if (Name.empty()) return Precision::Model;
  if (Name == "fp32") return Precision::FP32;
  if (Name == "tf32") return Precision::TF32;
  if (Name == "bf16") return Precision::BF16;
  if (Name == "fp16") return Precision::FP16;
  return makeUsageError("--precision '", Name, "' is not one of fp32, tf32, bf16, fp16");
}

const char *onnxp::precisionName(Precision P) {
  switch (P) {
  case Precision::Model: return "model";
  case Precision::FP32: return "fp32";
  case Precision::TF32: return "tf32";
  case Precision::BF16: return "bf16";
  case Precision::FP16: return "fp16";
  }
  return "?";
}

double onnxp::precisionBytes(Precision P) {
  switch (P) {
  case Precision::Model: return 0;
  case Precision::FP32:
  case Precision::TF32: return 4; // tf32 multiplies fp32 tensors on tensor cores
  case Precision::BF16:
  case Precision::FP16: return 2;
  }
  return 0;
}

bool onnxp::isMatrixOp(const std::string &Op) {
  // MatMul, FusedMatMul, MatMulInteger, Gemm, FusedGemm, Conv, FusedConv,
  // ConvTranspose, their *Grad forms; Attention, MultiHeadAttention.
  for (const char *Kind : {"MatMul", "Gemm", "Conv", "Attention"})
    if (Op.find(Kind) != std::string::npos) return true;
  return false;
}

double onnxp::matrixPeakFlops(const DeviceSpec &D, Precision P) {
  double Tensor = 0;
  switch (P) {
  case Precision::TF32: Tensor = D.tf32Flops; break;
  case Precision::BF16: Tensor = D.bf16Flops; break;
  case Precision::FP16: Tensor = D.fp16Flops; break;
  default: break;
  }
  return Tensor > 0 ? Tensor : D.peakFlops;
}

DeviceSpec onnxp::matrixDevice(const DeviceSpec &D, Precision P) {
  DeviceSpec M = D;
  M.peakFlops = matrixPeakFlops(D, P);
  return M;
}

ParameterBytes onnxp::trainingBytesPerParameter(Precision P, OptimizerKind Opt, double ModelBytes) {
  ParameterBytes B;
  const double State = optimizerStateFactor(Opt);
  const double Elem = P == Precision::Model ? ModelBytes : precisionBytes(P);
  B.weights = B.gradients = Elem;
  // ZeRO §3: mixed-precision Adam keeps an fp32 master copy and fp32
  // moments beside the 2-byte weights and gradients (2 + 2 + 4 + 4 + 4).
  const bool Mixed = Elem < 4;
  B.optimizerState = Mixed ? 4 + 4 * State : Elem * State;
  return B;
}

double onnxp::optimizerTrafficPerGradientByte(Precision P, OptimizerKind Opt, double ModelBytes) {
  const ParameterBytes B = trainingBytesPerParameter(P, Opt, ModelBytes);
  // Mixed precision keeps the master copy in the optimizer state; then the
  // 2-byte weights are only written (cast from the master).
  const bool Mixed = B.weights < 4;
  return (B.gradients + 2 * B.optimizerState + (Mixed ? 1 : 2) * B.weights) / B.gradients;
}

double onnxp::modelFloatBytes(const OnnxModel &M) {
  std::map<double, int> Count;
  for (const onnx::TensorProto &T : M.graph().initializer()) {
    const int32_t Type = T.data_type();
    if (Type == onnx::TensorProto::FLOAT || Type == onnx::TensorProto::FLOAT16 ||
        Type == onnx::TensorProto::BFLOAT16 || Type == onnx::TensorProto::DOUBLE)
      ++Count[elementBytes(Type)];
  }
  double Best = 4;
  int Most = 0;
  for (auto [Bytes, N] : Count)
    if (N > Most) Most = N, Best = Bytes;
  return Best;
}

double onnxp::tensorByteRatio(Precision P, int32_t Type, double Fallback) {
  if (P == Precision::Model) return 1;
  if (Type == 0) return Fallback;
  if (Type != onnx::TensorProto::FLOAT && Type != onnx::TensorProto::FLOAT16 &&
      Type != onnx::TensorProto::BFLOAT16 && Type != onnx::TensorProto::DOUBLE)
    return 1;
  return precisionBytes(P) / elementBytes(Type);
}

void onnxp::applyPrecisionBytes(CostGraph &G, const OnnxModel &M, Precision P) {
  if (P == Precision::Model) return;
  const double ModelRatio = precisionBytes(P) / modelFloatBytes(M);
  auto Ratio = [&](const std::string &Tensor) {
    const TensorInfo *T = Tensor.empty() ? nullptr : M.tensor(Tensor);
    return tensorByteRatio(P, T ? T->elemType : 0, ModelRatio);
  };
  for (size_t E = 0; E < G.numEdges(); ++E) G.edge(E).bytes *= Ratio(G.edge(E).tensor);
  const onnx::GraphProto &OG = M.graph();
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    N.paramBytes *= ModelRatio;
    // Outputs by their own types where known.
    double Old = 0, New = 0;
    for (int O : N.onnxNodes)
      for (const std::string &Out : OG.node(O).output()) {
        double B = M.tensorBytesOrZero(Out);
        Old += B;
        New += B * Ratio(Out);
      }
    N.outputBytes *= Old > 0 ? New / Old : ModelRatio;
  }
  for (SharedParameter &SP : G.sharedParameters) SP.weightBytes *= ModelRatio;
}

void onnxp::applyPrecisionMemory(CostGraph &G, const OnnxModel &M, Precision P, OptimizerKind Opt) {
  if (P == Precision::Model || !G.isTraining()) return;
  const double ModelBytes = modelFloatBytes(M);
  const ParameterBytes Per = trainingBytesPerParameter(P, Opt, ModelBytes);
  // accountMemory counted gradients and state from the model's parameter
  // bytes: gradBytes / ModelBytes parameters.
  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    const double Params = N.gradBytes / ModelBytes;
    const double Grad = Params * Per.gradients, State = Params * Per.optimizerState;
    N.memBytes += (Grad - N.gradBytes) + (State - N.optimizerBytes);
    N.gradBytes = Grad;
    N.optimizerBytes = State;
  }
  for (SharedParameter &SP : G.sharedParameters) {
    const double Params = SP.gradBytes / ModelBytes;
    SP.gradBytes = Params * Per.gradients;
    SP.optimizerBytes = Params * Per.optimizerState;
  }
}

std::string onnxp::precisionNote(Precision P, const Platform &Pl, OptimizerKind Opt, bool Training) {
  if (P == Precision::Model) return "";
  const DeviceSpec &D = Pl.accelerator;
  const double Peak = matrixPeakFlops(D, P);
  std::string S = std::string("precision ") + precisionName(P) + ": matrix ops at " +
                  formatNumber(Peak / 1e12) + " TFLOP/s on " + D.name +
                  (Peak > D.peakFlops ? " tensor cores" : "") + " (other ops " +
                  formatNumber(D.peakFlops / 1e12) + "), floating-point tensors at " +
                  formatNumber(precisionBytes(P)) + " bytes per element";
  if (Training) {
    ParameterBytes B = trainingBytesPerParameter(P, Opt);
    S += ", training memory " + formatNumber(B.total()) + " bytes per parameter (" + optimizerName(Opt) +
         ": weights " + formatNumber(B.weights) + " + gradients " + formatNumber(B.gradients) +
         " + master copy and optimizer state " + formatNumber(B.optimizerState) + ")";
  }
  if (Peak == D.peakFlops && P != Precision::FP32)
    S += "; " + D.name + " has no " + precisionName(P) + " tensor-core peak: matrix ops at its fp32 peak";
  return S;
}
