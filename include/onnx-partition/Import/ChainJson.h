//===- Import/ChainJson.h - Chains as JSON files ----------------*- C++ -*-===//
//
// The plain chain format `onnx-partition chain MODEL -o chain.json` writes
// and every chain planner reads (issues 11-14):
//
//   { "format": "onnx-partition-chain", "version": 1,
//     "name": "...", "source": "model.onnx",
//     "units": { "time": "ms", "size": "bytes" },
//     "inputBytes": a_0,
//     "blocks": [ { "name": "...", "forwardTime": u_F, "backwardTime": u_B,
//                   "outputBytes": a_l, "storedBytes": ..., "weightBytes": W_l,
//                   "forwardOverhead": ..., "backwardOverhead": ...,
//                   "nodes": [cost-graph ids], "sources": ["onnx node", ...] }, ... ],
//     "edges": [ [from, to], ... ] }
//
// forwardTime, backwardTime, outputBytes and weightBytes are required;
// storedBytes defaults to outputBytes, the overheads to 0, nodes and
// sources to empty. "edges" (issue 33, optional, written when the chain has
// them): the blocks' DAG as 0-based block indices, from < to (Chain::edges);
// absent, the blocks form a path. Times are milliseconds, sizes bytes (IR/Chain.h).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_CHAINJSON_H
#define ONNXP_IMPORT_CHAINJSON_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

/// Parses and validates a chain; messages name Source and the block.
Expected<Chain> parseChainJson(const std::string &Text, const std::string &Source);
/// Reads Path and parses it.
Expected<Chain> loadChainJson(const std::string &Path);
/// The JSON text of C (stable key order, numbers round-trip exactly).
std::string chainToJson(const Chain &C);

} // namespace onnxp

#endif // ONNXP_IMPORT_CHAINJSON_H
