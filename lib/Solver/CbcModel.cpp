//===- Solver/CbcModel.cpp - Solving a MilpModel with COIN-OR CBC -------===//
//
// The only file that includes COIN-OR headers. It loads a MilpModel into an
// OsiClpSolverInterface and runs CBC through CbcMain0/CbcMain1, the same
// driver the `cbc` command line uses: that path turns on CBC's preprocessing,
// cut generators and primal heuristics, which a bare
// CbcModel::branchAndBound() leaves off and which the partitioning IPs of
// seed 004 need to get anywhere on graphs with hundreds of nodes.
//
// A MIP start goes in by column name (CBC's documented mechanism, it is
// re-evaluated after preprocessing), using Clp's default column names.
// Progress comes from a CbcEventHandler: CBC clones the handler into every
// model copy (the solver's own babModel and one per thread), so the clones
// share one state block behind a mutex. It hands every improving incumbent
// to the CbcSink when the sink asks for them, in the model's own columns
// (NaN where CBC's preprocessing removed one): SolverProcess.cpp streams
// them to the parent process, which completes, checks and keeps the best
// one when it has to stop CBC from outside (issue 20).
//
// CBC prints a lot; log levels are 0 unless MilpOptions::verbose.
//
//===----------------------------------------------------------------------===//
#include "CbcSolve.h"

#include "CbcEventHandler.hpp"
#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <sstream>

using namespace onnxp;

namespace {

using Clock = std::chrono::steady_clock;

/// State shared by all clones of the event handler.
struct SearchState {
  std::mutex Lock;
  Clock::time_point Start = Clock::now();
  double LastReport = -1e9;
  double Incumbent = MilpModel::Inf;
  double IncumbentSeconds = 0;
  const MilpOptions *Opts = nullptr;
  CbcSink *Sink = nullptr;
  int NumCols = 0;

  double now() const { return std::chrono::duration<double>(Clock::now() - Start).count(); }
};

/// An incumbent of Model (CBC's preprocessed copy or the model itself) in
/// the original model's NumCols columns, NaN where preprocessing removed a
/// column; empty when the columns cannot be mapped. Only reads CbcModel::originalColumns (the map CBC's
/// driver sets on its preprocessed model): post-processing a copy of the solver (CglPreProcess::postProcess)
/// changes the state the final post-processing reads (wrong final values, seen on the unit IPs). The parent
/// completes and checks every such vector (MilpOptions::completeIncumbent).
std::vector<double> inModelColumns(const CbcModel &Model, const double *X, int NumCols) {
  const int Cols = Model.getNumCols();
  const int *Orig = Model.originalColumns();
  if (!Orig) {
    if (Cols == NumCols) return std::vector<double>(X, X + NumCols);
    return {}; // a copy whose columns cannot be told apart
  }
  std::vector<double> Out(NumCols, std::nan(""));
  for (int J = 0; J < Cols; ++J)
    if (Orig[J] >= 0 && Orig[J] < NumCols) Out[Orig[J]] = X[J];
  return Out;
}

class ProgressHandler : public CbcEventHandler {
public:
  explicit ProgressHandler(std::shared_ptr<SearchState> S) : State(std::move(S)) {}
  ProgressHandler(const ProgressHandler &Other) = default;
  CbcEventHandler *clone() const override { return new ProgressHandler(*this); }

  CbcAction event(CbcEvent Which) override {
    if (!model_) return noAction;
    bool IsSolution = Which == solution || Which == heuristicSolution;
    if (!IsSolution && Which != node) return noAction;
    // Sub-MIPs of CBC's heuristics report their own solutions: skip them.
    if (model_->specialOptions() & 2048) return noAction;
    std::lock_guard<std::mutex> Guard(State->Lock);
    double T = State->now();
    double Obj = model_->getObjValue();
    bool Improved = IsSolution && Obj < State->Incumbent - 1e-9 * std::max(1.0, std::fabs(Obj));
    if (Improved) {
      State->Incumbent = Obj;
      State->IncumbentSeconds = T;
      if (State->Sink->wantsIncumbents()) {
        if (const double *X = model_->bestSolution()) {
          std::vector<double> Values = inModelColumns(*model_, X, State->NumCols);
          if (!Values.empty()) State->Sink->incumbent(Obj, Values);
        }
      }
    }
    const MilpOptions &O = *State->Opts;
    if (!Improved && T - State->LastReport < O.progressInterval) return noAction;
    State->LastReport = T;
    MilpProgress P;
    P.seconds = T;
    P.incumbent = State->Incumbent;
    P.bound = model_->getBestPossibleObjValue();
    P.event = Improved ? (Which == solution ? "solution" : "heuristic") : "node";
    State->Sink->progress(P);
    return noAction;
  }

private:
  std::shared_ptr<SearchState> State;
};

std::string formatArg(double V) {
  std::ostringstream OS;
  OS.precision(12);
  OS << V;
  return OS.str();
}

} // namespace

Expected<MilpResult> onnxp::solveMilpInProcess(const MilpModel &M, const MilpOptions &O, CbcSink &Sink) {
  const int NumCols = static_cast<int>(M.numVars());
  const int NumRows = static_cast<int>(M.numRows());
  if (NumCols == 0) return makeInternalError("MILP model has no variables");
  auto Clip = [](double V) { return std::isinf(V) ? (V > 0 ? COIN_DBL_MAX : -COIN_DBL_MAX) : V; };

  std::vector<double> ColLb(NumCols), ColUb(NumCols), Obj(NumCols);
  for (int I = 0; I < NumCols; ++I) {
    const MilpModel::Var &V = M.vars()[I];
    if (V.lb > V.ub) {
      // CBC's handling of crossed bounds varies with preprocessing; a model
      // with empty domain is infeasible, say so directly.
      MilpResult R;
      R.status = MilpStatus::Infeasible;
      return R;
    }
    ColLb[I] = Clip(V.lb);
    ColUb[I] = Clip(V.ub);
    Obj[I] = V.obj;
  }
  std::vector<double> RowLb(NumRows), RowUb(NumRows), Elems;
  std::vector<int> Index;
  std::vector<CoinBigIndex> Starts(NumRows + 1, 0);
  std::vector<int> Lengths(NumRows);
  for (int R = 0; R < NumRows; ++R) {
    const MilpModel::Row &Row = M.rows()[R];
    RowLb[R] = Clip(Row.lb);
    RowUb[R] = Clip(Row.ub);
    Starts[R] = static_cast<CoinBigIndex>(Elems.size());
    Lengths[R] = static_cast<int>(Row.terms.size());
    for (const LinTerm &T : Row.terms) {
      Index.push_back(T.var);
      Elems.push_back(T.coef);
    }
  }
  Starts[NumRows] = static_cast<CoinBigIndex>(Elems.size());
  CoinPackedMatrix Matrix(/*colordered=*/false, NumCols, NumRows, static_cast<CoinBigIndex>(Elems.size()),
                          Elems.data(), Index.data(), Starts.data(), Lengths.data());

  OsiClpSolverInterface Lp;
  Lp.loadProblem(Matrix, ColLb.data(), ColUb.data(), Obj.data(), RowLb.data(), RowUb.data());
  // Column names for the MIP start: Clp's generated defaults. (Setting
  // column names without row names makes ClpPresolve read past its name
  // arrays in CBC 2.10's final resolve -- a crash seen on the latency IP.)
  std::vector<std::string> Names(NumCols);
  for (int I = 0; I < NumCols; ++I) {
    Names[I] = Lp.getColName(I);
    if (M.vars()[I].kind != VarKind::Continuous) Lp.setInteger(I);
  }
  Lp.setObjSense(1.0);
  if (!O.verbose) Lp.messageHandler()->setLogLevel(0);

  CbcModel Model(Lp);
  if (!O.verbose) Model.setLogLevel(0);
  CbcSolverUsefulData Data;
  CbcMain0(Model, Data);
  if (!O.verbose) Model.setLogLevel(0);

  MilpResult Result;
  const std::vector<double> &Start = M.mipStart();
  if (!Start.empty()) {
    if (Start.size() != M.numVars())
      return makeInternalError("MIP start has ", Start.size(), " values for ", M.numVars(), " variables");
    // CBC rejects an infeasible start silently; check it here so the result
    // can say whether the warm start was used.
    Result.startAccepted = M.maxViolation(Start) <= 1e-6;
    std::vector<std::pair<std::string, double>> Pairs;
    Pairs.reserve(NumCols);
    for (int I = 0; I < NumCols; ++I) Pairs.emplace_back(Names[I], Start[I]);
    Model.setMIPStart(Pairs);
  }

  auto State = std::make_shared<SearchState>();
  State->Opts = &O;
  State->Sink = &Sink;
  State->NumCols = NumCols;
  ProgressHandler Handler(State);
  Model.passInEventHandler(&Handler);
  {
    MilpProgress P;
    P.event = "start";
    if (Result.startAccepted) P.incumbent = M.objectiveOf(Start);
    Sink.progress(P);
  }
  if (Result.startAccepted) {
    State->Incumbent = M.objectiveOf(Start);
    State->IncumbentSeconds = 0;
  }

  // No limit (infinity): no -seconds at all, so that CBC takes no decision
  // by the clock and a run is reproducible (issue 20).
  // -sec from the deadline, when CBC starts (in the child: the parent's
  // clock, CLOCK_MONOTONIC survives fork).
  const double Seconds = cbcSecondsFor(O.deadline);
  const bool Limited = std::isfinite(Seconds);
  std::string Sec = formatArg(Limited ? Seconds : 0.0);
  std::string Gap = formatArg(std::max(0.0, O.relativeGap));
  std::string Threads = std::to_string(std::max(1, O.threads));
  std::string Log = O.verbose ? "1" : "0";
  // timeMode elapsed: the limit is wall-clock time (CBC's default is CPU
  // time, which with several threads or a busy machine is not what a user
  // asking for "10 minutes" means).
  std::vector<const char *> Args = {"onnxp",     "-log",      Log.c_str(), "-slog",
                                    Log.c_str(), "-ratioGap", Gap.c_str()};
  if (Limited) {
    for (const char *A : {"-timeMode", "elapsed", "-seconds"}) Args.push_back(A);
    Args.push_back(Sec.c_str());
  }
  if (O.threads > 1) {
    Args.push_back("-threads");
    Args.push_back(Threads.c_str());
  }
  for (const std::string &A : O.extraArgs) Args.push_back(A.c_str());
  Args.push_back("-solve");
  Args.push_back("-quit");
  auto Begin = Clock::now();
  int Rc = CbcMain1(
      static_cast<int>(Args.size()), Args.data(), Model, [](CbcModel *, int) { return 0; }, Data);
  Result.seconds = std::chrono::duration<double>(Clock::now() - Begin).count();
  if (Rc != 0) return makeInternalError("CBC failed with code ", Rc);

  Result.nodes = Model.getNodeCount();
  const double *Best = Model.bestSolution();
  if (Model.isProvenInfeasible() && !Best) {
    Result.status = MilpStatus::Infeasible;
    return Result;
  }
  if (Model.isContinuousUnbounded() && !Best) {
    Result.status = MilpStatus::Unbounded;
    return Result;
  }
  if (!Best) {
    Result.status = MilpStatus::NoSolution;
    Result.bound = Model.getBestPossibleObjValue();
    return Result;
  }
  Result.values.assign(Best, Best + NumCols);
  // Snap integer columns: CBC returns them within its integer tolerance.
  for (int I = 0; I < NumCols; ++I)
    if (M.vars()[I].kind != VarKind::Continuous) Result.values[I] = std::round(Result.values[I]);
  Result.objective = M.objectiveOf(Result.values);
  Result.status = Model.isProvenOptimal() ? MilpStatus::Optimal : MilpStatus::Feasible;
  Result.bound = Model.getBestPossibleObjValue();
  if (Result.status == MilpStatus::Optimal && !(Result.bound > -1e49)) Result.bound = Result.objective;
  // CBC stops at the gap limit and calls that optimal; a bound above the
  // objective (rounding) is clamped so the gap stays non-negative.
  Result.bound = std::min(Result.bound, Result.objective);
  Result.secondsToIncumbent = State->IncumbentSeconds;
  if (Result.objective < State->Incumbent - 1e-9 * std::max(1.0, std::fabs(Result.objective)))
    Result.secondsToIncumbent = Result.seconds; // found at the very end (e.g. by a last heuristic)
  return Result;
}
