//===- Cost/Precision.h - Mixed-precision pricing ---------------*- C++ -*-===//
//
// `--precision fp32|tf32|bf16|fp16` (issue 33; formulas and datasheet
// sources in docs/cost-model.md):
//  - matrix ops (MatMul, Gemm, Conv and their fused and gradient forms,
//    fused attention) run at the device's dense tensor-core peak for the
//    precision (DeviceSpec::tf32Flops, bf16Flops, fp16Flops; fp32 at
//    peakFlops), every other op at peakFlops;
//  - floating-point tensors (activations, transfers, parameters, and the
//    bytes a kernel reads and writes) hold the precision's bytes per
//    element: 4 for fp32 and tf32 (tf32 is an fp32 storage format), 2 for
//    bf16 and fp16;
//  - training memory per parameter as mixed-precision training holds it
//    (ZeRO, Rajbhandari et al. SC'20 §3): 2-byte weights and gradients, an
//    fp32 master copy (4) and fp32 optimizer state (Adam 4 + 4): 16 bytes
//    per parameter with Adam; the gradient all-reduce moves the 2-byte
//    gradients.
// Precision::Model (no --precision) keeps the model's element types and
// changes no number.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_PRECISION_H
#define ONNXP_COST_PRECISION_H

#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

enum class Precision { Model, FP32, TF32, BF16, FP16 };

/// "" (the model's types), "fp32", "tf32", "bf16", "fp16"; else a usage error.
Expected<Precision> parsePrecision(const std::string &Name);
const char *precisionName(Precision P);
/// Bytes per floating-point element under P (0 for Model: unchanged).
double precisionBytes(Precision P);
/// Whether an op type runs on tensor cores (matrix multiply, convolution,
/// fused attention, and their fused and gradient forms).
bool isMatrixOp(const std::string &OpType);
/// FLOP/s of a matrix op on D under P: the tensor-core peak when D has one
/// for P, else D.peakFlops.
double matrixPeakFlops(const DeviceSpec &D, Precision P);
/// The device a matrix op runs on under P: D with peakFlops = matrixPeakFlops.
DeviceSpec matrixDevice(const DeviceSpec &D, Precision P);

/// Bytes per parameter that training holds under P with optimizer Opt:
/// weights, gradients and the rest (master copy + optimizer state).
struct ParameterBytes {
  double weights = 4, gradients = 4, optimizerState = 8;
  double total() const { return weights + gradients + optimizerState; }
};
/// ModelBytes: the model's bytes per parameter (its float type).
ParameterBytes trainingBytesPerParameter(Precision P, OptimizerKind Opt, double ModelBytes = 4);

/// Objective iteration (issue 33): bytes the optimizer step reads and writes
/// per byte of gradient under P with Opt -- it reads the gradient, reads and
/// writes the optimizer state (the fp32 master copy included under mixed
/// precision) and writes the weights (read too when they are the master):
/// g + 2 s + (mixed ? w : 2 w), over g. Adam: 28 bytes per parameter in
/// fp32 (7 per gradient byte), 28 with bf16 (14 per 2-byte gradient).
double optimizerTrafficPerGradientByte(Precision P, OptimizerKind Opt, double ModelBytes = 4);

/// The model's floating-point element size: the commonest float type of
/// its initializers (4 when it has none).
double modelFloatBytes(const OnnxModel &M);
/// Ratio of P's element size to a tensor's (1 for non-float tensors, for
/// Model and when the type is unknown: then Fallback).
double tensorByteRatio(Precision P, int32_t ElemType, double Fallback);

/// Before pricing: floating-point tensors at P's bytes (every edge by its
/// tensor's type, node outputs and parameters).
void applyPrecisionBytes(CostGraph &G, const OnnxModel &M, Precision P);
/// After accountMemory: the gradients and optimizer state of the trainable
/// parameters as mixed-precision training holds them (trainingBytesPerParameter),
/// memBytes updated.
void applyPrecisionMemory(CostGraph &G, const OnnxModel &M, Precision P, OptimizerKind Opt);
/// The summary note: which precision priced the plan and at what peak.
std::string precisionNote(Precision P, const Platform &Pl, OptimizerKind Opt, bool Training);

} // namespace onnxp

#endif // ONNXP_COST_PRECISION_H
