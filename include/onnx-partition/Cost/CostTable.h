//===- Cost/CostTable.h - User-supplied per-node / per-op costs -*- C++ -*-===//
//
// A cost table lets a user feed numbers measured elsewhere (a GPU profiler,
// a spreadsheet) into the partitioners. Keys are node names or op types;
// values are forward and backward milliseconds on the accelerator (and
// optionally on a CPU core) and the bytes a node holds. Two formats, same
// content (docs/cost-model.md, "Cost tables"):
//
//   CSV:  a header naming the columns, then one row per key:
//           kind,key,forward_ms,backward_ms,bytes,cpu_forward_ms,cpu_backward_ms
//           node,/conv1/Conv,0.41,0.83,,,
//           op,Relu,0.02,0.03,,,
//         `kind` (node|op, default node) and `key` are required columns,
//         the others optional; an empty cell means "not given". '#' starts
//         a comment line.
//   JSON: {"nodes": {"<name>": {"forward_ms": .., "backward_ms": .., "bytes": ..,
//                               "cpu_forward_ms": .., "cpu_backward_ms": ..}},
//          "ops":   {"<OpType>": {...}}}
//
// A malformed table (unknown column or field, a non-number, a negative
// time) is one error naming file, line or key, and the field.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_COSTTABLE_H
#define ONNXP_COST_COSTTABLE_H

#include "onnx-partition/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace onnxp {

struct CostEntry {
  std::optional<double> forwardMs;    ///< accelerator, the node itself
  std::optional<double> backwardMs;   ///< accelerator, its derived backward node
  std::optional<double> bytes;        ///< memory charged (overrides memBytes)
  std::optional<double> cpuForwardMs; ///< one CPU core
  std::optional<double> cpuBackwardMs;
};

struct CostTable {
  std::string path;
  std::map<std::string, CostEntry> byNode;
  std::map<std::string, CostEntry> byOp;
  size_t size() const { return byNode.size() + byOp.size(); }
};

/// Parses a table; JSON when the first non-blank character is '{', else CSV.
Expected<CostTable> parseCostTable(const std::string &Text, const std::string &Path);

/// Reads and parses the file.
Expected<CostTable> loadCostTable(const std::string &Path);

} // namespace onnxp

#endif // ONNXP_COST_COSTTABLE_H
