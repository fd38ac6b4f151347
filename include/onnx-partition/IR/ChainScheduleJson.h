//===- IR/ChainScheduleJson.h - Chain schedules to and from JSON -*- C++ -*-===//
//
// The one place a chain planner's schedule (Plan::schedule, a ChainSchedule)
// becomes JSON and back: the report (--report), the chain plan report of a
// chain input and the fuzzers write and read it through these, and nothing
// else parses a schedule. In memory every consumer (simulators, --trace,
// the write-back) reads the typed value.
//
// The JSON of each kind is the one reports have always carried: an object
// whose "kind" names it ("1f1b-periodic", "pipedream-replicated",
// "activation-schedule"), except offload-weights' report, which has no kind
// field and is told by its "opStartMs" and "transfers".
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_CHAINSCHEDULEJSON_H
#define ONNXP_IR_CHAINSCHEDULEJSON_H

#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Support/Error.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace onnxp {

/// S as JSON: null for no schedule, otherwise an object (see above).
nlohmann::json chainScheduleToJson(const ChainSchedule &S);

/// The kind of schedule J is, from its "kind" field (or, for offload-weights,
/// its "opStartMs" and "transfers"); None for null; nullopt for anything else.
std::optional<ChainScheduleKind> chainScheduleKindOf(const nlohmann::json &J);

/// Reads J as a schedule of kind K. Malformed input (not an object, another
/// kind, a missing or mistyped field, an unknown operation or transfer
/// kind, lists of inconsistent lengths) is an error that says what is wrong;
/// sizes against a particular chain are checked by the consumers.
Expected<ChainSchedule> parseChainSchedule(ChainScheduleKind K, const nlohmann::json &J);
/// The same from JSON text (an error when it is not JSON).
Expected<ChainSchedule> parseChainSchedule(ChainScheduleKind K, const std::string &Text);

} // namespace onnxp

#endif // ONNXP_IR_CHAINSCHEDULEJSON_H
