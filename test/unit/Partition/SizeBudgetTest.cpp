//===- unit/Partition/SizeBudgetTest.cpp - Contraction to a node budget --===//
//
// Issue 38, item 1: a graph over a planner's node limit is contracted until
// the limit holds (Partition/SizeBudget.h), down to runs of a topological
// order when even the chain granularity leaves too many units. Whatever the
// budget, the contracted graph has at most that many nodes, is acyclic,
// covers every node, and a plan of it expands to a plan of the original
// graph the validator accepts.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"
#include "SyntheticGraphs.h"
#include "TestPlatforms.h"

#include "onnx-partition/Partition/SizeBudget.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"

#include <gtest/gtest.h>

using namespace onnxp;
using namespace onnxp::test;

namespace {

TEST(SizeBudgetTest, ContractsTrainingGraphWithinEveryBudget) {
  TrainingGraphOptions TO;
  TO.nodes = 600;
  const CostGraph G = makeTrainingGraph(TO);
  ASSERT_GT(G.numNodes(), 500u);
  const Platform P = makePlatform(4, 0);
  for (size_t Budget : {size_t(400), size_t(60), size_t(12), size_t(4)}) {
    SCOPED_TRACE("budget " + std::to_string(Budget));
    Expected<ContractedGraph> C = contractToNodeBudget(G, P, PartitionOptions(), Budget);
    ASSERT_EXPECTED(C);
    EXPECT_LE(C->graph.numNodes(), Budget);
    EXPECT_GT(C->graph.numNodes(), 0u);
    ASSERT_EQ(C->groupOf.size(), G.numNodes());
    for (int U : C->groupOf) EXPECT_LT(static_cast<size_t>(U), C->graph.numNodes());
    EXPECT_TRUE(static_cast<bool>(C->graph.topologicalOrder()));
    // Everything on one device is a plan of any contraction; expanded, it
    // must be one of G (colocation and contiguity hold trivially, so this
    // checks the mapping covers every node).
    Plan Coarse;
    Coarse.device.assign(C->graph.numNodes(), 0);
    Plan Full = expandPlan(Coarse, C->groupOf);
    ASSERT_EQ(Full.device.size(), G.numNodes());
    EXPECT_FALSE(static_cast<bool>(validatePlan(G, P, Full)));
    const std::string Note = sizeBudgetNote("dp", G.numNodes(), Budget, *C);
    EXPECT_NE(Note.find(std::to_string(C->graph.numNodes()) + " units"), std::string::npos) << Note;
  }
}

TEST(SizeBudgetTest, GraphWithinBudgetKeepsItsNodes) {
  TrainingGraphOptions TO;
  TO.nodes = 200;
  const CostGraph G = makeTrainingGraph(TO);
  Expected<ContractedGraph> C = contractToNodeBudget(G, makePlatform(2, 0), PartitionOptions(), 100000);
  ASSERT_EXPECTED(C);
  // Only the exact reductions (granularity op) apply when the graph fits.
  EXPECT_EQ(C->granularity, Granularity::Op);
  EXPECT_EQ(C->graph.numNodes() + C->exactMerged, G.numNodes());
}

} // namespace
