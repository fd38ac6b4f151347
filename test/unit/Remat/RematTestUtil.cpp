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

Chain onnxp::test::randomChain(std::mt19937 &Rng, int L, int MaxSize, bool Overheads) {
  std::uniform_int_distribution<int> Size(1, MaxSize), Time(1, 9), Over(0, 2);
  Chain C;
  C.name = "random";
  C.inputBytes = Size(Rng);
  for (int K = 0; K < L; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K + 1);
    B.forwardTime = Time(Rng);
    B.backwardTime = Time(Rng);
    B.outputBytes = Size(Rng);
    B.storedBytes = B.outputBytes + (Overheads ? Over(Rng) : 0);
    if (Overheads) {
      B.forwardOverhead = Over(Rng);
      B.backwardOverhead = Over(Rng);
    }
    C.blocks.push_back(B);
  }
  return C;
}

RematOptions onnxp::test::byteOptions(double Budget, bool Offload, double BytesPerMs) {
  RematOptions O;
  O.slotBytes = 1;
  O.memoryBytes = Budget;
  O.offload = Offload;
  O.bandwidthBytesPerSec = BytesPerMs * 1000;
  return O;
}
