// The adapter and requester icons drawn by the server: initials, and text escaped for XML.
#include "http/api/monogram_icon.hpp"

#include <gtest/gtest.h>

namespace sb::http::api {
namespace {

TEST(MonogramIcon, InitialsFromTheLabel) {
  EXPECT_EQ(MonogramText("OneBot v11", "aiocqhttp"), "OV");
  EXPECT_EQ(MonogramText("Telegram", "telegram"), "TE");
  EXPECT_EQ(MonogramText("  lark  ", "lark"), "LA");
  EXPECT_EQ(MonogramText("企业微信", "wecom"), "企业");
  EXPECT_EQ(MonogramText("--", "x-y"), "XY");
  EXPECT_EQ(MonogramText("", ""), "?");
  EXPECT_EQ(MonogramText("Q", "q"), "Q");
}

TEST(MonogramIcon, EscapesEverythingItWrites) {
  const std::string svg = MonogramSvg("<b>&\"'</b> x", "evil");
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;b&gt;&amp;&quot;&#39;&lt;/b&gt; x"), std::string::npos);
  EXPECT_NE(svg.find(">BB</text>"), std::string::npos);  // the two words are "b" and "b"
  // Invalid UTF-8 is repaired, never passed through.
  EXPECT_EQ(MonogramSvg("bad\xff", "n").find('\xff'), std::string::npos);
  // The same name always gets the same colour.
  EXPECT_EQ(MonogramSvg("A", "same"), MonogramSvg("A", "same"));
  EXPECT_NE(MonogramSvg("A", "one"), MonogramSvg("A", "two"));
}

}  // namespace
}  // namespace sb::http::api
