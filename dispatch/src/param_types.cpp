#include "syncopate/dispatch/param_types.hpp"

namespace syncopate::preload {
namespace {

std::string_view trimmed(std::string_view text) noexcept {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// Qualifiers after a type say nothing about what its value is.
std::string_view unqualified(std::string_view type) noexcept {
  constexpr std::string_view kQualifiers[] = {" const", " volatile", " restrict", " __restrict"};
  for (bool again = true; again;) {
    again = false;
    type = trimmed(type);
    for (std::string_view qualifier : kQualifiers) {
      if (type.size() > qualifier.size() && type.ends_with(qualifier)) {
        type.remove_suffix(qualifier.size());
        again = true;
      }
    }
  }
  return type;
}

// Whether a declarator of a pointer or reference stands in parentheses at the type's own level:
// "void (*)(int)", "float (*) [4]", "int (&) [3]".
bool hasPointerDeclarator(std::string_view type) noexcept {
  int depth = 0;
  for (std::size_t i = 0; i < type.size(); ++i) {
    if (type[i] == '(') {
      if (depth == 0 && i + 1 < type.size() && (type[i + 1] == '*' || type[i + 1] == '&')) return true;
      ++depth;
    } else if (type[i] == ')') {
      --depth;
    }
  }
  return false;
}

struct Arithmetic {
  std::string_view name;
  std::uint8_t size;
};

// The arithmetic types as the demangler prints them, with their sizes in the LP64 ABI that
// nvcc's device code shares with the host (x86-64 and aarch64 Linux).
constexpr Arithmetic kArithmetic[] = {
    {"bool", 1},          {"char", 1},         {"signed char", 1},      {"unsigned char", 1},
    {"short", 2},         {"unsigned short", 2}, {"int", 4},            {"unsigned int", 4},
    {"long", 8},          {"unsigned long", 8}, {"long long", 8},       {"unsigned long long", 8},
    {"__int128", 16},     {"unsigned __int128", 16}, {"float", 4},      {"double", 8},
    {"long double", 16},  {"__float128", 16},  {"wchar_t", 4},          {"char8_t", 1},
    {"char16_t", 2},      {"char32_t", 4},     {"decltype(nullptr)", 8},
};

ParamType typeOf(std::string_view type) noexcept {
  type = unqualified(type);
  if (type.ends_with('*') || type.ends_with('&') || hasPointerDeclarator(type)) return {ParamKind::Pointer, 8};
  for (const Arithmetic& arithmetic : kArithmetic) {
    if (type == arithmetic.name) return {ParamKind::Scalar, arithmetic.size};
  }
  return {ParamKind::Scanned, 0};
}

// Where the parameter list opens: the parenthesis that matches the signature's last one.
std::size_t parameterListStart(std::string_view signature) noexcept {
  int depth = 0;
  for (std::size_t i = signature.size(); i-- > 0;) {
    if (signature[i] == ')') {
      ++depth;
    } else if (signature[i] == '(' && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

int parameterTypesOf(std::string_view signature, ParamType* out, int capacity) noexcept {
  signature = trimmed(signature);
  if (!signature.ends_with(')')) return -1;
  const std::size_t open = parameterListStart(signature);
  if (open == std::string_view::npos || open == 0) return -1;
  const std::string_view list = trimmed(signature.substr(open + 1, signature.size() - open - 2));
  if (list.empty()) return 0;
  // A comma separates parameters only outside every bracket. Angle brackets count only outside
  // parentheses: inside them they are comparisons of a template argument's expression
  // ("Pair<int, ((3)>(2))>"), which the demangler always parenthesises.
  int count = 0;
  int parentheses = 0;
  int others = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size()) {
      const char c = list[i];
      if (c == '(') ++parentheses;
      if (c == ')') --parentheses;
      if (parentheses == 0 && (c == '<' || c == '[' || c == '{')) ++others;
      if (parentheses == 0 && (c == '>' || c == ']' || c == '}')) --others;
      if (c != ',' || parentheses != 0 || others != 0) continue;
    }
    if (count < capacity) out[count] = typeOf(list.substr(start, i - start));
    ++count;
    start = i + 1;
  }
  return count;
}

}  // namespace syncopate::preload
