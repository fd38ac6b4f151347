//===- unit/IR/ExternalDataTest.cpp - External data: confined, laid out ---===//
//
// Issue 15 item 1 and issue 16 item 2: locations are relative and inside the
// model's folder, resolved against it (never the current directory);
// written models get their own data file beside them with only the tensors
// they use, reuse the source's when written into its folder, keep absent
// data under the same name, and move inline tensors out past protobuf's
// 2 GiB limit.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/VerifyOutput.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

namespace {
/// Y = Reshape(Add(X, A), S) with A (float[2][2]) and S (int64[2]) as
/// initializers; when External, both live in `Location` (A at 0, S at 16).
onnx::ModelProto smallModel(bool External, const std::string &Location = "w.bin") {
  onnx::ModelProto M;
  M.set_ir_version(8);
  auto *Op = M.add_opset_import();
  Op->set_version(17);
  onnx::GraphProto *G = M.mutable_graph();
  G->set_name("g");
  auto AddVI = [](auto *List, const std::string &Name, int Type, const std::vector<int64_t> &Dims) {
    auto *VI = List->Add();
    VI->set_name(Name);
    auto *TT = VI->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(Type);
    for (int64_t D : Dims) TT->mutable_shape()->add_dim()->set_dim_value(D);
  };
  AddVI(G->mutable_input(), "X", onnx::TensorProto::FLOAT, {2, 2});
  AddVI(G->mutable_output(), "Y", onnx::TensorProto::FLOAT, {4});
  auto *N1 = G->add_node();
  N1->set_op_type("Add");
  N1->add_input("X");
  N1->add_input("A");
  N1->add_output("H");
  auto *N2 = G->add_node();
  N2->set_op_type("Reshape");
  N2->add_input("H");
  N2->add_input("S");
  N2->add_output("Y");
  onnx::TensorProto *A = G->add_initializer();
  A->set_name("A");
  A->set_data_type(onnx::TensorProto::FLOAT);
  A->add_dims(2);
  A->add_dims(2);
  onnx::TensorProto *S = G->add_initializer();
  S->set_name("S");
  S->set_data_type(onnx::TensorProto::INT64);
  S->add_dims(1);
  if (!External) {
    for (float V : {1.f, 2.f, 3.f, 4.f}) A->add_float_data(V);
    S->add_int64_data(4);
    return M;
  }
  auto Ref = [&](onnx::TensorProto *T, int Offset, int Length) {
    T->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [K, V] : {std::pair<std::string, std::string>{"location", Location},
                        {"offset", std::to_string(Offset)},
                        {"length", std::to_string(Length)}}) {
      auto *E = T->add_external_data();
      E->set_key(K);
      E->set_value(V);
    }
  };
  Ref(A, 0, 16);
  Ref(S, 16, 8);
  return M;
}

std::string dataBytes() {
  std::string B(24, '\0');
  float A[4] = {1, 2, 3, 4};
  int64_t S = 4;
  std::memcpy(B.data(), A, 16);
  std::memcpy(B.data() + 16, &S, 8);
  return B;
}

/// A fresh folder under the test temp dir.
std::string freshDir(const std::string &Name) {
  fs::path D = fs::path(testing::TempDir()) / ("onnxp-extdata-" + std::to_string(getpid())) / Name;
  fs::remove_all(D);
  fs::create_directories(D);
  return D.string();
}

std::string location(const onnx::TensorProto &T) { return externalRef(T).location; }

Expected<std::string> readAll(const std::string &P) { return readFile(P); }
} // namespace

TEST(ExternalData, LocationsMustStayInsideTheModelsFolder) {
  std::string Dir = freshDir("confined");
  for (const char *Bad : {"/etc/passwd", "../w.bin", "a/../../w.bin", "", "."}) {
    Error E = checkExternalLocations(smallModel(true, Bad), Dir + "/m.onnx");
    ASSERT_TRUE(static_cast<bool>(E)) << Bad;
    EXPECT_NE(E.message().find("locations must be relative paths inside the model's folder"),
              std::string::npos)
        << E.message();
    EXPECT_NE(E.message().find(Dir + "/m.onnx"), std::string::npos);
  }
  for (const char *Good : {"w.bin", "sub/w.bin", "sub/../w.bin", "./w.bin"})
    EXPECT_FALSE(checkExternalLocations(smallModel(true, Good), Dir + "/m.onnx")) << Good;
  // A link inside the folder that leads out of it is refused too.
  std::string Outside = freshDir("outside");
  ASSERT_FALSE(writeFileAtomically(Outside + "/secret", dataBytes()));
  fs::create_symlink(Outside + "/secret", Dir + "/link.bin");
  Error E = checkExternalLocations(smallModel(true, "link.bin"), Dir + "/m.onnx");
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("symbolic link"), std::string::npos) << E.message();
}

TEST(ExternalData, LoadingRefusesEscapesAndResolvesAgainstTheModelsFolder) {
  std::string Dir = freshDir("load");
  ASSERT_FALSE(writeFileAtomically(Dir + "/w.bin", dataBytes()));
  std::string Bytes;
  ASSERT_TRUE(smallModel(true).SerializeToString(&Bytes));
  // The current directory is not the model's: the data is still found.
  Expected<OnnxModel> M = loadOnnxModel(Dir + "/m.onnx", Bytes);
  ASSERT_EXPECTED(M);
  EXPECT_TRUE(M->missingExternalData.empty());
  ASSERT_TRUE(smallModel(true, "../w.bin").SerializeToString(&Bytes));
  Expected<OnnxModel> Bad = loadOnnxModel(Dir + "/m.onnx", Bytes);
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.takeError().message().find("'../w.bin' is refused"), std::string::npos);
}

TEST(ExternalData, CheckerAndStrictInferenceIgnoreTheCurrentDirectory) {
  // Strict inference cannot read the external shape tensor S and the 1.12
  // checker would look for w.bin in the current directory; neither matters.
  EXPECT_FALSE(checkModelFull(smallModel(true, "nowhere/w.bin"), "m.onnx"));
  onnx::ModelProto Copy = withoutExternalData(smallModel(true));
  EXPECT_EQ(Copy.graph().initializer_size(), 0);
  EXPECT_EQ(Copy.graph().input_size(), 3);
}

TEST(ExternalData, WrittenElsewhereGetsItsOwnFileWithOnlyItsTensors) {
  std::string Src = freshDir("src"), Out = freshDir("out");
  ASSERT_FALSE(writeFileAtomically(Src + "/w.bin", dataBytes()));
  onnx::ModelProto M = smallModel(true);
  // Keep only S (a stage model that reads only S).
  M.mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Out + "/stage.onnx";
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  ASSERT_EQ(L->files.size(), 1u);
  EXPECT_EQ(L->files[0].path, Out + "/stage.onnx.data");
  EXPECT_TRUE(L->warnings.empty());
  const onnx::TensorProto &S = M.graph().initializer(0);
  EXPECT_EQ(location(S), "stage.onnx.data");
  EXPECT_EQ(externalRef(S).offset, 0u);
  EXPECT_EQ(*externalRef(S).length, 8u);
  ASSERT_FALSE(checkWrittenReferences(M, Out, *L, "stage.onnx"));
  ASSERT_FALSE(writeExternalDataFiles(*L));
  Expected<std::string> Data = readAll(Out + "/stage.onnx.data");
  ASSERT_EXPECTED(Data);
  EXPECT_EQ(*Data, dataBytes().substr(16, 8));
  // Now the file exists, the reference checks without the layout too.
  EXPECT_FALSE(checkWrittenReferences(M, Out, ExternalDataLayout(), "stage.onnx"));
}

TEST(ExternalData, OffsetsAreAlignedAndBytesCopiedExactly) {
  std::string Src = freshDir("src2"), Out = freshDir("out2");
  ASSERT_FALSE(writeFileAtomically(Src + "/w.bin", dataBytes()));
  onnx::ModelProto M = smallModel(true);
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Out + "/m.onnx";
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  ASSERT_FALSE(writeExternalDataFiles(*L));
  Expected<std::string> Data = readAll(Out + "/m.onnx.data");
  ASSERT_EXPECTED(Data);
  ExternalRef A = externalRef(M.graph().initializer(0)), S = externalRef(M.graph().initializer(1));
  EXPECT_EQ(A.offset, 0u);
  EXPECT_EQ(S.offset, 64u);
  ASSERT_EQ(Data->size(), 72u);
  EXPECT_EQ(Data->substr(0, 16), dataBytes().substr(0, 16));
  EXPECT_EQ(Data->substr(64, 8), dataBytes().substr(16, 8));
}

TEST(ExternalData, WrittenIntoTheSourceFolderReusesItsFile) {
  std::string Src = freshDir("same");
  ASSERT_FALSE(writeFileAtomically(Src + "/w.bin", dataBytes()));
  onnx::ModelProto M = smallModel(true);
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Src + "/annotated.onnx";
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  EXPECT_TRUE(L->files.empty());
  EXPECT_EQ(location(M.graph().initializer(0)), "w.bin");
  EXPECT_EQ(externalRef(M.graph().initializer(1)).offset, 16u);
  EXPECT_FALSE(checkWrittenReferences(M, Src, *L, "annotated.onnx"));
}

TEST(ExternalData, AbsentDataKeepsItsNameBesideTheOutputWithAWarning) {
  std::string Src = freshDir("absent-src"), Out = freshDir("absent-out");
  onnx::ModelProto M = smallModel(true, "weights/w.bin");
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Out + "/m.onnx";
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  EXPECT_TRUE(L->files.empty());
  EXPECT_EQ(L->absentLocations, std::set<std::string>{"weights/w.bin"});
  ASSERT_EQ(L->warnings.size(), 1u);
  EXPECT_NE(L->warnings[0].find("'weights/w.bin'; 2 tensors, 24 bytes) absent"), std::string::npos)
      << L->warnings[0];
  EXPECT_EQ(location(M.graph().initializer(0)), "weights/w.bin");
  EXPECT_EQ(externalRef(M.graph().initializer(1)).offset, 16u);
  EXPECT_FALSE(checkWrittenReferences(M, Out, *L, "m.onnx"));
  // Without the layout's list of what is absent, the reference is an error.
  EXPECT_TRUE(static_cast<bool>(checkWrittenReferences(M, Out, ExternalDataLayout(), "m.onnx")));
}

TEST(ExternalData, DeclaredWeightsOverTwoGiBStayOutsideTheProtobuf) {
  // 3 x 1 GiB of declared fp32 weights, data absent (sizes only).
  std::string Src = freshDir("big-src"), Out = freshDir("big-out");
  onnx::ModelProto M = smallModel(false);
  for (int I = 0; I < 3; ++I) {
    onnx::TensorProto *T = M.mutable_graph()->add_initializer();
    T->set_name("big" + std::to_string(I));
    T->set_data_type(onnx::TensorProto::FLOAT);
    T->add_dims(1 << 14);
    T->add_dims(1 << 14);
    T->set_data_location(onnx::TensorProto::EXTERNAL);
    auto *E = T->add_external_data();
    E->set_key("location");
    E->set_value("big.bin");
    E = T->add_external_data();
    E->set_key("offset");
    E->set_value(std::to_string(uint64_t(I) << 30));
  }
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Out + "/m.onnx";
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  EXPECT_LT(M.ByteSizeLong(), 4096u);
  ASSERT_EQ(L->warnings.size(), 1u);
  EXPECT_NE(L->warnings[0].find("3 tensors, 3221225472 bytes"), std::string::npos) << L->warnings[0];
  EXPECT_FALSE(checkModelFull(M, "m.onnx"));
}

TEST(ExternalData, InlineTensorsMoveOutPastTheProtobufLimit) {
  std::string Out = freshDir("inline");
  onnx::ModelProto M = smallModel(false);
  ExternalWriteOptions O;
  O.sourceDir = Out;
  O.outputPath = Out + "/m.onnx";
  O.protobufLimit = 64; // stands for 2 GiB: the model is larger than this
  O.minExternalBytes = 8;
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  ASSERT_EQ(L->files.size(), 1u);
  const onnx::TensorProto &A = M.graph().initializer(0);
  EXPECT_EQ(A.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(A.float_data_size(), 0);
  ASSERT_FALSE(writeExternalDataFiles(*L));
  Expected<std::string> Data = readAll(Out + "/m.onnx.data");
  ASSERT_EXPECTED(Data);
  EXPECT_EQ(Data->substr(externalRef(A).offset, 16), dataBytes().substr(0, 16));
  EXPECT_FALSE(checkWrittenReferences(M, Out, *L, "m.onnx"));
}

TEST(ExternalData, ASourceFileTooShortIsAnErrorBeforeAnythingIsWritten) {
  std::string Src = freshDir("short-src"), Out = freshDir("short-out");
  ASSERT_FALSE(writeFileAtomically(Src + "/w.bin", dataBytes().substr(0, 20)));
  onnx::ModelProto M = smallModel(true);
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Out + "/m.onnx";
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_FALSE(L);
  EXPECT_NE(L.takeError().message().find("runs past the end of the file (20 bytes)"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(Out));
}

TEST(ExternalData, DescribeListsEachFile) {
  std::string Dir = freshDir("describe");
  ASSERT_FALSE(writeFileAtomically(Dir + "/w.bin", dataBytes()));
  std::vector<std::string> Lines = describeExternalData(smallModel(true), Dir);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_EQ(Lines[0], "w.bin: 2 tensors, 24 bytes, present");
  Lines = describeExternalData(smallModel(true, "x.bin"), Dir);
  EXPECT_EQ(Lines[0], "x.bin: 2 tensors, 24 bytes, absent");
}

// Issue 39, item 9: the data files are opened once, when the model is read;
// a file swapped for a link to an outside file while the run solves is not
// what the written copy holds.
TEST(ExternalData, CopiesFromTheFileOpenedAtReadEvenAfterASwap) {
  std::string Src = freshDir("swap-src"), Out = freshDir("swap-out"), Outside = freshDir("swap-outside");
  ASSERT_FALSE(writeFileAtomically(Src + "/w.bin", dataBytes()));
  const std::string Secret(dataBytes().size(), 'S');
  ASSERT_FALSE(writeFileAtomically(Outside + "/secret.bin", Secret));
  onnx::ModelProto M = smallModel(true);
  Expected<ExternalSources> Sources = openExternalSources(M, Src);
  ASSERT_EXPECTED(Sources);
  ASSERT_EQ(Sources->size(), 1u);
  EXPECT_EQ(Sources->begin()->second->size, dataBytes().size());
  // The swap: w.bin becomes a link to a file outside the model's folder.
  ASSERT_EQ(unlink((Src + "/w.bin").c_str()), 0);
  ASSERT_EQ(symlink((Outside + "/secret.bin").c_str(), (Src + "/w.bin").c_str()), 0);
  ExternalWriteOptions O;
  O.sourceDir = Src;
  O.outputPath = Out + "/m.onnx";
  O.sources = &*Sources;
  Expected<ExternalDataLayout> L = layoutExternalData(M, O);
  ASSERT_EXPECTED(L);
  ASSERT_FALSE(writeExternalDataFiles(*L));
  Expected<std::string> Data = readAll(Out + "/m.onnx.data");
  ASSERT_EXPECTED(Data);
  EXPECT_EQ(Data->substr(0, 16), dataBytes().substr(0, 16));
  EXPECT_EQ(Data->find('S'), std::string::npos) << "the outside file was copied";
  // Opened now (M's references were rewritten for the output: a fresh
  // model), the same folder is refused: the link leads out of it.
  Expected<ExternalSources> Again = openExternalSources(smallModel(true), Src);
  ASSERT_FALSE(Again);
  EXPECT_NE(Again.takeError().message().find("outside the model's folder"), std::string::npos);
}

TEST(ExternalData, AbsentFilesAreNotOpenedAndPlannedAsAbsent) {
  std::string Src = freshDir("absent-src");
  onnx::ModelProto M = smallModel(true);
  Expected<ExternalSources> Sources = openExternalSources(M, Src);
  ASSERT_EXPECTED(Sources);
  EXPECT_TRUE(Sources->empty());
}
