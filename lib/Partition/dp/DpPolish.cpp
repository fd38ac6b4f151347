//===- Partition/dp/DpPolish.cpp - dp, then class moves (issue 21) -------===//
//
// `dp-polish`: seed 004's contiguous DP over ideals (§5.1.1), then the
// incremental class-move polish of Partition/ip/ClassPolish.h, which may
// leave contiguity: max-load (§3) allows any placement, and dp's units
// (two Llama-2 layers per GPU at 16 GPUs) are coarser than the balance the
// bound asks for. The polish never adds cross-node bytes to dp's plan
// (whose cut between nodes is the best of its rotations, issue 21), respects
// memory and accelerator support, and on a mixed platform then evens the
// compute at no higher max-load. `--algo dp` stays the pure seed-004 DP.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/dp/IdealDP.h"
#include "onnx-partition/Partition/eval/PlanEvaluator.h"
#include "onnx-partition/Partition/eval/TiedWeights.h"
#include "onnx-partition/Partition/ip/ClassPolish.h"

#include <chrono>
#include <map>

using namespace onnxp;

namespace {
/// The polish gets at most this long (or what --time-limit leaves).
constexpr double kPolishSeconds = 20;

/// Whether O.startPlan is a plan of dp for this graph: every node placed on
/// a device of P, one device per colocation class, no replicas. Graphs with
/// tied parameters are planned twice by the runner (colocated and apart),
/// so there dp-polish runs dp itself.
bool usableStart(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  if (!O.startPlan || hasTiedParameters(G) || O.startPlan->device.size() != G.numNodes()) return false;
  for (int R : O.startPlan->replicas)
    if (R > 1) return false;
  std::map<int, int> ClassDevice;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const int D = O.startPlan->device[V];
    if (D < 0 || D >= P.numDevices()) return false;
    auto [It, New] = ClassDevice.try_emplace(G.classOf(static_cast<int>(V)), D);
    if (!New && It->second != D) return false;
  }
  return true;
}

double spreadOf(const Plan &Pl, int Accelerators) {
  double Hi = 0, Lo = kInfinity;
  for (int D = 0; D < Accelerators && D < static_cast<int>(Pl.usage.size()); ++D) {
    Hi = std::max(Hi, Pl.usage[D].compute);
    Lo = std::min(Lo, Pl.usage[D].compute);
  }
  return Lo > 0 ? Hi / Lo - 1 : kInfinity;
}
} // namespace

Expected<Plan> onnxp::partitionDpPolish(const CostGraph &G, const Platform &P, const PartitionOptions &O) {
  Expected<double> Slack = O.paramDouble("balance-slack", 0);
  if (!Slack) return Slack.takeError();
  if (!(*Slack >= 0 && *Slack <= 1))
    return makeUsageError("--balance-slack must be a fraction in [0, 1], not ", *Slack);
  Plan Pl;
  if (usableStart(G, P, O)) {
    // auto/all's dp candidate: its placement and dp's counters; its notes
    // stay on dp's row.
    Pl.device = O.startPlan->device;
    Pl.stage = O.startPlan->stage;
    Pl.stats = O.startPlan->stats;
    Pl.stats["dp_seconds"] = O.startPlan->solveSeconds;
  } else {
    Expected<Plan> Dp = partitionIdealDP(G, P, O);
    if (!Dp) return Dp;
    Pl = std::move(*Dp);
  }
  if (Error E = evaluateInto(G, P, Pl)) return E;
  const Plan Seed = Pl;
  const Deadline &Run = O.deadline;
  ClassPolishOptions PO;
  PO.until = Run.within(kPolishSeconds);
  PO.evenCompute = P.mixed();
  PO.maxLoadSlack = *Slack;
  const auto PolishStart = std::chrono::steady_clock::now();
  const ClassPolishResult R = polishClasses(G, P, Pl, PO);
  const double PolishSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - PolishStart).count();
  if (Error E = evaluateInto(G, P, Pl)) return E;
  // The evaluator decides: a polish that did not lower max-load (or, on a
  // mixed platform, even the compute at the same max-load) keeps dp's plan.
  const bool Lower = Pl.objective < Seed.objective * (1 - 1e-9);
  // With --balance-slack the user accepts a max-load up to that much above dp's.
  const bool Same = Pl.objective <= Seed.objective * (1 + *Slack) * (1 + 1e-12);
  const bool Evener = Same && spreadOf(Pl, P.accelerators) < spreadOf(Seed, P.accelerators) - 1e-9;
  const int Changed = R.moves + R.swaps + R.evenMoves;
  if (Changed == 0 || !(Lower || Evener)) {
    Pl = Seed;
  } else {
    Pl.stage.clear(); // classes moved between dp's stages: no longer a chain of stages
    Pl.lowerBound = NAN;
    Pl.lowerBoundScope.clear();
    // dp's note on its own split's compute spread no longer describes the plan.
    std::erase_if(Pl.notes,
                  [](const std::string &S) { return S.rfind("compute across accelerators", 0) == 0; });
    Pl.stats.erase("compute_spread");
    Pl.stats.erase("compute_spread_first");
  }
  Pl.stats["dp_objective"] = Seed.objective;
  Pl.stats["polish_moves"] = R.moves;
  Pl.stats["polish_swaps"] = R.swaps;
  Pl.stats["polish_even_moves"] = R.evenMoves;
  Pl.stats["polish_seconds"] = PolishSeconds;
  Pl.stats["polish_local_optimum"] = R.localOptimum ? 1 : 0;
  if (P.mixed() && P.accelerators > 1) Pl.stats["compute_spread"] = spreadOf(Pl, P.accelerators);
  std::string Note = "dp-polish: dp's contiguous plan has max-load " + formatNumber(Seed.objective);
  if (Pl.objective < Seed.objective * (1 - 1e-9) || (Changed > 0 && (Lower || Evener)))
    Note += ", polished by " + std::to_string(R.moves) + " class moves and " + std::to_string(R.swaps) +
            " swaps" + (PO.evenCompute ? " (+" + std::to_string(R.evenMoves) + " evening compute)" : "") +
            " to " + formatNumber(Pl.objective) + " (non-contiguous)";
  else Note += ", kept (no class move lowers it)";
  if (Pl.objective > Seed.objective * (1 + 1e-9))
    Note += "; max-load " + formatNumber(100 * (Pl.objective / Seed.objective - 1)) +
            "% above dp's, for more even compute (--balance-slack " + formatNumber(*Slack) + ")";
  Note += R.localOptimum ? "; a local optimum of the moves" : "; stopped by the clock";
  if (PO.evenCompute && P.accelerators > 1)
    Note += "; compute across accelerators: the largest is " +
            formatNumber(100 * spreadOf(Pl, P.accelerators)) + "% above the least (" +
            formatNumber(100 * spreadOf(Seed, P.accelerators)) + "% in dp's plan)";
  if (PO.evenCompute && P.accelerators > 1 && *Slack == 0 && R.localOptimum)
    Note +=
        "; no single move evens it further at this max-load (--balance-slack F lets max-load rise by up to "
        "the fraction F for more even compute)";
  Pl.notes.insert(Pl.notes.begin(), Note);
  return Pl;
}
