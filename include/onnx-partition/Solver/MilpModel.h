//===- Solver/MilpModel.h - A small MILP model and its CBC solve -*- C++ -*-===//
//
// The integer programs of seed 004 (Fig. 3, 4, 6) are built against this thin
// layer instead of against COIN-OR directly: a model is a list of bounded
// variables (continuous, binary, integer), linear rows with lower and upper
// bounds, a minimisation objective and an optional MIP start. solveMilp()
// hands it to CBC (lib/Solver/CbcModel.cpp is the only file that includes
// COIN headers) with a time limit, a relative gap, a thread count and a
// progress callback that sees every new incumbent and the best bound as the
// search goes, and returns status, objective, bound, gap and the values.
//
// CBC cannot be trusted to stop inside its root phase (a 10 s limit took
// 20 s on ResNet-50, its first LP alone 10.4 s), so solveMilp runs it in a
// child process that streams progress and every improving incumbent back
// over a pipe and is killed at MilpOptions::deadline; the result then holds
// the best incumbent streamed (issue 20).
//
// Keeping COIN out of this header keeps the partitioners' compile units small
// and lets the solver be swapped without touching the formulations.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_SOLVER_MILPMODEL_H
#define ONNXP_SOLVER_MILPMODEL_H

#include "onnx-partition/Support/Deadline.h"
#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace onnxp {

enum class VarKind { Continuous, Binary, Integer };

/// One linear term: coefficient times variable.
struct LinTerm {
  int var;
  double coef;
};

/// A minimisation MILP. Variables and rows are identified by the dense index
/// their add* call returned.
class MilpModel {
public:
  static constexpr double Inf = std::numeric_limits<double>::infinity();

  /// Adds a variable with bounds [Lb, Ub] and objective coefficient Obj.
  /// Binary variables get bounds clamped into [0, 1].
  int addVar(VarKind Kind, double Lb, double Ub, double Obj = 0, std::string Name = "");
  int addContinuous(double Lb, double Ub, double Obj = 0, std::string Name = "") {
    return addVar(VarKind::Continuous, Lb, Ub, Obj, std::move(Name));
  }
  int addBinary(double Obj = 0, std::string Name = "") {
    return addVar(VarKind::Binary, 0, 1, Obj, std::move(Name));
  }

  /// Adds the row Lb <= sum Terms <= Ub. Terms on the same variable add up.
  int addRow(std::vector<LinTerm> Terms, double Lb, double Ub);
  int addLe(std::vector<LinTerm> Terms, double Rhs) { return addRow(std::move(Terms), -Inf, Rhs); }
  int addGe(std::vector<LinTerm> Terms, double Rhs) { return addRow(std::move(Terms), Rhs, Inf); }
  int addEq(std::vector<LinTerm> Terms, double Rhs) { return addRow(std::move(Terms), Rhs, Rhs); }

  void setObjective(int Var, double Coef) { Vars[Var].obj = Coef; }
  /// A complete assignment the solver starts from (one value per variable).
  /// The solver checks it; an infeasible start is ignored, not an error.
  void setMipStart(std::vector<double> Values) { Start = std::move(Values); }
  /// Fixes a variable's bounds (used to pin forced placements).
  void setBounds(int Var, double Lb, double Ub) {
    Vars[Var].lb = Lb;
    Vars[Var].ub = Ub;
  }

  size_t numVars() const { return Vars.size(); }
  size_t numRows() const { return Rows.size(); }
  size_t numNonzeros() const;

  struct Var {
    VarKind kind;
    double lb, ub, obj;
    std::string name;
  };
  struct Row {
    std::vector<LinTerm> terms;
    double lb, ub;
  };
  const std::vector<Var> &vars() const { return Vars; }
  const std::vector<Row> &rows() const { return Rows; }
  const std::vector<double> &mipStart() const { return Start; }

  /// Largest violation of bounds, rows and integrality by Values (0 when
  /// feasible). Tests and the MIP-start path use it.
  double maxViolation(const std::vector<double> &Values) const;
  /// Objective value of an assignment.
  double objectiveOf(const std::vector<double> &Values) const;

private:
  std::vector<Var> Vars;
  std::vector<Row> Rows;
  std::vector<double> Start;
};

/// What the solver saw while searching (reported to the progress callback).
struct MilpProgress {
  double seconds = 0;
  double incumbent = MilpModel::Inf; ///< best objective found so far
  double bound = -MilpModel::Inf;    ///< best proven lower bound
  std::string event;                 ///< "solution", "heuristic", "node", "start"
};

/// One status, "<who>: cbc search, best 12.3, bound 11, gap 10.57%", as the
/// partitioners hand it to the progress line (Support/Progress.h).
std::string formatProgress(const std::string &Who, const MilpProgress &Pr);

/// CBC is never given less than this, even past the deadline (an isolated
/// solve is killed there anyway).
constexpr double kMinSolverSeconds = 0.5;

/// Seconds kept back from CBC's limit, with Left seconds left: min(5 s,
/// 20 %), for CBC's final phases after the limit and the write-back after
/// the solve (measured on ResNet-50, docs/benchmarks-history.md).
double solverReserve(double Left);

/// CBC's own limit (-sec) under D: what is left less solverReserve, at
/// least kMinSolverSeconds; +inf (no -sec) when D is never.
double cbcSecondsFor(const Deadline &D);

struct MilpOptions {
  /// When the solve must end (the caller's part of the run's deadline).
  /// CBC's own limit (-sec, cbcSecondsFor) is what is left of it when CBC
  /// starts, less solverReserve, so that it stops itself with its
  /// incumbent when it can; an isolated solve is killed at the deadline
  /// whatever CBC is doing. Never: no limit at all, and CBC takes no
  /// decision by the clock, so the solve is reproducible.
  Deadline deadline;
  /// Run CBC in a child process (killable at the deadline, and a crash of
  /// CBC is not a crash of the tool); false runs it in this process.
  bool isolate = true;
  double relativeGap = 1e-4;
  int threads = 1;
  bool verbose = false; ///< let CBC print its own log on stdout
  /// Called on every improving incumbent and now and then with the bound;
  /// may be empty.
  std::function<void(const MilpProgress &)> progress;
  /// Minimum seconds between two "node" progress reports.
  double progressInterval = 5;
  /// Completes an incumbent CBC found in its preprocessed space: the values
  /// of the columns preprocessing kept, NaN where it removed one. Returns a
  /// full assignment (checked against the model before it is kept) or an
  /// empty vector. Unset: such incumbents are dropped, so a solve stopped
  /// from outside keeps only complete ones (issue 20).
  std::function<std::vector<double>(const std::vector<double> &)> completeIncumbent;
  /// Isolated solves: called with the objective of each incumbent the
  /// parent keeps; true stops CBC there as the deadline would (stop
  /// MilpStop::Caller). Lets a caller stop at a good-enough plan, and a test
  /// stop a solve at a known point rather than at a time.
  std::function<bool(double)> stopOnIncumbent;
  /// Extra settings in CBC's command-line syntax ("-proximity on"), applied
  /// after the ones above; for tuning experiments.
  std::vector<std::string> extraArgs;
};

enum class MilpStatus {
  Optimal,    ///< solved to within the requested gap
  Feasible,   ///< stopped by a limit with an incumbent
  Infeasible, ///< proven infeasible
  NoSolution, ///< stopped by a limit before any solution was found
  Unbounded,
};
const char *milpStatusName(MilpStatus S);

/// Why a solve ended before CBC ended it by itself (in the manner of
/// HiGHS's model status): what callers decide on; milpStopName says it in
/// words for notes.
enum class MilpStop {
  None,     ///< CBC ended by itself (optimal, infeasible, or at its own limit)
  Deadline, ///< the deadline passed and the child was killed
  Caller,   ///< MilpOptions::stopOnIncumbent asked to stop
  Crashed,  ///< the child died without a result (a signal or an exit code)
};

/// Why a solve was stopped, in words for notes: "" (None), "the deadline",
/// "the caller", "a crash of CBC".
const char *milpStopName(MilpStop S);

struct MilpResult {
  MilpStatus status = MilpStatus::NoSolution;
  double objective = MilpModel::Inf;
  double bound = -MilpModel::Inf;
  double seconds = 0;
  double secondsToIncumbent = 0; ///< when the final incumbent was found
  bool startAccepted = false;    ///< the MIP start was feasible and used
  long nodes = 0;
  std::vector<double> values; ///< empty unless a solution exists
  MilpStop stop = MilpStop::None;
  /// MilpStop::Crashed: what the child died of ("CBC died of signal 11"),
  /// for notes only; empty otherwise.
  std::string crashDetail;

  bool hasSolution() const { return status == MilpStatus::Optimal || status == MilpStatus::Feasible; }
  /// (objective - bound) / |objective|, 0 when proven optimal at 0.
  double gap() const;
};

/// The note a plan carries when the clock stopped its solve: "the time
/// limit stopped the search (gap 3.2%)", saying when CBC had to be stopped
/// from outside and whether any solution was found.
std::string solverStopNote(const MilpResult &R);

/// Solves M with CBC. Errors only on a malformed model or a solver failure;
/// infeasibility and limits are statuses.
Expected<MilpResult> solveMilp(const MilpModel &M, const MilpOptions &O = {});

} // namespace onnxp

#endif // ONNXP_SOLVER_MILPMODEL_H
