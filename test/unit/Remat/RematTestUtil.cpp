//===- unit/Remat/RematTestUtil.cpp - Chains for the activation tests ---===//
#include "RematTestUtil.h"

#include "onnx-partition/Import/PipeDreamProfile.h"
#include "onnx-partition/Support/FileIO.h"

#include <filesystem>

using namespace onnxp;

std::optional<Chain> onnxp::test::pipeDreamLayers(const std::string &Name) {
  std::string Path = std::string(ONNXP_SHARED_DIR) + "/workloads/pipedream/" + Name + ".txt";
  if (!std::filesystem::exists(Path)) return std::nullopt;
  Expected<std::string> Text = readFile(Path);
  if (!Text) return std::nullopt;
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(*Text, Path);
  if (!P) return std::nullopt;
  Expected<Chain> C = chainFromLayers(*P);
  if (!C) return std::nullopt;
  return *C;
}

RematOptions onnxp::test::slotOptions(int Slots, bool Offload, double BytesPerSec) {
  RematOptions O;
  O.slotBytes = MiB32;
  O.memoryBytes = Slots * MiB32;
  O.offload = Offload;
  O.bandwidthBytesPerSec = BytesPerSec;
  return O;
}

RematOptions onnxp::test::byteOptions(double Budget, bool Offload, double BytesPerMs) {
  RematOptions O;
  O.slotBytes = 1;
  O.memoryBytes = Budget;
  O.offload = Offload;
  O.bandwidthBytesPerSec = BytesPerMs * 1000;
  return O;
}
