// Splits a document's text into passages for embedding: each at most `chunk_size` characters
// (Unicode code points), cut preferably at a paragraph break, else at a sentence end (. ! ? and
// the CJK 。！？), else at a space, else anywhere; consecutive chunks share about `overlap`
// characters so a sentence cut in two is whole in one of them. Parent-child mode makes large
// parents (returned to the model) of small children (searched).
//   auto chunks = SplitIntoChunks(text, {.chunk_size = 512, .overlap = 50});
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sb::knowledge {

struct ChunkOptions {
  std::size_t chunk_size = 512;  // characters; at least 1
  std::size_t overlap = 50;      // characters; less than chunk_size (clamped)
  // How the clamping guarantees progress: overlap is at most chunk_size / 2, and a cut at a
  // preferred boundary is taken only past overlap + chunk_size / 4, so each chunk starts at least
  // a quarter chunk after the previous one (one character for tiny sizes) and the output is at
  // most about four times the input whatever the options.
};

struct TextChunk {
  std::string text;        // trimmed of leading and trailing whitespace, never empty
  std::size_t offset = 0;  // byte offset of the chunk's start in the source text
};

// In document order. Whitespace-only input gives no chunks.
std::vector<TextChunk> SplitIntoChunks(std::string_view text, const ChunkOptions& options);

struct ParentChunk {
  TextChunk parent;                 // at most parent_size characters
  std::vector<TextChunk> children;  // the parent's text split with child_size and overlap
};

std::vector<ParentChunk> SplitParentChild(std::string_view text, std::size_t parent_size,
                                          std::size_t child_size, std::size_t overlap);

}  // namespace sb::knowledge
