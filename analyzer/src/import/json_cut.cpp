#include "json_cut.hpp"

#include <array>
#include <cstdint>

namespace syncopate::analyzer::import {

namespace {

// What an open object or array takes next.
enum class Next : std::uint8_t { KeyOrEnd, Key, Colon, ValueOrEnd, Value, CommaOrEnd };

struct Open {
  char bracket;
  Next next;
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool isNumberChar(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// One past the string opening at `at`, or npos when the text ends inside it.
std::size_t skipString(std::string_view text, std::size_t at) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
  }
  return std::string_view::npos;
}

// One past true, false or null at `at` (a prefix of one where the text ends), or npos.
std::size_t skipLiteral(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && text[end] >= 'a' && text[end] <= 'z') ++end;
  const std::string_view word = text.substr(at, end - at);
  for (std::string_view literal : {"true", "false", "null"})
    if (word == literal || (end == text.size() && literal.starts_with(word))) return end;
  return std::string_view::npos;
}

}  // namespace

std::optional<JsonCut> findJsonCut(std::string_view text) {
  std::array<Open, kMaxJsonDepth> open{};  // outermost first
  std::size_t depth = 0;
  bool started = false;
  // The last place to cut, and how many containers were open there: open[0, keep_depth) still
  // holds them at the end, since changing one of the outer two means closing it, itself a
  // place to cut.
  std::size_t keep = 0, keep_depth = 0;
  auto mark = [&](std::size_t at) {
    if (depth <= 2) keep = at, keep_depth = depth;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (isSpace(c)) {
      ++i;
      continue;
    }
    if (depth == 0) {
      if (c != '{') return std::nullopt;  // not an object (once it closes, the text was not cut)
      started = true;
      open[depth++] = {'{', Next::KeyOrEnd};
      mark(++i);
      continue;
    }
    Open& top = open[depth - 1];
    const char closer = top.bracket == '{' ? '}' : ']';
    if (c == closer && (top.next == Next::KeyOrEnd || top.next == Next::ValueOrEnd || top.next == Next::CommaOrEnd)) {
      if (--depth == 0) return std::nullopt;  // the object closes: the text was not cut
      mark(++i);
      continue;
    }
    switch (top.next) {
      case Next::CommaOrEnd:
        if (c != ',') return std::nullopt;
        mark(i++);
        top.next = top.bracket == '{' ? Next::Key : Next::Value;
        continue;
      case Next::Colon:
        if (c != ':') return std::nullopt;
        ++i;
        top.next = Next::Value;
        continue;
      case Next::KeyOrEnd:
      case Next::Key:
        if (c != '"') return std::nullopt;
        i = skipString(text, i);
        top.next = Next::Colon;
        break;
      case Next::ValueOrEnd:
      case Next::Value:
        top.next = Next::CommaOrEnd;  // once the value is whole
        if (c == '{' || c == '[') {
          if (depth == kMaxJsonDepth) return std::nullopt;
          open[depth++] = {c, c == '{' ? Next::KeyOrEnd : Next::ValueOrEnd};
          mark(++i);
        } else if (c == '"') {
          i = skipString(text, i);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
          while (i < text.size() && isNumberChar(text[i])) ++i;
        } else if (c >= 'a' && c <= 'z') {
          i = skipLiteral(text, i);
          if (i == std::string_view::npos) return std::nullopt;
        } else {
          return std::nullopt;
        }
        break;
    }
    if (i == std::string_view::npos) break;  // the text ends inside a string
  }
  if (!started) return JsonCut{0, "{}"};  // nothing but white space: cut before the object opened
  JsonCut cut{keep, {}};
  for (std::size_t d = keep_depth; d-- > 0;) cut.closing += open[d].bracket == '{' ? '}' : ']';
  return cut;
}

}  // namespace syncopate::analyzer::import
