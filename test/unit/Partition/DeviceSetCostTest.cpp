//===- unit/Partition/DeviceSetCostTest.cpp - dp's incremental set price -===//
//
// Issue 38, item 1: DeviceSetCost keeps the backward-contiguity bitsets of
// the current set in place with an undo log and a count of violating
// words. On random training graphs and random last-in-first-out sequences
// of adds and removes, its answers must equal a direct computation: the
// contiguity test against reachability in the backward graph (Def. 3.1),
// the prices against a fresh DeviceSetCost that added the same units in
// the same order (the same operations, so equal to the last bit).
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Partition/dp/DeviceSetCost.h"
#include "../../../lib/Partition/dp/UnitGraph.h"

#include "RandomGraphs.h"
#include "TestPlatforms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace onnxp;
using namespace onnxp::dp;
using namespace onnxp::test;

namespace {

/// Whether no backward node outside B is both reached from B and reaches
/// B along backward-to-backward edges.
bool directlyContiguous(const CostGraph &G, const std::vector<char> &InB) {
  const size_t N = G.numNodes();
  auto Reach = [&](bool Down) {
    std::vector<char> Seen(N, 0);
    std::vector<int> Stack;
    for (size_t V = 0; V < N; ++V)
      if (InB[V]) Stack.push_back(static_cast<int>(V));
    while (!Stack.empty()) {
      int V = Stack.back();
      Stack.pop_back();
      for (int EId : Down ? G.outEdges(V) : G.inEdges(V)) {
        int W = Down ? G.edge(EId).dst : G.edge(EId).src;
        if (!G.node(W).isBackward() || Seen[W]) continue;
        Seen[W] = 1;
        Stack.push_back(W);
      }
    }
    return Seen;
  };
  std::vector<char> Below = Reach(true), Above = Reach(false);
  for (size_t V = 0; V < N; ++V)
    if (G.node(V).isBackward() && !InB[V] && Below[V] && Above[V]) return false;
  return true;
}

TEST(DeviceSetCost, UndoMatchesDirectContiguityAndFreshPricesOnRandomSequences) {
  std::mt19937 Rng(38);
  int Violations = 0, Checks = 0;
  for (int T = 0; T < 200; ++T) {
    RandomGraphSpec S;
    S.training = true;
    S.forwardNodes = std::uniform_int_distribution<int>(4, 9)(Rng);
    S.edgeProb = 0.45;
    S.nonUniformCosts = T % 2 == 0;
    CostGraph G = randomGraph(Rng, S);
    UnitGraph UG = buildUnitGraph(G, /*Linearize=*/false);
    Platform P = makePlatform(2, 1);
    DeviceSetCost Cost(G, UG, P);
    std::vector<int> Added;
    std::vector<char> Used(UG.numUnits(), 0);
    for (int Step = 0; Step < 120; ++Step) {
      const bool Add = Added.empty() || (Added.size() < size_t(UG.numUnits()) && Rng() % 3 != 0);
      if (Add) {
        std::vector<int> Free;
        for (int U = 0; U < UG.numUnits(); ++U)
          if (!Used[U]) Free.push_back(U);
        int U = Free[Rng() % Free.size()];
        Cost.addUnit(U);
        Added.push_back(U);
        Used[U] = 1;
      } else {
        Cost.removeUnit(Added.back());
        Used[Added.back()] = 0;
        Added.pop_back();
      }
      std::vector<char> InB(G.numNodes(), 0);
      for (int U : Added)
        for (int V : UG.members[U]) InB[V] = G.node(V).isBackward();
      const bool Want = directlyContiguous(G, InB);
      ASSERT_EQ(Cost.backwardContiguous(), Want) << "graph " << T << " step " << Step;
      Violations += !Want;
      ++Checks;

      DeviceSetCost Fresh(G, UG, P);
      for (int U : Added) Fresh.addUnit(U);
      for (int R = 1; R <= 2; ++R) {
        StageSite Site = Cost.siteOf(0, R);
        EXPECT_EQ(Cost.accLoad(R, Site), Fresh.accLoad(R, Site));
        EXPECT_EQ(Cost.accForwardLoad(R, Site), Fresh.accForwardLoad(R, Site));
        EXPECT_EQ(Cost.accBackwardLoad(R, Site), Fresh.accBackwardLoad(R, Site));
      }
      EXPECT_EQ(Cost.cpuLoad(), Fresh.cpuLoad());
      EXPECT_EQ(Cost.fitsAccelerator(), Fresh.fitsAccelerator());
    }
  }
  // The draw must exercise both answers, or the comparison proves little.
  EXPECT_GT(Violations, Checks / 20);
  EXPECT_LT(Violations, Checks);
}

} // namespace
