//===- IR/IrVersion.h - IR versions newer than the ONNX checker -*- C++ -*-===//
//
// Debian's ONNX 1.12 checks IR <= 8, while current exporters write IR 9-11
// and ONNX Runtime loads them (issue 37, item 1). A model that uses nothing
// newer than IR 8 is checked with its ir_version lowered; one that does is
// refused with the construct named.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_IRVERSION_H
#define ONNXP_IR_IRVERSION_H

#include "onnx-partition/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace onnxp {

/// The highest IR version the linked ONNX checker knows (8 for ONNX 1.12).
int checkerIrVersion();

/// The highest IR version read: what ONNX Runtime 1.30 loads (IR 13 added
/// INT2/UINT2); newer models it refuses ("Unsupported model IR version").
constexpr int kMaxReadIrVersion = 13;

/// The first construct of M newer than checkerIrVersion() (a FLOAT8, INT4,
/// FLOAT4 or INT2 element type, a function overload), described with its IR
/// version and where it is ("" when there is none).
std::string newerIrConstruct(const onnx::ModelProto &M);

/// An error naming What when M's IR version is newer than the checker's and
/// M is newer than kMaxReadIrVersion or uses a newer construct.
Error checkIrVersion(const onnx::ModelProto &M, const std::string &What);

/// M as the linked checker can take it: unchanged when its ir_version is
/// one the checker knows, else with ir_version lowered to checkerIrVersion()
/// when it uses no newer construct; an error naming What and the construct
/// otherwise.
Expected<onnx::ModelProto> forIrChecker(const onnx::ModelProto &M, const std::string &What);

} // namespace onnxp

#endif // ONNXP_IR_IRVERSION_H
