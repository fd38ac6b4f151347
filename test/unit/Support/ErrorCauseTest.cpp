//===- unit/Support/ErrorCauseTest.cpp - Decisions by kind, not by text ---===//
//
// Issue 32 item 2: a caller that acts on a failure asks its cause, never
// its message. A planner's "does not fit" carries Error::Cause::DoesNotFit
// (so runPartitioner says what would fit), an unrelated failure whose text
// happens to say "memory" or "fit" does not, and a solve the deadline
// stopped says so in MilpResult::stop whatever its words.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Solver/MilpModel.h"
#include "onnx-partition/Support/Error.h"

#include <gtest/gtest.h>

using namespace onnxp;

namespace {
/// a -> b -> c -> d, 100 bytes of weights each, names given.
CostGraph chainOf(const std::vector<std::string> &Names) {
  CostGraph G;
  for (size_t V = 0; V < Names.size(); ++V) {
    CostNode N;
    N.name = Names[V];
    N.outputBytes = 10;
    N.paramBytes = N.memBytes = 100;
    N.accTime = 1;
    N.cpuTime = 10;
    G.addNode(N);
  }
  for (size_t V = 0; V + 1 < Names.size(); ++V)
    G.addEdge({int(V), int(V) + 1, "x" + std::to_string(V), 10, 0});
  return G;
}
} // namespace

TEST(ErrorCause, KeptThroughContextAndCopies) {
  Error Plain = makeError("no memory fits here");
  EXPECT_EQ(Plain.cause(), Error::Cause::Unspecified);
  EXPECT_FALSE(Plain.doesNotFit());
  Error Fit = makeDoesNotFitError("x");
  EXPECT_EQ(Fit.kind(), Error::Kind::Input);
  EXPECT_TRUE(Fit.doesNotFit());
  EXPECT_TRUE(Fit.withContext("dp").doesNotFit());
  Error Proven = makeError("y").withCause(Error::Cause::NoFeasiblePattern);
  EXPECT_TRUE(Proven.doesNotFit());
  EXPECT_EQ(Expected<int>(Proven).takeError().cause(), Error::Cause::NoFeasiblePattern);
}

TEST(ErrorCause, PlannerDoesNotFitSaysWhatWould) {
  CostGraph G = chainOf({"a", "b", "c", "d"});
  Platform P;
  P.accelerators = 2;
  P.accelerator.memoryBytes = 150; // one node per device: four are needed
  Expected<Plan> Dp = runPartitioner("dp", G, P, PartitionOptions());
  ASSERT_FALSE(static_cast<bool>(Dp));
  Error E = Dp.takeError();
  EXPECT_EQ(E.cause(), Error::Cause::DoesNotFit);
  EXPECT_NE(E.message().find("or on 4 accelerators"), std::string::npos) << E.message();
}

TEST(ErrorCause, WordsInAMessageDecideNothing) {
  // greedy cannot place a node that must not run on an accelerator when
  // the platform has no CPU: not a memory failure, though the node's name
  // says "memory" and "fit". No search of what would fit is appended.
  CostGraph G = chainOf({"a", "memory_fit", "c"});
  G.node(1).accSupported = false;
  Platform P;
  P.accelerators = 2;
  P.cpus = 0;
  P.accelerator.memoryBytes = 1e6;
  Expected<Plan> Greedy = runPartitioner("greedy", G, P, PartitionOptions());
  ASSERT_FALSE(static_cast<bool>(Greedy));
  Error E = Greedy.takeError();
  EXPECT_FALSE(E.doesNotFit());
  EXPECT_NE(E.message().find("cannot run on an accelerator"), std::string::npos) << E.message();
  EXPECT_EQ(E.message().find("finds"), std::string::npos) << E.message();
}

TEST(ErrorCause, SolverStopIsAKindNotAText) {
  MilpResult R;
  R.status = MilpStatus::NoSolution;
  R.stop = MilpStop::Deadline;
  EXPECT_NE(solverStopNote(R).find("stopped CBC from outside"), std::string::npos) << solverStopNote(R);
  R.stop = MilpStop::Crashed;
  R.crashDetail = "CBC died of signal 11"; // the words are for notes only
  EXPECT_NE(solverStopNote(R).find("the search ended early: CBC died of signal 11"), std::string::npos)
      << solverStopNote(R);
  R.stop = MilpStop::Caller;
  R.crashDetail.clear();
  EXPECT_NE(solverStopNote(R).find(std::string("the search ended early: ") + milpStopName(MilpStop::Caller)),
            std::string::npos)
      << solverStopNote(R);
  R.stop = MilpStop::None;
  EXPECT_NE(solverStopNote(R).find("the time limit stopped the search"), std::string::npos);
}

TEST(ErrorCause, PastDeadlineStopsTheSolve) {
  MilpModel M;
  int A = M.addBinary(-5), B = M.addBinary(-4);
  M.addLe({{A, 2}, {B, 3}}, 4);
  MilpOptions O;
  O.deadline = Deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  Expected<MilpResult> R = solveMilp(M, O);
  ASSERT_EXPECTED(R);
  EXPECT_EQ(R->stop, MilpStop::Deadline);
}
