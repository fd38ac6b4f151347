//===- IR/OpInferenceChecks.h - What ONNX 1.12 inference trusts -*- C++ -*-===//
//
// ONNX 1.12's inference functions of some ops read attributes and input dims
// without checking them (issue 39, item 1: a Scan without num_scan_inputs
// dereferences null, an STFT of a scalar indexes past its dims, a
// DepthToSpace blocksize of 2^62 squares to 0 and divides by it). The table
// in OpInferenceChecks.cpp holds, per op, the checks run before its
// inference: attributes statically (every graph, subgraph and function), and
// input ranks once they are known (the main graph's per-node driver). Inline
// tensors whose data does not match their dims are refused here too: ONNX's
// printer and ParseData read dims' worth of elements from shorter data.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_IR_OPINFERENCECHECKS_H
#define ONNXP_LIB_IR_OPINFERENCECHECKS_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>

namespace onnxp {

/// Attribute checks of N that need no shapes. Opset is the default domain's
/// version (Scan's inputs differ before opset 9); Where names the file and node.
Error checkOpAttributes(const onnx::NodeProto &N, int Opset, const std::string &Where);

/// Input rank checks of N; RankOf(I) is input I's rank, or -1 when unknown.
Error checkOpInputRanks(const onnx::NodeProto &N, const std::function<int64_t(int)> &RankOf,
                        const std::string &Where);

/// Whether N's inference needs checkOpInputRanks: a subgraph holding such a
/// node is inferred by ONNX itself, without the checks, so it is not inferred.
bool needsRankChecks(const onnx::NodeProto &N);

/// An inline tensor (initializer, Constant value, attribute tensor) whose
/// data holds another number of elements than its dims say, or whose dims are
/// negative or multiply past 2^63: one error naming What.
Error checkInlineTensorData(const onnx::TensorProto &T, const std::string &What);

} // namespace onnxp

#endif // ONNXP_LIB_IR_OPINFERENCECHECKS_H
