//===- Analysis/Trainable.cpp - The one trainability rule ----------------===//
#include "onnx-partition/Analysis/Trainable.h"

using namespace onnxp;

bool onnxp::hasNativeBackward(const CostGraph &G) {
  for (const CostNode &N : G.nodes())
    if (N.isBackward() && !N.onnxNodes.empty()) return true;
  return false;
}

bool onnxp::isTrainable(const ParameterInfo &P, const CostGraph &G) {
  if (!G.isTraining()) return false;
  return P.trainable || !hasNativeBackward(G);
}
