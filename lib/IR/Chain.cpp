//===- IR/Chain.cpp - Chain totals, validation and dump -----------------===//
//
// The dump prints every field with formatNumber so lit tests can FileCheck
// a chain after `--print-after linearize` or an importer.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Chain.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/HumanUnits.h"

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

namespace {
/// The smallest non-zero time (ms) or size (bytes) a chain may hold.
constexpr double kMinNonZero = 1e-9;
} // namespace

Error Chain::validate() const {
  std::string Where = sourceName.empty() ? name : sourceName;
  if (blocks.empty()) return makeError(Where, ": the chain has no blocks");
  if (blocks.size() > kMaxChainBlocks)
    return makeError(Where, ": ", blocks.size(), " blocks; onnx-partition plans chains of at most ",
                     kMaxChainBlocks);
  auto Check = [&](double V, const std::string &Block, const char *Field, double Max,
                   const char *Unit) -> Error {
    if (!std::isfinite(V) || V < 0)
      return makeError(Where, ": block '", Block, "': ", Field, " must be a finite non-negative number, got ",
                       formatNumber(V));
    if (V > Max)
      return makeError(Where, ": block '", Block, "': ", Field, " ", formatNumber(V), " is beyond the limit ",
                       formatNumber(Max), " ", Unit);
    // Below the planners' resolution: a period of 1e-300 ms makes the 1F1B
    // builder's tolerances meaningless (fuzz-chain-json, issue 25).
    if (V > 0 && V < kMinNonZero)
      return makeError(Where, ": block '", Block, "': ", Field, " ", formatNumber(V), " is below ",
                       formatNumber(kMinNonZero), " ", Unit, "; give 0 or a larger value");
    return Error::success();
  };
  auto Time = [&](double V, const std::string &Block, const char *Field) {
    return Check(V, Block, Field, kMaxChainTimeMs, "ms");
  };
  auto Bytes = [&](double V, const std::string &Block, const char *Field) {
    return Check(V, Block, Field, kMaxChainBytes, "bytes");
  };
  ONNXP_RETURN_IF_ERROR(Bytes(inputBytes, "input", "input bytes"));
  for (const ChainBlock &B : blocks) {
    ONNXP_RETURN_IF_ERROR(Time(B.forwardTime, B.name, "forward time"));
    ONNXP_RETURN_IF_ERROR(Time(B.backwardTime, B.name, "backward time"));
    ONNXP_RETURN_IF_ERROR(Time(B.backwardWeightTime, B.name, "backward weight time"));
    if (B.backwardWeightTime > B.backwardTime * (1 + 1e-9))
      return makeError(Where, ": block '", B.name, "': backward weight time ",
                       formatNumber(B.backwardWeightTime), " ms is more than its backward time ",
                       formatNumber(B.backwardTime), " ms");
    ONNXP_RETURN_IF_ERROR(Bytes(B.outputBytes, B.name, "output bytes"));
    ONNXP_RETURN_IF_ERROR(Bytes(B.storedBytes, B.name, "stored bytes"));
    ONNXP_RETURN_IF_ERROR(Bytes(B.weightBytes, B.name, "weight bytes"));
    ONNXP_RETURN_IF_ERROR(Bytes(B.frozenBytes, B.name, "frozen bytes"));
    if (B.frozenBytes > B.weightBytes)
      return makeError(Where, ": block '", B.name, "': frozen bytes (", exactBytes(B.frozenBytes),
                       ") are more than its weight bytes (", exactBytes(B.weightBytes), ")");
    ONNXP_RETURN_IF_ERROR(Bytes(B.forwardOverhead, B.name, "forward overhead"));
    ONNXP_RETURN_IF_ERROR(Bytes(B.backwardOverhead, B.name, "backward overhead"));
  }
  for (auto [U, V] : edges)
    if (U < 0 || V <= U || V >= static_cast<int>(blocks.size()))
      return makeError(Where, ": edge ", U, " -> ", V, " does not go forward between two of the ",
                       blocks.size(), " blocks");
  return Error::success();
}

Error onnxp::checkTransferTimes(const Chain &C, double Bandwidth, const std::string &Link) {
  // 0 is "no link" (rotor never offloads) and infinity "free transfers":
  // neither makes a transfer time overflow.
  if (Bandwidth == 0 || std::isinf(Bandwidth)) return Error::success();
  if (!(Bandwidth > 0))
    return makeError("the ", Link, " bandwidth must be >= 0, got ", formatNumber(Bandwidth));
  double Largest = C.inputBytes;
  std::string What = "the input";
  for (const ChainBlock &B : C.blocks)
    for (auto [Bytes, Kind] : {std::pair<double, const char *>{B.outputBytes, "output"},
                               {B.storedBytes, "stored bytes"},
                               {B.weightBytes, "weights"}})
      if (Bytes > Largest) {
        Largest = Bytes;
        What = "block '" + B.name + "' " + Kind;
      }
  double Ms = Largest / Bandwidth * 1000.0;
  if (!(Ms <= kMaxChainTimeMs))
    return makeError("moving ", What, " (", formatNumber(Largest), " bytes) over the ", Link, " at ",
                     formatNumber(Bandwidth), " bytes/s takes ",
                     std::isfinite(Ms) ? formatNumber(Ms) + " ms" : std::string("an unbounded time"),
                     ", beyond the limit of ", formatNumber(kMaxChainTimeMs), " ms for one transfer");
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
