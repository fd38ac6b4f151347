//===- Support/SummaryText.h - Lines of the run summaries -------*- C++ -*-===//
//
// Small formatters the summaries share (issue 37, item 9): a note that is
// a warning prints as one, and seconds read as a person reads them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_SUMMARYTEXT_H
#define ONNXP_SUPPORT_SUMMARYTEXT_H

#include <string>

namespace onnxp {

/// Seconds with three significant digits: "3.01 s", "0.714 ms" below a
/// second (never "0.000714405 s").
std::string humanSeconds(double Seconds);

/// One summary line for a note: "  note: N\n", or "  warning: W\n" when N
/// is "warning: W" (never "note: warning:").
std::string noteLine(const std::string &N);

} // namespace onnxp

#endif // ONNXP_SUPPORT_SUMMARYTEXT_H
