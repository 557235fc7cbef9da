// Chunking in one forward walk: each chunk decodes at most chunk_size + 2 code points from its
// start, picks the best cut among them, and the next chunk starts at least a quarter of a chunk
// further on, so the whole text costs O(n) whatever the options.
#include "knowledge/chunker.hpp"

#include <algorithm>

#include "util/utf8.hpp"

namespace sb::knowledge {
namespace {

bool IsSpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0xA0 ||
         c == 0x3000;
}
bool IsLatinSentenceEnd(char32_t c) { return c == '.' || c == '!' || c == '?'; }
bool IsCjkSentenceEnd(char32_t c) { return c == 0x3002 || c == 0xFF01 || c == 0xFF1F; }
// A quote or bracket that may close a sentence: `He said "stop." Then` ends after the quote.
bool IsCloser(char32_t c) {
  return c == '"' || c == '\'' || c == ')' || c == ']' || c == 0x201D || c == 0x2019 ||
         c == 0x300D || c == 0x300F || c == 0xFF09;
}
// Whether a sentence ends just before code point k of `cps`.
bool EndsSentence(const std::vector<char32_t>& cps, std::size_t k) {
  const char32_t before = cps[k - 1];
  if (IsCjkSentenceEnd(before)) return true;
  const bool latin = IsLatinSentenceEnd(before) ||
                     (IsCloser(before) && k >= 2 &&
                      (IsLatinSentenceEnd(cps[k - 2]) || IsCjkSentenceEnd(cps[k - 2])));
  return latin && (k == cps.size() || IsSpace(cps[k]));
}

// The byte just past the whitespace starting at `i`.
std::size_t SkipSpace(std::string_view text, std::size_t i) {
  while (i < text.size()) {
    char32_t cp;
    const std::size_t len = util::NextCodePoint(text, i, cp);
    if (!IsSpace(cp)) break;
    i += len;
  }
  return i;
}

// The end of `text[begin, end)` without trailing whitespace (ASCII, no-break and ideographic).
std::size_t TrimEnd(std::string_view text, std::size_t begin, std::size_t end) {
  for (;;) {
    if (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n' ||
                        text[end - 1] == '\r' || text[end - 1] == '\f' || text[end - 1] == '\v')) {
      --end;
    } else if (end >= begin + 2 && text.substr(end - 2, 2) == "\xC2\xA0") {
      end -= 2;
    } else if (end >= begin + 3 && text.substr(end - 3, 3) == "\xE3\x80\x80") {
      end -= 3;
    } else {
      return end;
    }
  }
}

}  // namespace

std::vector<TextChunk> SplitIntoChunks(std::string_view text, const ChunkOptions& options) {
  // No chunk holds more code points than the text has bytes; clamping there also keeps size + 2
  // from overflowing for an absurd chunk_size.
  const std::size_t size =
      std::clamp<std::size_t>(options.chunk_size, 1, std::max<std::size_t>(1, text.size()));
  const std::size_t overlap = std::min(options.overlap, size / 2);
  // A cut at a preferred boundary is taken only this far in, so every chunk moves on by at least
  // size / 4 code points past its overlap (for size >= 4; by one for tiny sizes).
  const std::size_t min_cut = std::max<std::size_t>(1, std::min(size, overlap + size / 4 + 1));

  std::vector<TextChunk> chunks;
  std::vector<std::size_t> at;  // at[k]: byte offset of the k-th code point from the start
  std::vector<char32_t> cps;    // the code points themselves
  std::size_t start = SkipSpace(text, 0);
  while (start < text.size()) {
    at.clear();
    cps.clear();
    std::size_t i = start;
    while (i < text.size() && cps.size() < size + 2) {
      char32_t cp;
      const std::size_t len = util::NextCodePoint(text, i, cp);
      at.push_back(i);
      cps.push_back(cp);
      i += len;
    }
    at.push_back(i);  // at[cps.size()]: the byte after the last decoded code point
    const bool rest_fits = i >= text.size() && cps.size() <= size;

    // The cut k: the chunk is code points [0, k). Best kind first, latest position within a kind.
    std::size_t cut = std::min(size, cps.size());
    if (!rest_fits) {
      std::size_t paragraph = 0, sentence = 0, space = 0;
      for (std::size_t k = min_cut; k <= size && k < cps.size(); ++k) {
        const char32_t before = cps[k - 1];
        const char32_t here = cps[k];
        if (here == '\n' && k + 1 < cps.size() && cps[k + 1] == '\n' && !IsSpace(before)) {
          paragraph = k;
        } else if (EndsSentence(cps, k)) {
          sentence = k;
        } else if (IsSpace(here) && !IsSpace(before)) {
          space = k;
        }
      }
      if (paragraph != 0) {
        cut = paragraph;
      } else if (sentence != 0) {
        cut = sentence;
      } else if (space != 0) {
        cut = space;
      }
    }

    const std::size_t end_byte = TrimEnd(text, start, at[cut]);
    chunks.push_back(TextChunk{std::string(text.substr(start, end_byte - start)), start});
    if (rest_fits || at[cut] >= text.size()) break;

    // The next start: about `overlap` code points back from the cut, at the first sentence start
    // in that window, else the first word start, else exactly `overlap` back.
    std::size_t next = cut;
    if (overlap > 0) {
      const std::size_t from = cut - overlap;  // cut >= min_cut > overlap
      std::size_t sentence_start = 0, word_start = 0;
      for (std::size_t k = std::max<std::size_t>(from, 1); k < cut; ++k) {
        if (IsSpace(cps[k])) continue;
        if (IsCjkSentenceEnd(cps[k - 1])) {
          if (sentence_start == 0) sentence_start = k;
        } else if (IsSpace(cps[k - 1])) {
          std::size_t b = k - 1;
          while (b > 0 && IsSpace(cps[b])) --b;
          if (sentence_start == 0 && !IsSpace(cps[b]) && EndsSentence(cps, b + 1)) {
            sentence_start = k;
          }
          if (word_start == 0) word_start = k;
        }
      }
      next = sentence_start != 0 ? sentence_start : word_start != 0 ? word_start : from;
    }
    start = SkipSpace(text, at[next]);
  }
  return chunks;
}

std::vector<ParentChunk> SplitParentChild(std::string_view text, std::size_t parent_size,
                                          std::size_t child_size, std::size_t overlap) {
  std::vector<ParentChunk> out;
  for (TextChunk& parent : SplitIntoChunks(text, {.chunk_size = parent_size, .overlap = 0})) {
    ParentChunk item;
    item.children = SplitIntoChunks(parent.text, {.chunk_size = child_size, .overlap = overlap});
    for (TextChunk& child : item.children) child.offset += parent.offset;
    item.parent = std::move(parent);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace sb::knowledge
