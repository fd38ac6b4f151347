//===- Support/Escape.h - Strings into markup -------------------*- C++ -*-===//
//
// Every string a writer of ours puts into SVG/XML/HTML goes through
// xmlEscape (issue 25, item 4: a chain named `x</title><script>` became live
// markup, `a&b.txt` an SVG no XML parser reads). Names come from files the
// user was given, so they may hold any byte.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SUPPORT_ESCAPE_H
#define ONNXP_SUPPORT_ESCAPE_H

#include <string>

namespace onnxp {

/// S as XML character data or a quoted attribute value: & < > " ' become
/// entities; control characters XML 1.0 forbids and bytes that are not
/// valid UTF-8 become U+FFFD.
std::string xmlEscape(const std::string &S);

/// S with every byte sequence that is not valid UTF-8 replaced by U+FFFD
/// (JSON writers, which refuse invalid UTF-8).
std::string validUtf8(const std::string &S);

} // namespace onnxp

#endif // ONNXP_SUPPORT_ESCAPE_H
