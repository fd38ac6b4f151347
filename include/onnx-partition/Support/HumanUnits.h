//===- Support/HumanUnits.h - Sizes as a person reads them ------*- C++ -*-===//
//
// The one byte formatter of the summaries, the --dot picture and the notes:
// "1.5 KiB", "12 MiB", three significant digits above a KiB, whole bytes
// below, "-" for a size that is not a number.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_HUMANUNITS_H
#define ONNXP_SUPPORT_HUMANUNITS_H

#include <string>

namespace onnxp {

/// Bytes in the largest binary unit (B, KiB, MiB, GiB, TiB) that keeps the
/// number at least 1.
std::string humanBytes(double Bytes);

} // namespace onnxp

#endif // ONNXP_SUPPORT_HUMANUNITS_H
