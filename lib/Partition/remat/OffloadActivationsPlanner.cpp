//===- Partition/remat/OffloadActivationsPlanner.cpp - The registry's view -===//
//
// `--algo offload-activations` (seed 001's DP) and `--algo rotor` (rotor's
// table, offloading off) as chain planners (Partitioners.def): memory M is
// the accelerator's, beta the platform's host link, N from --memory-steps
// (default 50, the paper's). The plan puts every block on accelerator 0 and
// carries the operation sequence in Plan::schedule (an ActivationSchedule);
// the price function replays it with the independent simulator
// (eval/ActivationScheduleSimulator), which sets the objective (iteration
// time) and the memory peak.
//
// Issue 22: what training keeps resident (weights, gradients, optimizer
// state of the whole chain, chainResidentMemory) is charged first; the
// activation DP plans in what is left (the papers' budget M excludes the
// weights, so seed 001's reference point M is --memory M + resident). The
// reported peak is the simulator's, with every tensor at its own size, plus
// the resident bytes.
//
//===----------------------------------------------------------------------===//
#include "../MemoryFit.h"
#include "onnx-partition/Cost/MemoryAccounting.h"
#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/ActivationScheduleSimulator.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Partition/Remat.h"
#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace onnxp;

namespace {

struct Budget {
  RematOptions remat;
  ResidentMemory resident;
  OptimizerKind optimizer = OptimizerKind::Adam;
  const char *algo = "";
};

Expected<Budget> optionsFor(const Chain &C, const Platform &P, const PartitionOptions &O, bool Offload) {
  const char *Algo = Offload ? "offload-activations" : "rotor";
  Budget Out;
  Out.algo = Algo;
  RematOptions &R = Out.remat;
  R.memoryBytes = P.accMemory();
  R.deadline = O.deadline.at(); // RematOptions (IR/ChainSchedules.h) keeps a plain time point
  if (!std::isfinite(R.memoryBytes))
    return makeUsageError(Algo, ": the accelerator memory is unlimited; give --memory");
  Out.optimizer = O.optimizer;
  Out.resident = chainResidentMemory(C, O.optimizer);
  if (Out.resident.total() >= R.memoryBytes)
    return makeDoesNotFitError(
        Algo, ": the weights alone need ", humanBytes(Out.resident.total()), " (",
        describeResident(Out.resident, O.optimizer), ", ", exactBytes(Out.resident.total()),
        "), more than the accelerator's ", humanBytes(R.memoryBytes),
        "; give more --memory, or move the weights to the host with --algo offload-weights");
  R.memoryBytes -= Out.resident.total();
  Expected<long long> N = O.paramInt("memory-steps", 50);
  if (!N) return N.takeError();
  // Range-checked before the cast: 4294967297 must not wrap to 1 (issue 25).
  if (*N < 1 || *N > 100000) return makeUsageError("--memory-steps must be between 1 and 100000, got ", *N);
  R.memorySteps = int(*N);
  R.offload = Offload && O.paramString("no-offload", "") == "";
  R.bandwidthBytesPerSec = P.hostLinkBandwidth;
  return Out;
}

/// The plan's schedule: what the replay and the report need of the DP's
/// plan (no per-layer report; Idle carries its time, the others a layer).
ActivationSchedule scheduleOf(const RematPlan &P, const RematOptions &O, const ResidentMemory &Res) {
  ActivationSchedule S;
  S.residentBytes = Res.total();
  S.slotBytes = P.slotBytes;
  S.budgetSlots = P.budgetSlots;
  S.offload = P.offload;
  S.bandwidthBytesPerSec = P.offload ? O.bandwidthBytesPerSec : 0.0;
  S.lossMs = O.lossTimeMs;
  S.dpMakespanMs = P.makespanMs;
  for (const RematOp &Op : P.ops) {
    RematOp E;
    E.kind = Op.kind;
    if (Op.kind == RematOpKind::Idle) E.idleMs = Op.idleMs;
    else E.layer = Op.layer;
    E.stored = Op.stored;
    S.ops.push_back(E);
  }
  return S;
}

Expected<Plan> toPlan(const Chain &C, Expected<RematPlan> R, const Budget &B) {
  const RematOptions &O = B.remat;
  if (!R) return R.takeError();
  if (!R->feasible)
    return makeDoesNotFitError(B.algo, ": no schedule of '", C.name, "' fits in ", O.memoryBytes, " bytes (",
                               R->budgetSlots, " slots of ", R->slotBytes,
                               " bytes) left for activations after ", humanBytes(B.resident.total()),
                               " resident (", describeResident(B.resident, B.optimizer), ")");
  Plan Pl;
  Pl.device.assign(C.size(), 0);
  Pl.stage.assign(C.size(), 0);
  Pl.lowerBound = rematLowerBoundMs(C, O);
  Pl.schedule = scheduleOf(*R, O, B.resident);
  Pl.notes.push_back("memory: " + humanBytes(B.resident.total()) + " resident for the whole iteration (" +
                     describeResident(B.resident, B.optimizer) +
                     "; not offloaded: --algo offload-weights moves weights to the host), " +
                     humanBytes(O.memoryBytes) + " left for activations");
  Pl.stats["dp_states"] = double(R->statesExplored);
  Pl.stats["offloaded_bytes"] = R->offloadedBytes;
  int Recomputed = 0;
  for (const RematLayerReport &L : R->layers) Recomputed += L.recomputations;
  Pl.stats["recomputations"] = Recomputed;
  Pl.notes.push_back(formatRematReport(C, *R));
  return Pl;
}

} // namespace

namespace onnxp {

/// Issue 22: when rounding to memory slots costs more than 1% against 4x
/// the steps on the same memory, say so (--check-slots).
void noteDiscretization(const Chain &C, Plan &Pl, const Budget &B, double Makespan,
                        Expected<RematPlan> (*Planner)(const Chain &, const RematOptions &),
                        double PlanSeconds) {
  RematOptions Fine = B.remat;
  Fine.upperBoundMs = std::numeric_limits<double>::infinity();
  if (Fine.slotBytes > 0 || Fine.memorySteps > 25000) return;
  Fine.memorySteps *= 4;
  // The check may take at most twice what the plan took (at least 1 s):
  // seed 001's DP at 4x the slots costs about 16x, and on vgg16 at 10 GB the
  // check was most of a three-minute run.
  const SteadyClock::time_point CheckEnd = pointAfter(SteadyClock::now(), std::max(1.0, 2 * PlanSeconds));
  Fine.deadline = Fine.deadline ? std::min(*Fine.deadline, CheckEnd) : CheckEnd;
  Expected<RematPlan> R = Planner(C, Fine);
  std::string What = "in the planner's model";
  double Coarse = Makespan;
  if (R && R->stoppedByDeadline && B.remat.offload) {
    // Too slow with offloading: compare rotor's schedules at both slot
    // counts instead (milliseconds), the same discretization without the
    // transfers, and say that this is what was compared.
    RematOptions RotorCoarse = B.remat, RotorFine = Fine;
    RotorCoarse.offload = RotorFine.offload = false;
    RotorCoarse.deadline.reset();
    RotorFine.deadline.reset();
    Expected<RematPlan> RC = planRotor(C, RotorCoarse);
    R = planRotor(C, RotorFine);
    if (!RC || !RC->feasible) {
      if (!RC) (void)RC.takeError();
      if (!R) (void)R.takeError();
      return;
    }
    Coarse = RC->makespanMs;
    What = "in rotor's schedules: the check with offloading would take longer than the plan";
  }
  if (!R) {
    (void)R.takeError();
    return;
  }
  if (R->stoppedByDeadline || !R->feasible || !(R->makespanMs < Coarse * 0.99)) return;
  char Buf[400];
  std::snprintf(Buf, sizeof Buf,
                "warning: %d memory slots cost %.1f%% against %d (%.6g vs %.6g ms %s); try --memory-steps %d",
                B.remat.memorySteps, 100.0 * (Coarse - R->makespanMs) / R->makespanMs, Fine.memorySteps,
                Coarse, R->makespanMs, What.c_str(), Fine.memorySteps);
  Pl.notes.push_back(Buf);
}

/// --check-slots 1 (any value but "" and "0").
static bool checkSlotsAsked(const PartitionOptions &O) {
  const std::string V = O.paramString("check-slots", "");
  return !V.empty() && V != "0";
}

/// Issue 38, item 3: rotor's schedule for B, with Note added (Done: rotor's
/// plan for B when already computed).
static Expected<Plan> rotorPlan(const Chain &C, const Budget &B, const std::string &Note, double RotorMs,
                                const RematPlan *Done = nullptr) {
  Budget Rotor = B;
  Rotor.remat.offload = false;
  Rotor.remat.deadline.reset();
  Rotor.remat.upperBoundMs = std::numeric_limits<double>::infinity();
  Expected<Plan> Pl = toPlan(C, Done ? Expected<RematPlan>(*Done) : planRotor(C, Rotor.remat), Rotor);
  if (!Pl) return Pl.takeError();
  Pl->notes.push_back(Note);
  Pl->stats["rotor_bound_ms"] = RotorMs;
  return Pl;
}

/// Issue 38, item 3: the link test. In a schedule of T ms the link has
/// moved at most beta t to the host by time t and must bring back whatever
/// is still there in the T - t left, so at no instant is more than
/// beta T / 2 off the accelerator (seed 001's fluid model, Lemma 1). Drop
/// the transfers and idles from a schedule faster than rotor's (T < T_rotor)
/// and keep its tensors: a schedule without offloading, whose peak (whole
/// slots) is at most M + floor(beta T_rotor / 2) slots and whose time is its
/// compute time, at most T. So when rotor with those slots is no faster
/// than rotor at M, no offloading schedule beats rotor, and rotor's schedule
/// is the answer. Returns no plan when the test does not settle it (then
/// seed 001's DP runs, bounded the same way in its own terms). Only asked
/// without transient overheads: with them rotor's table checks F_all
/// against another gradient than seed 001's terms (RematExhaustiveTest), so
/// rotor's optimum is not seed 001's without offloading.
static Expected<std::optional<Plan>> linkCannotHelp(const Chain &C, const Budget &B, const RematPlan &Rotor,
                                                    std::vector<double> More, const PartitionOptions &O) {
  const double RotorMs = Rotor.makespanMs;
  const double Beta = B.remat.bandwidthBytesPerSec;
  const double OffBytes = Beta * RotorMs / 1000 / 2;
  const size_t Extra = size_t(std::floor(OffBytes / Rotor.slotBytes + 1e-9));
  if (Extra > size_t(Rotor.budgetSlots)) return std::optional<Plan>(); // planRotor probes no further
  if (Extra >= More.size()) {
    // Rotor above twice the lower bound: a second table, just as large.
    RematOptions Probe = B.remat;
    Probe.offload = false;
    Expected<RematPlan> R = planRotorWithMore(C, Probe, OffBytes, &More);
    // Out of time (the probe runs under the run's clock, issue 39 item 2):
    // the test does not settle it, and seed 001's DP stops at once.
    if (!R && O.deadline.expired()) {
      (void)R.takeError();
      return std::optional<Plan>();
    }
    if (!R) return R.takeError();
  }
  if (Extra >= More.size() || !(More[Extra] >= RotorMs * (1 - 1e-12))) return std::optional<Plan>();
  Expected<Plan> Pl = rotorPlan(
      C, B,
      "offload-activations: at " + humanBytes(Beta) + "/s the host link holds at most " +
          humanBytes(OffBytes) + " off the accelerator at any time of a schedule faster than rotor's " +
          formatNumber(RotorMs) + " ms (half of it out, half back), and rotor with " + std::to_string(Extra) +
          " more slots of " + humanBytes(Rotor.slotBytes) +
          " is no faster, so offloading cannot improve on rotor: rotor's schedule; "
          "seed 001's DP did not run",
      RotorMs, &Rotor);
  if (!Pl) return Pl.takeError();
  Pl->stats["link_test_extra_slots"] = double(Extra);
  if (O.deadline.isDefaultLimit()) Pl->notes.push_back(defaultTimeLimitNote(O.deadline));
  return std::optional<Plan>(std::move(*Pl));
}

Expected<Plan> planActivations(const Chain &C, const Platform &P, const PartitionOptions &O, bool Offload) {
  Expected<Budget> B = optionsFor(C, P, O, Offload);
  if (!B) return B.takeError();
  auto Planner = Offload ? &planOffloadRemat : &planRotor;
  // Issue 38, item 3: rotor's table first (a fraction of a second).
  // Offloading can only beat rotor where rotor recomputes: when it does not
  // (memory is ample), rotor's schedule is optimal with offloading too.
  // Else seed 001's DP looks only for schedules faster than rotor's, pruning
  // every state that cannot beat it; when there is none, rotor's schedule is
  // the answer.
  double RotorMs = std::numeric_limits<double>::infinity();
  std::optional<RematPlan> RotorFirst; // rotor's plan for the budget, once known
  if (B->remat.offload) {
    RematOptions Rotor = B->remat;
    Rotor.offload = false;
    // Under the run's clock (issue 39, item 2: a warm start honours the
    // deadline): rotor's table is O(L^3 M), minutes on 1,200 blocks.
    // The link test below needs rotor's value with more memory; the table
    // covers up to a link's worth of twice the lower bound (the usual case)
    // in the same pass.
    const double Beta = B->remat.bandwidthBytesPerSec;
    const double LowerMs = rematLowerBoundMs(C, B->remat);
    std::vector<double> More;
    const bool FiniteLink = std::isfinite(Beta);
    Expected<RematPlan> RR =
        planRotorWithMore(C, Rotor, FiniteLink ? Beta * LowerMs / 1000 : 0, FiniteLink ? &More : nullptr);
    if (!RR) return RR.takeError().withContext("offload-activations: its first step, rotor's table");
    if (RR->feasible) {
      RotorMs = RR->makespanMs;
      RotorFirst = *RR;
      // A trial of whatWouldFit's search only asks whether a plan exists.
      if (inMemoryFitSearch())
        return rotorPlan(C, *B, "offload-activations: rotor's schedule (feasibility trial)", RotorMs, &*RR);
      // At the lower bound rotor may still recompute layers that cost
      // nothing (a Relu ORT fuses into its Gemm): then the DP runs, bounded
      // by rotor's value with ties allowed, so it can find the schedule of
      // the same time that recomputes nothing.
      const bool AtBound = RotorMs <= LowerMs * (1 + 1e-12);
      const bool Recomputes = std::any_of(RR->layers.begin(), RR->layers.end(),
                                          [](const RematLayerReport &L) { return L.recomputations > 0; });
      if (AtBound && !Recomputes) {
        Expected<Plan> Pl =
            rotorPlan(C, *B,
                      "offload-activations: rotor's schedule recomputes nothing (" + formatNumber(RotorMs) +
                          " ms, every forward and backward once), so offloading cannot improve on it; "
                          "seed 001's DP did not run",
                      RotorMs, &*RR);
        // Issue 20: a searching algorithm says which limit it ran under.
        if (Pl && O.deadline.isDefaultLimit()) Pl->notes.push_back(defaultTimeLimitNote(O.deadline));
        return Pl;
      }
      const bool NoOverheads = std::all_of(C.blocks.begin(), C.blocks.end(), [](const ChainBlock &K) {
        return K.forwardOverhead == 0 && K.backwardOverhead == 0;
      });
      if (!AtBound && FiniteLink && NoOverheads) {
        Expected<std::optional<Plan>> Pl = linkCannotHelp(C, *B, *RR, More, O);
        if (!Pl) return Pl.takeError();
        if (*Pl) return std::move(**Pl);
      }
      B->remat.upperBoundMs = RotorMs * (AtBound ? 1 + 1e-12 : 1 - 1e-12);
    }
  }
  if (Offload && O.progress) O.progress("offload-activations: seed 001's DP");
  const auto PlanStart = std::chrono::steady_clock::now();
  Expected<RematPlan> R = Planner(C, B->remat);
  const double PlanSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - PlanStart).count();
  if (R && R->noneBelowBound) {
    Expected<Plan> Pl =
        rotorPlan(C, *B,
                  "offload-activations: seed 001's DP, bounded by rotor's " + formatNumber(RotorMs) +
                      " ms, finds no faster schedule (" + std::to_string(R->statesExplored) +
                      " states): offloading cannot improve on rotor here; rotor's schedule",
                  RotorMs, RotorFirst ? &*RotorFirst : nullptr);
    if (Pl) Pl->stats["dp_states"] = double(R->statesExplored);
    if (Pl && O.deadline.isDefaultLimit()) Pl->notes.push_back(defaultTimeLimitNote(O.deadline));
    return Pl;
  }
  if (Offload && R && R->stoppedByDeadline) {
    // Issue 20: out of time. Rotor's table (no offloading; seconds where the
    // offloading DP takes minutes) is the best plan at hand.
    Budget Rotor = *B;
    Rotor.remat.offload = false;
    // Out of time, not infeasible: offloading may need less than rotor.
    // (Worded so that MemoryFit's search, which would rerun the DP past
    // the limit, does not start.)
    auto MayExist = [&] {
      return makeError(
          "offload-activations: the time limit stopped seed 001's DP after ", R->statesExplored,
          " states, before it finished, and rotor's schedule (no offloading) needs more than the ",
          humanBytes(B->remat.memoryBytes),
          " left for activations; a schedule that offloads activations may still exist: give a "
          "larger --time-limit");
    };
    // Rotor's plan was made first; without one rotor has no schedule here.
    if (!RotorFirst) return MayExist();
    Expected<Plan> Pl = toPlan(C, Expected<RematPlan>(std::move(*RotorFirst)), Rotor);
    if (!Pl) {
      (void)Pl.takeError();
      return MayExist();
    }
    Pl->notes.push_back("the time limit stopped seed 001's DP after " + std::to_string(R->statesExplored) +
                        " states; returning rotor's schedule (rematerialization, no offloading)");
    Pl->stats["stopped_by_time_limit"] = 1;
    if (O.deadline.isDefaultLimit()) Pl->notes.push_back(defaultTimeLimitNote(O.deadline));
    return Pl;
  }
  const double Makespan = R && R->feasible ? R->makespanMs : NAN;
  Expected<Plan> Pl = toPlan(C, std::move(R), *B);
  // Issue 38, item 5: the check re-plans at 4x the slots (rotor's table
  // costs 4x the plan, seed 001's DP about 16x), so it runs on request.
  if (Pl && std::isfinite(Makespan) && checkSlotsAsked(O))
    noteDiscretization(C, *Pl, *B, Makespan, Planner, PlanSeconds);
  // Issue 20: a searching algorithm always runs under a limit; say which.
  if (Pl && Offload && O.deadline.isDefaultLimit()) Pl->notes.push_back(defaultTimeLimitNote(O.deadline));
  return Pl;
}

Expected<Plan> partitionOffloadActivations(const Chain &C, const Platform &P, const PartitionOptions &O) {
  return planActivations(C, P, O, true);
}

Expected<Plan> partitionRotor(const Chain &C, const Platform &P, const PartitionOptions &O) {
  return planActivations(C, P, O, false);
}

/// Replays Plan::schedule; never reads the DP's own value.
static Expected<ActivationReplay> replayPlan(const Chain &C, const Platform &P, const Plan &Pl) {
  const ActivationSchedule *S = std::get_if<ActivationSchedule>(&Pl.schedule);
  if (!S) return makeError("activation schedule: the plan's schedule is not an activation schedule");
  if (S->budgetSlots * S->slotBytes + S->residentBytes > P.accMemory() * (1 + 1e-12))
    return makeDoesNotFitError(
        "activation schedule: the schedule assumes more memory than the accelerator has");
  Expected<ActivationReplay> Rep = replayActivationSchedule(C, S->rematOptions(), S->rematPlan());
  if (Rep) Rep->residentBytes = S->residentBytes;
  return Rep;
}

Error priceActivationSchedule(const Chain &C, const Platform &P, Plan &Pl) {
  Expected<ActivationReplay> Rep = replayPlan(C, P, Pl);
  if (!Rep) return Rep.takeError();
  Pl.objective = Rep->makespanMs;
  if (Pl.usage.empty()) Pl.usage.resize(1);
  // Issue 22: the measured peak (tensors at their own sizes) + resident.
  Pl.usage[0].memory = Rep->exactPeakBytes + Rep->residentBytes;
  Pl.usage[0].load = Rep->makespanMs;
  return Error::success();
}

/// --trace: the simulator's replay (compute, idle, both link lanes, memory).
Error traceActivationSchedule(const Chain &C, const Platform &P, const Plan &Pl, ChromeTrace &Trace) {
  Expected<ActivationReplay> Rep = replayPlan(C, P, Pl);
  if (!Rep) return Rep.takeError();
  Trace = activationTrace(*Rep);
  return Error::success();
}

} // namespace onnxp
