//===- Partition/pipeline/PipelineIlp.cpp - Seed 000 §4's ILP with CBC ----===//
//
// The ILP of seed 000 §4, equation numbers as in the paper (0-based task k
// is the paper's T_{k+1}; communication k carries task k's output):
//
//   min T
//   (1)  z transitive                     all three rotations per triple
//   (2)  f_j >= 1 - sum_{i<j} z_ij, (3) sum f <= P
//   (4)  F_l and B_l on one GPU           z is kept per block, see below
//   (5)-(7)   w orders tasks on a GPU
//   (8)-(13)  z~ : two communications share a link
//   (14)-(16) w~ orders communications on a link
//   (17)-(19) ends in [0, T], tau_0 = 0; (20)-(21) span <= T per resource
//   (23)-(30) index shifts v, v', v~, v~' of each communication
//   (31)-(32) sigma: stashed copies;  (22) o: direct dependencies
//   (33) weights x3; (34)-(35) b: buffers; (36) memory per task <= M
//
// Reconstructions and departures, each argued where the rows are built:
//  - (1) as printed has one rotation, which does not make z an equivalence
//    (z_ij = z_ik = 1, z_jk = 0 is allowed); all three are added.
//  - A communication's duration is a_k / beta times (1 - z_{k,k+1}) in
//    (18), (25)-(26) and (29)-(30): as printed, co-located layers would
//    still wait a_k / beta between them (a phantom gap).
//  - z is one variable per pair of blocks: with (4) and (1) the task-level
//    z_{l,l'} equals the block-level one, so nothing is lost.
//  - w is one variable per unordered pair k < k'; w_{k',k} is z - w_{k,k'}
//    (for tasks on one GPU exactly one goes first; on different GPUs both
//    are 0 by (7)).
//  - Lemma 8's M^(ACT) (OCR-damaged in the text) is rebuilt from its proof:
//    a_{l-1} + a_l of the running task plus, for every block i on the GPU,
//    (sigma_i + w_{F_i,l} - w_{B_i,l}) a_i, with a_i the input of F_i (the
//    activation a^{(i)} it stashes), sigma from (32) with the shifts of the
//    communications between F_i and B_i.
//  - For a co-located communication the total shift is tied to the order of
//    its two tasks (it is w_{k+1,k}: one period when the consumer comes first
//    in the pattern). Every pattern satisfies this with the communication
//    placed at its producer's end; without it a free zero-length
//    communication could add periods the direct-dependency term (22), a
//    single binary, does not account for.
//  - sigma and b are per pair of blocks (the memory of all tasks of a GPU
//    shares them), memory rows are in MB to keep coefficients near 1.
//  - Valid cuts: T >= total compute / P, T >= F_l + B_l, T >= the compute
//    of each block's GPU and the traffic of each communication's link.
//  - Several nodes (issue 21): binaries n_ij (blocks i, j on one node, an
//    equivalence coarser than z) with at most `nodes` node classes of at
//    most `acceleratorsPerNode` GPU classes each (buildNodes); a cut costs
//    the peer link's price plus the network's extra times (1 - n), in every
//    row where seed 000 has a_k / beta. Exact when every node holds the
//    same number of the P GPUs; otherwise every communication at the
//    cheapest link (a relaxation), the allocation then placed on nodes and
//    priced by link (pricedByLink below).
//  - One node: every cut at the peer link's latency + a_k / beta (the
//    latency is 0 for a bandwidth alone, seed 000's model).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/PipelineIlp.h"
#include "onnx-partition/IR/CostGraph.h"
#include "onnx-partition/IR/Platform.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

using namespace onnxp;

namespace {
/// An affine expression over model variables.
struct Aff {
  std::vector<LinTerm> T;
  double C = 0;
};
Aff var(int V, double K = 1) { return Aff{{{V, K}}, 0}; }
Aff cst(double K) { return Aff{{}, K}; }
Aff operator+(Aff A, const Aff &B) {
  A.T.insert(A.T.end(), B.T.begin(), B.T.end());
  A.C += B.C;
  return A;
}
Aff operator*(double K, Aff A) {
  for (LinTerm &L : A.T) L.coef *= K;
  A.C *= K;
  return A;
}
Aff operator-(Aff A, const Aff &B) { return std::move(A) + (-1.0) * B; }

constexpr double MB = 1e6;

/// Issue 21: the nodes of a multi-node platform when the ILP can price
/// every cut by its link exactly: GPU g is accelerator g, every node holds
/// the same number of the P GPUs, and a cut costs the peer link inside a
/// node and the network across. Empty (Nodes = 0) otherwise.
struct IlpNodes {
  int Nodes = 0, Cap = 0;
  explicit operator bool() const { return Nodes > 1; }
};
IlpNodes ilpNodesOf(const PipelineTasks &Tasks, int P) {
  const PipelineLinks &Links = Tasks.links();
  if (!Links.perLink() || !Links.device.empty()) return {};
  const Platform &Pl = *Links.platform;
  if (!Pl.multiNode() || P > Pl.accelerators) return {};
  std::vector<int> Count;
  for (int G = 0; G < P; ++G) {
    if (!Pl.isAccelerator(G)) return {};
    const int Nd = Pl.nodeOf(G);
    if (Nd >= (int)Count.size()) Count.resize(Nd + 1, 0);
    ++Count[Nd];
  }
  for (int C : Count)
    if (C != Count[0]) return {};
  if (Count.size() < 2) return {};
  return {(int)Count.size(), Count[0]};
}

class PipelineIlp {
public:
  PipelineIlp(const PipelineTasks &Tasks, int P, double M) : Tasks(Tasks), P(P), Mem(M) {
    L = Tasks.numBlocks();
    N = Tasks.numTasks();
    Nd = ilpNodesOf(Tasks, P);
    for (int k = 0; k + 1 < N; ++k) {
      if (Nd) {
        const Platform &Pl = *Tasks.links().platform;
        DPeer.push_back(Pl.linkMs(LinkKind::Peer, Tasks.outputBytes(k)));
        DNet.push_back(Pl.linkMs(LinkKind::Network, Tasks.outputBytes(k)));
      } else {
        DPeer.push_back(Tasks.commDuration(k));
        DNet.push_back(Tasks.commDuration(k));
      }
    }
    K = 1;
    for (int k = 0; k < N; ++k) K += Tasks.duration(k);
    for (int k = 0; k + 1 < N; ++k) K += std::max(DPeer[k], DNet[k]);
  }
  void build();
  std::vector<double> startFrom(const PeriodicPattern &Pat) const;
  /// The solution's pattern; on several nodes (byLink) its GPU classes are
  /// numbered onto the nodes the solution put them on.
  PeriodicPattern patternOf(const std::vector<double> &X) const;
  /// Whether every cut is priced by its link (peer or network) in the model.
  bool byLink() const { return (bool)Nd; }

  MilpModel Model;

private:
  void buildNodes();
  bool memoryRows() const { return std::isfinite(Mem); }
  int blk(int k) const { return Tasks.blockOf(k); }
  /// z of two blocks (constant 1 on the diagonal).
  Aff Y(int I, int J) const {
    if (I == J) return cst(1);
    return var(YV[std::min(I, J)][std::max(I, J)]);
  }
  Aff Z(int A, int B) const { return Y(blk(A), blk(B)); }
  /// w_{A,B}: task A runs before task B in the pattern, on the same GPU.
  Aff W(int A, int B) const {
    if (A == B) return cst(0);
    if (A < B) return var(WV[A][B]);
    return Z(A, B) - var(WV[B][A]);
  }
  Aff cut(int k) const { return cst(1) - Z(k, k + 1); }
  /// n of two blocks: on one node (issue 21; constant 1 on the diagonal).
  Aff NodeY(int I, int J) const {
    if (I == J) return cst(1);
    return var(NV[std::min(I, J)][std::max(I, J)]);
  }
  /// Duration of communication k when it is cut: the peer link's price,
  /// plus the network's extra when its two tasks are on different nodes.
  Aff durCut(int k) const {
    if (!Nd) return cst(DPeer[k]);
    return cst(DPeer[k]) + (DNet[k] - DPeer[k]) * (cst(1) - NodeY(blk(k), blk(k + 1)));
  }
  /// Duration of communication k: 0 when co-located, else durCut(k)
  /// (z <= n: one GPU is one node, so a co-located one pays nothing).
  Aff dur(int k) const {
    if (!mayCut(k)) return cst(0);
    if (!Nd) return DPeer[k] * cut(k);
    return DPeer[k] * cut(k) + (DNet[k] - DPeer[k]) * (cst(1) - NodeY(blk(k), blk(k + 1)));
  }
  bool mayCut(int k) const { return blk(k) != blk(k + 1); }
  int commPairIndex(int A, int B) const { return A * N + B; }
  void ge(const Aff &A, double Rhs) { Model.addGe(A.T, Rhs - A.C); }
  void le(const Aff &A, double Rhs) { Model.addLe(A.T, Rhs - A.C); }
  /// The shifts of communication k: S_k = v + v' + v~ + v~'.
  Aff shifts(int k) const { return var(V[k]) + var(Vp[k]) + var(Vt[k]) + var(Vtp[k]); }

  const PipelineTasks &Tasks;
  int P, L = 0, N = 0;
  IlpNodes Nd;
  std::vector<double> DPeer, DNet; ///< a communication's price on each link kind
  double Mem, K = 0;
  int TV = -1;
  std::vector<std::vector<int>> YV, WV, Sig, Bv, O, NV;
  std::vector<int> FV, Tau, TauC, V, Vp, Vt, Vtp, GV;
  std::vector<std::vector<int>> QV;     ///< [i][j], i != j
  std::vector<std::vector<int>> ZC, WC; // [k][k'] for link pairs, -1 when absent
};

void PipelineIlp::build() {
  // T and the lower-bound cuts.
  double Total = 0, MaxBlock = 0;
  for (int I = 0; I < L; ++I) {
    double D = Tasks.duration(Tasks.forwardTask(I)) + Tasks.duration(Tasks.backwardTask(I));
    Total += D;
    MaxBlock = std::max(MaxBlock, D);
  }
  TV = Model.addContinuous(std::max(Total / P, MaxBlock), K, 1, "T");

  // Collocation of blocks (the task-level z of the paper by (4)).
  YV.assign(L, std::vector<int>(L, -1));
  for (int I = 0; I < L; ++I)
    for (int J = I + 1; J < L; ++J) YV[I][J] = Model.addBinary(0, "z");
  // (1) in all three rotations: z is an equivalence relation.
  for (int I = 0; I < L; ++I)
    for (int J = I + 1; J < L; ++J)
      for (int Kk = J + 1; Kk < L; ++Kk) {
        ge(Y(J, Kk) - Y(I, J) - Y(I, Kk), -1);
        ge(Y(I, Kk) - Y(I, J) - Y(J, Kk), -1);
        ge(Y(I, J) - Y(I, Kk) - Y(J, Kk), -1);
      }
  // (2)-(3): f_j marks the lowest block of each GPU.
  Aff SumF;
  for (int J = 0; J < L; ++J) {
    FV.push_back(Model.addBinary(0, "f"));
    Aff Row = var(FV[J]);
    for (int I = 0; I < J; ++I) Row = Row + Y(I, J);
    ge(Row, 1);
    SumF = SumF + var(FV[J]);
  }
  le(SumF, P);
  if (Nd) buildNodes();

  // Task start times; (17), (19).
  for (int k = 0; k < N; ++k) {
    double D = Tasks.duration(k);
    Tau.push_back(Model.addContinuous(k == 0 ? 0 : -D, k == 0 ? 0 : K, 0, "tau"));
    le(var(Tau[k]) - var(TV), -D);
  }
  // (5)-(7) ordering and (20) span, per pair of tasks.
  WV.assign(N, std::vector<int>(N, -1));
  for (int A = 0; A < N; ++A)
    for (int B = A + 1; B < N; ++B) {
      WV[A][B] = Model.addBinary(0, "w");
      Aff Zab = Z(A, B), Wab = var(WV[A][B]);
      ge(var(Tau[A]) - var(Tau[B]) + K * (cst(1) - Zab + Wab), Tasks.duration(B));     // (5)
      ge(var(Tau[B]) - var(Tau[A]) + K * (cst(2) - Zab - Wab), Tasks.duration(A));     // (6)
      if (blk(A) != blk(B)) le(Wab - Zab, 0);                                          // (7)
      ge(var(TV) - var(Tau[A]) + var(Tau[B]) + K * (cst(1) - Zab), Tasks.duration(A)); // (20)
      ge(var(TV) - var(Tau[B]) + var(Tau[A]) + K * (cst(1) - Zab), Tasks.duration(B));
    }

  // Communications: (18) with the (1 - z_{k,k+1}) fix.
  for (int k = 0; k + 1 < N; ++k) {
    double Dc = std::max(DPeer[k], DNet[k]);
    TauC.push_back(Model.addContinuous(-Dc, K, 0, "tauc"));
    Aff End = var(TauC[k]) + dur(k);
    ge(End, 0);
    le(End - var(TV), 0);
  }
  // (8)-(16), (21) for pairs of communications that may use a link.
  ZC.assign(N, std::vector<int>(N, -1));
  WC = ZC;
  for (int A = 0; A + 1 < N; ++A) {
    if (!mayCut(A)) continue;
    for (int B = A + 1; B + 1 < N; ++B) {
      if (!mayCut(B)) continue;
      int Zt = ZC[A][B] = Model.addBinary(0, "zc");
      int Wt = WC[A][B] = Model.addBinary(0, "wc");
      Aff ZtA = var(Zt);
      ge(ZtA - Z(A, B) - Z(A + 1, B + 1) + Z(A, A + 1), -1); // (8)
      ge(ZtA - Z(A, B + 1) - Z(A + 1, B) + Z(A, A + 1), -1); // (9)
      le(ZtA + Z(A, A + 1), 1);                              // (10)
      le(ZtA + Z(B, B + 1), 1);                              // (11)
      le(ZtA - Z(A, B) - Z(A + 1, B), 0);                    // (12)
      le(ZtA - Z(A, B + 1) - Z(A + 1, B + 1), 0);            // (13)
      const Aff Da = durCut(A), Db = durCut(B);
      // (14)-(16): when z~ = 1 both are cut, so the durations are durCut.
      ge(var(TauC[A]) - var(TauC[B]) + K * (cst(1) - ZtA + var(Wt)) - Db, 0);
      ge(var(TauC[B]) - var(TauC[A]) + K * (cst(2) - ZtA - var(Wt)) - Da, 0);
      le(var(Wt) - ZtA, 0);
      // (21) both ways.
      ge(var(TV) - var(TauC[A]) + var(TauC[B]) + K * (cst(1) - ZtA) - Da, 0);
      ge(var(TV) - var(TauC[B]) + var(TauC[A]) + K * (cst(1) - ZtA) - Db, 0);
    }
  }
  // Valid cuts (not in the paper; the LP relaxation of the big-M rows says
  // nothing about loads): T is at least each GPU's compute ...
  for (int J = 0; J < L; ++J) {
    Aff Row = var(TV);
    for (int I = 0; I < L; ++I)
      Row = Row - (Tasks.duration(Tasks.forwardTask(I)) + Tasks.duration(Tasks.backwardTask(I))) * Y(J, I);
    ge(Row, 0);
  }
  // ... and each link's traffic (every communication sharing A's link).
  for (int A = 0; A + 1 < N; ++A) {
    if (!mayCut(A)) continue;
    Aff Row = var(TV) - Tasks.commDuration(A) * cut(A);
    for (int B = 0; B + 1 < N; ++B)
      if (B != A && mayCut(B)) Row = Row - Tasks.commDuration(B) * var(A < B ? ZC[A][B] : ZC[B][A]);
    ge(Row, 0);
  }
  if (!memoryRows()) return;

  // (23)-(30): index shifts of every communication.
  for (int k = 0; k + 1 < N; ++k) {
    V.push_back(Model.addBinary(0, "v"));
    Vp.push_back(Model.addBinary(0, "vp"));
    Vt.push_back(Model.addBinary(0, "vt"));
    Vtp.push_back(Model.addBinary(0, "vtp"));
    double D = Tasks.duration(k);
    Aff TaskEnd = var(Tau[k]) + cst(D);
    Aff CommEnd = var(TauC[k]) + dur(k);
    Aff Next = var(Tau[k + 1]), Tc = var(TauC[k]), T = var(TV);
    ge(TaskEnd - Tc + K * (cst(1) - var(V[k])), 0);             // (23)
    ge(Tc - TaskEnd + K * var(V[k]), 0);                        // (24)
    ge(CommEnd - Next + K * (cst(1) - var(Vt[k])), 0);          // (25)
    ge(Next - CommEnd + K * var(Vt[k]), 0);                     // (26)
    ge(Tc + T - TaskEnd + 2 * K * var(Vp[k]), 0);               // (27)
    ge(TaskEnd - Tc - T + 2 * K * (cst(1) - var(Vp[k])), 0);    // (28)
    ge(Next + T - CommEnd + 2 * K * var(Vtp[k]), 0);            // (29)
    ge(CommEnd - Next - T + 2 * K * (cst(1) - var(Vtp[k])), 0); // (30)
    // Co-located: the shift is the order of the two tasks (file comment).
    le(shifts(k) - W(k + 1, k) - (mayCut(k) ? 4.0 * cut(k) : cst(0)), 0);
  }
  // (31)-(32): sigma[j][i] copies of a_i stashed on block j's GPU.
  const double BigS = 4.0 * N;
  Sig.assign(L, std::vector<int>(L, -1));
  for (int I = 0; I < L; ++I) {
    Aff S;
    for (int k = Tasks.forwardTask(I); k < Tasks.backwardTask(I); ++k) S = S + shifts(k);
    for (int J = 0; J < L; ++J) {
      Sig[J][I] = Model.addVar(VarKind::Integer, 0, BigS, 0, "sigma");
      ge(var(Sig[J][I]) - S + BigS * (cst(1) - Y(J, I)), 0);
    }
  }
  // (34)-(35): b[j][c], a buffer for the cut after block c on block j's GPU.
  Bv.assign(L, std::vector<int>(std::max(0, L - 1), -1));
  for (int J = 0; J < L; ++J)
    for (int C = 0; C + 1 < L; ++C) {
      Bv[J][C] = Model.addBinary(0, "b");
      ge(var(Bv[J][C]) - Y(J, C) + Y(J, C + 1), 0);
      ge(var(Bv[J][C]) - Y(J, C + 1) + Y(J, C), 0);
    }
  // (22) and (36) per task.
  O.assign(N, std::vector<int>(N, -1));
  for (int l = 0; l < N; ++l) {
    int J = blk(l);
    Aff Row = cst((Tasks.inputBytes(l) + Tasks.outputBytes(l)) / MB);
    for (int I = 0; I < L; ++I) {
      Row = Row + (3 * Tasks.weightBytes(I) / MB) * Y(J, I); // (33)
      double A = Tasks.stashBytes(I) / MB;                   // Lemma 8
      Row = Row + A * (var(Sig[J][I]) + W(Tasks.forwardTask(I), l) - W(Tasks.backwardTask(I), l));
    }
    for (int Lp = 0; Lp + 1 < N; ++Lp) {
      if (Lp == l || Lp + 1 == l) continue;
      O[l][Lp] = Model.addBinary(0, "o");
      ge(var(O[l][Lp]) - W(Lp, l) - W(l, Lp + 1) - W(Lp + 1, Lp), -1); // (22)
      Row = Row + (Tasks.outputBytes(Lp) / MB) * var(O[l][Lp]);
    }
    for (int C = 0; C + 1 < L; ++C)
      Row = Row + (2 * Tasks.outputBytes(Tasks.forwardTask(C)) / MB) * var(Bv[J][C]);
    le(Row, Mem / MB); // (36)
  }
}

/// Issue 21, several nodes: n_ij = 1 when blocks i and j share a node, an
/// equivalence relation like z and coarser (z <= n: a GPU is on one node);
/// g_j marks the lowest block of each node, at most Nodes of them; the
/// GPU classes of block j's node, sum_i f_i n_ij (f marks each GPU's lowest
/// block, eq. (2)), are at most Cap, with q_ij >= f_i + n_ij - 1 standing
/// for the product. Every allocation onto the nodes satisfies these, and
/// every solution numbers onto them (patternOf), so the model is exact.
void PipelineIlp::buildNodes() {
  NV.assign(L, std::vector<int>(L, -1));
  for (int I = 0; I < L; ++I)
    for (int J = I + 1; J < L; ++J) {
      NV[I][J] = Model.addBinary(0, "n");
      ge(NodeY(I, J) - Y(I, J), 0);
    }
  for (int I = 0; I < L; ++I)
    for (int J = I + 1; J < L; ++J)
      for (int Kk = J + 1; Kk < L; ++Kk) {
        ge(NodeY(J, Kk) - NodeY(I, J) - NodeY(I, Kk), -1);
        ge(NodeY(I, Kk) - NodeY(I, J) - NodeY(J, Kk), -1);
        ge(NodeY(I, J) - NodeY(I, Kk) - NodeY(J, Kk), -1);
      }
  Aff SumG;
  for (int J = 0; J < L; ++J) {
    const int G = Model.addBinary(0, "g");
    Aff Row = var(G);
    for (int I = 0; I < J; ++I) Row = Row + NodeY(I, J);
    ge(Row, 1);
    SumG = SumG + var(G);
    GV.push_back(G);
  }
  le(SumG, Nd.Nodes);
  QV.assign(L, std::vector<int>(L, -1));
  for (int J = 0; J < L; ++J) {
    Aff Classes = var(FV[J]);
    for (int I = 0; I < L; ++I) {
      if (I == J) continue;
      QV[I][J] = Model.addContinuous(0, 1, 0, "q");
      ge(var(QV[I][J]) - var(FV[I]) - NodeY(I, J), -1);
      Classes = Classes + var(QV[I][J]);
    }
    le(Classes, Nd.Cap);
  }
}

std::vector<double> PipelineIlp::startFrom(const PeriodicPattern &Pat) const {
  std::vector<double> X(Model.numVars(), 0);
  const double T = Pat.period, Eps = 1e-9 * std::max(1.0, T);
  X[TV] = T;
  auto Same = [&](int I, int J) { return Pat.gpuOfBlock[I] == Pat.gpuOfBlock[J]; };
  for (int I = 0; I < L; ++I)
    for (int J = I + 1; J < L; ++J) X[YV[I][J]] = Same(I, J);
  for (int J = 0; J < L; ++J) {
    bool Lowest = true;
    for (int I = 0; I < J; ++I) Lowest &= !Same(I, J);
    X[FV[J]] = Lowest;
  }
  for (int k = 0; k < N; ++k) X[Tau[k]] = Pat.taskStart[k];
  std::vector<bool> Cut(N - 1);
  for (int k = 0; k + 1 < N; ++k) {
    Cut[k] = Pat.isCut(Tasks, k);
    X[TauC[k]] = Cut[k] ? Pat.commStart[k] : Pat.taskStart[k] + Tasks.duration(k);
  }
  // Orders: by start, then end, then chain order (the simulator's rule).
  auto Before = [&](double S1, double E1, int I1, double S2, double E2, int I2) {
    if (std::fabs(S1 - S2) > Eps) return S1 < S2;
    if (std::fabs(E1 - E2) > Eps) return E1 < E2;
    return I1 < I2;
  };
  for (int A = 0; A < N; ++A)
    for (int B = A + 1; B < N; ++B)
      if (Same(blk(A), blk(B)))
        X[WV[A][B]] = Before(Pat.taskStart[A], Pat.taskStart[A] + Tasks.duration(A), A, Pat.taskStart[B],
                             Pat.taskStart[B] + Tasks.duration(B), B);
  auto LinkOf = [&](int k) {
    int G = Pat.gpuOfTask(Tasks, k), H = Pat.gpuOfTask(Tasks, k + 1);
    return std::make_pair(std::min(G, H), std::max(G, H));
  };
  for (int A = 0; A + 1 < N; ++A)
    for (int B = A + 1; B + 1 < N; ++B) {
      if (ZC[A][B] < 0 || !Cut[A] || !Cut[B] || LinkOf(A) != LinkOf(B)) continue;
      X[ZC[A][B]] = 1;
      X[WC[A][B]] = Before(X[TauC[A]], X[TauC[A]] + Pat.commDuration(Tasks, A), A, X[TauC[B]],
                           X[TauC[B]] + Pat.commDuration(Tasks, B), B);
    }
  if (Nd) {
    // Nodes of the start's GPUs (GPU g is accelerator g).
    const Platform &Pl = *Tasks.links().platform;
    auto NodeOf = [&](int I) { return Pl.nodeOf(Pat.gpuOfBlock[I]); };
    for (int I = 0; I < L; ++I)
      for (int J = I + 1; J < L; ++J) X[NV[I][J]] = NodeOf(I) == NodeOf(J);
    for (int J = 0; J < L; ++J) {
      bool Lowest = true;
      for (int I = 0; I < J; ++I) Lowest &= NodeOf(I) != NodeOf(J);
      X[GV[J]] = Lowest;
      for (int I = 0; I < L; ++I)
        if (QV[I][J] >= 0) X[QV[I][J]] = X[FV[I]] > 0.5 && NodeOf(I) == NodeOf(J);
    }
  }
  if (!memoryRows()) return X;
  std::vector<int> Shift(N - 1);
  for (int k = 0; k + 1 < N; ++k) {
    double TaskEnd = Pat.taskStart[k] + Tasks.duration(k);
    double CommEnd = X[TauC[k]] + (Cut[k] ? Pat.commDuration(Tasks, k) : 0);
    double Next = Pat.taskStart[k + 1];
    X[V[k]] = TaskEnd > X[TauC[k]] + Eps;
    X[Vp[k]] = TaskEnd > X[TauC[k]] + T + Eps;
    X[Vt[k]] = CommEnd > Next + Eps;
    X[Vtp[k]] = CommEnd > Next + T + Eps;
    Shift[k] = (int)(X[V[k]] + X[Vp[k]] + X[Vt[k]] + X[Vtp[k]]);
  }
  for (int I = 0; I < L; ++I) {
    int S = 0;
    for (int k = Tasks.forwardTask(I); k < Tasks.backwardTask(I); ++k) S += Shift[k];
    for (int J = 0; J < L; ++J) X[Sig[J][I]] = Same(J, I) ? S : 0;
  }
  for (int J = 0; J < L; ++J)
    for (int C = 0; C + 1 < L; ++C) X[Bv[J][C]] = Same(J, C) != Same(J, C + 1);
  auto Wv = [&](int A, int B) -> double {
    if (A == B || !Same(blk(A), blk(B))) return 0;
    return A < B ? X[WV[A][B]] : 1 - X[WV[B][A]];
  };
  for (int l = 0; l < N; ++l)
    for (int Lp = 0; Lp + 1 < N; ++Lp)
      if (O[l][Lp] >= 0) X[O[l][Lp]] = std::max(0.0, Wv(Lp, l) + Wv(l, Lp + 1) + Wv(Lp + 1, Lp) - 1);
  return X;
}

PeriodicPattern PipelineIlp::patternOf(const std::vector<double> &X) const {
  PeriodicPattern Pat;
  Pat.numGpus = P;
  Pat.period = X[TV];
  Pat.bandwidth = Tasks.bandwidth();
  // GPUs numbered by their lowest block.
  Pat.gpuOfBlock.assign(L, -1);
  int Next = 0;
  for (int J = 0; J < L; ++J) {
    for (int I = 0; I < J && Pat.gpuOfBlock[J] < 0; ++I)
      if (X[YV[I][J]] > 0.5) Pat.gpuOfBlock[J] = Pat.gpuOfBlock[I];
    if (Pat.gpuOfBlock[J] < 0) Pat.gpuOfBlock[J] = Next++;
  }
  Pat.numGpus = std::max(P, Next);
  if (Nd) {
    // Nodes numbered by their lowest block, each GPU class on the next free
    // GPU of its node (GPU g is accelerator g, node g / Cap): the durations
    // the ILP priced are the links the replay crosses.
    std::vector<int> NodeOfBlock(L, -1), GpuOfClass(Next, -1), Used;
    for (int J = 0; J < L; ++J) {
      for (int I = 0; I < J && NodeOfBlock[J] < 0; ++I)
        if (X[NV[I][J]] > 0.5) NodeOfBlock[J] = NodeOfBlock[I];
      if (NodeOfBlock[J] < 0) NodeOfBlock[J] = (int)Used.size(), Used.push_back(0);
      int &G = GpuOfClass[Pat.gpuOfBlock[J]];
      if (G < 0) G = NodeOfBlock[J] * Nd.Cap + Used[NodeOfBlock[J]]++;
    }
    for (int &G : Pat.gpuOfBlock) G = GpuOfClass[G];
  }
  // Snap the solver's times to a grid far below the simulator's tolerance:
  // ties it meant (a zero-length task at another's start) become exact.
  const double Q = 1e-7 * std::max(1.0, Pat.period);
  auto Snap = [&](double V) { return std::round(V / Q) * Q; };
  for (int k = 0; k < N; ++k) Pat.taskStart.push_back(Snap(X[Tau[k]]));
  for (int k = 0; k + 1 < N; ++k) Pat.commStart.push_back(Snap(X[TauC[k]]));
  assignMinimalDelays(Tasks, Pat);
  return Pat;
}
/// Issue 24, chains above exactBlocks: the memory-aware contiguous warm
/// start, the memory-aware bound (boundShare of the time), then the LNS
/// over allocations until the deadline (AllocationSearch.cpp).
Expected<PipelinePlan> planPipelineSearch(const PipelineTasks &Tasks, const PipelineIlpOptions &O) {
  const auto Start = std::chrono::steady_clock::now();
  Expected<PipelinePlan> Warm = memoryAwareContiguousWithin(Tasks, O.numGpus, O.memoryBytes, 40000, 10000,
                                                            [&O] { return O.deadline.expired(); });
  if (!Warm) return Warm.takeError();
  const double WarmPeriod = Warm->period();
  const bool WarmStopped = O.deadline.expired();
  // The LNS until (1 - boundShare) of what is left has passed, then the bound.
  PipelineIlpOptions SearchO = O;
  SearchO.deadline = O.deadline.share(1 - O.boundShare);
  Expected<PipelinePlan> Plan = searchAllocations(Tasks, SearchO, *Warm);
  if (!Plan) return Plan.takeError();
  Expected<MemoryAwareBound> Bound = memoryAwareBound(Tasks, O.numGpus, O.memoryBytes, Plan->period(), O);
  if (!Bound) return Bound.takeError();
  Plan->algorithm = "pipeline-ilp";
  Plan->lowerBound = Bound->bound;
  Plan->stats["warm_start_period_ms"] = WarmPeriod;
  Plan->stats["bound_ms"] = Bound->bound;
  Plan->stats["bound_within_1pct"] = Bound->withinOnePercent ? 1 : 0;
  Plan->stats["bound_probes"] = Bound->probes;
  Plan->stats["bound_seconds"] = Bound->solverSeconds;
  Plan->stats["solver_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  const double Gap = Plan->period() > 0 ? std::max(0.0, (Plan->period() - Bound->bound) / Plan->period()) : 0;
  Plan->stats["solver_gap"] = Gap;
  Plan->stats["proven_optimal"] = Gap <= 1e-4 ? 1 : 0;
  Plan->notes.push_back("searched allocations for the time limit (" + std::to_string(Tasks.numBlocks()) +
                        " blocks, more than " + std::to_string(O.exactBlocks) +
                        " for the exact ILP); gap to the memory-aware bound " + std::to_string(Gap));
  if (Bound->tooLarge)
    Plan->notes.push_back(
        "the memory-aware bound's relaxation was not built (" + std::to_string(Tasks.numBlocks()) +
        " blocks: its memory rows grow with blocks^2 x GPUs); the bound is total work / GPUs");
  if (WarmStopped)
    Plan->notes.push_back("the time limit ran out during the contiguous warm start (PipeDream's straight "
                          "pipelines, O(stages x blocks^2)): the plan is the best split found by then");
  // The plan the search kept was replayed when priced; replay it once more
  // here, as the exact path does, and check its memory.
  Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, Plan->pattern);
  if (!Sim)
    return makeInternalError("the pipeline-ilp pattern fails the simulator: ", Sim.takeError().message());
  Plan->sim = std::move(*Sim);
  if (Plan->sim.peakMemory > O.memoryBytes * (1 + 1e-9) + 1)
    return makeInternalError("the pipeline-ilp pattern needs ", Plan->sim.peakMemory,
                             " bytes on a GPU in the simulator, above the limit ", O.memoryBytes);
  return Plan;
}
} // namespace

namespace {
/// Issue 20, item 3: "found no pattern within 60 s" did not say whether to
/// wait longer or to change the memory. Says whether a contiguous pipeline
/// fits (none did: the warm start failed) and the least memory one of
/// PipeDream's straight pipelines of 1..P stages needs, and whether CBC was
/// stopped by the clock (a non-contiguous pattern may still exist) or
/// proved that none exists.
Error noPatternError(const PipelineTasks &Tasks, const PipelineIlpOptions &O) {
  double Least = MilpModel::Inf;
  int LeastStages = 0;
  for (int S = 1; S <= O.numGpus && S <= (int)Tasks.numBlocks(); ++S) {
    Expected<StraightPipeline> SP = pipeDreamStraightPipeline(Tasks, S);
    if (!SP) {
      (void)SP.takeError();
      continue;
    }
    Expected<PipelinePlan> PP = priceAllocation(Tasks, SP->stageOfBlock, O.numGpus, "pipedream");
    if (!PP) {
      (void)PP.takeError();
      continue;
    }
    if (PP->peakMemory() < Least) {
      Least = PP->peakMemory();
      LeastStages = S;
    }
  }
  std::string Contig = "no contiguous pipeline on " + std::to_string(O.numGpus) + " GPUs fits in " +
                       exactBytes(O.memoryBytes) + " per GPU";
  if (std::isfinite(Least))
    Contig += " (the least memory among PipeDream's straight pipelines is " + exactBytes(Least) +
              " per GPU, with " + std::to_string(LeastStages) + " stage" + (LeastStages > 1 ? "s" : "") + ")";
  return makeDoesNotFitError(
      "pipeline-ilp: ", Contig, ", and the time limit (", formatNumber(O.deadline.limitSeconds()),
      " s) stopped the ILP before it found a non-contiguous pattern or proved that none exists: "
      "give more memory, or a longer --time-limit");
}
} // namespace

namespace {
/// Issue 21, several nodes of unequal size (ilpNodesOf is empty): the ILP
/// above is seed 000's model with every communication on the cheapest link (PipelineTasks::commDuration(k)),
/// a relaxation of the per-link one (a longer communication never helps), so its bound stays a bound. Its
/// allocation, its GPU classes grouped onto nodes for the least link load (placeOnNodes), is priced by link:
/// the modulo pattern at the allocation's load, replayed; the warm start (priced by link when it was made) is
/// kept when it is better or the ILP's does not fit.
Expected<PipelinePlan> pricedByLink(const PipelineTasks &Tasks, const PipelineIlpOptions &O,
                                    PipelinePlan Plan, std::optional<PipelinePlan> &Warm) {
  Expected<PipelinePlan> ByLink =
      priceAllocation(Tasks, placeOnNodes(Tasks, Plan.pattern.gpuOfBlock, Plan.pattern.numGpus),
                      Plan.pattern.numGpus, "pipeline-ilp");
  const bool Fits = ByLink && ByLink->peakMemory() <= O.memoryBytes * (1 + 1e-9) + 1;
  if (Fits && (!Warm || ByLink->period() <= Warm->period())) {
    ByLink->stats = std::move(Plan.stats);
    ByLink->notes = std::move(Plan.notes);
    ByLink->lowerBound = Plan.lowerBound;
    ByLink->notes.push_back(
        "the ILP priced every cut at the cheapest link; its allocation was priced by link");
    return std::move(*ByLink);
  }
  if (!Warm) {
    if (!ByLink) return ByLink.takeError();
    return makeError("pipeline-ilp: the ILP's allocation needs ", exactBytes(ByLink->peakMemory()),
                     " on a GPU when priced by link, above the limit of ", exactBytes(O.memoryBytes));
  }
  if (!ByLink) (void)ByLink.takeError();
  PipelinePlan Fallback = std::move(*Warm);
  Fallback.algorithm = "pipeline-ilp";
  Fallback.stats.insert(Plan.stats.begin(), Plan.stats.end());
  Fallback.lowerBound = Plan.lowerBound;
  Fallback.notes = std::move(Plan.notes);
  Fallback.notes.push_back(std::string("the ILP's allocation priced by link ") +
                           (Fits ? "is slower than" : "does not fit, unlike") +
                           " the warm start; returning it");
  return Fallback;
}
} // namespace

Expected<PipelinePlan> onnxp::planPipelineIlp(const PipelineTasks &Tasks, const PipelineIlpOptions &O) {
  if (O.numGpus < 1) return makeUsageError("pipeline-ilp needs at least one GPU");
  if (!(O.memoryBytes > 0)) return makeUsageError("pipeline-ilp needs a positive memory per GPU");
  if (Tasks.numBlocks() > O.exactBlocks) return planPipelineSearch(Tasks, O);
  PipelineIlp Ilp(Tasks, O.numGpus, O.memoryBytes);
  Ilp.build();
  PipelinePlan Plan;
  Plan.algorithm = "pipeline-ilp";
  Plan.stats["ilp_variables"] = (double)Ilp.Model.numVars();
  Plan.stats["ilp_rows"] = (double)Ilp.Model.numRows();

  std::optional<PipelinePlan> Warm;
  if (O.warmStart) {
    // Memory-aware: PipeDream's time-optimal splits alone often fit only
    // on one GPU when memory is tight (docs/benchmarks-history.md, issue 12).
    // Issue 20: the warm start gets at most half of what is left of the
    // run (it took 6 s of a 2 s limit on a loaded machine).
    const Deadline WarmEnd = O.deadline.share(0.5);
    Expected<PipelinePlan> W = memoryAwareContiguousWithin(Tasks, O.numGpus, O.memoryBytes, 40000, 10000,
                                                           [&WarmEnd] { return WarmEnd.expired(); });
    if (W) {
      Warm = std::move(*W);
      std::vector<double> Start = Ilp.startFrom(Warm->pattern);
      Plan.stats["warm_start_period_ms"] = Warm->period();
      Plan.stats["warm_start_violation"] = Ilp.Model.maxViolation(Start);
      Ilp.Model.setMipStart(std::move(Start));
    }
  }

  MilpOptions MO;
  // Issue 20: CBC's own limit is what is left less a reserve for the
  // simulator and the outputs (cbcSecondsFor); the deadline stops it from
  // outside.
  MO.deadline = O.deadline;
  MO.relativeGap = O.relativeGap;
  MO.threads = O.threads;
  MO.verbose = O.verbose;
  MO.progress = O.progress;
  // Debian's CBC 2.10 crashes in CglPreProcess::postProcess on this model
  // when the time limit stops the search (seen on vgg16, P = 4): run it
  // without CBC's preprocessing.
  MO.extraArgs = {"-preprocess", "off"};
  Expected<MilpResult> R = solveMilp(Ilp.Model, MO);
  if (!R) return R.takeError();
  Plan.stats["solver_seconds"] = R->seconds;
  Plan.stats["solver_nodes"] = (double)R->nodes;
  Plan.stats["warm_start_accepted"] = R->startAccepted ? 1 : 0;
  if (R->status == MilpStatus::Infeasible)
    return makeError("no 1F1B pattern on ", O.numGpus, " GPUs fits in ", O.memoryBytes, " bytes per GPU")
        .withCause(Error::Cause::NoFeasiblePattern);
  // The warm start (replayed by the simulator when it was made) in place of
  // the solver's pattern, with the solver's statistics and a note why.
  auto WarmInstead = [&](double Bound, const std::string &Why) {
    PipelinePlan Fallback = std::move(*Warm);
    Fallback.algorithm = "pipeline-ilp";
    Fallback.stats.insert(Plan.stats.begin(), Plan.stats.end());
    Fallback.lowerBound = Bound;
    Fallback.notes.push_back(Why + "; returning the warm start");
    return Fallback;
  };
  if (!R->hasSolution()) {
    if (!Warm) return noPatternError(Tasks, O);
    return WarmInstead(std::isfinite(R->bound) ? R->bound : NAN, solverStopNote(*R));
  }
  Plan.pattern = Ilp.patternOf(R->values);
  Plan.lowerBound = std::isfinite(R->bound) ? R->bound : NAN;
  Plan.stats["ilp_period_ms"] = R->objective;
  Plan.stats["solver_bound_ms"] = R->bound;
  Plan.stats["solver_gap"] = R->gap();
  Plan.stats["proven_optimal"] = R->status == MilpStatus::Optimal ? 1 : 0;
  if (R->status != MilpStatus::Optimal) Plan.notes.push_back(solverStopNote(*R));
  if (Tasks.links().perLink()) {
    const bool OnNodes =
        Ilp.byLink() && std::all_of(Plan.pattern.gpuOfBlock.begin(), Plan.pattern.gpuOfBlock.end(),
                                    [&](int G) { return G < O.numGpus; });
    Plan.stats["ilp_priced_by_link"] = OnNodes ? 1 : 0;
    if (!OnNodes) return pricedByLink(Tasks, O, std::move(Plan), Warm);
    Plan.notes.push_back("the ILP priced every cut by its link (peer inside a node, network across)");
  }
  // Never report the ILP's own numbers: replay the pattern.
  auto Fits = [&](const Expected<PipelineSimResult> &S) {
    return S && S->peakMemory <= O.memoryBytes * (1 + 1e-9) + 1;
  };
  Expected<PipelineSimResult> Sim = simulatePipeline(Tasks, Plan.pattern);
  if (!Fits(Sim)) {
    // CBC's integrality and feasibility tolerances, multiplied by the
    // big-M rows' period, let a task end a little past T (0.0015 ms of a
    // 43 s period in a chain-mutation finding): the last backward of one
    // minibatch then starts at the same instant as the first forward two
    // minibatches later, and the replay, ordering that tie by rounding,
    // counts one stashed copy more than the ILP (eq. 36). Stretching the
    // period by more than the slack separates what the ILP ordered across
    // periods; the replay decides again.
    PeriodicPattern Stretched = Plan.pattern;
    Stretched.period *= 1 + 4e-6;
    assignMinimalDelays(Tasks, Stretched);
    Expected<PipelineSimResult> Again = simulatePipeline(Tasks, Stretched);
    if (Fits(Again)) {
      Plan.notes.push_back(
          "the solver's pattern was replayed at a period " +
          formatNumber(Stretched.period - Plan.pattern.period) +
          " ms longer, to absorb CBC's tolerances (its tasks overran the period by less than that)");
      Plan.pattern = std::move(Stretched);
      Sim = std::move(Again);
    } else if (Warm) {
      return WarmInstead(Plan.lowerBound,
                         std::string("the solver's pattern ") +
                             (Sim ? "needs " + exactBytes(Sim->peakMemory) + " on a GPU in the replay"
                                  : "fails the replay (" + Sim.takeError().message() + ")"));
    }
  }
  if (!Sim)
    return makeInternalError("the pipeline-ilp pattern fails the simulator: ", Sim.takeError().message());
  Plan.sim = std::move(*Sim);
  if (Plan.sim.peakMemory > O.memoryBytes * (1 + 1e-9) + 1)
    return makeInternalError("the pipeline-ilp pattern needs ", Plan.sim.peakMemory,
                             " bytes on a GPU in the simulator, above the limit ", O.memoryBytes);
  return Plan;
}
