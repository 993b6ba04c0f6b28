// The schema and the diagnostics are each declared once, in code; docs/store-schema.md quotes
// them. This fails when the two drift apart, so the document can be trusted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "syncopate/trace/diagnostics.hpp"
#include "syncopate/trace/schema.hpp"

namespace syncopate::trace {
namespace {

void readStoreSchemaDoc(std::string& doc) {
  std::ifstream in(std::string(SYNCOPATE_SOURCE_DIR) + "/docs/store-schema.md");
  ASSERT_TRUE(in) << "docs/store-schema.md not found";
  std::stringstream buffer;
  buffer << in.rdbuf();
  doc = buffer.str();
}

TEST(SchemaDoc, TheDocumentQuotesTheSchemaVerbatim) {
  std::string doc;
  ASSERT_NO_FATAL_FAILURE(readStoreSchemaDoc(doc));
  const std::string open = "```sql\n";
  const auto begin = doc.find(open);
  ASSERT_NE(begin, std::string::npos) << "no ```sql block";
  const auto end = doc.find("```", begin + open.size());
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(begin + open.size(), end - begin - open.size()), std::string(schemaSql()));
  EXPECT_EQ(doc.find(open, end), std::string::npos) << "more than one ```sql block";
  EXPECT_NE(doc.find("# The run store (schema " + toString(kSchemaVersion) + ")"), std::string::npos);
}

// Every entry of the diagnostics list is a row of the document's tables, as the list says it.
TEST(SchemaDoc, TheDocumentListsEveryDiagnostic) {
  std::string doc;
  ASSERT_NO_FATAL_FAILURE(readStoreSchemaDoc(doc));
  for (const diagnostics::Entry& e : diagnostics::kEntries) {
    const std::string row = "| `" + std::string(e.key) + "` | " + std::string(toString(e.severity)) + " | " +
                            std::string(e.sentence) + " |\n";
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/store-schema.md lacks the row " << row;
  }
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
