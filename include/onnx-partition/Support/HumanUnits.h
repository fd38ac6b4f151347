//===- Support/HumanUnits.h - Sizes as a person reads them ------*- C++ -*-===//
//
// The one byte formatter of the summaries, the --dot picture and the notes:
// "1.5 KiB", "12 MiB", three significant digits above a KiB, whole bytes
// below, "-" for a size that is not a number; exactBytes beside it where
// the exact count matters.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_HUMANUNITS_H
#define ONNXP_SUPPORT_HUMANUNITS_H

#include <string>

namespace onnxp {

/// Bytes in the largest binary unit (B, KiB, MiB, GiB, TiB) that keeps the
/// number at least 1.
std::string humanBytes(double Bytes);

/// Bytes exactly, for a message that compares sizes or names a limit:
/// "107,815,116,800 bytes" (a whole number with thousands separators; up to
/// three decimals when the size is not a whole number of bytes), never
/// "1.07815e+11 bytes" (issue 37, item 9).
std::string exactBytes(double Bytes);

/// The whole number of bytes at or above BYTES with no separators, for a
/// value the user passes back (e.g. "give --memory 107815116800").
std::string wholeBytes(double Bytes);

} // namespace onnxp

#endif // ONNXP_SUPPORT_HUMANUNITS_H
