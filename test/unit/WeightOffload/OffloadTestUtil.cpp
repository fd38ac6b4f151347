//===- unit/WeightOffload/OffloadTestUtil.cpp - Instances for seed 002 ----===//
#include "OffloadTestUtil.h"

#include "onnx-partition/Import/PiperImporter.h"
#include "onnx-partition/Support/FileIO.h"

#include <filesystem>

namespace onnxp::offloadtest {

OffloadInstance theorem1Instance(int M, double V, const std::vector<double> &X) {
  OffloadInstance I;
  I.name = "theorem1";
  I.L = 5 * M;
  I.uF.assign(I.L + 1, 0);
  I.uB.assign(I.L + 1, 0);
  I.w.assign(I.L + 1, 0);
  I.a.assign(I.L + 1, 0);
  I.fOverhead.assign(I.L + 1, 0);
  I.bOverhead.assign(I.L + 1, 0);
  I.uF[2 * M] = M;
  for (int K = 1; K <= M; ++K) {
    I.w[2 * K - 1] = V;
    I.uB[2 * K] = 1;
  }
  for (int Q = 2 * M + 1; Q <= 5 * M; ++Q) I.w[Q] = X[Q - 2 * M - 1];
  I.memory = M * V + V;
  I.bandwidth = V;
  return I;
}

std::optional<Chain> bert32Chain(double Batch) {
  std::string Path = std::string(ONNXP_SHARED_DIR) + "/workloads/piper/bert32a100.json";
  if (!std::filesystem::exists(Path)) return std::nullopt;
  Expected<std::string> Text = readFile(Path);
  if (!Text) return std::nullopt;
  PiperChainOptions O;
  O.batchSize = Batch;
  O.layerName = "ParallelTransformerLayer";
  Expected<Chain> C = parsePiperChain(*Text, Path, O);
  if (!C) return std::nullopt;
  return *C;
}

} // namespace onnxp::offloadtest
