//===- bench/bench_dp.cpp - Time the contiguous DP on the msr workloads --===//
//
// Runs `dp` on the twelve workloads of ../shared/workloads/msr (seed 004
// Table 1) and prints, per workload: the objective (next to the paper's DP
// column), our solve time next to the paper's reference DP time, the
// speed-up, the peak RSS of the run, and -- measured in the same process --
// the time of a plain version of our DP without bound pruning (same
// incremental pricing, every pair of nested ideals visited) and the speed-up
// over it. Each workload runs in a forked child so that its peak RSS is its
// own. Single-threaded.
//
// Times are CPU seconds of the process (CLOCK_PROCESS_CPUTIME_ID), which on
// an idle core equal wall seconds; the wall time is printed too, since a
// shared machine inflates it (the speed-ups use CPU time).
//
// Usage: bench_dp [SHARED_DIR] [--no-plain]
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Import/WorkloadImporter.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/dp/IdealDP.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace onnxp;

namespace {

struct Case {
  const char *File;
  double PaperTps;
  double PaperSeconds; ///< reference DP time given with issue 3
};

const Case Cases[] = {
    {"OperatorGraphs/bert_l-3_inference.json", 27.92, 1.0},
    {"OperatorGraphs/bert_l-6_inference.json", 29.58, 3.3},
    {"OperatorGraphs/resnet50_inference.json", 124.35, 0.14},
    {"OperatorGraphs/bert_l-3_training.json", 65.30, 4.8},
    {"OperatorGraphs/bert_l-6_training.json", 72.86, 17.9},
    {"OperatorGraphs/resnet50_training.json", 255.19, 0.32},
    {"LayerGraphs/bert24_inference.json", 17.79, 0.01},
    {"LayerGraphs/resnet50_inference.json", 33.77, 0.12},
    {"LayerGraphs/gnmt_inference.json", 32.91, 16.9},
    {"LayerGraphs/bert24_training.json", 41.75, 0.01},
    {"LayerGraphs/resnet50_training.json", 78.63, 0.17},
    {"LayerGraphs/gnmt_training.json", 107.00, 29.2},
};

/// Runs one workload; writes "objective ideals seconds plainSeconds" to Fd.
int runChild(const std::string &Path, bool Plain, int Fd) {
  std::ifstream In(Path);
  std::stringstream SS;
  SS << In.rdbuf();
  Expected<Workload> W = parseWorkload(SS.str(), Path);
  if (!W) {
    std::fprintf(stderr, "%s\n", W.takeError().message().c_str());
    return 1;
  }
  PartitionOptions O;
  auto Cpu = [] {
    timespec T;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
    return T.tv_sec + T.tv_nsec * 1e-9;
  };
  auto T0 = std::chrono::steady_clock::now();
  double C0 = Cpu();
  Expected<Plan> Pl = runPartitioner("dp", W->graph, W->platform, O);
  double Seconds = Cpu() - C0;
  double Wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  if (!Pl) {
    std::fprintf(stderr, "%s\n", Pl.takeError().message().c_str());
    return 1;
  }
  double PlainSeconds = -1, PlainObjective = -1;
  if (Plain) {
    IdealDPTuning T;
    T.pruneByBound = false;
    double C1 = Cpu();
    Expected<Plan> Q = runIdealDP(W->graph, W->platform, O, false, T);
    PlainSeconds = Cpu() - C1;
    if (Q) PlainObjective = Q->objective;
  }
  char Buf[256];
  int N = std::snprintf(Buf, sizeof(Buf), "%.6f %.0f %.6f %.6f %.6f %.0f %.6f\n", Pl->objective,
                        Pl->stats["ideals"], Seconds, PlainSeconds, PlainObjective, Pl->stats["pairs"], Wall);
  if (write(Fd, Buf, N) != N) return 1;
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Shared = ONNXP_SHARED_DIR;
  bool Plain = true;
  for (int I = 1; I < Argc; ++I) {
    if (!std::strcmp(Argv[I], "--no-plain")) Plain = false;
    else Shared = Argv[I];
  }
  std::printf("%-40s %8s %8s %7s %9s %8s %8s %8s %8s %8s %8s %7s\n", "workload", "TPS", "paper", "ideals",
              "pairs", "cpu[s]", "wall[s]", "paper[s]", "speedup", "plain[s]", "vs-plain", "RSS[MB]");
  for (const Case &C : Cases) {
    std::string Path = Shared + "/workloads/msr/" + C.File;
    int Pipe[2];
    if (pipe(Pipe) != 0) return 1;
    pid_t Pid = fork();
    if (Pid == 0) {
      close(Pipe[0]);
      _exit(runChild(Path, Plain, Pipe[1]));
    }
    close(Pipe[1]);
    char Buf[256] = {0};
    ssize_t Got = read(Pipe[0], Buf, sizeof(Buf) - 1);
    close(Pipe[0]);
    int Status = 0;
    struct rusage Use;
    wait4(Pid, &Status, 0, &Use);
    double Obj, Ideals, Sec, PlainSec, PlainObj, Pairs, Wall;
    if (Got <= 0 || std::sscanf(Buf, "%lf %lf %lf %lf %lf %lf %lf", &Obj, &Ideals, &Sec, &PlainSec, &PlainObj,
                                &Pairs, &Wall) != 7) {
      std::printf("%-40s FAILED\n", C.File);
      continue;
    }
    std::printf("%-40s %8.2f %8.2f %7.0f %9.0f %8.4f %8.4f %8.2f %7.0fx %8.4f %7.1fx %7.1f%s\n", C.File, Obj,
                C.PaperTps, Ideals, Pairs, Sec, Wall, C.PaperSeconds, C.PaperSeconds / Sec, PlainSec,
                PlainSec / Sec, Use.ru_maxrss / 1024.0,
                PlainObj >= 0 && std::abs(PlainObj - Obj) > 1e-6 ? "  (plain differs!)" : "");
    std::fflush(stdout);
  }
  return 0;
}
