//===- Partition/dp/IdealLattice.cpp - Canonical ideal enumeration ------===//
//
// A depth-first walk of the canonical tree (IdealLattice.h). The walker keeps
// the set of addable units (all predecessors inside, unit itself outside) as
// a bitset updated in O(out-degree) per step, so each ideal costs
// O(units / 64 + its addable units).
//
//===----------------------------------------------------------------------===//
#include "IdealLattice.h"

#include <algorithm>
#include <bit>

using namespace onnxp;
using namespace onnxp::dp;

namespace {

class AddableSet {
public:
  explicit AddableSet(const UnitGraph &UG) : UG(UG), Missing(UG.numUnits()) {
    Bits.assign((UG.numUnits() + 63) / 64, 0);
    for (int U = 0; U < UG.numUnits(); ++U) {
      Missing[U] = static_cast<int>(UG.preds[U].size());
      if (Missing[U] == 0) set(U);
    }
  }
  void add(int U) {
    clear(U);
    for (int W : UG.succs[U])
      if (--Missing[W] == 0) set(W);
  }
  void remove(int U) {
    for (int W : UG.succs[U])
      if (Missing[W]++ == 0) clear(W);
    set(U);
  }
  /// Smallest addable unit >= From, or -1.
  int next(int From) const {
    if (From < 0) From = 0;
    size_t W = From / 64;
    if (W >= Bits.size()) return -1;
    uint64_t Word = Bits[W] & (~uint64_t(0) << (From % 64));
    while (true) {
      if (Word) return static_cast<int>(W * 64 + std::countr_zero(Word));
      if (++W == Bits.size()) return -1;
      Word = Bits[W];
    }
  }

private:
  void set(int U) { Bits[U / 64] |= uint64_t(1) << (U % 64); }
  void clear(int U) { Bits[U / 64] &= ~(uint64_t(1) << (U % 64)); }
  const UnitGraph &UG;
  std::vector<int> Missing;
  std::vector<uint64_t> Bits;
};

Error tooMany(size_t Limit) {
  return makeUsageError("the forward graph has more than ", Limit,
                        " ideals (the ideal limit), too many for the exact DP; use --algo dpl "
                        "(the linearized DP of seed 004 §5.1.2, polynomial) or raise the limit");
}

/// Walks the canonical tree; with Out set, records the lattice.
Error walk(const UnitGraph &UG, size_t Limit, size_t &Count, IdealLattice *Out) {
  AddableSet Add(UG);
  struct Frame {
    int Ideal, Last, Next;
  };
  std::vector<Frame> Stack;
  Count = 1;
  auto Visit = [&](int J) {
    if (!Out) return;
    for (int U = Add.next(0); U >= 0; U = Add.next(U + 1)) {
      Out->edgeUnit.push_back(U);
      Out->edgeTarget.push_back(-1);
    }
    Out->edgeBegin.push_back(static_cast<uint32_t>(Out->edgeUnit.size()));
  };
  if (Out) {
    *Out = IdealLattice();
    Out->parent = {-1};
    Out->last = {-1};
    Out->size = {0};
    Out->edgeBegin = {0};
  }
  Visit(0);
  Stack.push_back({0, -1, 0});
  while (!Stack.empty()) {
    Frame &F = Stack.back();
    int U = Add.next(std::max(F.Next, F.Last + 1));
    if (U < 0) {
      if (F.Last >= 0) Add.remove(F.Last);
      Stack.pop_back();
      continue;
    }
    F.Next = U + 1;
    if (++Count > Limit) return tooMany(Limit);
    int Child = static_cast<int>(Count - 1);
    int Size = static_cast<int>(Stack.size());
    if (Out) {
      int J = F.Ideal;
      auto B = Out->edgeUnit.begin() + Out->edgeBegin[J];
      auto E = Out->edgeUnit.begin() + Out->edgeBegin[J + 1];
      Out->edgeTarget[std::lower_bound(B, E, U) - Out->edgeUnit.begin()] = Child;
      Out->parent.push_back(J);
      Out->last.push_back(U);
      Out->size.push_back(Size);
    }
    Add.add(U);
    Visit(Child);
    Stack.push_back({Child, U, 0});
  }
  return Error::success();
}

int findEdge(const IdealLattice &L, int J, int U) {
  auto B = L.edgeUnit.begin() + L.edgeBegin[J];
  auto E = L.edgeUnit.begin() + L.edgeBegin[J + 1];
  auto It = std::lower_bound(B, E, U);
  assert(It != E && *It == U && "unit is not addable to this ideal");
  return L.edgeTarget[It - L.edgeUnit.begin()];
}

} // namespace

std::vector<int> IdealLattice::bySize() const {
  int MaxSize = 0;
  for (int S : size) MaxSize = std::max(MaxSize, S);
  std::vector<int> Start(MaxSize + 2, 0), Order(count());
  for (int S : size) ++Start[S + 1];
  for (int S = 0; S <= MaxSize; ++S) Start[S + 1] += Start[S];
  for (size_t J = 0; J < count(); ++J) Order[Start[size[J]]++] = static_cast<int>(J);
  return Order;
}

std::vector<int> IdealLattice::unitsOf(int J) const {
  std::vector<int> Units;
  for (; J > 0; J = parent[J]) Units.push_back(last[J]);
  std::reverse(Units.begin(), Units.end());
  return Units;
}

Expected<size_t> onnxp::dp::countIdeals(const UnitGraph &UG, size_t Limit) {
  size_t Count = 0;
  ONNXP_RETURN_IF_ERROR(walk(UG, Limit, Count, nullptr));
  return Count;
}

Expected<IdealLattice> onnxp::dp::buildIdealLattice(const UnitGraph &UG, size_t Limit) {
  size_t Count = 0;
  IdealLattice L;
  ONNXP_RETURN_IF_ERROR(walk(UG, Limit, Count, &L));
  // Non-tree edges: J + {u} = child(edge(parent(J), u), last(J)) for u < last(J).
  for (int J : L.bySize()) {
    for (uint32_t I = L.edgeBegin[J]; I < L.edgeBegin[J + 1]; ++I) {
      if (L.edgeTarget[I] >= 0) continue;
      int U = L.edgeUnit[I];
      assert(J > 0 && U < L.last[J] && "tree edge left unresolved");
      int K = findEdge(L, L.parent[J], U);
      L.edgeTarget[I] = findEdge(L, K, L.last[J]);
    }
  }
  for (size_t J = 0; J < L.count(); ++J)
    if (L.size[J] == UG.numUnits()) L.full = static_cast<int>(J);
  return L;
}
