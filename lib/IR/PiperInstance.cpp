//===- IR/PiperInstance.cpp - Piper's problem: graph helpers -------------===//
#include "onnx-partition/IR/PiperInstance.h"

#include <functional>
#include <queue>

using namespace onnxp;

std::vector<int> onnxp::piperTopologicalOrder(const PiperInstance &I) {
  const int N = static_cast<int>(I.layers.size());
  std::vector<int> InDegree(N, 0);
  std::vector<std::vector<int>> Out(N);
  for (const PiperEdge &E : I.edges) {
    Out[E.from].push_back(E.to);
    ++InDegree[E.to];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> Ready;
  for (int V = 0; V < N; ++V)
    if (InDegree[V] == 0) Ready.push(V);
  std::vector<int> Order;
  while (!Ready.empty()) {
    const int V = Ready.top();
    Ready.pop();
    Order.push_back(V);
    for (int W : Out[V])
      if (--InDegree[W] == 0) Ready.push(W);
  }
  if (static_cast<int>(Order.size()) != N) Order.clear();
  return Order;
}
