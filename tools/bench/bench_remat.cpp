//===- bench/bench_remat.cpp - Activation offloading + remat (seed 001) --===//
//
// Two tables for docs/benchmarks-history.md:
//  1. solve time of the seed-001 DP (offloading on, 12 GB/s) and of rotor's
//     table (offloading off) against chain length L and memory steps N, on
//     random chains (seeded), budget = 1/3 of the unlimited activation memory;
//  2. for vgg16 (PipeDream by layers, issue 14's recipe), resnet50 (PipeDream
//     by separators: its skip connections make the by-layers chain
//     meaningless) and an analytical Llama-2-7B chain (below), the makespan
//     overhead over the unlimited makespan against the memory budget, with
//     and without offloading at 12 GB/s, N = 50 memory steps; every plan is
//     replayed by the simulator and the replayed makespan is what is printed.
//
// The unlimited activation memory M_all is the least budget (bisection on
// rotor's DP, slots of 16 MiB) at which the makespan equals the sum of all
// forward and backward times; budgets are M_all / r.
//
// Llama-2-7B chain: 32 decoder layers, batch 1, sequence 4096, hidden 4096,
// 32 heads, fp16, no flash attention. Per layer: a = b s h 2 bytes (32 MiB),
// stored abar = s b h (34 + 5 a s / h) bytes (Korthikanti et al. 2022, the
// activations a layer keeps for its backward), forward 24 b s h^2 + 4 b s^2 h
// FLOPs at 150 TFLOP/s, backward twice the forward. An analytical stand-in
// until the linearize pass gives chains of ../shared/models/llama2_7b_forward.onnx.
//
// Usage: bench_remat [SHARED_DIR] [--quick]. CPU seconds of the process.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/PipeDreamProfile.h"
#include "onnx-partition/Partition/ActivationScheduleSimulator.h"
#include "onnx-partition/Partition/Remat.h"
#include "onnx-partition/Support/FileIO.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <string>

using namespace onnxp;

namespace {

double cpuSeconds() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

constexpr double GBs = 1e9;

double unlimitedMemory(const Chain &C) {
  double LB = rematLowerBoundMs(C, RematOptions());
  RematOptions O;
  O.offload = false;
  O.slotBytes = 16.0 * 1024 * 1024;
  double Lo = 1, Hi = C.inputBytes;
  for (const ChainBlock &B : C.blocks) Hi += 2 * B.outputBytes + B.storedBytes;
  Hi = std::ceil(Hi / O.slotBytes) + 4;
  while (Hi - Lo > 1) {
    double Mid = std::floor((Lo + Hi) / 2);
    O.memoryBytes = Mid * O.slotBytes;
    Expected<RematPlan> P = planRotor(C, O);
    if (P && P->feasible && P->makespanMs <= LB * (1 + 1e-12)) Hi = Mid;
    else Lo = Mid;
  }
  return Hi * O.slotBytes;
}

Chain randomChain(int L, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<double> Size(10e6, 400e6), Time(1, 20);
  Chain C;
  C.name = "random";
  C.inputBytes = Size(Rng);
  for (int K = 0; K < L; ++K) {
    ChainBlock B;
    B.name = "l" + std::to_string(K + 1);
    B.forwardTime = Time(Rng);
    B.backwardTime = 2 * B.forwardTime;
    B.outputBytes = std::round(Size(Rng));
    B.storedBytes = B.outputBytes;
    C.blocks.push_back(B);
  }
  return C;
}

Chain llamaChain() {
  const double b = 1, s = 4096, h = 4096, a = 32, Flops = 150e12;
  Chain C;
  C.name = "llama2-7b";
  C.inputBytes = b * s * h * 2;
  for (int K = 0; K < 32; ++K) {
    ChainBlock B;
    B.name = "layer" + std::to_string(K);
    double F = 24 * b * s * h * h + 4 * b * s * s * h;
    B.forwardTime = F / Flops * 1e3;
    B.backwardTime = 2 * B.forwardTime;
    B.outputBytes = b * s * h * 2;
    B.storedBytes = s * b * h * (34 + 5 * a * s / h);
    C.blocks.push_back(B);
  }
  return C;
}

std::optional<Chain> pipeDream(const std::string &Shared, const char *Name, bool Layers) {
  Expected<std::string> Text = readFile(Shared + "/workloads/pipedream/" + Name + ".txt");
  if (!Text) return std::nullopt;
  Expected<PipeDreamProfile> P = parsePipeDreamProfile(*Text, Name);
  if (!P) return std::nullopt;
  Expected<Chain> C = Layers ? chainFromLayers(*P) : chainFromSeparators(*P);
  if (!C) return std::nullopt;
  C->name = Name;
  return *C;
}

void solveTimes(bool Quick) {
  std::printf("## Solve time (CPU s), random chains, budget M_all/3, 12 GB/s\n\n");
  std::printf("| L | N | offload DP s | states | rotor s |\n| --- | --- | --- | --- | --- |\n");
  for (int L : {10, 20, 40}) {
    Chain C = randomChain(L, 1000 + L);
    double MAll = unlimitedMemory(C);
    for (int N : {10, 20, 30, 50}) {
      if (Quick && N > 20) continue;
      RematOptions O;
      O.memoryBytes = MAll / 3;
      O.memorySteps = N;
      O.bandwidthBytesPerSec = 12 * GBs;
      double T0 = cpuSeconds();
      Expected<RematPlan> P = planOffloadRemat(C, O);
      double T1 = cpuSeconds();
      O.offload = false;
      Expected<RematPlan> R = planRotor(C, O);
      double T2 = cpuSeconds();
      if (!P || !R) continue;
      std::printf("| %d | %d | %.3f | %zu | %.4f |\n", L, N, T1 - T0, P->statesExplored, T2 - T1);
      std::fflush(stdout);
    }
  }
}

double replayed(const Chain &C, const RematOptions &O, const RematPlan &P) {
  if (!P.feasible) return INFINITY;
  Expected<ActivationReplay> R = replayActivationSchedule(C, O, P);
  if (!R) {
    std::printf("REPLAY FAILED: %s\n", R.takeError().message().c_str());
    return NAN;
  }
  return R->makespanMs;
}

void overheads(const Chain &C, bool Quick) {
  double LB = rematLowerBoundMs(C, RematOptions());
  double MAll = unlimitedMemory(C);
  std::printf("\n## %s: %zu layers, unlimited makespan %.3f ms, M_all %.3f GB\n\n", C.name.c_str(), C.size(),
              LB, MAll / 1e9);
  std::printf(
      "| M_all / M | M (GB) | remat only: overhead | offload+remat: overhead | offloaded GB | share of "
      "remat overhead removed | solve s |\n| --- | --- | --- | --- | --- | --- | --- |\n");
  for (double R : {1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0}) {
    if (Quick && R > 3) continue;
    RematOptions O;
    O.memoryBytes = MAll / R;
    O.memorySteps = 50;
    O.bandwidthBytesPerSec = 12 * GBs;
    O.offload = false;
    Expected<RematPlan> Off = planOffloadRemat(C, O);
    double T0 = cpuSeconds();
    O.offload = true;
    Expected<RematPlan> On = planOffloadRemat(C, O);
    double T1 = cpuSeconds();
    if (!Off || !On) continue;
    RematOptions OffO = O;
    OffO.offload = false;
    double A = replayed(C, OffO, *Off), B = replayed(C, O, *On);
    auto Pct = [&](double V) { return std::isfinite(V) ? 100 * (V / LB - 1) : INFINITY; };
    double Removed = (std::isfinite(A) && A > LB) ? 100 * (A - B) / (A - LB) : NAN;
    std::printf("| %.1f | %.2f | %s | %s | %.2f | %s | %.1f |\n", R, O.memoryBytes / 1e9,
                std::isfinite(A) ? (std::to_string(Pct(A)).substr(0, 6) + "%").c_str() : "infeasible",
                std::isfinite(B) ? (std::to_string(Pct(B)).substr(0, 6) + "%").c_str() : "infeasible",
                On->offloadedBytes / 1e9,
                std::isnan(Removed) ? "-" : (std::to_string(Removed).substr(0, 5) + "%").c_str(), T1 - T0);
    std::fflush(stdout);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string Shared = ONNXP_SHARED_DIR;
  bool Quick = false;
  for (int I = 1; I < argc; ++I) {
    if (!std::strcmp(argv[I], "--quick")) Quick = true;
    else Shared = argv[I];
  }
  solveTimes(Quick);
  if (std::optional<Chain> V = pipeDream(Shared, "vgg16", true)) overheads(*V, Quick);
  if (std::optional<Chain> R = pipeDream(Shared, "resnet50", false)) overheads(*R, Quick);
  overheads(llamaChain(), Quick);
  return 0;
}
