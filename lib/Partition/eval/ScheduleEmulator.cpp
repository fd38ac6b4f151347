//===- Partition/ScheduleEmulator.cpp - FIFO scheduler and memory tracker -===//
//
// The emulator of seed 003 §3.2.1 as a discrete-event simulation: events are
// "node finished" and "node ready", processed in time order (finishes before
// readies at equal times, then in the order they were created, so the result
// is deterministic). Each device keeps a FIFO of ready nodes and runs one node
// at a time. O((V + E) log V).
//
// The memory tracker then sweeps each device's buffers in time order (Eq. (2);
// the lifetimes are documented in the header) to find its peak.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"

#include "onnx-partition/Cost/MemoryAccounting.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <tuple>

using namespace onnxp;

bool onnxp::isResidualNode(const CostNode &N) { return N.paramBytes > 0 || N.role == Role::Optimizer; }

double onnxp::nodeTimeOn(const CostGraph &G, const Platform &P, int V, int Dev) {
  return P.nodeTimeMs(G.node(V), Dev);
}

namespace {
struct Event {
  double time;
  int kind; ///< 0: finish, 1: ready
  size_t seq;
  int node;
  bool operator>(const Event &O) const { return std::tie(time, kind, seq) > std::tie(O.time, O.kind, O.seq); }
};
} // namespace

Expected<Schedule> onnxp::emulateTiming(const CostGraph &G, const Platform &P,
                                        const std::vector<int> &Device) {
  const size_t N = G.numNodes();
  const int D = P.numDevices();
  if (Device.size() != N)
    return makeError("cannot emulate a plan placing ", Device.size(), " nodes on a graph of ", N);
  for (size_t V = 0; V < N; ++V)
    if (Device[V] < 0 || Device[V] >= D)
      return makeError("cannot emulate: node '", G.node(V).name, "' is on device ", Device[V]);

  Schedule S;
  S.start.assign(N, 0);
  S.finish.assign(N, 0);
  std::vector<int> Missing(N);
  std::vector<double> ReadyAt(N, 0);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> Events;
  size_t Seq = 0;
  for (size_t V = 0; V < N; ++V) {
    Missing[V] = static_cast<int>(G.inEdges(V).size());
    if (Missing[V] == 0) Events.push({0.0, 1, Seq++, static_cast<int>(V)});
  }
  std::vector<std::deque<int>> Queue(D);
  std::vector<char> Busy(D, 0);
  auto TryStart = [&](int Dev, double Now) {
    if (Busy[Dev] || Queue[Dev].empty()) return;
    int V = Queue[Dev].front();
    Queue[Dev].pop_front();
    Busy[Dev] = 1;
    S.start[V] = Now;
    Events.push({Now + nodeTimeOn(G, P, V, Dev), 0, Seq++, V});
  };
  size_t Done = 0;
  while (!Events.empty()) {
    Event E = Events.top();
    Events.pop();
    int Dev = Device[E.node];
    if (E.kind == 1) {
      Queue[Dev].push_back(E.node);
      TryStart(Dev, E.time);
      continue;
    }
    ++Done;
    S.finish[E.node] = E.time;
    S.makespan = std::max(S.makespan, E.time);
    Busy[Dev] = 0;
    for (int EId : G.outEdges(E.node)) {
      const CostEdge &Ed = G.edge(EId);
      // Priced by the link between the two devices (issue 21).
      double Arrival = E.time + P.transferMs(Dev, Device[Ed.dst], Ed.bytes, Ed.commTime);
      ReadyAt[Ed.dst] = std::max(ReadyAt[Ed.dst], Arrival);
      if (--Missing[Ed.dst] == 0) Events.push({ReadyAt[Ed.dst], 1, Seq++, Ed.dst});
    }
    TryStart(Dev, E.time);
  }
  if (Done != N) {
    for (size_t V = 0; V < N; ++V)
      if (Missing[V] > 0)
        return makeError("cannot emulate: the graph has a cycle through node '", G.node(V).name, "'");
  }
  return S;
}

void onnxp::trackMemory(const CostGraph &G, const Platform &P, const std::vector<int> &Device, Schedule &S) {
  const size_t N = G.numNodes();
  const int D = P.numDevices();
  std::vector<MemoryBuffer> All;
  All.reserve(N + N / 2);
  // Per node: for each device holding consumers, the consumer finishing last.
  std::vector<std::pair<int, int>> LastOn; // (device, consumer), small
  // Issue 22: under the liveness model an ONNX inference node's memBytes is
  // its parameters alone; the emulator still holds its outputs as Eq. (2)
  // says (under the sum model memBytes is already params + outputs).
  const bool AddOutputs = !G.isTraining() && hasTensorLiveness(G);
  for (size_t V = 0; V < N; ++V) {
    const CostNode &Node = G.node(V);
    const int Home = Device[V];
    LastOn.clear();
    for (int EId : G.outEdges(V)) {
      int U = G.edge(EId).dst;
      auto It =
          std::find_if(LastOn.begin(), LastOn.end(), [&](const auto &P) { return P.first == Device[U]; });
      if (It == LastOn.end()) LastOn.push_back({Device[U], U});
      else if (S.finish[U] > S.finish[It->second] || (S.finish[U] == S.finish[It->second] && U > It->second))
        It->second = U;
    }
    MemoryBuffer Own;
    Own.node = static_cast<int>(V);
    Own.device = Home;
    Own.bytes = AddOutputs ? std::max(Node.memBytes, Node.paramBytes + Node.outputBytes) : Node.memBytes;
    if (isResidualNode(Node)) {
      Own.residual = true;
      Own.alloc = 0;
      Own.release = S.makespan;
    } else {
      Own.alloc = S.start[V];
      Own.release = S.finish[V];
      for (const auto &[Dev, U] : LastOn)
        if (Dev == Home && S.finish[U] >= Own.release) {
          Own.release = S.finish[U];
          Own.lastConsumer = U;
        }
    }
    if (Own.bytes > 0) All.push_back(Own);
    const double CopyBytes = Node.outputBytes > 0 ? Node.outputBytes : Node.memBytes;
    if (CopyBytes <= 0) continue;
    for (const auto &[Dev, U] : LastOn) {
      if (Dev == Home) continue;
      MemoryBuffer Copy;
      Copy.node = static_cast<int>(V);
      Copy.device = Dev;
      Copy.bytes = CopyBytes;
      Copy.copy = true;
      Copy.alloc = S.finish[V];
      Copy.release = std::max(S.finish[U], Copy.alloc);
      Copy.lastConsumer = U;
      All.push_back(Copy);
    }
  }
  // Group by device (stable, so the order within a device is deterministic).
  std::stable_sort(All.begin(), All.end(),
                   [](const MemoryBuffer &A, const MemoryBuffer &B) { return A.device < B.device; });
  S.buffers = std::move(All);
  S.deviceBegin.assign(D + 1, S.buffers.size());
  for (size_t I = S.buffers.size(); I-- > 0;) S.deviceBegin[S.buffers[I].device] = I;
  for (int Dev = D - 1; Dev >= 0; --Dev)
    S.deviceBegin[Dev] = std::min(S.deviceBegin[Dev], S.deviceBegin[Dev + 1]);

  // Sweep: (time, kind, bytes) with kind 0 = release of a buffer with
  // positive length, 1 = allocation, 2 = release of a zero-length buffer, so
  // that memory freed at T can be reused at T and instants are counted.
  S.peakMemory.assign(D, 0);
  S.peakTime.assign(D, 0);
  std::vector<std::tuple<double, int, double>> Sweep;
  for (int Dev = 0; Dev < D; ++Dev) {
    Sweep.clear();
    for (size_t I = S.deviceBegin[Dev]; I < S.deviceBegin[Dev + 1]; ++I) {
      const MemoryBuffer &B = S.buffers[I];
      Sweep.emplace_back(B.alloc, 1, B.bytes);
      Sweep.emplace_back(B.release, B.release > B.alloc ? 0 : 2, B.bytes);
    }
    std::sort(Sweep.begin(), Sweep.end());
    double Cur = 0;
    for (const auto &[T, Kind, Bytes] : Sweep) {
      if (Kind == 1) {
        Cur += Bytes;
        if (Cur > S.peakMemory[Dev]) {
          S.peakMemory[Dev] = Cur;
          S.peakTime[Dev] = T;
        }
      } else {
        Cur -= Bytes;
      }
    }
  }
}

Expected<Schedule> onnxp::emulateSchedule(const CostGraph &G, const Platform &P, const Plan &Pl) {
  Expected<Schedule> S = emulateTiming(G, P, Pl.device);
  if (!S) return S.takeError();
  trackMemory(G, P, Pl.device, *S);
  return S;
}
