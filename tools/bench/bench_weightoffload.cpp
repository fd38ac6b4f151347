//===- bench/bench_weightoffload.cpp - Weight offloading of seed 002 ------===//
//
// Two experiments for the weight-offloading planners (results in
// docs/benchmarks.md, section "Weight offloading (issue 13)"):
//
//  table  BERT-32 from the Piper file (b = 8) over M_GPU x beta: sum u,
//         greedy, Greedy*, L2L (all replayed by the simulator), the §6 MILP
//         bound (CBC, --time-limit seconds per point) and greedy's gap to it;
//         plus the same over a PipeDream chain when --pipedream FILE is given.
//  scale  Greedy (Algorithm 1 + Algorithm 2 over every cut) on synthetic
//         chains of 32..256 transformer-like layers at half the no-offload
//         memory: wall time per plan.
//
// Usage: bench_weightoffload [table|scale|all] [--time-limit S] [--batch B]
//        bench_weightoffload point MEM_MB GBPS [unused] [TIME_LIMIT]   (one BERT-32 row)
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/PiperImporter.h"
#include "onnx-partition/Partition/WeightOffload.h"
#include "onnx-partition/Support/FileIO.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef ONNXP_SHARED_DIR
#define ONNXP_SHARED_DIR "../shared"
#endif

using namespace onnxp;

namespace {
double seconds(std::chrono::steady_clock::time_point Since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Since).count();
}

double TimeLimit = 60;
double Batch = 8;

void row(const Chain &C, double MemMB, double GBps) {
  Expected<OffloadInstance> I = makeOffloadInstance(C, MemMB * 1e6, GBps * 1e6);
  if (!I) {
    std::printf("| %.0f | %g | error: %s |\n", MemMB, GBps, I.takeError().message().c_str());
    return;
  }
  if (Error E = checkOffloadFeasible(*I)) {
    std::printf("| %.0f | %g | infeasible | | | | | | |\n", MemMB, GBps);
    return;
  }
  auto T0 = std::chrono::steady_clock::now();
  Expected<OffloadPlan> G = planGreedyOffload(*I);
  double GreedySec = seconds(T0);
  Expected<OffloadPlan> GP = planGreedyOffload(*I, /*Margins=*/false);
  Expected<OffloadPlan> GS = planGreedyStarOffload(*I);
  Expected<OffloadPlan> L2L = planL2LOffload(*I);
  OffloadBoundOptions BO;
  BO.timeLimitSeconds = TimeLimit;
  Expected<OffloadBound> B = offloadLowerBound(*I, BO);
  auto Ms = [](const Expected<OffloadPlan> &P) {
    char Buf[64];
    if (!P) return std::string("fail");
    std::snprintf(Buf, sizeof Buf, "%.3f", P->cycleTime);
    return std::string(Buf);
  };
  char Bound[64] = "fail", Gap[64] = "-";
  if (B) {
    std::snprintf(Bound, sizeof Bound, "%.3f%s", B->bound, B->optimal ? "" : "*");
    if (G) std::snprintf(Gap, sizeof Gap, "%.3f%%", 100 * (G->cycleTime / B->bound - 1));
  }
  std::printf("| %.0f | %g | %.3f | %s | %s | %s | %s | %s | %s | %d | %.3f | %.1f |\n", MemMB, GBps,
              I->totalCompute(), Ms(G).c_str(), Ms(GP).c_str(), Ms(GS).c_str(), Ms(L2L).c_str(), Bound, Gap,
              G ? G->selection.count() : -1, GreedySec, B ? B->seconds : -1.0);
  if (!G) std::printf("<!-- greedy: %s -->\n", G.takeError().message().c_str());
  if (!B) std::printf("<!-- bound: %s -->\n", B.takeError().message().c_str());
  std::fflush(stdout);
}

void header() {
  std::printf("| M_GPU MB | beta GB/s | sum u ms | greedy ms | greedy-paper ms | Greedy* ms | L2L ms | MILP bound ms | "
              "greedy gap | choices | greedy s | MILP s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

Expected<Chain> bertChain() {
  std::string Path = std::string(ONNXP_SHARED_DIR) + "/workloads/piper/bert32a100.json";
  Expected<std::string> Text = readFile(Path);
  if (!Text) return Text.takeError();
  PiperChainOptions PO;
  PO.batchSize = Batch;
  PO.layerName = "ParallelTransformerLayer";
  return parsePiperChain(*Text, Path, PO);
}

void table() {
  Expected<Chain> C = bertChain();
  if (!C) {
    std::printf("skipped: %s\n", C.takeError().message().c_str());
    return;
  }
  std::printf("## BERT-32 (Piper, b = %g, %zu layers)\n\n", Batch, C->size());
  header();
  for (double Mem : {1400.0, 1500.0, 2000.0, 3000.0, 4500.0, 6000.0})
    for (double Bw : {1.0, 2.0, 4.0, 12.0}) row(*C, Mem, Bw);
}

Chain syntheticChain(int L) {
  Chain C;
  C.name = "synthetic-" + std::to_string(L);
  C.inputBytes = 32e6;
  for (int K = 0; K < L; ++K) {
    ChainBlock B;
    B.name = "layer" + std::to_string(K);
    B.forwardTime = 80 + (K * 7919 % 13);
    B.backwardTime = 2.2 * B.forwardTime;
    B.weightBytes = 177e6 * (1 + (K * 104729 % 5) / 10.0);
    B.outputBytes = B.storedBytes = 32e6;
    C.blocks.push_back(B);
  }
  return C;
}

void scale() {
  std::printf("## Greedy scale (synthetic chains, memory = half the no-offload threshold, beta = 12 GB/s)\n\n");
  std::printf("| layers | choices | cut points | greedy s | cycle ms | sum u ms |\n|---|---|---|---|---|---|\n");
  for (int L : {32, 64, 128, 256}) {
    Chain C = syntheticChain(L);
    Expected<OffloadInstance> I0 = makeOffloadInstance(C, 1, 12e6);
    Expected<OffloadInstance> I = makeOffloadInstance(C, I0->noOffloadMemory() / 2, 12e6);
    auto T0 = std::chrono::steady_clock::now();
    Expected<OffloadPlan> G = planGreedyOffload(*I);
    double S = seconds(T0);
    if (!G) {
      std::printf("| %d | error: %s |\n", L, G.takeError().message().c_str());
      continue;
    }
    std::printf("| %d | %d | %d | %.3f | %.3f | %.3f |\n", L, G->selection.count(), numCutPoints(G->selection), S,
                G->cycleTime, I->totalCompute());
    std::fflush(stdout);
  }
}
} // namespace

int main(int Argc, char **Argv) {
  std::string What = "all";
  if (Argc >= 4 && !std::strcmp(Argv[1], "point")) {
    if (Argc >= 6) TimeLimit = std::atof(Argv[5]);
    Expected<Chain> C = bertChain();
    if (!C) return 1;
    header();
    row(*C, std::atof(Argv[2]), std::atof(Argv[3]));
    if (std::getenv("ONNXP_DESCRIBE")) {
      Expected<OffloadInstance> I = makeOffloadInstance(*C, std::atof(Argv[2]) * 1e6, std::atof(Argv[3]) * 1e6);
      for (Expected<OffloadPlan> P : {planGreedyOffload(*I), planGreedyOffload(*I, false), planGreedyStarOffload(*I),
                                      planL2LOffload(*I)})
        if (P) std::printf("%s", describeOffloadPlan(*I, *P).c_str());
    }
    return 0;
  }
  for (int A = 1; A < Argc; ++A) {
    if (!std::strcmp(Argv[A], "--time-limit") && A + 1 < Argc) TimeLimit = std::atof(Argv[++A]);
    else if (!std::strcmp(Argv[A], "--batch") && A + 1 < Argc) Batch = std::atof(Argv[++A]);
    else What = Argv[A];
  }
  if (What == "table" || What == "all") table();
  if (What == "scale" || What == "all") scale();
  return 0;
}
