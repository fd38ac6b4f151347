//===- bench/bench_ip.cpp - The max-load IPs on the msr workloads ---------===//
//
// Runs `ip` (non-contiguous, seed 004 §5.2) -- or `ip-contig` with
// --contig -- on the twelve workloads of ../shared/workloads/msr (seed 004
// Table 1) with CBC, and prints per workload: the warm start's TPS (the best
// registered cheap partitioner, normally the DP), the MIP start after the
// class-move polish (`ip` only), the IP's TPS next to the
// paper's IP column (Gurobi, 4 cores, 20 min, 1% gap), the proven lower
// bound and gap, the time at which the final incumbent was found and the
// total time. Not a test: timings depend on the machine.
//
// Usage: bench_ip [--time-limit S] [--threads N] [--gap G] [--contig]
//                 [--cbc "CBC SETTINGS"] [--progress] [--only SUBSTRING]...
//                 [SHARED_DIR]
// Defaults: 600 s per workload, 2 threads, gap 1e-4.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/WorkloadImporter.h"
#include "onnx-partition/Partition/Partitioner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace onnxp;

namespace {

struct Case {
  const char *File;
  double PaperIp;     ///< Table 1, IP (non-contiguous) TPS
  double PaperContig; ///< Table 1, IP (contiguous) TPS
};

const Case Cases[] = {
    {"OperatorGraphs/bert_l-3_inference.json", 21.91, 27.92},
    {"OperatorGraphs/bert_l-6_inference.json", 28.33, 29.58},
    {"OperatorGraphs/resnet50_inference.json", 124.35, 124.35},
    {"OperatorGraphs/bert_l-3_training.json", 54.21, 65.30},
    {"OperatorGraphs/bert_l-6_training.json", 71.64, 72.86},
    {"OperatorGraphs/resnet50_training.json", 255.19, 255.19},
    {"LayerGraphs/bert24_inference.json", 17.71, 17.79},
    {"LayerGraphs/resnet50_inference.json", 33.31, 33.77},
    {"LayerGraphs/gnmt_inference.json", 31.68, 32.91},
    {"LayerGraphs/bert24_training.json", 39.79, 41.75},
    {"LayerGraphs/resnet50_training.json", 76.65, 78.63},
    {"LayerGraphs/gnmt_training.json", 88.47, 107.00},
};

double stat(const Plan &Pl, const char *Name) {
  auto It = Pl.stats.find(Name);
  return It == Pl.stats.end() ? NAN : It->second;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Shared = ONNXP_SHARED_DIR;
  PartitionOptions O;
  double TimeLimit = 600; // per workload: each run gets its own Deadline
  O.threads = 2;
  bool Contig = false;
  std::vector<std::string> Only;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "--time-limit" && I + 1 < Argc) TimeLimit = std::atof(Argv[++I]);
    else if (A == "--threads" && I + 1 < Argc) O.threads = std::atoi(Argv[++I]);
    else if (A == "--gap" && I + 1 < Argc) O.relativeGap = std::atof(Argv[++I]);
    else if (A == "--contig") Contig = true;
    else if (A == "--cbc" && I + 1 < Argc) {
      std::istringstream Words(Argv[++I]);
      for (std::string W; Words >> W;) O.solverArgs.push_back(W);
    } else if (A == "--only" && I + 1 < Argc) Only.push_back(Argv[++I]);
    else if (A == "--progress")
      O.progress = [](const std::string &L) { std::fprintf(stderr, "  %s\n", L.c_str()); };
    else Shared = A;
  }
  const char *Algo = Contig ? "ip-contig" : "ip";
  std::string Extra;
  for (const std::string &A : O.solverArgs) Extra += " " + A;
  std::printf("# %s, CBC, %d threads, time limit %g s, gap %g%s%s\n", Algo, O.threads, TimeLimit,
              O.relativeGap, Extra.empty() ? "" : ", CBC", Extra.c_str());
  std::printf("%-40s %5s %8s %8s %8s %8s %8s %7s %7s %8s %8s %s\n", "workload", "nodes", "warm", "start",
              "TPS", "paper", "bound", "gap%", "vsPap%", "inc[s]", "total[s]", "status");
  for (const Case &C : Cases) {
    if (!Only.empty()) {
      bool Match = false;
      for (const std::string &S : Only) Match |= std::strstr(C.File, S.c_str()) != nullptr;
      if (!Match) continue;
    }
    std::string Path = Shared + "/workloads/msr/" + C.File;
    std::ifstream In(Path);
    if (!In) {
      std::printf("%-40s missing (%s)\n", C.File, Path.c_str());
      continue;
    }
    std::stringstream SS;
    SS << In.rdbuf();
    Expected<Workload> W = parseWorkload(SS.str(), Path);
    if (!W) {
      std::printf("%-40s %s\n", C.File, W.takeError().message().c_str());
      continue;
    }
    auto T0 = std::chrono::steady_clock::now();
    O.deadline = Deadline::after(TimeLimit);
    Expected<Plan> Pl = runPartitioner(Algo, W->graph, W->platform, O);
    double Total = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
    if (!Pl) {
      std::printf("%-40s %s\n", C.File, Pl.takeError().message().c_str());
      continue;
    }
    double Paper = Contig ? C.PaperContig : C.PaperIp;
    double Warm = stat(*Pl, "warm_start_plan_objective");
    // Time to the final incumbent, measured from the start of the run: the
    // warm start's own time plus the solver's time to its last improvement
    // (0 when the warm start was never improved).
    double SolverSec = stat(*Pl, "solver_seconds");
    double WarmSec = std::isnan(SolverSec) ? 0 : Total - SolverSec;
    double IncSec =
        WarmSec + (std::isnan(stat(*Pl, "seconds_to_incumbent")) ? 0 : stat(*Pl, "seconds_to_incumbent"));
    bool Optimal = stat(*Pl, "proven_optimal") == 1;
    std::printf("%-40s %5zu %8.2f %8.2f %8.2f %8.2f %8.2f %7.2f %+7.2f %8.1f %8.1f %s\n", C.File,
                W->graph.numNodes(), Warm, stat(*Pl, "warm_start_objective"), Pl->objective, Paper,
                Pl->lowerBound, 100 * Pl->gap(), 100 * (Pl->objective - Paper) / Paper, IncSec, Total,
                Optimal ? "optimal" : "time-limit");
    std::fflush(stdout);
  }
  return 0;
}
