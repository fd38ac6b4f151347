//===- Solver/MilpModel.cpp - Building and checking MILP models ---------===//
//
// The solver-independent half of the MILP layer: storing variables and rows,
// merging duplicate terms, and checking an assignment against the model.
// The check is what makes MIP starts trustworthy: a partitioner builds its
// start from a plan, and a start that violates the model means the
// formulation and the plan disagree, which tests catch here rather than as a
// silently ignored start inside CBC.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Solver/MilpModel.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/Support/Progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace onnxp;

int MilpModel::addVar(VarKind Kind, double Lb, double Ub, double Obj, std::string Name) {
  if (Kind == VarKind::Binary) {
    Lb = std::max(Lb, 0.0);
    Ub = std::min(Ub, 1.0);
  }
  Vars.push_back({Kind, Lb, Ub, Obj, std::move(Name)});
  return static_cast<int>(Vars.size()) - 1;
}

int MilpModel::addRow(std::vector<LinTerm> Terms, double Lb, double Ub) {
  // Merge repeated variables so the solver never sees duplicate entries.
  std::sort(Terms.begin(), Terms.end(), [](const LinTerm &A, const LinTerm &B) { return A.var < B.var; });
  std::vector<LinTerm> Merged;
  for (const LinTerm &T : Terms) {
    assert(T.var >= 0 && T.var < (int)Vars.size() && "row uses an unknown variable");
    if (!Merged.empty() && Merged.back().var == T.var) Merged.back().coef += T.coef;
    else Merged.push_back(T);
  }
  std::erase_if(Merged, [](const LinTerm &T) { return T.coef == 0; });
  Rows.push_back({std::move(Merged), Lb, Ub});
  return static_cast<int>(Rows.size()) - 1;
}

size_t MilpModel::numNonzeros() const {
  size_t N = 0;
  for (const Row &R : Rows) N += R.terms.size();
  return N;
}

double MilpModel::maxViolation(const std::vector<double> &Values) const {
  if (Values.size() != Vars.size()) return Inf;
  double Worst = 0;
  for (size_t I = 0; I < Vars.size(); ++I) {
    double V = Values[I];
    Worst = std::max({Worst, Vars[I].lb - V, V - Vars[I].ub});
    if (Vars[I].kind != VarKind::Continuous) Worst = std::max(Worst, std::fabs(V - std::round(V)));
  }
  for (const Row &R : Rows) {
    double Sum = 0;
    for (const LinTerm &T : R.terms) Sum += T.coef * Values[T.var];
    Worst = std::max({Worst, R.lb - Sum, Sum - R.ub});
  }
  return Worst;
}

double MilpModel::objectiveOf(const std::vector<double> &Values) const {
  double Sum = 0;
  for (size_t I = 0; I < Vars.size() && I < Values.size(); ++I) Sum += Vars[I].obj * Values[I];
  return Sum;
}

const char *onnxp::milpStatusName(MilpStatus S) {
  switch (S) {
  case MilpStatus::Optimal: return "optimal";
  case MilpStatus::Feasible: return "feasible";
  case MilpStatus::Infeasible: return "infeasible";
  case MilpStatus::NoSolution: return "no-solution";
  case MilpStatus::Unbounded: return "unbounded";
  }
  return "unknown";
}

double MilpResult::gap() const {
  if (!hasSolution()) return NAN;
  if (objective == bound) return 0;
  if (std::isinf(bound)) return NAN;
  return std::max(0.0, objective - bound) / std::max(std::fabs(objective), 1e-12);
}

std::string onnxp::formatProgress(const std::string &Who, const MilpProgress &Pr) {
  std::string Phase = "cbc " + (Pr.event == "node" ? std::string("search") : Pr.event);
  if (Pr.event == "solution" || Pr.event == "heuristic") Phase = "cbc new incumbent";
  return formatStatus(Who, Phase, Pr.incumbent, Pr.bound);
}

const char *onnxp::milpStopName(MilpStop S) {
  switch (S) {
  case MilpStop::None: return "";
  case MilpStop::Deadline: return "the deadline";
  case MilpStop::Caller: return "the caller";
  case MilpStop::Crashed: return "a crash of CBC";
  }
  return "";
}

double onnxp::solverReserve(double Left) { return std::min(5.0, 0.2 * Left); }

double onnxp::cbcSecondsFor(const Deadline &D) {
  if (!D.isSet()) return MilpModel::Inf;
  const double Left = D.secondsLeft();
  return std::max(kMinSolverSeconds, Left - solverReserve(Left));
}

std::string onnxp::solverStopNote(const MilpResult &R) {
  std::string Why =
      R.stop == MilpStop::None       ? "the time limit stopped the search"
      : R.stop == MilpStop::Deadline ? "the time limit stopped CBC from outside (it had not stopped itself)"
      : R.stop == MilpStop::Crashed  ? "the search ended early: " + R.crashDetail
                                     : std::string("the search ended early: ") + milpStopName(R.stop);
  if (!R.hasSolution()) return Why + " before CBC found a solution";
  double Gap = R.gap();
  if (std::isnan(Gap)) return Why + " with no bound";
  char Buf[48];
  std::snprintf(Buf, sizeof(Buf), " with gap %.4g%%", 100 * Gap);
  return Why + Buf;
}
