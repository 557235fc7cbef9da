// Chunking: boundaries preferred in order, overlap, sizes in code points (CJK, emoji), offsets
// into the source, parent-child nesting, pathological options, and speed on a large text.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>

#include "knowledge/chunker.hpp"
#include "util/utf8.hpp"

namespace sb::knowledge {
namespace {

std::size_t CodePoints(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    char32_t cp;
    i += util::NextCodePoint(s, i, cp);
  }
  return n;
}

// What every chunking must satisfy: non-empty trimmed chunks within the size, valid UTF-8,
// found at their offset, in order, covering every word of the text.
// `begin` and `end` bound the part of `text` the chunks were made from.
void ExpectWellFormed(std::string_view text, const std::vector<TextChunk>& chunks, std::size_t size,
                      std::size_t begin = 0, std::size_t end = std::string_view::npos) {
  const bool valid_source = util::IsValidUtf8(text);
  std::size_t last_offset = 0;
  std::size_t covered = begin;  // bytes of the source up to the end of the chunks so far
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const TextChunk& c = chunks[k];
    ASSERT_FALSE(c.text.empty());
    EXPECT_LE(CodePoints(c.text), std::max<std::size_t>(size, 1)) << c.text;
    EXPECT_TRUE(!valid_source || util::IsValidUtf8(c.text)) << k;
    EXPECT_NE(c.text.front(), ' ');
    EXPECT_NE(c.text.back(), ' ');
    EXPECT_NE(c.text.back(), '\n');
    ASSERT_GE(c.offset, begin);
    ASSERT_LE(c.offset + c.text.size(), std::min(end, text.size()));
    EXPECT_EQ(text.substr(c.offset, c.text.size()), c.text) << "chunk " << k;
    if (k > 0) {
      EXPECT_GT(c.offset, last_offset);
      // No gap: the next chunk starts no later than the previous one ended, bar whitespace.
      const auto gap = text.substr(covered, c.offset > covered ? c.offset - covered : 0);
      EXPECT_EQ(gap.find_first_not_of(" \t\n"), std::string_view::npos) << "gap before " << k;
    }
    last_offset = c.offset;
    covered = std::max(covered, c.offset + c.text.size());
  }
  if (!chunks.empty()) {
    EXPECT_EQ(text.substr(covered, std::min(end, text.size()) - covered).find_first_not_of(" \t\n"),
              std::string_view::npos);
  }
}

TEST(KnowledgeChunker, WhitespaceOnlyGivesNothing) {
  EXPECT_TRUE(SplitIntoChunks("", {}).empty());
  EXPECT_TRUE(SplitIntoChunks(" \n\n\t ", {}).empty());
}

TEST(KnowledgeChunker, ShortTextIsOneTrimmedChunk) {
  const auto chunks = SplitIntoChunks("\n  Hello there.  \n", {.chunk_size = 100, .overlap = 10});
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "Hello there.");
  EXPECT_EQ(chunks[0].offset, 3u);
}

TEST(KnowledgeChunker, PrefersParagraphThenSentenceThenSpace) {
  // A paragraph break inside the window wins over later sentence ends.
  std::string text = "Alpha beta gamma delta. Epsilon zeta.\n\nEta theta iota. Kappa lambda mu nu.";
  auto chunks = SplitIntoChunks(text, {.chunk_size = 60, .overlap = 0});
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].text, "Alpha beta gamma delta. Epsilon zeta.");
  ExpectWellFormed(text, chunks, 60);

  // No paragraph break: the last sentence end in the window.
  text = "One two three four. Five six seven eight nine ten eleven twelve thirteen.";
  chunks = SplitIntoChunks(text, {.chunk_size = 40, .overlap = 0});
  EXPECT_EQ(chunks[0].text, "One two three four.");
  ExpectWellFormed(text, chunks, 40);

  // A period not followed by a space (a version number) is no sentence end.
  text = "Version 3.14159 released today for everyone who wants";
  chunks = SplitIntoChunks(text, {.chunk_size = 30, .overlap = 0});
  EXPECT_EQ(chunks[0].text, "Version 3.14159 released today");
  ExpectWellFormed(text, chunks, 30);

  // A sentence may end after a closing quote.
  text = "He said \"stop here.\" Then everyone went home early that day.";
  chunks = SplitIntoChunks(text, {.chunk_size = 40, .overlap = 0});
  EXPECT_EQ(chunks[0].text, "He said \"stop here.\"");
  ExpectWellFormed(text, chunks, 40);

  // No space at all: cut anywhere, exactly at the size.
  text = std::string(100, 'x');
  chunks = SplitIntoChunks(text, {.chunk_size = 30, .overlap = 0});
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].text.size(), 30u);
  ExpectWellFormed(text, chunks, 30);
}

TEST(KnowledgeChunker, OverlapStartsAtASentenceOrWord) {
  std::string text;
  for (int k = 0; k < 40; ++k) text += "Sentence number " + std::to_string(k) + " is here. ";
  const auto chunks = SplitIntoChunks(text, {.chunk_size = 100, .overlap = 30});
  ASSERT_GT(chunks.size(), 5u);
  ExpectWellFormed(text, chunks, 100);
  for (std::size_t k = 1; k < chunks.size(); ++k) {
    const TextChunk& prev = chunks[k - 1];
    const TextChunk& cur = chunks[k];
    EXPECT_LT(cur.offset, prev.offset + prev.text.size()) << "no overlap before chunk " << k;
    EXPECT_TRUE(cur.text.rfind("Sentence", 0) == 0) << cur.text;  // at a sentence start
    EXPECT_LE(prev.offset + prev.text.size() - cur.offset, 30u + 1);
  }
}

TEST(KnowledgeChunker, CjkAndEmojiCountAsOneCharacter) {
  std::string text;
  for (int k = 0; k < 30; ++k) text += "我们喜欢知识库。";  // 8 code points, 24 bytes
  auto chunks = SplitIntoChunks(text, {.chunk_size = 20, .overlap = 5});
  ExpectWellFormed(text, chunks, 20);
  for (const auto& c : chunks) {
    EXPECT_GE(CodePoints(c.text), 8u);
    const std::string_view last = std::string_view(c.text).substr(c.text.size() - 3);
    if (&c != &chunks.back()) {
      EXPECT_EQ(last, "。") << c.text;  // cut at the CJK full stop
    }
  }
  std::string emoji;
  for (int k = 0; k < 100; ++k) emoji += "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes each
  chunks = SplitIntoChunks(emoji, {.chunk_size = 7, .overlap = 2});
  ExpectWellFormed(emoji, chunks, 7);
  EXPECT_EQ(CodePoints(chunks[0].text), 7u);
}

TEST(KnowledgeChunker, PathologicalOptionsStillProgress) {
  const std::string text = "ab cd. \xE4\xBD\xA0\xE5\xA5\xBD ef\n\ngh \xF0\x9F\x98\x80 ij.";
  for (std::size_t size : {0u, 1u, 2u, 3u, 5u}) {
    for (std::size_t overlap : {0u, 1u, 2u, 5u, 100u}) {
      const auto chunks = SplitIntoChunks(text, {.chunk_size = size, .overlap = overlap});
      ASSERT_FALSE(chunks.empty());
      ASSERT_LE(chunks.size(), 40u) << size << "/" << overlap;
      ExpectWellFormed(text, chunks, size);
    }
  }
  // chunk_size 1: every non-space character alone.
  const auto ones = SplitIntoChunks("a b\xE4\xBD\xA0", {.chunk_size = 1, .overlap = 1});
  ASSERT_EQ(ones.size(), 3u);
  EXPECT_EQ(ones[2].text, "\xE4\xBD\xA0");
  EXPECT_EQ(ones[2].offset, 3u);
  // An absurd size is the whole text; an absurd overlap is clamped.
  const auto whole = SplitIntoChunks(text, {.chunk_size = SIZE_MAX, .overlap = SIZE_MAX});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].text, text);
  // Invalid UTF-8 never stalls.
  const std::string bad = "\xFF\xFE\x80 abc \xC3";
  ExpectWellFormed(bad, SplitIntoChunks(bad, {.chunk_size = 2, .overlap = 1}), 2);
}

TEST(KnowledgeChunker, RandomTextsKeepTheInvariants) {
  const char* tokens[] = {"word",
                          "longerword",
                          " ",
                          " ",
                          "\n",
                          "\n\n",
                          ". ",
                          "! ",
                          "?",
                          "\xE4\xBD\xA0\xE5\xA5\xBD",
                          "\xE3\x80\x82",
                          "\xF0\x9F\x98\x80",
                          "\t",
                          "\"",
                          "e.g.",
                          "\xEF\xBC\x81"};
  std::mt19937 random(17);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int length = static_cast<int>(random() % 400);
    for (int k = 0; k < length; ++k) text += tokens[random() % std::size(tokens)];
    const std::size_t size = random() % 80;
    const std::size_t overlap = random() % 90;
    const auto chunks = SplitIntoChunks(text, {.chunk_size = size, .overlap = overlap});
    ExpectWellFormed(text, chunks, size);
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << " size " << size << " overlap " << overlap;
      return;
    }
  }
}

TEST(KnowledgeChunker, UniqueSentenceInTheMiddleIsWhole) {
  std::string text;
  while (text.size() < 100'000) {
    text += "The quick brown fox jumps over the lazy dog near the riverbank. ";
    if (text.size() % 7 == 0) text += "\n\n";
  }
  const std::string unique = "The purple giraffe sings opera at midnight in Copenhagen.";
  text += unique + " ";
  while (text.size() < 200'000) text += "Another filler sentence follows here without end. ";
  const auto chunks = SplitIntoChunks(text, {.chunk_size = 512, .overlap = 100});
  ExpectWellFormed(text, chunks, 512);
  int whole = 0;
  for (const auto& c : chunks) whole += c.text.find(unique) != std::string::npos;
  EXPECT_GE(whole, 1);
}

TEST(KnowledgeChunker, ParentChild) {
  std::string text;
  for (int k = 0; k < 50; ++k) {
    text += "Paragraph " + std::to_string(k) + " starts. It has two sentences here.\n\n";
  }
  const auto parents = SplitParentChild(text, 300, 60, 15);
  ASSERT_GT(parents.size(), 3u);
  std::vector<TextChunk> flat;
  for (const auto& p : parents) flat.push_back(p.parent);
  ExpectWellFormed(text, flat, 300);
  for (const auto& p : parents) {
    ASSERT_FALSE(p.children.empty());
    // Children stay inside their parent and cover all of it.
    ExpectWellFormed(text, p.children, 60, p.parent.offset, p.parent.offset + p.parent.text.size());
  }
}

TEST(KnowledgeChunker, TenMegabytesQuickly) {
  std::string text;
  text.reserve(10u << 20);
  int k = 0;
  while (text.size() < (10u << 20)) {
    text += "Sentence " + std::to_string(k++) + " of the long document, with words. ";
    if (k % 9 == 0) text += "\n\n";
    if (k % 13 == 0) text += "知识库的文本。";
  }
  const auto start = std::chrono::steady_clock::now();
  const auto chunks = SplitIntoChunks(text, {.chunk_size = 512, .overlap = 50});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const double seconds = std::chrono::duration<double>(elapsed).count();
  std::printf("chunked %.1f MB into %zu chunks in %.3f s (%.0f MB/s)\n", text.size() / 1e6,
              chunks.size(), seconds, text.size() / 1e6 / seconds);
  EXPECT_LT(seconds, 3.0);  // generous for Debug and sanitizer builds; Release is far faster
  EXPECT_GT(chunks.size(), (10u << 20) / 512 / 4);
}

}  // namespace
}  // namespace sb::knowledge
