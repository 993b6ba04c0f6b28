// The schema is defined once, in code; docs/store-schema.md quotes it. This fails when the
// two drift apart, so the document can be trusted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "syncopate/trace/schema.hpp"

namespace syncopate::trace {
namespace {

TEST(SchemaDoc, TheDocumentQuotesTheSchemaVerbatim) {
  std::ifstream in(std::string(SYNCOPATE_SOURCE_DIR) + "/docs/store-schema.md");
  ASSERT_TRUE(in) << "docs/store-schema.md not found";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string doc = buffer.str();
  const std::string open = "```sql\n";
  const auto begin = doc.find(open);
  ASSERT_NE(begin, std::string::npos) << "no ```sql block";
  const auto end = doc.find("```", begin + open.size());
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(begin + open.size(), end - begin - open.size()), std::string(schemaSql()));
  EXPECT_EQ(doc.find(open, end), std::string::npos) << "more than one ```sql block";
  EXPECT_NE(doc.find("# The run store (schema " + toString(kSchemaVersion) + ")"), std::string::npos);
}

TEST(SchemaVersion, ParsesMajorDotMinorOnly) {
  SchemaVersion v;
  EXPECT_TRUE(parseSchemaVersion("1.0", v));
  EXPECT_EQ(v, (SchemaVersion{1, 0}));
  EXPECT_TRUE(parseSchemaVersion("12.34", v));
  EXPECT_EQ(v, (SchemaVersion{12, 34}));
  for (const char* bad : {"", "1", "1.", ".1", "1.0.0", "a.b", "1.x", "-1.0", " 1.0"}) {
    EXPECT_FALSE(parseSchemaVersion(bad, v)) << bad;
  }
  EXPECT_EQ(toString(SchemaVersion{3, 1}), "3.1");
}

}  // namespace
}  // namespace syncopate::trace
