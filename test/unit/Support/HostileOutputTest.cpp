//===- unit/Support/HostileOutputTest.cpp - Escaping and output paths ----===//
//
// Issue 25: strings into markup (items 4), how output paths are written
// (item 2) and input caps (item 5), without touching any system file:
// /dev/null is only classified, never written.
//
//===----------------------------------------------------------------------===//
#include "ExpectedAssert.h"

#include "onnx-partition/Support/Escape.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

using namespace onnxp;
namespace fs = std::filesystem;

TEST(Escape, XmlSpecialsControlsAndInvalidUtf8) {
  EXPECT_EQ(xmlEscape("x</title><script>&\"'"), "x&lt;/title&gt;&lt;script&gt;&amp;&quot;&apos;");
  EXPECT_EQ(xmlEscape("a\x01"
                      "b"),
            "a\xEF\xBF\xBD"
            "b");                                                               // XML 1.0 forbids U+0001
  EXPECT_EQ(xmlEscape("\xff"), "\xEF\xBF\xBD");                                 // not UTF-8
  EXPECT_EQ(xmlEscape("\xC3\xA9\xE4\xB8\xAD"), "\xC3\xA9\xE4\xB8\xAD");         // é中 kept
  EXPECT_EQ(validUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                 // an overlong '/'
  EXPECT_EQ(validUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // a surrogate
}

namespace {
std::string scratch(const std::string &Name) {
  fs::path D = fs::temp_directory_path() / ("onnxp-hostile-" + std::to_string(getpid()));
  fs::create_directories(D);
  return (D / Name).string();
}
} // namespace

TEST(OutputPaths, DevicesAndFifosAreWrittenInPlace) {
  Expected<OutputKind> Null = classifyOutput("/dev/null", "--report");
  ASSERT_EXPECTED(Null);
  EXPECT_EQ(*Null, OutputKind::InPlace);
  std::string Fifo = scratch("fifo");
  fs::remove(Fifo);
  ASSERT_EQ(mkfifo(Fifo.c_str(), 0600), 0);
  Expected<OutputKind> F = classifyOutput(Fifo, "--report");
  ASSERT_EXPECTED(F);
  EXPECT_EQ(*F, OutputKind::InPlace);
  Expected<OutputKind> Dir = classifyOutput(fs::path(Fifo).parent_path().string(), "-o");
  EXPECT_FALSE(static_cast<bool>(Dir));
  fs::remove_all(fs::path(Fifo).parent_path());
}

TEST(OutputPaths, AnInputIsNeverAnOutput) {
  std::string In = scratch("in.json"), Link = scratch("hard.json");
  std::ofstream(In) << "{}";
  fs::remove(Link);
  fs::create_hard_link(In, Link);
  Expected<std::string> Text = readFile(In, 100, "a test input");
  ASSERT_EXPECTED(Text);
  EXPECT_EQ(inputFileMatching(Link), In);
  OutputTransaction Tx;
  Error E = Tx.add(Link, "overwritten", "--report");
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(E.message().find("is the same file as the input"), std::string::npos) << E.message();
  std::ifstream Check(In);
  std::string Now((std::istreambuf_iterator<char>(Check)), std::istreambuf_iterator<char>());
  EXPECT_EQ(Now, "{}");
  fs::remove_all(fs::path(In).parent_path());
}

TEST(OutputPaths, ReadCapsNameTheCap) {
  Expected<std::string> Z = readFile("/dev/zero", 1000, "a test input");
  ASSERT_FALSE(static_cast<bool>(Z));
  EXPECT_NE(Z.takeError().message().find("larger than 1000 bytes"), std::string::npos);
}

TEST(OutputPaths, TemporariesAreExclusiveAndUnpredictable) {
  std::string Target = scratch("out.onnx");
  Expected<TempFile> A = createTempBeside(Target), B = createTempBeside(Target);
  ASSERT_EXPECTED(A);
  ASSERT_TRUE(static_cast<bool>(B));
  EXPECT_NE(A->path, B->path);
  EXPECT_EQ(A->path.find(Target + ".tmp-" + std::to_string(getpid())), std::string::npos);
  close(A->fd);
  close(B->fd);
  fs::remove_all(fs::path(Target).parent_path());
}
