// The pure parts of the PostgreSQL backend: placeholder translation and password masking. No
// server involved.
#include "storage/postgres/pg_placeholders.hpp"

#include <gtest/gtest.h>

#include "storage/postgres/pg_url.hpp"

namespace sb::storage::postgres {
namespace {

std::string Translate(std::string_view sql) {
  auto out = TranslatePlaceholders(sql);
  EXPECT_TRUE(out) << sql;
  return out ? out->text : "";
}

TEST(PgPlaceholders, NumbersBareAndNumberedParametersAsSqliteDoes) {
  auto t = TranslatePlaceholders("SELECT a FROM t WHERE b = ? AND c = ?");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "SELECT a FROM t WHERE b = $1 AND c = $2");
  EXPECT_EQ(t->parameter_count, 2);

  t = TranslatePlaceholders("?2, ?, ?1");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "$2, $3, $1");
  EXPECT_EQ(t->parameter_count, 3);

  t = TranslatePlaceholders("?1 OR ?1 OR ?3");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text, "$1 OR $1 OR $3");
  EXPECT_EQ(t->parameter_count, 3);

  t = TranslatePlaceholders("SELECT 1");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->parameter_count, 0);
  EXPECT_EQ(Translate("x IN (?,?,?)"), "x IN ($1,$2,$3)");
  EXPECT_EQ(Translate("?007"), "$7");
}

TEST(PgPlaceholders, LeavesLiteralsIdentifiersAndCommentsAlone) {
  EXPECT_EQ(Translate("SELECT '?', ?"), "SELECT '?', $1");
  EXPECT_EQ(Translate("SELECT 'it''s ?', ?"), "SELECT 'it''s ?', $1");
  EXPECT_EQ(Translate("SELECT \"odd?col\", \"a\"\"?\" FROM t WHERE x = ?"),
            "SELECT \"odd?col\", \"a\"\"?\" FROM t WHERE x = $1");
  EXPECT_EQ(Translate("SELECT ? -- why? ?\n, ?"), "SELECT $1 -- why? ?\n, $2");
  EXPECT_EQ(Translate("SELECT /* ? /* nested ? */ still ? */ ?"),
            "SELECT /* ? /* nested ? */ still ? */ $1");
  // E'' strings take backslash escapes: \' does not end them. Plain ones do not.
  EXPECT_EQ(Translate("SELECT E'a\\' ?', ?"), "SELECT E'a\\' ?', $1");
  EXPECT_EQ(Translate("SELECT 'a\\', ?"), "SELECT 'a\\', $1");
  EXPECT_EQ(Translate("SELECT name' ?'"), "SELECT name' ?'");  // not an E'' string
  // Dollar quotes, with and without a tag; $1 and a$b are not dollar quotes.
  EXPECT_EQ(Translate("SELECT $$ ? $$, ?"), "SELECT $$ ? $$, $1");
  EXPECT_EQ(Translate("SELECT $fn$ ? $$ ? $fn$, ?"), "SELECT $fn$ ? $$ ? $fn$, $1");
  EXPECT_EQ(Translate("SELECT a$b, ?"), "SELECT a$b, $1");
  EXPECT_EQ(Translate("SELECT 1 - ?, 4 / ?"), "SELECT 1 - $1, 4 / $2");
  EXPECT_EQ(Translate("SELECT 'été ?', ?"), "SELECT 'été ?', $1");
}

TEST(PgPlaceholders, UnterminatedQuotesPassThroughForTheServerToReport) {
  EXPECT_EQ(Translate("SELECT 'open ?"), "SELECT 'open ?");
  EXPECT_EQ(Translate("SELECT \"open ?"), "SELECT \"open ?");
  EXPECT_EQ(Translate("SELECT /* open ?"), "SELECT /* open ?");
  EXPECT_EQ(Translate("SELECT $$ open ?"), "SELECT $$ open ?");
}

TEST(PgPlaceholders, RejectsNumbersOutsideTheProtocolRange) {
  for (const char* sql : {"SELECT ?0", "SELECT ?65536", "SELECT ?9999999999999"}) {
    auto t = TranslatePlaceholders(sql);
    ASSERT_FALSE(t) << sql;
    EXPECT_EQ(t.error().code, util::ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(TranslatePlaceholders("SELECT ?65535"));
}

TEST(PgUrl, MasksThePasswordOfEveryForm) {
  EXPECT_EQ(MaskPassword("postgresql://sb:hunter2@db.example:5432/sb"),
            "postgresql://sb:***@db.example:5432/sb");
  EXPECT_EQ(MaskPassword("postgres://sb:p@ss@db/sb?sslmode=require"),
            "postgres://sb:***@db/sb?sslmode=require");
  EXPECT_EQ(MaskPassword("postgresql://sb@db/sb?password=hunter2&sslmode=require"),
            "postgresql://sb@db/sb?password=***&sslmode=require");
  EXPECT_EQ(MaskPassword("POSTGRESQL://sb:hunter2@db"), "POSTGRESQL://sb:***@db");
  EXPECT_EQ(MaskPassword("host=db user=sb password=hunter2 dbname=sb"),
            "host=db user=sb password=*** dbname=sb");
  EXPECT_EQ(MaskPassword("host=db password = 'hun ter2' dbname=sb"),
            "host=db password = *** dbname=sb");
  EXPECT_EQ(MaskPassword("postgresql://sb@db/sb"), "postgresql://sb@db/sb");
  EXPECT_EQ(MaskPassword("postgresql://db"), "postgresql://db");
}

TEST(PgUrl, FindsAndScrubsThePassword) {
  EXPECT_EQ(PasswordOf("postgresql://sb:hunter2@db/sb"), "hunter2");
  EXPECT_EQ(PasswordOf("host=db password=hunter2"), "hunter2");
  EXPECT_EQ(PasswordOf("postgresql://sb@db/sb"), "");
  EXPECT_EQ(ScrubSecret("bad hunter2 and hunter2", "hunter2"), "bad *** and ***");
  EXPECT_EQ(ScrubSecret("nothing here", ""), "nothing here");
}

}  // namespace
}  // namespace sb::storage::postgres
