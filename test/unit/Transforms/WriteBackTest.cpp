//===- unit/Transforms/WriteBackTest.cpp - Annotate, transfers, stages, read back ===//
//
// Property tests of the write-back transforms on random DAGs with random
// device assignments (checked against brute-force definitions: contiguity
// by path enumeration, crossings by counting), plus round trips of the IR
// v10 fields and the strict plan reader. Whole write-backs run the
// library's own passes (writeBack below), never a copy of their sequence.
// Numerics are checked in ONNX Runtime by the lit tests
// (test/lit/WriteBack/ort-*.test).
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Pass/PassManager.h"
#include "onnx-partition/Transforms/AnnotatePlacement.h"
#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/Placement.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/ReadPlacement.h"
#include "onnx-partition/Transforms/VerifyOutput.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace onnxp;

namespace {

/// A random DAG as an ONNX model: node i reads 1-3 earlier outputs (or X)
/// through Sum, so every node is a real op with a known schema.
struct RandomDag {
  onnx::ModelProto model;
  std::vector<std::vector<int>> preds;
};

RandomDag randomDag(std::mt19937 &Rng, int N) {
  RandomDag D;
  D.model.set_ir_version(8);
  auto *Op = D.model.add_opset_import();
  Op->set_domain("");
  Op->set_version(17);
  onnx::GraphProto *G = D.model.mutable_graph();
  G->set_name("dag");
  auto Float = [](onnx::ValueInfoProto *VI, const std::string &Name) {
    VI->set_name(Name);
    auto *T = VI->mutable_type()->mutable_tensor_type();
    T->set_elem_type(onnx::TensorProto::FLOAT);
    T->mutable_shape()->add_dim()->set_dim_value(4);
  };
  Float(G->add_input(), "X");
  D.preds.resize(N);
  std::vector<char> Used(N, 0);
  for (int I = 0; I < N; ++I) {
    onnx::NodeProto *Node = G->add_node();
    Node->set_op_type("Sum");
    std::set<int> P;
    int Want = I == 0 ? 0 : 1 + static_cast<int>(Rng() % 3);
    for (int J = 0; J < Want; ++J) P.insert(static_cast<int>(Rng() % I));
    if (P.empty()) Node->add_input("X");
    for (int J : P) {
      Node->add_input("t" + std::to_string(J));
      D.preds[I].push_back(J);
      Used[J] = 1;
    }
    Node->add_output("t" + std::to_string(I));
  }
  for (int I = 0; I < N; ++I)
    if (!Used[I]) Float(G->add_output(), "t" + std::to_string(I));
  return D;
}

/// Brute force: the set of nodes on device Dev is contiguous iff no path
/// leaves it and comes back (seed 004 Def. 3.1).
bool contiguousBrute(const std::vector<std::vector<int>> &Preds, const std::vector<int> &Dev, int D) {
  size_t N = Preds.size();
  // reach[u][v]: path from u to v through nodes off device D (excluding ends).
  std::vector<std::vector<char>> Succ(N, std::vector<char>(N, 0));
  for (size_t V = 0; V < N; ++V)
    for (int U : Preds[V]) Succ[U][V] = 1;
  for (size_t U = 0; U < N; ++U) {
    if (Dev[U] != D) continue;
    // DFS from U's successors off D; reaching a node on D is a violation.
    std::vector<char> Seen(N, 0);
    std::vector<int> Stack;
    for (size_t V = 0; V < N; ++V)
      if (Succ[U][V] && Dev[V] != D) Stack.push_back(static_cast<int>(V));
    while (!Stack.empty()) {
      int W = Stack.back();
      Stack.pop_back();
      if (Seen[W]) continue;
      Seen[W] = 1;
      for (size_t V = 0; V < N; ++V) {
        if (!Succ[W][V]) continue;
        if (Dev[V] == D) return false;
        Stack.push_back(static_cast<int>(V));
      }
    }
  }
  return true;
}

ModelPlacement randomPlacement(std::mt19937 &Rng, int N, int K) {
  ModelPlacement P;
  for (int D = 0; D < K; ++D) P.deviceNames.push_back("acc" + std::to_string(D));
  P.device.resize(N);
  P.inserted.assign(N, 0);
  // Half the time a contiguous plan: cut the (topological) index order.
  bool Chunks = Rng() % 2;
  for (int I = 0; I < N; ++I) P.device[I] = Chunks ? I * K / N : static_cast<int>(Rng() % K);
  return P;
}

/// The compiler's write-back on a plan that puts cost node i (ONNX node i)
/// on accelerator Device[i] of K: the front end's infer-shapes and
/// build-cost-graph, then insert-transfers, annotate-placement,
/// extract-stages and verify-output, the passes -o and --emit-stages run
/// (Pass/Passes.def).
Expected<PassContext> writeBack(const onnx::ModelProto &Model, const std::string &Path,
                                const std::vector<int> &Device, int K) {
  Expected<OnnxModel> M = loadOnnxModel(Path, Model.SerializeAsString());
  if (!M) return M.takeError();
  PassContext Ctx;
  Ctx.model = std::move(*M);
  Ctx.platform.accelerators = K;
  Expected<PassManager> Front = PassManager::parse("infer-shapes,build-cost-graph");
  if (!Front) return Front.takeError();
  ONNXP_RETURN_IF_ERROR(Front->run(Ctx, {}));
  Plan Pl;
  Pl.device = Device;
  Ctx.plan = std::move(Pl);
  Expected<PassManager> Back =
      PassManager::parse("insert-transfers,annotate-placement,extract-stages,verify-output");
  if (!Back) return Back.takeError();
  ONNXP_RETURN_IF_ERROR(Back->run(Ctx, {}));
  return Ctx;
}

} // namespace

TEST(PlacementFields, RoundTripThroughTheWire) {
  onnx::ModelProto M;
  onnx::NodeProto *N = M.mutable_graph()->add_node();
  N->set_op_type("Relu");
  N->add_input("x");
  N->add_output("y");
  setNodeMetadataProps(*N, {{"onnx_partition.device", "acc1"}, {"other", "kept"}});
  setNodeDeviceConfigurations(*N, {{"onnx_partition", {{"y", {1}}}, true, 3}});
  setModelConfigurations(M, {{"onnx_partition", 2, {"acc0", "acc1"}}});
  std::string Bytes = M.SerializeAsString();
  onnx::ModelProto Back;
  ASSERT_TRUE(Back.ParseFromString(Bytes));
  Expected<MetadataEntries> Meta = nodeMetadataProps(Back.graph().node(0));
  ASSERT_EXPECTED(Meta);
  EXPECT_EQ(*Meta, (MetadataEntries{{"onnx_partition.device", "acc1"}, {"other", "kept"}}));
  Expected<std::vector<NodeDeviceConfiguration>> C = nodeDeviceConfigurations(Back.graph().node(0));
  ASSERT_EXPECTED(C);
  ASSERT_EQ(C->size(), 1u);
  EXPECT_EQ((*C)[0].configurationId, "onnx_partition");
  ASSERT_EQ((*C)[0].shardingSpecs.size(), 1u);
  EXPECT_EQ((*C)[0].shardingSpecs[0].tensorName, "y");
  EXPECT_EQ((*C)[0].shardingSpecs[0].devices, std::vector<int64_t>{1});
  EXPECT_TRUE((*C)[0].hasPipelineStage);
  EXPECT_EQ((*C)[0].pipelineStage, 3);
  Expected<std::vector<DeviceConfiguration>> MC = modelConfigurations(Back);
  ASSERT_EXPECTED(MC);
  ASSERT_EQ(MC->size(), 1u);
  EXPECT_EQ((*MC)[0].devices, (std::vector<std::string>{"acc0", "acc1"}));
  // The fields sit at the IR v10 numbers, as unknown fields of ONNX 1.12.
  const auto &U = Back.graph().node(0).unknown_fields();
  std::set<int> Numbers;
  for (int I = 0; I < U.field_count(); ++I) Numbers.insert(U.field(I).number());
  EXPECT_EQ(Numbers, (std::set<int>{9, 10}));
  EXPECT_EQ(Back.unknown_fields().field(0).number(), 26);
  // Setting again replaces, never duplicates.
  setNodeMetadataProps(*N, {{"k", "v"}});
  EXPECT_EQ(nodeMetadataProps(*N)->size(), 1u);
}

TEST(PlacementFields, GarbageInFieldTenIsAnError) {
  onnx::NodeProto N;
  N.set_op_type("Relu");
  N.mutable_unknown_fields()->AddVarint(10, 7); // wrong wire type
  Expected<std::vector<NodeDeviceConfiguration>> C = nodeDeviceConfigurations(N);
  ASSERT_FALSE(C);
  EXPECT_NE(C.takeError().message().find("field 10"), std::string::npos);
}

// Stages: one device each, tensors only flow forward in stage order, and a
// contiguous device (brute force) gets exactly one stage.
TEST(AssignStages, PropertiesOnRandomDags) {
  std::mt19937 Rng(42);
  for (int Trial = 0; Trial < 300; ++Trial) {
    int N = 2 + static_cast<int>(Rng() % 11), K = 1 + static_cast<int>(Rng() % 4);
    RandomDag D = randomDag(Rng, N);
    ModelPlacement P = randomPlacement(Rng, N, K);
    ASSERT_FALSE(assignStages(D.model.graph(), P));
    ASSERT_EQ(P.stage.size(), static_cast<size_t>(N));
    for (int V = 0; V < N; ++V) {
      EXPECT_EQ(P.stageDevice[P.stage[V]], P.device[V]);
      for (int U : D.preds[V]) EXPECT_LE(P.stage[U], P.stage[V]) << "trial " << Trial;
    }
    std::set<int> UsedDevices(P.device.begin(), P.device.end());
    bool AllContiguous = true;
    for (int Dev : UsedDevices) AllContiguous &= contiguousBrute(D.preds, P.device, Dev);
    if (AllContiguous) EXPECT_EQ(P.numStages(), static_cast<int>(UsedDevices.size())) << "trial " << Trial;
    else EXPECT_GT(P.numStages(), static_cast<int>(UsedDevices.size())) << "trial " << Trial;
    for (int S = 0; S < P.numStages(); ++S)
      EXPECT_NE(std::count(P.stage.begin(), P.stage.end(), S), 0) << "empty stage " << S;
  }
}

// Transfers: exactly one per (tensor, consuming device != producing device);
// the annotated model passes the ONNX checker and the writer's verifier
// (verify-output); reading it back gives the same placement; every stage
// model passes the checker.
TEST(InsertTransfers, RandomDagsPassCheckerAndVerifier) {
  std::mt19937 Rng(7);
  for (int Trial = 0; Trial < 60; ++Trial) {
    int N = 2 + static_cast<int>(Rng() % 9), K = 1 + static_cast<int>(Rng() % 4);
    RandomDag D = randomDag(Rng, N);
    ModelPlacement P = randomPlacement(Rng, N, K);
    std::set<std::pair<int, int>> Crossings; // (producer, target device)
    for (int V = 0; V < N; ++V)
      for (int U : D.preds[V])
        if (P.device[U] != P.device[V]) Crossings.insert({U, P.device[V]});
    Expected<PassContext> Ctx = writeBack(D.model, "trial.onnx", P.device, K);
    ASSERT_EXPECTED(Ctx) << "trial " << Trial;
    ASSERT_TRUE(Ctx->annotated && Ctx->placement && Ctx->stages);
    const ModelPlacement &Placed = *Ctx->placement;
    EXPECT_EQ(Ctx->transfers.size(), Crossings.size());
    EXPECT_EQ(Ctx->annotated->graph().node_size(), N + static_cast<int>(Crossings.size()));
    Expected<AnnotatedPlacement> Back = readPlacement(*Ctx->annotated);
    ASSERT_EXPECTED(Back);
    EXPECT_EQ(Back->placement.device, Placed.device);
    EXPECT_EQ(Back->placement.stage, Placed.stage);
    EXPECT_EQ(Back->originalNodes.size(), static_cast<size_t>(N));
    EXPECT_EQ(Ctx->stages->stages.size(), static_cast<size_t>(Placed.numStages()));
    // verify-output checked the annotated model and every stage model.
    EXPECT_EQ(Ctx->counter("verify-output", "Number of models checked"), 1.0 + Ctx->stages->stages.size());
  }
}

// The writer never lets a cross-device read bypass a Transfer.
TEST(VerifyOutput, CatchesAMissingTransfer) {
  std::mt19937 Rng(3);
  RandomDag D = randomDag(Rng, 4);
  ModelPlacement P;
  P.deviceNames = {"acc0", "acc1"};
  P.device = {0, 1, 1, 1};
  P.inserted.assign(4, 0);
  ASSERT_FALSE(assignStages(D.model.graph(), P));
  onnx::ModelProto Out = D.model;
  ASSERT_FALSE(annotatePlacement(Out, P, "")); // annotated, but no transfers
  Error E = verifyPartitionedModel(D.model, Out);
  ASSERT_TRUE(E);
  EXPECT_NE(E.message().find("without a Transfer"), std::string::npos) << E.message();
}

TEST(ReadPlacement, DisagreeingFormsAreRejected) {
  std::mt19937 Rng(5);
  RandomDag D = randomDag(Rng, 3);
  ModelPlacement P;
  P.deviceNames = {"acc0", "acc1"};
  P.device = {0, 0, 1};
  P.inserted.assign(3, 0);
  ASSERT_FALSE(assignStages(D.model.graph(), P));
  onnx::ModelProto Out = D.model;
  ASSERT_FALSE(annotatePlacement(Out, P, ""));
  ASSERT_TRUE(readPlacement(Out));
  onnx::NodeProto &N = *Out.mutable_graph()->mutable_node(1);
  setNodeMetadataProps(N, {{"onnx_partition.device", "acc1"}, {"onnx_partition.stage", "0"}});
  Expected<AnnotatedPlacement> R = readPlacement(Out);
  ASSERT_FALSE(R);
  EXPECT_NE(R.takeError().message().find("metadata_props say acc1"), std::string::npos);
  setNodeMetadataProps(N, {});
  EXPECT_FALSE(readPlacement(Out));
  EXPECT_FALSE(readPlacement(D.model)); // no annotations at all
}

// Issue 33, item 5: replicas annotated (sharding spec device sets and the
// onnx_partition.replicas key) read back; the two forms must agree, and a
// device lent as a replica holds no node.
TEST(ReadPlacement, ReplicasRoundTripAndDisagreementsAreRejected) {
  std::mt19937 Rng(5);
  RandomDag D = randomDag(Rng, 3);
  ModelPlacement P;
  P.deviceNames = {"acc0", "acc1", "acc2"};
  P.device = {0, 0, 2};
  P.inserted.assign(3, 0);
  P.replicaDevices = {{0, 1}, {}, {}};
  ASSERT_FALSE(assignStages(D.model.graph(), P));
  onnx::ModelProto Out = D.model;
  ASSERT_FALSE(annotatePlacement(Out, P, ""));
  Expected<AnnotatedPlacement> Back = readPlacement(Out);
  ASSERT_EXPECTED(Back);
  EXPECT_EQ(Back->placement.replicasOf(0), (std::vector<int>{0, 1}));
  EXPECT_TRUE(Back->placement.replicasOf(2).empty());
  EXPECT_EQ(Back->placement.replicaList(0), "acc0,acc1");

  onnx::NodeProto &N = *Out.mutable_graph()->mutable_node(1);
  Expected<MetadataEntries> Meta = nodeMetadataProps(N);
  ASSERT_EXPECTED(Meta);
  MetadataEntries Other = *Meta;
  for (auto &[K, V] : Other)
    if (K == "onnx_partition.replicas") V = "acc0,acc2";
  setNodeMetadataProps(N, Other);
  Expected<AnnotatedPlacement> R = readPlacement(Out);
  ASSERT_FALSE(R);
  EXPECT_NE(R.takeError().message().find("says 'acc0,acc2'"), std::string::npos);
  setNodeMetadataProps(N, *Meta);
  ASSERT_TRUE(static_cast<bool>(readPlacement(Out)));

  // acc1 lent to acc0 but holding a node itself.
  ModelPlacement Q = P;
  Q.device = {0, 1, 2};
  ASSERT_FALSE(assignStages(D.model.graph(), Q));
  onnx::ModelProto Lent = D.model;
  ASSERT_FALSE(annotatePlacement(Lent, Q, ""));
  Expected<AnnotatedPlacement> L = readPlacement(Lent);
  ASSERT_FALSE(L);
  EXPECT_NE(L.takeError().message().find("runs a replica of acc0 but also holds nodes"), std::string::npos);
}

// Offload and Prefetch use the same function-backed insertion: an offloaded
// tensor comes back through Prefetch before its consumer, and the model
// still passes the checker.
TEST(InsertPartitionNode, OffloadPrefetchPair) {
  std::mt19937 Rng(11);
  RandomDag D;
  do D = randomDag(Rng, 5);
  while (D.preds[4].empty());
  int Producer = D.preds[4].front();
  ModelPlacement P;
  P.deviceNames = {"acc0", "cpu0"};
  P.device.assign(5, 0);
  P.inserted.assign(5, 0);
  ASSERT_FALSE(assignStages(D.model.graph(), P));
  onnx::ModelProto Out = D.model;
  std::string T = "t" + std::to_string(Producer);
  // Offload after the producer: the consumer (node 4) reads the host copy...
  Expected<int> Off =
      insertPartitionNode(Out, P, PartitionOp::Offload, T, T + "__offload", {}, Producer, {4}, 1, 0);
  ASSERT_EXPECTED(Off);
  EXPECT_EQ(*Off, Producer + 1);
  // ...until Prefetch, right before the consumer (now node 5), brings it back.
  Expected<int> Pre =
      insertPartitionNode(Out, P, PartitionOp::Prefetch, T + "__offload", T + "__prefetch", {}, 4, {5}, 0, 0);
  ASSERT_EXPECTED(Pre);
  const onnx::NodeProto &C = Out.graph().node(6);
  ASSERT_EQ(C.op_type(), "Sum");
  EXPECT_NE(std::find(C.input().begin(), C.input().end(), T + "__prefetch"), C.input().end());
  EXPECT_EQ(std::find(C.input().begin(), C.input().end(), T), C.input().end());
  ASSERT_FALSE(annotatePlacement(Out, P, ""));
  Error E = checkModelFull(Out, "offload");
  ASSERT_NO_ERROR(E);
  std::set<std::string> Functions;
  for (const auto &F : Out.functions()) Functions.insert(F.name());
  EXPECT_EQ(Functions, (std::set<std::string>{"Offload", "Prefetch"}));
}

TEST(ReadPlacement, PlanFromAnnotatedModelChecksTheModel) {
  const char *Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] X) => (float[4] Z) { Y = Relu(X)  Z = Sigmoid(Y) })";
  const char *Other = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] X) => (float[4] Z) { Y = Relu(X)  Z = Tanh(Y) })";
  Expected<OnnxModel> M = loadOnnxModel("a.onnxtxt", Text);
  Expected<OnnxModel> O = loadOnnxModel("b.onnxtxt", Other);
  ASSERT_TRUE(M && O);
  Expected<CostGraph> GO = buildCostGraph(*O);
  ASSERT_EXPECTED(GO);
  const std::vector<int> Device = {0, 1};
  Expected<PassContext> Ctx = writeBack(M->proto, "a.onnx", Device, 2);
  ASSERT_EXPECTED(Ctx);
  const onnx::ModelProto &Out = *Ctx->annotated;
  Platform Pl = Ctx->platform;
  Expected<onnxp::Plan> Back = planFromAnnotatedModel(Out, *Ctx->model, Ctx->graph, Pl);
  ASSERT_EXPECTED(Back);
  EXPECT_EQ(Back->device, Device);
  Expected<onnxp::Plan> Wrong = planFromAnnotatedModel(Out, *O, *GO, Pl);
  ASSERT_FALSE(Wrong);
  EXPECT_NE(Wrong.takeError().message().find("different model"), std::string::npos);
  Pl.accelerators = 1;
  Expected<onnxp::Plan> Small = planFromAnnotatedModel(Out, *Ctx->model, Ctx->graph, Pl);
  ASSERT_FALSE(Small);
  EXPECT_NE(Small.takeError().message().find("which this platform lacks"), std::string::npos);
}

// Stage models keep the source's external references; the writer then lays
// out each one's data file (IR/ExternalData.h, test/unit/IR/ExternalDataTest).
TEST(ExtractStages, StagesKeepTheSourcesExternalReferences) {
  const char *Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] X) => (float[4] Z) <float[4] W = {1, 2, 3, 4}> { Y = Add(X, W)  Z = Mul(Y, W) })";
  Expected<OnnxModel> M = loadOnnxModel("models/g.onnxtxt", Text);
  ASSERT_EXPECTED(M);
  onnx::TensorProto &W = *M->proto.mutable_graph()->mutable_initializer(0);
  W.clear_float_data();
  W.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *Loc = W.add_external_data();
  Loc->set_key("location");
  Loc->set_value("weights/w.bin");
  Expected<PassContext> Ctx = writeBack(M->proto, "models/g.onnx", {0, 1}, 2);
  ASSERT_EXPECTED(Ctx);
  const std::optional<StagePipeline> &SP = Ctx->stages;
  ASSERT_TRUE(SP);
  ASSERT_EQ(SP->stages.size(), 2u);
  for (const StageModel &S : SP->stages) {
    ASSERT_EQ(S.model.graph().initializer_size(), 1) << S.name; // both stages read W
    const onnx::TensorProto &T = S.model.graph().initializer(0);
    EXPECT_EQ(T.data_location(), onnx::TensorProto::EXTERNAL);
    // As in the source; the writer lays out each stage's data file.
    EXPECT_EQ(T.external_data(0).value(), "weights/w.bin");
  }
  EXPECT_EQ(SP->stages[1].inputs, std::vector<std::string>{"Y"});
}
