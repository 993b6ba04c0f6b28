// JSON Syncopate writes stays JSON whatever bytes a store or a command line hands it.
#include "syncopate/trace/json_text.hpp"

#include <gtest/gtest.h>

namespace syncopate::trace {
namespace {

// A kernel name with a byte that is not UTF-8 (as a flipped bit in a store leaves it): the byte
// becomes U+FFFD and the document parses back, where nlohmann::json::dump() would throw.
TEST(JsonText, InvalidUtf8BecomesTheReplacementCharacter) {
  const nlohmann::json document{{"kernel", std::string("gemm\x99_f32")}, {"ops", 3}};
  EXPECT_THROW((void)document.dump(), nlohmann::json::type_error);
  const std::string text = jsonText(document);
  EXPECT_EQ(text, "{\"kernel\":\"gemm\xEF\xBF\xBD_f32\",\"ops\":3}");
  EXPECT_EQ(nlohmann::json::parse(text)["kernel"], "gemm\xEF\xBF\xBD_f32");
}

TEST(JsonText, ValidDocumentsAreWrittenAsDumpWritesThem) {
  const nlohmann::json document{{"name", "ProfilerStep#3 — ünïcode"}, {"list", {1, 2}}};
  EXPECT_EQ(jsonText(document), document.dump());
  EXPECT_EQ(jsonText(document, 2), document.dump(2));
}

}  // namespace
}  // namespace syncopate::trace
