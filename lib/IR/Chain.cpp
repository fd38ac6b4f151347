//===- IR/Chain.cpp - Chain totals, validation and dump -----------------===//
//
// The dump prints every field with formatNumber so lit tests can FileCheck
// a chain after `--print-after linearize` or an importer.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Chain.h"

#include "onnx-partition/IR/CostGraph.h"

#include <cmath>
#include <ostream>

using namespace onnxp;

double Chain::totalForwardTime() const {
  double S = 0;
  for (const ChainBlock &B : blocks) S += B.forwardTime;
  return S;
}

double Chain::totalBackwardTime() const {
  double S = 0;
  for (const ChainBlock &B : blocks) S += B.backwardTime;
  return S;
}

double Chain::totalWeightBytes() const {
  double S = 0;
  for (const ChainBlock &B : blocks) S += B.weightBytes;
  return S;
}

Error Chain::validate() const {
  std::string Where = sourceName.empty() ? name : sourceName;
  if (blocks.empty()) return makeError(Where, ": the chain has no blocks");
  auto Check = [&](double V, const std::string &Block, const char *Field) -> Error {
    if (!std::isfinite(V) || V < 0)
      return makeError(Where, ": block '", Block, "': ", Field, " must be a finite non-negative number, got ",
                       formatNumber(V));
    return Error::success();
  };
  ONNXP_RETURN_IF_ERROR(Check(inputBytes, "input", "input bytes"));
  for (const ChainBlock &B : blocks) {
    ONNXP_RETURN_IF_ERROR(Check(B.forwardTime, B.name, "forward time"));
    ONNXP_RETURN_IF_ERROR(Check(B.backwardTime, B.name, "backward time"));
    ONNXP_RETURN_IF_ERROR(Check(B.outputBytes, B.name, "output bytes"));
    ONNXP_RETURN_IF_ERROR(Check(B.storedBytes, B.name, "stored bytes"));
    ONNXP_RETURN_IF_ERROR(Check(B.weightBytes, B.name, "weight bytes"));
    ONNXP_RETURN_IF_ERROR(Check(B.forwardOverhead, B.name, "forward overhead"));
    ONNXP_RETURN_IF_ERROR(Check(B.backwardOverhead, B.name, "backward overhead"));
  }
  return Error::success();
}

void Chain::print(std::ostream &OS) const {
  OS << "chain '" << name << "' blocks=" << blocks.size() << " input=" << formatNumber(inputBytes)
     << " fw=" << formatNumber(totalForwardTime()) << " bw=" << formatNumber(totalBackwardTime())
     << " weights=" << formatNumber(totalWeightBytes()) << "\n";
  for (size_t L = 0; L < blocks.size(); ++L) {
    const ChainBlock &B = blocks[L];
    OS << "block " << L + 1 << " '" << B.name << "' fw=" << formatNumber(B.forwardTime)
       << " bw=" << formatNumber(B.backwardTime) << " out=" << formatNumber(B.outputBytes)
       << " stored=" << formatNumber(B.storedBytes) << " weights=" << formatNumber(B.weightBytes)
       << " nodes=" << B.nodes.size() << "\n";
  }
}
