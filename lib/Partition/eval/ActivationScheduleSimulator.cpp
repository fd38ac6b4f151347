//===- Partition/eval/ActivationScheduleSimulator.cpp - Replay of a remat plan ===//
//
// Three passes over the operation sequence: (1) the accelerator's timeline
// (operations back to back, idle where the plan says) and the link's
// (offloads FIFO as soon as enqueued, prefetches as late as possible before
// the operation that needs them); (2) tensor lifetimes from the operation
// semantics of Remat.h, checking every read; (3) memory at every breakpoint
// of every operation and every gap between operations. Positions 2c (during
// compute operation c) and 2c+1 (after it) order what happens at one
// instant: inputs freed by c still count during c, outputs count from c on.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/ActivationScheduleSimulator.h"

#include "onnx-partition/IR/CostGraph.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>

using namespace onnxp;

namespace {

constexpr double Tol = 1e-9;

enum TensorKind { Act = 0, Stored = 1, Grad = 2 };

struct Instance {
  std::string name;
  double bytes = 0;
  double exact = 0; ///< its own size, before rounding up to slots (issue 22)
  int bornPos = 0, diedPos = INT_MAX;
  bool pinned = false;
  bool prefetched = false;
  double ps = 0, pe = 0;
  bool offloaded = false;
  double os = 0, oe = 0;
  int lastReader = -1; ///< compute op that read it while its offload ran

  double at(int Pos, double T) const {
    if (prefetched) {
      if (T <= ps) return 0;
      if (T >= pe) return bytes;
      return bytes * (T - ps) / (pe - ps);
    }
    if (offloaded && Pos > 2 * lastReader) {
      if (T <= os) return bytes;
      if (T >= oe) return 0;
      return bytes * (oe - T) / (oe - os);
    }
    return bytes;
  }

  /// A bound on the floating-point error of at(): a transfer's share is
  /// interpolated from absolute times, each off by an ulp or so, and a long
  /// run before a short transfer (67 s of compute, a 0.06 ms prefetch) turns
  /// that into a ten-thousandth of a byte. The DP works in exact slots, so a
  /// plan it puts exactly at the budget lands a hair above it here.
  double error(int Pos, double T) const {
    auto Interp = [&](double S, double E) {
      double Scale = std::max({1.0, std::fabs(T), std::fabs(S), std::fabs(E)});
      return bytes * 8 * std::numeric_limits<double>::epsilon() * Scale / (E - S);
    };
    if (prefetched && T > ps && T < pe) return Interp(ps, pe);
    if (offloaded && Pos > 2 * lastReader && T > os && T < oe) return Interp(os, oe);
    return 0;
  }
};

struct ComputeOp {
  RematOpKind kind;
  int layer;
  double start, end;
  double overhead;
  double exactOverhead = 0;
};

struct Transfer {
  int key;
  bool stored;
  int layer;
  double bytes;
  double when;  ///< enqueue time (offload) or deadline (prefetch)
  int beforeOp; ///< compute op index that follows the marker
  double start = 0, end = 0;
};

class Replayer {
public:
  Replayer(const Chain &C, const RematOptions &O, const RematPlan &P) : C(C), O(O), P(P), L(int(C.size())) {}

  Expected<ActivationReplay> run() {
    if (!(P.slotBytes > 0)) return makeInternalError("activation replay: the plan has no slot size");
    R.budgetBytes = P.budgetSlots * P.slotBytes;
    ONNXP_RETURN_IF_ERROR(timeline());
    ONNXP_RETURN_IF_ERROR(link());
    ONNXP_RETURN_IF_ERROR(lifetimes());
    memory();
    if (OverBudget)
      return makeInternalError("activation replay: peak memory ", formatNumber(R.peakBytes), " bytes at ",
                               formatNumber(PeakTime), " ms (", PeakWhere, ") exceeds the budget of ",
                               formatNumber(R.budgetBytes), " bytes");
    return R;
  }

private:
  double rounded(double Bytes) const {
    double Q = Bytes / P.slotBytes;
    return std::ceil(Q - 1e-9 * std::max(1.0, Q)) * P.slotBytes;
  }
  double actBytes(int K) const { return rounded(K == 0 ? C.inputBytes : C.blocks[K - 1].outputBytes); }
  double storedBytes(int K) const {
    const ChainBlock &B = C.blocks[K - 1];
    return std::max(actBytes(K), rounded(B.storedBytes));
  }
  int key(TensorKind Kind, int K) const { return Kind * (L + 2) + K; }
  double linkTime(double Bytes) const {
    if (std::isinf(O.bandwidthBytesPerSec)) return 0;
    return Bytes / (O.bandwidthBytesPerSec / 1000.0);
  }
  std::string opName(int Idx) const {
    const ComputeOp &Op = Ops[Idx];
    return std::string(rematOpName(Op.kind)) + "^" + std::to_string(Op.layer) + " (operation " +
           std::to_string(Idx + 1) + ")";
  }

  Error timeline() {
    double T = 0;
    bool SeenLoss = false;
    for (const RematOp &Op : P.ops) {
      switch (Op.kind) {
      case RematOpKind::Idle:
        if (!(Op.idleMs >= 0) || !std::isfinite(Op.idleMs))
          return makeInternalError("activation replay: idle time ", Op.idleMs, " is not a duration");
        if (Op.idleMs > 0) R.slices.push_back({"idle", T, T + Op.idleMs, 3});
        T += Op.idleMs;
        break;
      case RematOpKind::Offload:
      case RematOpKind::Prefetch: {
        bool Off = Op.kind == RematOpKind::Offload;
        if (!P.offload)
          return makeInternalError("activation replay: a transfer in a plan without offloading");
        if (Op.layer < 0 || Op.layer > L || (Op.stored && Op.layer == 0))
          return makeInternalError("activation replay: transfer of a tensor that does not exist");
        if (Off == SeenLoss)
          return makeInternalError("activation replay: ", Off ? "offload after" : "prefetch before",
                                   " the loss");
        Transfer X{key(Op.stored ? Stored : Act, Op.layer),
                   Op.stored,
                   Op.layer,
                   Op.stored ? storedBytes(Op.layer) : actBytes(Op.layer),
                   T,
                   int(Ops.size())};
        (Off ? Offloads : Prefetches).push_back(X);
        break;
      }
      default: {
        double Dur = 0, Over = 0, ExactOver = 0;
        if (Op.kind == RematOpKind::Loss) {
          if (SeenLoss || Op.layer != L + 1)
            return makeInternalError("activation replay: a second or misplaced loss");
          SeenLoss = true;
          LossIdx = int(Ops.size());
          Dur = O.lossTimeMs;
        } else {
          if (Op.layer < 1 || Op.layer > L)
            return makeInternalError("activation replay: layer ", Op.layer, " out of range");
          const ChainBlock &B = C.blocks[Op.layer - 1];
          bool Fw = Op.kind != RematOpKind::Backward;
          Dur = Fw ? B.forwardTime : B.backwardTime;
          ExactOver = Fw ? B.forwardOverhead : B.backwardOverhead;
          Over = rounded(ExactOver);
          if (!Fw && !SeenLoss)
            return makeInternalError("activation replay: B^", Op.layer, " before the loss");
        }
        Ops.push_back({Op.kind, Op.layer, T, T + Dur, Over, ExactOver});
        R.slices.push_back(
            {std::string(rematOpName(Op.kind)) + " " + std::to_string(Op.layer), T, T + Dur, 0});
        T += Dur;
      }
      }
    }
    if (!SeenLoss) return makeInternalError("activation replay: the sequence has no loss");
    R.makespanMs = T;
    return Error::success();
  }

  Error link() {
    double Free = 0;
    for (Transfer &X : Offloads) {
      X.start = std::max(X.when, Free);
      X.end = X.start + linkTime(X.bytes);
      Free = X.end;
      R.offloadedBytes += X.bytes;
      R.slices.push_back({"offload a" + std::to_string(X.layer), X.start, X.end, 1});
    }
    double LossEnd = Ops[LossIdx].end;
    double FirstBackward = LossIdx + 1 < int(Ops.size()) ? Ops[LossIdx + 1].start : R.makespanMs;
    if (Free > FirstBackward + Tol * std::max(1.0, FirstBackward))
      return makeInternalError("activation replay: offloads run until ", formatNumber(Free),
                               " ms, after the backward phase starts at ", formatNumber(FirstBackward),
                               " ms");
    // As late as possible, latest deadline first.
    std::vector<Transfer *> Order;
    for (Transfer &X : Prefetches) Order.push_back(&X);
    std::stable_sort(Order.begin(), Order.end(), [](Transfer *A, Transfer *B) { return A->when > B->when; });
    double Next = std::numeric_limits<double>::infinity();
    for (Transfer *X : Order) {
      X->end = std::min(X->when, Next);
      X->start = X->end - linkTime(X->bytes);
      Next = X->start;
      R.slices.push_back({"prefetch a" + std::to_string(X->layer), X->start, X->end, 2});
    }
    double Earliest = std::max(LossEnd, Free);
    if (!Order.empty() && Next < Earliest - Tol * std::max(1.0, Earliest))
      return makeInternalError("activation replay: the prefetches need the link from ", formatNumber(Next),
                               " ms, before the loss and the offloads are over at ", formatNumber(Earliest),
                               " ms");
    return Error::success();
  }

  int find(int Key) const {
    auto It = Live.find(Key);
    return It == Live.end() ? -1 : It->second;
  }

  /// The instance holding a^K: the activation itself or the stored state abar^K.
  Expected<int> readActivation(int K, int Idx) {
    int I = find(key(Act, K));
    if (I < 0 && K > 0) I = find(key(Stored, K));
    if (I < 0)
      return makeInternalError("activation replay: ", opName(Idx), " reads a", K,
                               ", which is not on the accelerator");
    ONNXP_RETURN_IF_ERROR(checkRead(I, Idx));
    return I;
  }

  Error checkRead(int I, int Idx) {
    Instance &In = Inst[I];
    double S = Ops[Idx].start;
    if (In.prefetched && In.pe > S + Tol * std::max(1.0, S))
      return makeInternalError("activation replay: ", opName(Idx), " reads ", In.name, " at ",
                               formatNumber(S), " ms but its prefetch ends at ", formatNumber(In.pe), " ms");
    if (In.offloaded) {
      if (In.os < S - Tol * std::max(1.0, S))
        return makeInternalError("activation replay: ", opName(Idx), " reads ", In.name,
                                 " after its offload began");
      In.lastReader = std::max(In.lastReader, Idx);
    }
    return Error::success();
  }

  Expected<int> need(TensorKind Kind, int K, int Idx) {
    int I = find(key(Kind, K));
    if (I < 0)
      return makeInternalError("activation replay: ", opName(Idx), " needs ", Kind == Grad ? "delta" : "abar",
                               K, ", which is not on the accelerator");
    ONNXP_RETURN_IF_ERROR(checkRead(I, Idx));
    return I;
  }

  Error create(TensorKind Kind, int K, double Bytes, int Pos, int Idx) {
    int Key = key(Kind, K);
    if (find(Key) >= 0)
      return makeInternalError("activation replay: ", opName(Idx), " writes ", Inst[find(Key)].name,
                               ", which is still on the accelerator");
    Instance In;
    In.name = std::string(Kind == Act ? "a" : Kind == Stored ? "abar" : "delta") + std::to_string(K);
    In.bytes = Bytes;
    const double A = K == 0 ? C.inputBytes : C.blocks[K - 1].outputBytes;
    In.exact = Kind == Stored ? std::max(A, C.blocks[K - 1].storedBytes) : A;
    In.bornPos = Pos;
    Inst.push_back(In);
    Live[Key] = int(Inst.size()) - 1;
    return Error::success();
  }

  void kill(int I, int Pos) {
    Inst[I].diedPos = Pos;
    for (auto It = Live.begin(); It != Live.end(); ++It)
      if (It->second == I) {
        Live.erase(It);
        break;
      }
  }

  Error lifetimes() {
    ONNXP_RETURN_IF_ERROR(create(Act, 0, actBytes(0), 0, 0));
    Inst.back().pinned = true;
    size_t NextOff = 0, NextPre = 0;
    std::vector<int> BackwardDone(L + 2, 0);
    for (int Idx = 0; Idx < int(Ops.size()); ++Idx) {
      // Transfer markers placed before this operation.
      while (NextOff < Offloads.size() && Offloads[NextOff].beforeOp == Idx) {
        Transfer &X = Offloads[NextOff++];
        int I = find(X.key);
        if (I < 0 || Inst[I].offloaded || Inst[I].prefetched || X.end < X.start)
          return makeInternalError("activation replay: offload of ", X.stored ? "abar" : "a", X.layer,
                                   ", which is not a kept tensor on the accelerator");
        Inst[I].offloaded = true;
        Inst[I].os = X.start;
        Inst[I].oe = X.end;
        Away[X.key] = I; // still readable by the operation the offload overlaps
      }
      while (NextPre < Prefetches.size() && Prefetches[NextPre].beforeOp == Idx) {
        Transfer &X = Prefetches[NextPre++];
        auto It = Away.find(X.key);
        if (It == Away.end())
          return makeInternalError("activation replay: prefetch of ", X.stored ? "abar" : "a", X.layer,
                                   ", which was not offloaded");
        Instance Back = Inst[It->second];
        Away.erase(It);
        Back.offloaded = false;
        Back.prefetched = true;
        Back.ps = X.start;
        Back.pe = X.end;
        Back.bornPos = 0;
        Inst.push_back(Back);
        Live[X.key] = int(Inst.size()) - 1;
      }
      const ComputeOp &Op = Ops[Idx];
      int K = Op.kind == RematOpKind::Loss ? L + 1 : Op.layer;
      int During = 2 * Idx;
      switch (Op.kind) {
      case RematOpKind::ForwardAll:
      case RematOpKind::ForwardCheck:
      case RematOpKind::ForwardNoGrad: {
        Expected<int> In = readActivation(K - 1, Idx);
        if (!In) return In.takeError();
        if (Op.kind == RematOpKind::ForwardAll) {
          ONNXP_RETURN_IF_ERROR(create(Stored, K, storedBytes(K), During, Idx));
        } else {
          ONNXP_RETURN_IF_ERROR(create(Act, K, actBytes(K), During, Idx));
        }
        bool Standalone = Inst[*In].name[0] == 'a' && Inst[*In].name.rfind("abar", 0) != 0;
        if (Op.kind == RematOpKind::ForwardNoGrad) {
          if (Standalone && !Inst[*In].pinned) kill(*In, During);
        } else {
          Inst[*In].pinned = true;
        }
        break;
      }
      case RematOpKind::Loss:
      case RematOpKind::Backward: {
        if (BackwardDone[K]++) return makeInternalError("activation replay: ", opName(Idx), " runs twice");
        if (Op.kind == RematOpKind::Backward) {
          Expected<int> D = need(Grad, K, Idx);
          if (!D) return D.takeError();
          Expected<int> S = need(Stored, K, Idx);
          if (!S) return S.takeError();
          kill(*D, During);
          kill(*S, During);
        }
        Expected<int> In = readActivation(K - 1, Idx);
        if (!In) return In.takeError();
        bool Standalone = Inst[*In].name.rfind("abar", 0) != 0;
        if (Standalone) kill(*In, During);
        ONNXP_RETURN_IF_ERROR(create(Grad, K - 1, actBytes(K - 1), During, Idx));
        break;
      }
      default: break;
      }
    }
    if (NextOff != Offloads.size() || NextPre != Prefetches.size())
      return makeInternalError("activation replay: a transfer marker after the last operation");
    for (int K = 1; K <= L + 1; ++K)
      if (!BackwardDone[K])
        return makeInternalError(
            "activation replay: ", K == L + 1 ? std::string("the loss") : "B^" + std::to_string(K),
            " never runs");
    if (!Away.empty()) return makeInternalError("activation replay: an offloaded tensor never comes back");
    for (auto &[Key, I] : Live)
      if (Inst[I].name != "delta0")
        return makeInternalError("activation replay: ", Inst[I].name,
                                 " is still on the accelerator at the end");
    if (!Away.empty()) return makeInternalError("activation replay: an offloaded tensor never comes back");
    return Error::success();
  }

  void memory() {
    std::vector<double> Breaks;
    for (const Transfer &X : Offloads) Breaks.insert(Breaks.end(), {X.start, X.end});
    for (const Transfer &X : Prefetches) Breaks.insert(Breaks.end(), {X.start, X.end});
    std::sort(Breaks.begin(), Breaks.end());
    auto Eval = [&](int Pos, double T, double Extra) {
      double Sum = Extra;
      for (const Instance &In : Inst)
        if (In.bornPos <= Pos && Pos <= In.diedPos) Sum += In.at(Pos, T);
      return Sum;
    };
    // Issue 22: the same replay with every tensor at its own size, the peak
    // the accelerator sees (the slots round each tensor up).
    auto EvalError = [&](int Pos, double T) {
      double Sum = 0;
      for (const Instance &In : Inst)
        if (In.bornPos <= Pos && Pos <= In.diedPos) Sum += In.error(Pos, T);
      return Sum;
    };
    auto EvalExact = [&](int Pos, double T, double Extra) {
      double Sum = Extra;
      for (const Instance &In : Inst)
        if (In.bornPos <= Pos && Pos <= In.diedPos && In.bytes > 0)
          Sum += In.at(Pos, T) * (In.exact / In.bytes);
      return Sum;
    };
    auto Scan = [&](int Pos, double From, double To, double Extra, const std::string &Where,
                    double ExactExtra) {
      std::vector<double> Ts{From, To};
      auto Lo = std::upper_bound(Breaks.begin(), Breaks.end(), From);
      for (auto It = Lo; It != Breaks.end() && *It < To; ++It) Ts.push_back(*It);
      for (double T : Ts) {
        double V = Eval(Pos, T, Extra);
        R.memory.push_back({T, V});
        // Over only beyond what rounding of the times can explain.
        if (V - EvalError(Pos, T) > R.budgetBytes * (1 + 1e-12) + 1e-6) OverBudget = true;
        R.exactPeakBytes = std::max(R.exactPeakBytes, EvalExact(Pos, T, ExactExtra));
        if (V > R.peakBytes) {
          R.peakBytes = V;
          PeakTime = T;
          PeakWhere = Where;
        }
      }
    };
    for (int Idx = 0; Idx < int(Ops.size()); ++Idx) {
      Scan(2 * Idx, Ops[Idx].start, Ops[Idx].end, Ops[Idx].overhead, opName(Idx), Ops[Idx].exactOverhead);
      double Next = Idx + 1 < int(Ops.size()) ? Ops[Idx + 1].start : R.makespanMs;
      Scan(2 * Idx + 1, Ops[Idx].end, Next, 0, "after " + opName(Idx), 0);
    }
    std::stable_sort(R.memory.begin(), R.memory.end(),
                     [](const auto &A, const auto &B) { return A.first < B.first; });
  }

  const Chain &C;
  const RematOptions &O;
  const RematPlan &P;
  int L;
  ActivationReplay R;
  std::vector<ComputeOp> Ops;
  std::vector<Transfer> Offloads, Prefetches;
  int LossIdx = -1;
  bool OverBudget = false;
  std::vector<Instance> Inst;
  std::map<int, int> Live, Away;
  double PeakTime = 0;
  std::string PeakWhere;
};

} // namespace

Expected<ActivationReplay> onnxp::replayActivationSchedule(const Chain &C, const RematOptions &Options,
                                                           const RematPlan &Plan) {
  if (!Plan.feasible) return makeInternalError("activation replay: the plan is infeasible");
  return Replayer(C, Options, Plan).run();
}

ChromeTrace onnxp::activationTrace(const ActivationReplay &R) {
  ChromeTrace T;
  T.nameProcess(0, "accelerator");
  T.nameThread(0, 0, "compute");
  T.nameThread(0, 3, "idle (waiting for the link)");
  T.nameProcess(1, "host link");
  T.nameThread(1, 1, "offload (to host)");
  T.nameThread(1, 2, "prefetch (to accelerator)");
  for (const ActivationReplay::Slice &S : R.slices) {
    bool Link = S.lane == 1 || S.lane == 2;
    std::string Cat = S.lane == 0 ? "compute" : S.lane == 3 ? "idle" : S.lane == 1 ? "offload" : "prefetch";
    T.addSlice(Link ? 1 : 0, S.lane, S.name, Cat, S.startMs, S.endMs - S.startMs);
  }
  for (const auto &[Ms, Bytes] : R.memory) T.addCounter(0, "memory (bytes)", Ms, Bytes);
  return T;
}
