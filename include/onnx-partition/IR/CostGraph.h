//===- IR/CostGraph.h - The graph every partitioner works on ----*- C++ -*-===//
//
// A CostGraph is the one picture every partitioner, evaluator and writer
// shares (DESIGN.md, "Core data structures"). A node stands for one ONNX node,
// a group of them after contraction, or one node of a JSON workload; an edge
// is a tensor from producer to consumer. Nodes carry their training role,
// forward partner, colocation class, per-device-kind compute time and the
// bytes they hold; edges carry bytes and the time to move them. The mapping
// back to ONNX (onnxNodes, tensor names) lets annotations land on the
// original nodes.
//
// Units: times are milliseconds for ONNX models (JSON workloads keep their
// own unit, which the published tables share); sizes are bytes.
//
// This header deliberately does not include ONNX: algorithm files compile
// against it alone.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_COSTGRAPH_H
#define ONNXP_IR_COSTGRAPH_H

#include "onnx-partition/Support/Error.h"

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace onnxp {

/// The part of a training iteration a node belongs to.
enum class Role : uint8_t { Forward, Loss, Backward, Optimizer };
const char *roleName(Role R);

struct CostNode {
  std::string name; ///< unique within the graph
  std::string op;   ///< ONNX op_type ("" for workload nodes)
  std::string domain;
  Role role = Role::Forward;
  int partner = -1;    ///< forward partner of a backward node, else -1
  int colocClass = -1; ///< nodes sharing a class must share a device; -1: own class

  double accTime = 0;        ///< time on one accelerator
  double cpuTime = 0;        ///< time on one CPU core
  bool accSupported = true;  ///< false: must not be placed on an accelerator
  double flops = 0;          ///< floating point operations (cost model)
  double paramBytes = 0;     ///< bytes of parameters this node owns
  double outputBytes = 0;    ///< bytes of the tensors it produces
  double workspaceBytes = 0; ///< transient bytes while it runs
  double memBytes = 0;       ///< bytes charged against accelerator memory
  std::string costSource;    ///< which model priced it: workload, placeholder, ...
  // Breakdown for reports (Cost/MemoryAccounting.h); memBytes is their sum.
  double bytesAccessed = 0;  ///< bytes the kernel reads + writes (cost model)
  double gradBytes = 0;      ///< gradients of the trainable parameters it owns
  double optimizerBytes = 0; ///< optimizer state of those parameters
  double savedBytes = 0;     ///< activations kept for the backward pass
  /// Kernel launches accTime includes, each at the reference accelerator's
  /// kernelOverheadMs (the analytical model's count; a contracted node sums
  /// its members'). 0: unknown, accTime is rescaled as a whole on other
  /// accelerator kinds (Platform::nodeTimeOnKind, issue 21).
  double kernels = 0;

  std::vector<int> onnxNodes; ///< indices into the model's graph.node
  int64_t externalId = -1;    ///< node id in the source workload file, or -1

  bool isBackward() const { return role == Role::Backward; }
  /// Whether the node sits on the forward side of a training split (forward
  /// and loss nodes; optimizer nodes follow their parameters' class).
  bool isForwardSide() const { return role == Role::Forward || role == Role::Loss; }
};

struct CostEdge {
  int src = -1;
  int dst = -1;
  std::string tensor;  ///< ONNX tensor name ("" for workload edges)
  double bytes = 0;    ///< size of the tensor
  double commTime = 0; ///< time to move it between an accelerator and host RAM
};

/// Issue 22, item 4: a parameter read by forward nodes of different
/// colocation classes (a tied embedding: lookup and LM head). Its readers
/// need not share a device: a plan that spreads them over several devices
/// replicates the parameter there (a copy on each, memory charged on each)
/// and all-reduces its gradient once per iteration
/// (Partition/eval/TiedWeights.h). Node ids are this graph's.
struct SharedParameter {
  std::string name;
  std::vector<int> readers; ///< forward readers and their backward partners (any class)
  /// Nodes that sum the readers' partial gradients or update the parameter
  /// (ORT's AccumulateGrad Sum, optimizer nodes): under replication each
  /// device holding a copy runs them on its local partial gradients.
  std::vector<int> sinks;
  /// Weight-derived nodes (issue 22, Megatron's embedding group): forward
  /// readers whose every input is a parameter (BLOOM's LM-head Transpose of
  /// the tied embedding). When the parameter is replicated, a device holding
  /// a reader of their output runs its own copy of them instead of
  /// receiving the output; their backward partners are sinks.
  std::vector<int> derived;
  double weightBytes = 0;    ///< one copy of the parameter
  double gradBytes = 0;      ///< its gradient buffer (training)
  double optimizerBytes = 0; ///< its optimizer state (training)
  int owner = -1;            ///< the node whose memory terms already hold the parameter
  /// A tensor ONNX Runtime constant-folds (Cost/FoldedConstants.h), not a
  /// parameter: always copied to every device holding a reader (the copy is
  /// free in time), never colocated, no gradient.
  bool folded = false;
};

class CostGraph {
public:
  int addNode(CostNode N);
  int addEdge(CostEdge E);

  size_t numNodes() const { return Nodes.size(); }
  size_t numEdges() const { return Edges.size(); }
  const CostNode &node(int I) const { return Nodes[I]; }
  CostNode &node(int I) { return Nodes[I]; }
  const CostEdge &edge(int I) const { return Edges[I]; }
  CostEdge &edge(int I) { return Edges[I]; }
  const std::vector<CostNode> &nodes() const { return Nodes; }
  const std::vector<CostEdge> &edges() const { return Edges; }

  /// Edge ids leaving / entering a node, in insertion order.
  const std::vector<int> &outEdges(int N) const { return Out[N]; }
  const std::vector<int> &inEdges(int N) const { return In[N]; }

  /// Node id by name, or -1.
  int findNode(const std::string &Name) const;

  /// A topological order, or an error naming a node on a cycle.
  Expected<std::vector<int>> topologicalOrder() const;

  /// True when any node is a backward node.
  bool isTraining() const;
  size_t countRole(Role R) const;

  /// The colocation class of node N with -1 resolved to a class of its own.
  /// Classes are dense ids in [0, numClasses()).
  int classOf(int N) const;
  int numClasses() const;
  /// Renumbers colocation classes densely (nodes with -1 get a fresh class).
  void normalizeClasses();

  /// Stable textual dump: one line per node, one per edge (lit tests
  /// FileCheck it). Numbers are printed with %g-style shortest form.
  void print(std::ostream &OS) const;

  /// Where the graph came from (file path), for messages.
  std::string sourceName;
  /// Whether the costs are in milliseconds or the workload's own unit.
  std::string timeUnit = "ms";
  /// Tied parameters whose readers may be replicated (issue 22, item 4).
  std::vector<SharedParameter> sharedParameters;

private:
  std::vector<CostNode> Nodes;
  std::vector<CostEdge> Edges;
  std::vector<std::vector<int>> Out, In;
};

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Issue 22, item 4: the devices that hold a copy of shared parameter SP
/// under a placement. SP is replicated when its readers sit on at least two
/// devices (else both vectors are empty: one copy, transfers as usual).
/// Then every device reading a weight-derived tensor (SP.derived) holds a
/// copy of the weight and runs its own copy of the derived node, and every
/// device producing a partial gradient for, or running, one of SP's sinks
/// accumulates that gradient locally: all of them all-reduce the gradient
/// once per iteration.
struct ReplicaHolders {
  std::vector<int> devices;       ///< all holders, ascending: the all-reduce group
  std::vector<int> weightDevices; ///< those holding the weight (readers), ascending
};
ReplicaHolders replicaHolders(const CostGraph &G, const SharedParameter &SP, const std::vector<int> &Device);

/// Formats a double for dumps and reports: shortest round-trippable form
/// with at most 6 significant digits, "inf" for infinity.
std::string formatNumber(double V);

} // namespace onnxp

#endif // ONNXP_IR_COSTGRAPH_H
