//===- IR/ModelingChoices.cpp - Option values as types ------------------===//
#include "onnx-partition/IR/ModelingChoices.h"

using namespace onnxp;

const char *onnxp::chainRecipeName(ChainRecipe R) {
  switch (R) {
  case ChainRecipe::Separators: return "separators";
  case ChainRecipe::Layers: return "layers";
  case ChainRecipe::Balanced: return "balanced";
  case ChainRecipe::Graph: return "graph";
  }
  return "?";
}

std::optional<ChainRecipe> onnxp::parseChainRecipe(const std::string &Name) {
  for (ChainRecipe R :
       {ChainRecipe::Separators, ChainRecipe::Layers, ChainRecipe::Balanced, ChainRecipe::Graph})
    if (Name == chainRecipeName(R)) return R;
  return std::nullopt;
}

const char *onnxp::costModelName(CostModelKind K) {
  return K == CostModelKind::Placeholder ? "placeholder" : "analytical";
}

std::optional<CostModelKind> onnxp::parseCostModel(const std::string &Name) {
  for (CostModelKind K : {CostModelKind::Analytical, CostModelKind::Placeholder})
    if (Name == costModelName(K)) return K;
  return std::nullopt;
}

const char *onnxp::ortOptimizationName(OrtOptimizationLevel L) {
  return L == OrtOptimizationLevel::None ? "none" : "all";
}

std::optional<OrtOptimizationLevel> onnxp::parseOrtOptimizations(const std::string &Name) {
  for (OrtOptimizationLevel L : {OrtOptimizationLevel::All, OrtOptimizationLevel::None})
    if (Name == ortOptimizationName(L)) return L;
  return std::nullopt;
}
