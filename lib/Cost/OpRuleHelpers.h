//===- Cost/OpRuleHelpers.h - Shared pieces of the op cost rules -*- C++ -*-===//
//
// Private to lib/Cost: tensor sizes that tolerate unknown shapes (they count
// zero and clear OpWork::shapesKnown, so a report can say a number is a lower
// bound), attribute readers, and the per-family rule functions the table in
// OpRules.cpp dispatches to.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_COST_OPRULEHELPERS_H
#define ONNXP_LIB_COST_OPRULEHELPERS_H

#include "onnx-partition/Cost/OpWork.h"

#include <cstdint>
#include <string>
#include <vector>

namespace onnxp::cost {

/// Elements of slot I of a tensor list; 0 (and W.shapesKnown = false) when
/// the slot exists but its shape is unknown; 0 for an absent slot.
double elems(const std::vector<const TensorInfo *> &Ts, size_t I, OpWork &W);
/// Bytes of slot I, same conventions.
double bytesOf(const std::vector<const TensorInfo *> &Ts, size_t I, OpWork &W);
/// Dims of slot I, or empty (and shapesKnown = false) when unknown.
std::vector<int64_t> dimsOf(const std::vector<const TensorInfo *> &Ts, size_t I, OpWork &W);
/// Largest element count over all inputs and outputs.
double maxElems(const OpShapes &S, OpWork &W);
/// Sum of the bytes of every present input / output.
double allInputBytes(const OpShapes &S, OpWork &W);
double allOutputBytes(const OpShapes &S, OpWork &W);

int64_t attrInt(const OpShapes &S, const std::string &Name, int64_t Default);
float attrFloat(const OpShapes &S, const std::string &Name, float Default);
std::string attrString(const OpShapes &S, const std::string &Name, const std::string &Default);
std::vector<int64_t> attrInts(const OpShapes &S, const std::string &Name);
bool hasAttr(const OpShapes &S, const std::string &Name);

/// Product of dims [From, To); 0 when a dim is unknown (<0).
double product(const std::vector<int64_t> &D, size_t From, size_t To);

// Rule families. Each fills FLOPs, bytes and workspace of W.
void matMulRule(const OpShapes &S, OpWork &W); ///< MatMul, MatMulInteger, FusedMatMul
void gemmRule(const OpShapes &S, OpWork &W);   ///< Gemm
void convRule(const OpShapes &S, OpWork &W);   ///< Conv, ConvInteger, QLinearConv
void convTransposeRule(const OpShapes &S, OpWork &W);
void einsumRule(const OpShapes &S, OpWork &W);
void rnnRule(const OpShapes &S, OpWork &W);       ///< LSTM, GRU, RNN
void poolRule(const OpShapes &S, OpWork &W);      ///< MaxPool, AveragePool, LpPool
void attentionRule(const OpShapes &S, OpWork &W); ///< com.microsoft Attention / MultiHeadAttention

/// Forward FLOPs of a convolution whose output has dims Y and whose weight
/// has dims Wt (2 per multiply-add); shared by Conv and ConvGrad.
double convFlops(const std::vector<int64_t> &Y, const std::vector<int64_t> &Wt);

} // namespace onnxp::cost

#endif // ONNXP_LIB_COST_OPRULEHELPERS_H
