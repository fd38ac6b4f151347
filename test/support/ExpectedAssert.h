//===- support/ExpectedAssert.h - GoogleTest checks of Error and Expected -===//
//
// ASSERT_EXPECTED(X) / EXPECT_EXPECTED(X): X, an Expected<T> variable, holds
// a value; on failure the check fails with the error's message, and the
// error is taken (consumed). ASSERT_NO_ERROR(E) / EXPECT_NO_ERROR(E): E, an
// Error variable, is success; on failure the message is printed. More
// context streams after the macro as after any GoogleTest assertion:
//
//   ASSERT_EXPECTED(Plan) << "case " << Case;
//
// LLVM's ASSERT_THAT_EXPECTED(X, Succeeded()) in
// llvm/include/llvm/Testing/Support/Error.h is the model. X is named twice,
// so it must be a variable, not a call. The message is only built on
// failure (GoogleTest evaluates the streamed text in its failure branch).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_TEST_SUPPORT_EXPECTEDASSERT_H
#define ONNXP_TEST_SUPPORT_EXPECTEDASSERT_H

#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp::test {

/// The message of a failed Expected, its error taken. Only Expected has
/// one: ASSERT_EXPECTED on an Error does not compile.
template <typename T> std::string takeErrorMessage(Expected<T> &X) { return X.takeError().message(); }
template <typename T> std::string takeErrorMessage(const Expected<T> &X) { return X.takeError().message(); }
/// The message of a failed Error. Only Error has one: ASSERT_NO_ERROR on
/// an Expected does not compile.
inline std::string errorMessage(const Error &E) { return E.message(); }

} // namespace onnxp::test

#define ASSERT_EXPECTED(X) ASSERT_TRUE(static_cast<bool>(X)) << ::onnxp::test::takeErrorMessage(X) << "\n"
#define EXPECT_EXPECTED(X) EXPECT_TRUE(static_cast<bool>(X)) << ::onnxp::test::takeErrorMessage(X) << "\n"
#define ASSERT_NO_ERROR(E) ASSERT_FALSE(static_cast<bool>(E)) << ::onnxp::test::errorMessage(E) << "\n"
#define EXPECT_NO_ERROR(E) EXPECT_FALSE(static_cast<bool>(E)) << ::onnxp::test::errorMessage(E) << "\n"

#endif // ONNXP_TEST_SUPPORT_EXPECTEDASSERT_H
