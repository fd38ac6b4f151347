//===- Solver/CbcSolve.h - CBC inside this process (private) ----*- C++ -*-===//
//
// The COIN-free interface between CbcModel.cpp (which runs CBC in the
// calling process) and SolverProcess.cpp (which calls it in a child process
// that streams what it finds back to the parent, issue 20). A CbcSink
// receives the search's progress and, when asked for, every improving
// incumbent in the model's own columns (post-processed out of CBC's
// preprocessing).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_LIB_SOLVER_CBCSOLVE_H
#define ONNXP_LIB_SOLVER_CBCSOLVE_H

#include "onnx-partition/Solver/MilpModel.h"

namespace onnxp {

class CbcSink {
public:
  virtual ~CbcSink() = default;
  virtual void progress(const MilpProgress &P) = 0;
  /// An improving incumbent, one value per model column.
  virtual void incumbent(double Objective, const std::vector<double> &Values) = 0;
  /// Whether incumbent() wants the values (costs a post-processing each).
  virtual bool wantsIncumbents() const = 0;
};

/// Runs CBC on M in this process; O.deadline is not watched here (CBC's own
/// -seconds limit is, which CBC does not always keep).
Expected<MilpResult> solveMilpInProcess(const MilpModel &M, const MilpOptions &O, CbcSink &Sink);

} // namespace onnxp

#endif // ONNXP_LIB_SOLVER_CBCSOLVE_H
