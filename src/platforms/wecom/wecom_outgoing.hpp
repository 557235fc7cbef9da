// What both WeCom adapters send, before it becomes a platform call: a message cut into parts
// WeCom can carry one per call: text of at most 2048 UTF-8 bytes (WeCom's limit for the app's
// message/send and customer service's kf/send_msg alike), images and files still to be uploaded
// through media/upload. Also the two small helpers both codecs build on: the id check targets
// go through and a bare chain element. Pure.
//   for (const OutgoingPart& part : PlanParts(message)) ...   // text, or upload then send
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "domain/message.hpp"
#include "util/error.hpp"

namespace sb::platforms::wecom {

// Bytes, not characters: WeCom counts the UTF-8 encoding.
inline constexpr std::size_t kMaxTextBytes = 2048;
// Uploads (an image's bytes, a file fetched from its URL) larger than this are refused; WeCom's
// own caps are 10 MB for images and 20 MB for files.
inline constexpr std::size_t kMaxUploadBytes = 10 * 1024 * 1024;

enum class PartKind { kText, kImage, kFile };

struct OutgoingPart {
  PartKind kind = PartKind::kText;
  std::string text;    // kText
  std::string url;     // kImage / kFile: fetch the bytes from here ...
  std::string base64;  // kImage: ... or decode them from this (a data: URL or bare base64)
  std::string name;    // kFile: the file name shown to the user
};

// Text runs (Plain, At as "@id", AtAll as "@all") joined and cut at kMaxTextBytes at the last
// line break or space that fits (else at a whole code point); each Image and File its own part,
// in order. Source and Quote are dropped (WeCom has neither).
std::vector<OutgoingPart> PlanParts(const domain::MessageChain& chain);

// The pieces of `text` of at most `max_bytes` UTF-8 bytes each.
std::vector<std::string> SplitUtf8Bytes(std::string_view text, std::size_t max_bytes);

// kInvalidArgument naming "message_chain[i]" for what neither adapter can carry: a Voice (WeCom
// wants AMR, which we cannot produce), an Image with neither url nor base64, a File without a url;
// or a chain with nothing to send.
util::Result<void> CheckChain(const domain::MessageChain& chain);

// The bytes of a base64 image (a data: URL or bare base64); kInvalidArgument when not base64.
util::Result<std::string> DecodeImageBase64(std::string_view base64_or_data_url);

// A user id, external user id or customer-service account id as a target may carry one: 1 to 64
// letters, digits and _-@. (WeCom's ids stay within these).
bool IsWeComId(std::string_view id);

// An element of `type` with `id` (Source) or nothing else set (an Image still to be filled).
domain::MessageElement Element(domain::ElementType type, std::string id);

// "image.png" from a URL's last path segment, `fallback` when it has none usable.
std::string FileNameFromUrl(std::string_view url, std::string_view fallback);

}  // namespace sb::platforms::wecom
