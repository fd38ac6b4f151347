//===- IR/DimExpression.cpp - Symbolic dims that are arithmetic ---------===//
//
// A recursive-descent evaluator over the grammar
//   expr := term (('+' | '-') term)*     term := unary (('*' | '/' | '//' | '%') unary)*
//   unary := '-' unary | atom            atom := integer | name | '(' expr ')'
// with a nesting bound and checked 64-bit arithmetic: the text comes from the
// model, so it is untrusted.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/DimExpression.h"

#include <cctype>
#include <vector>

using namespace onnxp;

namespace {
constexpr int kMaxDepth = 64;

struct Token {
  enum Kind { Name, Number, Op, End } kind;
  std::string text;
};

bool isNameChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '.' || C == ':';
}

/// Splits into tokens; '-' joins a name when name characters are on both sides.
std::optional<std::vector<Token>> tokenize(const std::string &S) {
  std::vector<Token> Out;
  size_t I = 0;
  while (I < S.size()) {
    char C = S[I];
    if (C == ' ' || C == '\t') {
      ++I;
      continue;
    }
    if (isNameChar(C)) {
      size_t J = I;
      while (J < S.size() &&
             (isNameChar(S[J]) || (S[J] == '-' && J + 1 < S.size() && isNameChar(S[J + 1]) && J > I)))
        ++J;
      std::string T = S.substr(I, J - I);
      bool Digits = T.find_first_not_of("0123456789") == std::string::npos;
      Out.push_back({Digits ? Token::Number : Token::Name, T});
      I = J;
      continue;
    }
    if (C == '/' && I + 1 < S.size() && S[I + 1] == '/') {
      Out.push_back({Token::Op, "/"});
      I += 2;
      continue;
    }
    if (std::string("+-*/%()").find(C) != std::string::npos) {
      Out.push_back({Token::Op, std::string(1, C)});
      ++I;
      continue;
    }
    return std::nullopt;
  }
  Out.push_back({Token::End, ""});
  return Out;
}

class Evaluator {
public:
  Evaluator(const std::vector<Token> &T, const std::map<std::string, int64_t> &B) : T(T), B(B) {}
  std::optional<int64_t> run() {
    std::optional<int64_t> V = expr(0);
    if (!V || T[P].kind != Token::End) return std::nullopt;
    return V;
  }

private:
  bool isOp(const char *Op) const { return T[P].kind == Token::Op && T[P].text == Op; }

  std::optional<int64_t> expr(int Depth) {
    std::optional<int64_t> L = term(Depth);
    while (L && (isOp("+") || isOp("-"))) {
      bool Add = isOp("+");
      ++P;
      std::optional<int64_t> R = term(Depth);
      if (!R) return std::nullopt;
      int64_t V;
      if (Add ? __builtin_add_overflow(*L, *R, &V) : __builtin_sub_overflow(*L, *R, &V)) return std::nullopt;
      L = V;
    }
    return L;
  }

  std::optional<int64_t> term(int Depth) {
    std::optional<int64_t> L = unary(Depth);
    while (L && (isOp("*") || isOp("/") || isOp("%"))) {
      char Op = T[P++].text[0];
      std::optional<int64_t> R = unary(Depth);
      if (!R) return std::nullopt;
      int64_t V;
      if (Op == '*') {
        if (__builtin_mul_overflow(*L, *R, &V)) return std::nullopt;
      } else {
        if (*R == 0 || (*L == INT64_MIN && *R == -1)) return std::nullopt;
        int64_t Q = *L / *R, M = *L % *R;
        if (M != 0 && ((M < 0) != (*R < 0))) {
          --Q;
          M += *R;
        } // floor, as Python's // and %
        V = Op == '/' ? Q : M;
      }
      L = V;
    }
    return L;
  }

  std::optional<int64_t> unary(int Depth) {
    if (Depth > kMaxDepth) return std::nullopt;
    if (isOp("-")) {
      ++P;
      std::optional<int64_t> V = unary(Depth + 1);
      if (!V || *V == INT64_MIN) return std::nullopt;
      return -*V;
    }
    const Token &K = T[P];
    if (K.kind == Token::Number) {
      ++P;
      if (K.text.size() > 18) return std::nullopt;
      return std::stoll(K.text);
    }
    if (K.kind == Token::Name) {
      ++P;
      auto It = B.find(K.text);
      if (It == B.end()) return std::nullopt;
      return It->second;
    }
    if (isOp("(")) {
      ++P;
      std::optional<int64_t> V = expr(Depth + 1);
      if (!V || !isOp(")")) return std::nullopt;
      ++P;
      return V;
    }
    return std::nullopt;
  }

  const std::vector<Token> &T;
  const std::map<std::string, int64_t> &B;
  size_t P = 0;
};
} // namespace

bool onnxp::isDimExpression(const std::string &Param) {
  std::optional<std::vector<Token>> T = tokenize(Param);
  if (!T) return false;
  for (const Token &K : *T)
    if (K.kind == Token::Op) return true;
  return false;
}

std::optional<int64_t> onnxp::evaluateDim(const std::string &Param,
                                          const std::map<std::string, int64_t> &Bindings) {
  if (auto It = Bindings.find(Param); It != Bindings.end()) return It->second;
  std::optional<std::vector<Token>> T = tokenize(Param);
  if (!T) return std::nullopt;
  std::optional<int64_t> V = Evaluator(*T, Bindings).run();
  if (!V || *V < 0) return std::nullopt;
  return V;
}

std::set<std::string> onnxp::dimNames(const std::string &Param) {
  if (!isDimExpression(Param)) return {Param};
  std::optional<std::vector<Token>> T = tokenize(Param);
  std::set<std::string> Names;
  for (const Token &K : *T)
    if (K.kind == Token::Name) Names.insert(K.text);
  return Names;
}
