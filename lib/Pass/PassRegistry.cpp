//===- Pass/PassRegistry.cpp - Name -> pass, from Passes.def ------------===//
//
// Passes.def is included here and in Passes.h only, so adding a pass never
// makes every other translation unit depend on every pass header.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Pass/Passes.h"

using namespace onnxp;

const std::vector<PassInfo> &onnxp::registeredPasses() {
  static const std::vector<PassInfo> All = {
#define ONNXP_PASS(NAME, FACTORY, SUMMARY) {NAME, SUMMARY, &FACTORY},
#include "onnx-partition/Pass/Passes.def"
  };
  return All;
}

Expected<std::unique_ptr<Pass>> onnxp::createPass(const std::string &Name) {
  std::string Names;
  for (const PassInfo &I : registeredPasses()) {
    if (Name == I.name) return I.create();
    Names += (Names.empty() ? "" : ", ") + std::string(I.name);
  }
  return makeUsageError("unknown pass '", Name, "' in --passes (available: ", Names, ")");
}
