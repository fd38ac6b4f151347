//===- IR/AcceleratorKinds.h - Which accelerator kinds are the same -*- C++ -*-===//
//
// Issue 21. A platform file may list one kind twice (a100, v100, a100,
// v100): Platform::acceleratorKinds then has four entries for two kinds of
// device. Whatever reasons about which devices are interchangeable (dp's
// kind orders, the universal bound's LP dual over kinds) asks this header.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_ACCELERATORKINDS_H
#define ONNXP_IR_ACCELERATORKINDS_H

#include "onnx-partition/IR/Platform.h"

namespace onnxp {

/// Whether two device specs price every node alike (name, peaks, kernel
/// overhead, memory and calibrated op kinds all equal).
bool sameSpec(const DeviceSpec &A, const DeviceSpec &B);

/// The first index of P.acceleratorKinds with kind K's spec (K itself when
/// no earlier kind has it).
int canonicalKind(const Platform &P, int K);

} // namespace onnxp

#endif // ONNXP_IR_ACCELERATORKINDS_H
