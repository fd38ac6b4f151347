//===- IR/ModelingChoices.h - Option values as types ------------*- C++ -*-===//
//
// The values of the options that choose how a model is read and priced,
// parsed once where a request enters (API/CommandLine.cpp, checkRequest)
// and carried as enums from there on (issue 32, item 2): --chain-recipe,
// --cost-model, --ort-optimizations. (--profile-device is
// Cost/MeasuredCosts.h's MeasuredDevice, --memory-model IR/Plan.h's
// MemoryModel.) Each has its option spellings and a parser of them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_MODELINGCHOICES_H
#define ONNXP_IR_MODELINGCHOICES_H

#include <optional>
#include <string>

namespace onnxp {

/// How a model or a PipeDream profile becomes a chain (issue 24).
enum class ChainRecipe {
  Separators, ///< seed 000 §5 exactly
  Layers,     ///< one block per layer (rotor's convention; balanced on a model)
  Balanced,   ///< side inputs sent along, blocks above 25% of the time cut
  Graph,      ///< PipeDream profile: one block per layer with the profile's edges (issue 33)
};
const char *chainRecipeName(ChainRecipe R); ///< "separators", "layers", "balanced", "graph"
std::optional<ChainRecipe> parseChainRecipe(const std::string &Name);

/// Where node times come from (docs/cost-model.md).
enum class CostModelKind {
  Analytical,  ///< FLOPs and bytes from shapes, roofline on the platform
  Placeholder, ///< bytes only
};
const char *costModelName(CostModelKind K); ///< "analytical", "placeholder"
std::optional<CostModelKind> parseCostModel(const std::string &Name);

/// Which graph ONNX Runtime runs (issue 23).
enum class OrtOptimizationLevel {
  All,  ///< its default level: constant folding, fused patterns one kernel
  None, ///< every node a kernel
};
const char *ortOptimizationName(OrtOptimizationLevel L); ///< "all", "none"
std::optional<OrtOptimizationLevel> parseOrtOptimizations(const std::string &Name);

} // namespace onnxp

#endif // ONNXP_IR_MODELINGCHOICES_H
