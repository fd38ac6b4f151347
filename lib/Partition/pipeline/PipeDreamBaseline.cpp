//===- Partition/pipeline/PipeDreamBaseline.cpp - Contiguous 1F1B plans ---===//
//
// PipeDream's straight-pipeline dynamic program (its optimizer with
// replication off: A[j][m] = min over i of max(A[i][m-1], 2 a_i / beta,
// compute(i+1..j)), exactly m stages; on several nodes 2 a_i / beta is the
// price of the link between stages m-1 and m, issue 21) and the pricing of any allocation
// under seed 000's 1F1B model (PipelineBaseline.h).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/PipelineBaseline.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

using namespace onnxp;

Expected<StraightPipeline> onnxp::pipeDreamStraightPipeline(const PipelineTasks &Tasks, int NumStages,
                                                            const std::function<bool()> &TimeUp) {
  const int L = Tasks.numBlocks();
  if (NumStages < 1 || NumStages > L)
    return makeError("a straight pipeline of ", NumStages, " stages needs 1..", L, " stages for ", L,
                     " blocks");
  std::vector<double> Prefix(L + 1, 0); // compute of blocks [0, j)
  for (int I = 0; I < L; ++I)
    Prefix[I + 1] = Prefix[I] + Tasks.duration(Tasks.forwardTask(I)) + Tasks.duration(Tasks.backwardTask(I));
  const double Inf = std::numeric_limits<double>::infinity();
  // A[m][j]: best period of blocks [0, j) in exactly m stages; Split[m][j]
  // the start of the last stage.
  std::vector<std::vector<double>> A(NumStages + 1, std::vector<double>(L + 1, Inf));
  std::vector<std::vector<int>> Split(NumStages + 1, std::vector<int>(L + 1, -1));
  for (int J = 1; J <= L; ++J) A[1][J] = Prefix[J];
  // O(P L^2): 15 ms on Llama-2's 134 blocks x 16 GPUs, 20 s on 4,000
  // blocks x 64 (docs/benchmarks-history.md, issue 21), hence the deadline.
  int Done = 1; // stage counts whose row is complete
  for (int M = 2; M <= NumStages; ++M) {
    bool Stopped = false;
    for (int J = M; J <= L && !Stopped; ++J) {
      if (TimeUp && TimeUp()) {
        Stopped = true;
        break;
      }
      for (int I = M - 1; I < J; ++I) {
        // The cut after block I-1 carries a_I forward and its gradient back
        // on the link between stage M-2's GPU and stage M-1's (stage m runs
        // on GPU m): 2 a_I / beta with seed 000's uniform links, the link's
        // own price per direction on several nodes (issue 21; exact, since
        // the stage-to-GPU order is fixed).
        double Cut = Tasks.commDuration(Tasks.forwardTask(I - 1), M - 2, M - 1) +
                     Tasks.commDuration(Tasks.backwardTask(I), M - 1, M - 2);
        double V = std::max({A[M - 1][I], Cut, Prefix[J] - Prefix[I]});
        if (V < A[M][J]) {
          A[M][J] = V;
          Split[M][J] = I;
        }
      }
    }
    if (Stopped) break;
    Done = M;
  }
  StraightPipeline R;
  R.stopped = Done < NumStages;
  NumStages = Done;
  R.stages = NumStages;
  R.period = A[NumStages][L];
  // Every candidate period infinite (a cut's transfer overflows: a tiny
  // bandwidth, huge activations) records no split: there is no plan to
  // trace back, and Split = -1 must never index stageOfBlock (issue 25).
  if (!std::isfinite(R.period))
    return makeError("no straight pipeline of ", NumStages, " stages has a finite period: the transfers ",
                     "between stages or the stages' compute overflow (bandwidth ", Tasks.bandwidth(),
                     " bytes/s)");
  R.stageOfBlock.assign(L, 0);
  for (int M = NumStages, J = L; M >= 1; --M) {
    int I = M == 1 ? 0 : Split[M][J];
    if (I < M - 1 || I >= J)
      return makeInternalError("the straight-pipeline DP recorded no split for ", M, " stages of ", J,
                               " blocks");
    for (int B = I; B < J; ++B) R.stageOfBlock[B] = M - 1;
    J = I;
  }
  return R;
}

Expected<PipelinePlan> onnxp::priceAllocation(const PipelineTasks &Tasks, const std::vector<int> &Gpu,
                                              int NumGpus, const std::string &Algorithm) {
  double Load = allocationLoad(Tasks, Gpu, NumGpus);
  Expected<PeriodicPattern> Pat = buildModuloPattern(Tasks, Gpu, NumGpus, Load);
  if (!Pat) return Pat.takeError();
  Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, *Pat);
  if (!Sim)
    return makeInternalError("the 1F1B pattern of '", Algorithm,
                             "' fails the simulator: ", Sim.takeError().message());
  PipelinePlan Plan;
  Plan.algorithm = Algorithm;
  Plan.pattern = std::move(*Pat);
  Plan.sim = std::move(*Sim);
  return Plan;
}

std::vector<int> onnxp::placeOnNodes(const PipelineTasks &Tasks, const std::vector<int> &Gpu, int NumGpus,
                                     long MaxGroupings) {
  const PipelineLinks &Links = Tasks.links();
  if (!Links.perLink() || !Links.device.empty() || !Links.platform->multiNode()) return Gpu;
  const Platform &P = *Links.platform;
  const int Nodes = P.nodes, Cap = P.acceleratorsPerNode;
  if (Cap <= 0 || NumGpus > Nodes * Cap) return Gpu;
  // Classes in the order of their first block.
  std::vector<int> ClassOf(Gpu.size()), Order;
  std::map<int, int> Index;
  for (size_t B = 0; B < Gpu.size(); ++B) {
    auto [It, New] = Index.try_emplace(Gpu[B], (int)Order.size());
    if (New) Order.push_back(Gpu[B]);
    ClassOf[B] = It->second;
  }
  const int K = (int)Order.size();
  std::vector<int> Best = Gpu, NodeOf(K), Used(Nodes, 0), Trial(Gpu.size());
  double BestLoad = allocationLoad(Tasks, Gpu, NumGpus);
  long Tried = 0;
  // Depth-first over groupings in canonical form: class C joins a node
  // already opened or the next unopened one (nodes are interchangeable).
  std::function<void(int, int)> Place = [&](int C, int Opened) {
    if (Tried >= MaxGroupings) return;
    if (C == K) {
      ++Tried;
      std::vector<int> Slot(Nodes, 0), GpuOfClass(K);
      for (int I = 0; I < K; ++I) GpuOfClass[I] = NodeOf[I] * Cap + Slot[NodeOf[I]]++;
      for (size_t B = 0; B < Gpu.size(); ++B) Trial[B] = GpuOfClass[ClassOf[B]];
      double Load = allocationLoad(Tasks, Trial, NumGpus);
      if (Load < BestLoad * (1 - 1e-12)) BestLoad = Load, Best = Trial;
      return;
    }
    for (int N = 0; N < std::min(Opened + 1, Nodes); ++N) {
      if (Used[N] == Cap) continue;
      NodeOf[C] = N;
      ++Used[N];
      Place(C + 1, std::max(Opened, N + 1));
      --Used[N];
    }
  };
  Place(0, 0);
  return Best;
}

Expected<PipelinePlan> onnxp::pipeDreamBaseline(const PipelineTasks &Tasks, int NumGpus,
                                                const std::function<bool()> &TimeUp) {
  const int Stages = std::min(NumGpus, Tasks.numBlocks());
  Expected<StraightPipeline> SP = pipeDreamStraightPipeline(Tasks, Stages, TimeUp);
  if (!SP) return SP.takeError();
  Expected<PipelinePlan> Plan = priceAllocation(Tasks, SP->stageOfBlock, NumGpus, "pipedream");
  if (!Plan) return Plan.takeError();
  Plan->stats["optimizer_period_ms"] = SP->period;
  if (SP->stopped)
    Plan->notes.push_back("the time limit stopped PipeDream's straight-pipeline DP after " +
                          std::to_string(SP->stages) + " of " + std::to_string(Stages) +
                          " stages: this is the optimum of " + std::to_string(SP->stages) + " stage" +
                          (SP->stages > 1 ? "s" : "") + " (a longer --time-limit gives " +
                          std::to_string(Stages) + ")");
  return Plan;
}

Expected<PipelinePlan> onnxp::bestContiguousWithin(const PipelineTasks &Tasks, int NumGpus, double Memory,
                                                   const std::function<bool()> &TimeUp) {
  Expected<PipelinePlan> Best = makeDoesNotFitError("no straight pipeline of 1..", NumGpus,
                                                    " stages fits in ", Memory, " bytes per GPU");
  for (int S = 1; S <= std::min(NumGpus, Tasks.numBlocks()); ++S) {
    // Issue 39, item 2: each count is an O(S L^2) DP (minutes on 10,000
    // blocks); one stage, O(L), always runs so there is a plan to return.
    if (S > 1 && TimeUp && TimeUp()) break;
    Expected<StraightPipeline> SP = pipeDreamStraightPipeline(Tasks, S, S > 1 ? TimeUp : nullptr);
    if (!SP) return SP.takeError();
    Expected<PipelinePlan> Plan = priceAllocation(Tasks, SP->stageOfBlock, NumGpus, "pipedream");
    if (!Plan) return Plan.takeError();
    if (Plan->peakMemory() > Memory) continue;
    if (!Best || Plan->period() < Best->period()) { Best = std::move(Plan); }
  }
  return Best;
}

double onnxp::singleGpuPeriod(const PipelineTasks &Tasks) {
  double T = 0;
  for (int K = 0; K < Tasks.numTasks(); ++K) T += Tasks.duration(K);
  return T;
}

double onnxp::singleGpuPeakMemory(const PipelineTasks &Tasks) {
  const int L = Tasks.numBlocks();
  double W = 0, Prefix = Tasks.stashBytes(0), Peak = 0;
  for (int I = 0; I < L; ++I) W += Tasks.weightBytes(I);
  for (int Lb = 1; Lb <= L; ++Lb) {
    double ALast = Tasks.outputBytes(Tasks.forwardTask(Lb - 1)); // a_l
    Prefix += ALast;                                             // a_0 + ... + a_l
    Peak = std::max(Peak, Prefix + Tasks.stashBytes(Lb - 1));    // + a_{l-1}
  }
  return 3 * W + Peak;
}

Expected<PipelineSimResult> onnxp::traceStagedPlan(const Chain &Stages, const PipelineLinks &Links,
                                                   ChromeTrace &Trace, int Periods) {
  ONNXP_RETURN_IF_ERROR(Stages.validate());
  if (!(Links.bandwidth > 0)) return makeError("tracing a staged plan needs a positive link bandwidth");
  PipelineTasks Tasks(Stages, Links);
  std::vector<int> Gpu(Stages.size());
  for (size_t S = 0; S < Gpu.size(); ++S) Gpu[S] = static_cast<int>(S);
  int NumGpus = static_cast<int>(Gpu.size());
  Expected<PeriodicPattern> Pat =
      buildModuloPattern(Tasks, Gpu, NumGpus, allocationLoad(Tasks, Gpu, NumGpus));
  if (!Pat) return Pat.takeError();
  PipelineSimOptions O;
  O.trace = &Trace;
  O.tracePeriods = Periods;
  return simulatePipeline(Tasks, *Pat, O);
}
