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

/// The first construct of M newer than checkerIrVersion() (a FLOAT8, INT4
/// or FLOAT4 element type, a function overload), described with its IR
/// version and where it is ("" when there is none).
std::string newerIrConstruct(const onnx::ModelProto &M);

/// M as the linked checker can take it: unchanged when its ir_version is
/// one the checker knows, else with ir_version lowered to checkerIrVersion()
/// when it uses no newer construct; an error naming What and the construct
/// otherwise.
Expected<onnx::ModelProto> forIrChecker(const onnx::ModelProto &M, const std::string &What);

} // namespace onnxp

#endif // ONNXP_IR_IRVERSION_H
