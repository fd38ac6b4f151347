//===- bench/bench_pipeline.cpp - Memory sweeps of pipeline-ilp vs PipeDream ===//
//
// Issue 12's benchmark (seed 000 §5, Figures 6-11): for the resnet18,
// resnet50 and vgg16 chains of ../shared/workloads/pipedream (separator
// recipe), P = 4 and 8 GPUs and links of 12 GB/s, sweeps the memory limit
// and prints per point pipeline-ilp's simulated period, CBC's bound and gap,
// the time spent, and the baseline's period at the same limit (the fastest
// of PipeDream's straight pipelines of 1..P stages that fits, priced by the
// simulator). Writes one SVG chart per (model, P) when --svg-dir is given,
// and the Chrome trace of the ILP's plan at the largest limit with --trace-dir.
// Not a test: results depend on the time limit and the machine.
//
// Issue 24's table (--search-table): per (chain, P) six memory limits from
// the least that fits (bisection on the memory-aware contiguous search) to
// the peak of PipeDream's P-stage straight pipeline; columns: the fastest
// straight pipeline of 1..P stages that fits, the memory-aware contiguous
// best, pipeline-ilp (bound + LNS above 10 blocks), its bound and gap, wall
// time. Chains: the PipeDream profiles plus any `--chain NAME=FILE` (chain
// JSON written by `onnx-partition chain`).
//
// Usage: bench_pipeline [--time-limit S] [--points N] [--gpus 4,8]
//                       [--bandwidth B] [--only MODEL] [--lo F] [--hi F]
//                       [--svg-dir DIR] [--trace-dir DIR] [SHARED_DIR]
// Limits run from F_lo to F_hi times the peak memory of PipeDream's
// P-stage straight pipeline (defaults 0.5 and 1.25). Defaults: 600 s per
// point (the budget), 6 points, 1 thread.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/ChainJson.h"
#include "onnx-partition/Import/PipeDreamProfile.h"
#include "onnx-partition/Partition/PipelineIlp.h"
#include "onnx-partition/Partition/PipelineSweep.h"
#include "onnx-partition/Support/FileIO.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace onnxp;

namespace {
std::string num(double V, int Digits = 3) {
  if (!std::isfinite(V)) return "-";
  char B[64];
  std::snprintf(B, sizeof B, "%.*f", Digits, V);
  return B;
}

/// PipeDream's profile of Model as seed 000's separator chain, in C; a
/// missing profile is skipped with a line (C stays empty), a broken one is
/// an error: returns the exit code then, else 0.
int loadProfileChain(const std::string &Shared, const std::string &Model, std::optional<Chain> &C) {
  std::string Path = Shared + "/workloads/pipedream/" + Model + ".txt";
  Expected<std::string> Text = readFile(Path);
  if (!Text) {
    std::printf("skip %s: %s\n", Model.c_str(), Text.takeError().message().c_str());
    return 0;
  }
  Expected<PipeDreamProfile> Prof = parsePipeDreamProfile(*Text, Path);
  if (!Prof) return std::fprintf(stderr, "error: %s\n", Prof.takeError().message().c_str()), 1;
  Expected<Chain> Made = chainFromSeparators(*Prof);
  if (!Made) return std::fprintf(stderr, "error: %s\n", Made.takeError().message().c_str()), 1;
  C = std::move(*Made);
  return 0;
}

/// The least memory (bytes) at which the memory-aware contiguous search
/// finds a plan on P GPUs, to 0.5% by bisection below Hi (which fits).
double leastThatFits(const PipelineTasks &Tasks, int P, double Hi) {
  double Lo = 0;
  while (Hi - Lo > 0.005 * Hi) {
    const double Mid = 0.5 * (Lo + Hi);
    Expected<PipelinePlan> Plan = memoryAwareContiguousWithin(Tasks, P, Mid, 4000, 2000);
    if (Plan) Hi = Mid;
    else (void)Plan.takeError(), Lo = Mid;
  }
  return Hi;
}

int searchTable(const std::vector<std::pair<std::string, Chain>> &Chains, const std::vector<int> &Gpus,
                double TimeLimit, double Bandwidth, int Points) {
  std::printf(
      "issue 24 table: %.0f s per point, bandwidth %.3g B/s, %d points from the least memory that fits "
      "to PipeDream's peak\n",
      TimeLimit, Bandwidth, Points);
  std::printf("| chain | P | limit GB | binds | PipeDream fit ms | contiguous ms | pipeline-ilp ms | bound "
              "ms | gap | "
              "vs contiguous | wall s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto &[Name, C] : Chains) {
    PipelineTasks Tasks(C, Bandwidth);
    for (int P : Gpus) {
      Expected<PipelinePlan> Base = pipeDreamBaseline(Tasks, P);
      if (!Base) return std::fprintf(stderr, "error: %s\n", Base.takeError().message().c_str()), 1;
      const double Peak = Base->peakMemory(), Least = leastThatFits(Tasks, P, Peak);
      std::vector<double> Limits = memoryLimits(Least, Peak, Points);
      // Where memory does not bind: the contiguous optimum without a limit.
      Expected<PipelinePlan> Free = memoryAwareContiguousWithin(Tasks, P, INFINITY);
      for (double M : Limits) {
        Expected<PipelinePlan> Straight = bestContiguousWithin(Tasks, P, M);
        Expected<PipelinePlan> Contig = memoryAwareContiguousWithin(Tasks, P, M);
        PipelineIlpOptions O;
        O.numGpus = P;
        O.memoryBytes = M;
        O.deadline = Deadline::after(TimeLimit);
        const auto T0 = std::chrono::steady_clock::now();
        Expected<PipelinePlan> Ilp = planPipelineIlp(Tasks, O);
        const double Wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
        const bool Binds = Free && Contig && Contig->period() > Free->period() * (1 + 1e-9);
        std::string Vs = "-", Bound = "-", Gap = "-";
        if (Ilp && Contig) {
          const double D = 100 * (Ilp->period() - Contig->period()) / Contig->period();
          Vs = num(D, 1) + "%";
        }
        if (Ilp) {
          Bound = num(Ilp->lowerBound);
          auto It = Ilp->stats.find("solver_gap");
          if (It != Ilp->stats.end()) Gap = num(100 * It->second, 1) + "%";
        }
        std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", Name.c_str(), P,
                    num(M / 1e9, 4).c_str(), Binds ? "yes" : "no",
                    Straight ? num(Straight->period()).c_str() : "none",
                    Contig ? num(Contig->period()).c_str() : "none",
                    Ilp ? num(Ilp->period()).c_str() : "none", Bound.c_str(), Gap.c_str(), Vs.c_str(),
                    num(Wall, 1).c_str());
        if (Ilp && std::getenv("BENCH_DEBUG"))
          for (auto &[K, V] : Ilp->stats) std::printf("    %s = %g\n", K.c_str(), V);
        if (!Straight) (void)Straight.takeError();
        if (!Contig) (void)Contig.takeError();
        if (!Ilp) std::printf("  (pipeline-ilp: %s)\n", Ilp.takeError().message().c_str());
      }
      if (!Free) (void)Free.takeError();
    }
  }
  return 0;
}
} // namespace

int main(int Argc, char **Argv) {
  // Line-buffered: a run stopped by `timeout` keeps every line it printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  double TimeLimit = 600, Bandwidth = 12e9, Lo = 0.5, Hi = 1.25;
  int Points = 6;
  std::vector<int> Gpus = {4, 8};
  std::vector<std::string> Models = {"resnet18", "resnet50", "vgg16"};
  std::string Shared = ONNXP_SHARED_DIR, SvgDir, TraceDir, Only;
  bool SearchTable = false;
  std::vector<std::pair<std::string, std::string>> ChainFiles;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Next = [&]() -> std::string {
      if (I + 1 >= Argc) {
        std::fprintf(stderr, "error: %s needs a value\n", A.c_str());
        std::exit(2);
      }
      return Argv[++I];
    };
    if (A == "--time-limit") TimeLimit = std::atof(Next().c_str());
    else if (A == "--points") Points = std::atoi(Next().c_str());
    else if (A == "--bandwidth") Bandwidth = std::atof(Next().c_str());
    else if (A == "--lo") Lo = std::atof(Next().c_str());
    else if (A == "--hi") Hi = std::atof(Next().c_str());
    else if (A == "--only") Only = Next();
    else if (A == "--svg-dir") SvgDir = Next();
    else if (A == "--trace-dir") TraceDir = Next();
    else if (A == "--search-table") SearchTable = true;
    else if (A == "--chain") {
      std::string V = Next();
      size_t Eq = V.find('=');
      if (Eq == std::string::npos) return std::fprintf(stderr, "error: --chain NAME=FILE\n"), 2;
      ChainFiles.push_back({V.substr(0, Eq), V.substr(Eq + 1)});
    } else if (A == "--gpus") {
      Gpus.clear();
      std::stringstream SS(Next());
      for (std::string T; std::getline(SS, T, ',');) Gpus.push_back(std::atoi(T.c_str()));
    } else if (!A.empty() && A[0] == '-') {
      std::fprintf(stderr, "error: unknown option %s\n", A.c_str());
      return 2;
    } else Shared = A;
  }
  if (SearchTable) {
    std::vector<std::pair<std::string, Chain>> Chains;
    for (const std::string &Model : Models) {
      if (!Only.empty() && Model != Only) continue;
      std::optional<Chain> C;
      if (int Code = loadProfileChain(Shared, Model, C)) return Code;
      if (!C) continue;
      Chains.push_back({Model, std::move(*C)});
    }
    for (const auto &[Name, Path] : ChainFiles) {
      if (!Only.empty() && Name != Only) continue;
      Expected<std::string> Text = readFile(Path);
      if (!Text) return std::fprintf(stderr, "error: %s\n", Text.takeError().message().c_str()), 1;
      Expected<Chain> C = parseChainJson(*Text, Path);
      if (!C) return std::fprintf(stderr, "error: %s\n", C.takeError().message().c_str()), 1;
      Chains.push_back({Name, std::move(*C)});
    }
    return searchTable(Chains, Gpus, TimeLimit, Bandwidth, Points);
  }
  std::printf("time limit %.0f s per point, bandwidth %.3g B/s, %d points from %.2f to %.2f x PipeDream's "
              "peak\n",
              TimeLimit, Bandwidth, Points, Lo, Hi);
  for (const std::string &Model : Models) {
    if (!Only.empty() && Model != Only) continue;
    std::optional<Chain> C;
    if (int Code = loadProfileChain(Shared, Model, C)) return Code;
    if (!C) continue;
    PipelineTasks Tasks(*C, Bandwidth);
    for (int P : Gpus) {
      Expected<PipelinePlan> Base = pipeDreamBaseline(Tasks, P);
      if (!Base) return std::fprintf(stderr, "error: %s\n", Base.takeError().message().c_str()), 1;
      std::printf("\n%s, %zu blocks, P = %d: PipeDream %d-stage straight pipeline %s ms, peak %s GB\n",
                  Model.c_str(), C->size(), P, P, num(Base->period()).c_str(),
                  num(Base->peakMemory() / 1e9).c_str());
      std::printf("%10s %12s %12s %8s %8s %10s %12s %6s %8s %12s %s\n", "limit_GB", "ilp_ms", "bound_ms",
                  "gap", "ilp_s", "ilp_peakGB", "baseline_ms", "stages", "ilp_win", "warm_ms", "vars/rows");
      std::vector<double> Limits = memoryLimits(Lo * Base->peakMemory(), Hi * Base->peakMemory(), Points);
      PipelineIlpOptions O;
      O.numGpus = P;
      // The sweep shares one limit across its points (memorySweep).
      O.deadline = Deadline::after(TimeLimit * double(Limits.size()));
      auto Row = [&](const MemorySweepPoint &Pt) {
        std::string Win = "-";
        if (std::isfinite(Pt.ilpPeriod) && std::isfinite(Pt.baselinePeriod))
          Win = num(std::fabs(Pt.baselinePeriod - Pt.ilpPeriod) < 1e-9 * Pt.baselinePeriod
                        ? 0.0
                        : 100 * (Pt.baselinePeriod - Pt.ilpPeriod) / Pt.baselinePeriod,
                    1) +
                "%";
        else if (std::isfinite(Pt.ilpPeriod)) Win = "only-ilp";
        // warm_ms: the straight pipeline CBC started from; ilp_ms below it
        // means CBC itself found a better pattern.
        std::printf(
            "%10s %12s %12s %8s %8s %10s %12s %6d %8s %12s %.0f/%.0f%s\n", num(Pt.memoryBytes / 1e9).c_str(),
            Pt.ilpInfeasible ? "infeasible" : num(Pt.ilpPeriod).c_str(), num(Pt.ilpBound).c_str(),
            num(Pt.ilpGap, 4).c_str(), num(Pt.ilpSeconds, 1).c_str(), num(Pt.ilpPeakMemory / 1e9).c_str(),
            num(Pt.baselinePeriod).c_str(), Pt.baselineStages, Win.c_str(), num(Pt.warmStartPeriod).c_str(),
            Pt.ilpVariables, Pt.ilpRows, Pt.ilpProven ? " (proven)" : "");
        std::fflush(stdout);
      };
      Expected<std::vector<MemorySweepPoint>> Sweep = memorySweep(Tasks, Limits, O, Row);
      if (!Sweep) return std::fprintf(stderr, "error: %s\n", Sweep.takeError().message().c_str()), 1;
      std::string Stem = Model + "-p" + std::to_string(P);
      if (!SvgDir.empty()) {
        std::ofstream(SvgDir + "/" + Stem + ".svg") << memorySweepSvg(
            *Sweep, Model + ", " + std::to_string(P) + " GPUs, " + num(Bandwidth / 1e9, 0) + " GB/s");
      }
      if (!TraceDir.empty()) {
        O.memoryBytes = Limits.back();
        O.deadline = Deadline::after(TimeLimit);
        Expected<PipelinePlan> Plan = planPipelineIlp(Tasks, O);
        if (Plan) {
          ChromeTrace Trace;
          PipelineSimOptions SO;
          SO.trace = &Trace;
          (void)simulatePipeline(Tasks, Plan->pattern, SO);
          std::ofstream(TraceDir + "/" + Stem + ".json") << Trace.toJson();
        }
      }
    }
  }
  return 0;
}
