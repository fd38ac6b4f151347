//===- bench/bench_weightoffload.cpp - Weight offloading of seed 002 ------===//
//
// Two experiments for the weight-offloading planners (results in
// docs/benchmarks-history.md, section "Weight offloading (issue 13)"):
//
//  table  BERT-32 from the Piper file (b = 8) over M_GPU x beta: sum u,
//         greedy, Greedy*, L2L (all replayed by the simulator), the §6 MILP
//         bound (CBC, --time-limit seconds per point) and greedy's gap to it;
//  pipedream  The same over the separator chains (issue 12's recipe) of the
//         PipeDream profiles of GNMT and VGG-16, M_GPU at 0, 25, 50 and 75% of
//         the way from the smallest feasible memory to the no-offload one.
//  chain  The same table for a chain JSON file (`onnx-partition chain MODEL
//         -o chain.json`, e.g. the Llama-2-7B training chain), M_GPU at 0, 25
//         and 50% of the way from the smallest feasible memory to no offload.
//  random The expected order (greedy <= Greedy*, greedy <= L2L) on
//         900 random chains of 4-11 layers, for greedy and greedy-paper.
//  scale  Greedy (Algorithm 1 + Algorithm 2 over every cut) on synthetic
//         chains of 32..256 transformer-like layers at half the no-offload
//         memory: wall time per plan.
//
// Usage: bench_weightoffload [table|pipedream|random|scale|all] [--time-limit S] [--batch B]
//        bench_weightoffload point MEM_MB GBPS [unused] [TIME_LIMIT]   (one BERT-32 row)
//        bench_weightoffload trace OUT.json MEM_MB GBPS   (greedy's BERT-32 plan as a Chrome trace)
//        bench_weightoffload chain [--time-limit S] [--no-bound] [--fractions F,..] [--bandwidths GBPS,..]
//        CHAIN.json
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/PipeDreamProfile.h"
#include "onnx-partition/Import/PiperImporter.h"
#include "onnx-partition/Partition/WeightOffload.h"
#include "onnx-partition/Partition/WeightOffloadSimulator.h"
#include "onnx-partition/Support/ChromeTrace.h"
#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
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
bool WithBound = true;
double Batch = 8;
std::vector<double> ChainFractions{0.0, 0.25, 0.5}, ChainBandwidths{1.0, 2.0, 4.0, 12.0};

std::vector<double> parseList(const char *Text) {
  std::vector<double> V;
  for (const char *P = Text; *P;) {
    char *End;
    V.push_back(std::strtod(P, &End));
    P = *End == ',' ? End + 1 : End;
    if (End == P && *P) break;
  }
  return V;
}

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
  BO.deadline = Deadline::after(TimeLimit);
  Expected<OffloadBound> B =
      WithBound ? offloadLowerBound(*I, BO) : Expected<OffloadBound>(makeUsageError("skipped (--no-bound)"));
  auto Ms = [](const Expected<OffloadPlan> &P) {
    char Buf[64];
    if (!P) return std::string("fail");
    std::snprintf(Buf, sizeof Buf, "%.3f", P->cycleTime);
    return std::string(Buf);
  };
  char Bound[64] = "fail", Gap[64] = "-";
  if (!WithBound) std::snprintf(Bound, sizeof Bound, "not run");
  if (B) {
    std::snprintf(Bound, sizeof Bound, "%.3f%s", B->bound, B->optimal ? "" : "*");
    if (G) std::snprintf(Gap, sizeof Gap, "%.3f%%", 100 * (G->cycleTime / B->bound - 1));
  }
  std::printf("| %.1f | %g | %.3f | %s | %s | %s | %s | %s | %s | %d | %.3f | %.1f |\n", MemMB, GBps,
              I->totalCompute(), Ms(G).c_str(), Ms(GP).c_str(), Ms(GS).c_str(), Ms(L2L).c_str(), Bound, Gap,
              G ? G->selection.count() : -1, GreedySec, B ? B->seconds : -1.0);
  if (!G) std::printf("<!-- greedy: %s -->\n", G.takeError().message().c_str());
  if (!B && WithBound) std::printf("<!-- bound: %s -->\n", B.takeError().message().c_str());
  std::fflush(stdout);
}

void header() {
  std::printf("| M_GPU MB | beta GB/s | sum u ms | greedy ms | greedy-paper ms | Greedy* ms | L2L ms | MILP "
              "bound ms | "
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

void pipedreamTable(const std::string &Model) {
  std::string Path = std::string(ONNXP_SHARED_DIR) + "/workloads/pipedream/" + Model + ".txt";
  Expected<std::string> Text = readFile(Path);
  if (!Text) {
    std::printf("skipped: %s\n", Text.takeError().message().c_str());
    return;
  }
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(*Text, Path);
  Expected<Chain> C = P ? chainFromSeparators(*P) : Expected<Chain>(P.takeError());
  if (!C) {
    std::printf("error: %s\n", C.takeError().message().c_str());
    return;
  }
  Expected<OffloadInstance> I0 = makeOffloadInstance(*C, 0, 1);
  double Lo = I0->minimumMemory(), Hi = I0->noOffloadMemory();
  std::printf(
      "\n## PipeDream %s (separator chain, %zu blocks; M_GPU from %.1f MB (smallest feasible) to %.1f MB "
      "(no offload))\n\n",
      Model.c_str(), C->size(), Lo / 1e6, Hi / 1e6);
  header();
  for (double F : {0.0, 0.25, 0.5, 0.75})
    for (double Bw : {1.0, 2.0, 4.0, 12.0}) row(*C, std::ceil(Lo + F * (Hi - Lo)) / 1e6, Bw);
}

/// Reads the chain JSON of `onnx-partition chain` (issue 11's format, see
/// its Import/ChainJson.h). A bench-local reader until that lands on main.
Expected<Chain> readChainJson(const std::string &Path) {
  Expected<std::string> Text = readFile(Path);
  if (!Text) return Text.takeError();
  nlohmann::json J = nlohmann::json::parse(*Text, nullptr, false);
  if (J.is_discarded() || !J.contains("blocks")) return makeError(Path, ": not a chain JSON file");
  Chain C;
  C.name = J.value("name", Path);
  C.sourceName = Path;
  C.inputBytes = J.value("inputBytes", 0.0);
  for (const nlohmann::json &B : J["blocks"]) {
    ChainBlock K;
    K.name = B.value("name", "");
    K.forwardTime = B.value("forwardTime", 0.0);
    K.backwardTime = B.value("backwardTime", 0.0);
    K.outputBytes = B.value("outputBytes", 0.0);
    K.storedBytes = B.value("storedBytes", K.outputBytes);
    K.weightBytes = B.value("weightBytes", 0.0);
    K.forwardOverhead = B.value("forwardOverhead", 0.0);
    K.backwardOverhead = B.value("backwardOverhead", 0.0);
    C.blocks.push_back(K);
  }
  if (Error E = C.validate()) return E;
  return C;
}

void chainTable(const std::string &Path) {
  Expected<Chain> C = readChainJson(Path);
  if (!C) {
    std::printf("skipped: %s\n", C.takeError().message().c_str());
    return;
  }
  Expected<OffloadInstance> I0 = makeOffloadInstance(*C, 0, 1);
  double Lo = I0->minimumMemory(), Hi = I0->noOffloadMemory();
  int Weighted = 0;
  for (int K = 1; K <= I0->L; ++K) Weighted += I0->w[K] > 0;
  std::printf(
      "\n## %s (%zu blocks, %d with weights, %.1f MB of weights; M_GPU from %.1f MB (smallest feasible) "
      "to %.1f MB (no offload))\n\n",
      C->name.c_str(), C->size(), Weighted, I0->totalWeights() / 1e6, Lo / 1e6, Hi / 1e6);
  header();
  for (double F : ChainFractions)
    for (double Bw : ChainBandwidths) row(*C, std::ceil(Lo + F * (Hi - Lo)) / 1e6, Bw);
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

/// The expected order (greedy <= Greedy*, greedy <= L2L) on random
/// chains, for greedy and for the paper's variants alone.
void randomOrder() {
  std::mt19937 Rng(7);
  std::uniform_real_distribution<double> Time(1, 10), Weight(10, 100), Act(0, 20);
  std::uniform_int_distribution<int> Coin(0, 4);
  int N = 0, PaperStar = 0, PaperL2L = 0, Star = 0, L2L = 0;
  for (int T = 0; T < 300; ++T) {
    Chain C;
    C.name = "random";
    C.inputBytes = std::round(Act(Rng));
    for (int K = 0; K < 4 + T % 8; ++K) {
      ChainBlock B;
      B.name = "b" + std::to_string(K + 1);
      B.forwardTime = Time(Rng);
      B.backwardTime = 2 * Time(Rng);
      B.weightBytes = Coin(Rng) == 0 ? 0 : std::round(Weight(Rng));
      B.outputBytes = B.storedBytes = std::round(Act(Rng));
      C.blocks.push_back(B);
    }
    for (double F : {0.1, 0.4, 0.7}) {
      Expected<OffloadInstance> I0 = makeOffloadInstance(C, 0, 8);
      double Lo = I0->minimumMemory(), Hi = I0->noOffloadMemory();
      Expected<OffloadInstance> I = makeOffloadInstance(C, std::round(Lo + F * (Hi - Lo)), 8);
      Expected<OffloadPlan> G = planGreedyOffload(*I), GP = planGreedyOffload(*I, false);
      Expected<OffloadPlan> GS = planGreedyStarOffload(*I), GSP = planGreedyStarOffload(*I, false);
      Expected<OffloadPlan> L = planL2LOffload(*I);
      if (!G || !GP || !GS || !GSP || !L) {
        std::printf("chain %d: a planner failed\n", T);
        continue;
      }
      ++N;
      PaperStar += GP->cycleTime > GSP->cycleTime + 1e-9;
      PaperL2L += GP->cycleTime > L->cycleTime + 1e-9;
      Star += G->cycleTime > GS->cycleTime + 1e-9;
      L2L += G->cycleTime > L->cycleTime + 1e-9;
    }
  }
  std::printf("## Expected order on %d random instances\n\n| | slower than Greedy* | slower than L2L "
              "|\n|---|---|---|\n"
              "| greedy-paper (vs Greedy*-paper) | %d | %d |\n| greedy | %d | %d |\n",
              N, PaperStar, PaperL2L, Star, L2L);
}

void scale() {
  std::printf(
      "## Greedy scale (synthetic chains, memory = half the no-offload threshold, beta = 12 GB/s)\n\n");
  std::printf(
      "| layers | choices | cut points | greedy s | cycle ms | sum u ms |\n|---|---|---|---|---|---|\n");
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
    std::printf("| %d | %d | %d | %.3f | %.3f | %.3f |\n", L, G->selection.count(),
                numCutPoints(G->selection), S, G->cycleTime, I->totalCompute());
    std::fflush(stdout);
  }
}
} // namespace

int main(int Argc, char **Argv) {
  std::string What = "all";
  if (Argc >= 5 && !std::strcmp(Argv[1], "trace")) {
    // bench_weightoffload trace OUT.json MEM_MB GBPS: greedy's BERT-32 plan as a Chrome trace.
    Expected<Chain> C = bertChain();
    if (!C) return 1;
    Expected<OffloadInstance> I = makeOffloadInstance(*C, std::atof(Argv[3]) * 1e6, std::atof(Argv[4]) * 1e6);
    Expected<OffloadPlan> P = I ? planGreedyOffload(*I) : Expected<OffloadPlan>(I.takeError());
    if (!P) {
      std::fprintf(stderr, "error: %s\n", P.takeError().message().c_str());
      return 1;
    }
    ChromeTrace T;
    traceOffloadSchedule(*I, P->schedule, T);
    if (Error E = writeFileAtomically(Argv[2], T.toJson())) {
      std::fprintf(stderr, "error: %s\n", E.message().c_str());
      return 1;
    }
    std::printf("%s", describeOffloadPlan(*I, *P).c_str());
    return 0;
  }
  if (Argc >= 4 && !std::strcmp(Argv[1], "point")) {
    if (Argc >= 6) TimeLimit = std::atof(Argv[5]);
    Expected<Chain> C = bertChain();
    if (!C) return 1;
    header();
    row(*C, std::atof(Argv[2]), std::atof(Argv[3]));
    if (std::getenv("ONNXP_DESCRIBE")) {
      Expected<OffloadInstance> I =
          makeOffloadInstance(*C, std::atof(Argv[2]) * 1e6, std::atof(Argv[3]) * 1e6);
      for (Expected<OffloadPlan> P : {planGreedyOffload(*I), planGreedyOffload(*I, false),
                                      planGreedyStarOffload(*I), planL2LOffload(*I)})
        if (P) std::printf("%s", describeOffloadPlan(*I, *P).c_str());
    }
    return 0;
  }
  for (int A = 1; A < Argc; ++A) {
    if (!std::strcmp(Argv[A], "--time-limit") && A + 1 < Argc) TimeLimit = std::atof(Argv[++A]);
    else if (!std::strcmp(Argv[A], "--batch") && A + 1 < Argc) Batch = std::atof(Argv[++A]);
    else if (!std::strcmp(Argv[A], "--no-bound")) WithBound = false;
    else if (!std::strcmp(Argv[A], "--fractions") && A + 1 < Argc) ChainFractions = parseList(Argv[++A]);
    else if (!std::strcmp(Argv[A], "--bandwidths") && A + 1 < Argc) ChainBandwidths = parseList(Argv[++A]);
    else if (What != "chain") What = Argv[A]; // "chain" keeps its file as the last argument
  }
  if (What == "table" || What == "all") table();
  if (What == "chain") {
    if (Argc < 3) return 2;
    chainTable(Argv[Argc - 1]);
    return 0;
  }
  if (What == "pipedream" || What == "all")
    for (const char *M : {"gnmt", "vgg16"}) pipedreamTable(M);
  if (What == "random" || What == "all") randomOrder();
  if (What == "scale" || What == "all") scale();
  return 0;
}
