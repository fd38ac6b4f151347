//===- Partition/ip/IpFeasibility.cpp - Out of time or infeasible --------===//
//
// IpFeasibility.h. Two counting arguments (a class larger than every
// accelerator, all classes larger than all accelerators together, each only
// without a CPU to take the rest) prove that no placement exists; a
// largest-first packing of the colocation classes onto the accelerators,
// checked by the independent validator, proves that one does.
//
//===----------------------------------------------------------------------===//
#include "IpFeasibility.h"

#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <numeric>
#include <vector>

using namespace onnxp;

std::string onnxp::ipFeasibility(const CostGraph &G, const Platform &P, bool Contiguous,
                                 const std::function<bool(const Plan &)> &Admissible) {
  const int N = static_cast<int>(G.numNodes()), C = G.numClasses(), K = P.accelerators;
  std::vector<double> Size(C, 0);
  std::vector<char> AccOk(C, 1);
  std::vector<int> Example(C, -1);
  for (int V = 0; V < N; ++V) {
    int Cl = G.classOf(V);
    Size[Cl] += G.node(V).memBytes;
    AccOk[Cl] &= G.node(V).accSupported;
    if (Example[Cl] < 0) Example[Cl] = V;
  }
  double Capacity = 0, Largest = 0;
  for (int D = 0; D < K; ++D) {
    Capacity += P.memoryOf(D);
    Largest = std::max(Largest, P.memoryOf(D));
  }
  const std::string Verdict = "no placement can exist";
  if (P.cpus == 0) {
    double Total = 0;
    for (int Cl = 0; Cl < C; ++Cl) {
      if (!AccOk[Cl])
        return Verdict + ": node '" + G.node(Example[Cl]).name +
               "' runs on no accelerator and the platform has no CPU (--cpus)";
      if (Size[Cl] > Largest * (1 + 1e-9))
        return Verdict + ": the nodes placed with '" + G.node(Example[Cl]).name + "' need " +
               humanBytes(Size[Cl]) + ", more than any accelerator's " + humanBytes(Largest);
      Total += Size[Cl];
    }
    if (Total > Capacity * (1 + 1e-9))
      return Verdict + ": the nodes need " + humanBytes(Total) + " together, more than the " +
             std::to_string(K) + " accelerators' " + humanBytes(Capacity);
  }
  // Largest class first onto the accelerator with the most room left; what
  // no accelerator takes (or runs on none) goes to the first CPU.
  std::vector<int> Order(C);
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](int A, int B) { return Size[A] > Size[B]; });
  std::vector<double> Left(K);
  for (int D = 0; D < K; ++D) Left[D] = P.memoryOf(D);
  std::vector<int> DevOf(C, -1);
  for (int Cl : Order) {
    int Best = -1;
    if (AccOk[Cl])
      for (int D = 0; D < K; ++D)
        if (Size[Cl] <= Left[D] * (1 + 1e-12) && (Best < 0 || Left[D] > Left[Best])) Best = D;
    if (Best >= 0) Left[Best] -= Size[Cl];
    else if (P.cpus > 0) Best = K;
    else break;
    DevOf[Cl] = Best;
  }
  Plan Pl;
  Pl.memoryModel = MemoryModel::Sum;
  Pl.device.assign(N, -1);
  for (int V = 0; V < N; ++V) Pl.device[V] = DevOf[G.classOf(V)];
  const bool Placed = std::none_of(DevOf.begin(), DevOf.end(), [](int D) { return D < 0; });
  ValidationOptions VO;
  VO.requireContiguous = Contiguous;
  if (Placed) {
    Error E = validatePlan(G, P, Pl, VO);
    if (!E && (!Admissible || Admissible(Pl)))
      return "a placement exists (largest node groups first, each onto the accelerator with the most room" +
             std::string(P.cpus > 0 ? " or a CPU" : "") +
             "; the validator accepts it): the time limit stopped the search, not infeasibility; give a "
             "larger --time-limit";
  }
  return std::string("whether any placement exists is not known: the size bounds allow one, but a "
                     "largest-first packing") +
         (Contiguous ? " that keeps every device's part contiguous" : "") +
         " finds none; a larger --time-limit may find one";
}
