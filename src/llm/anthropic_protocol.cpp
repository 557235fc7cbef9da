// Anthropic messages: llm.md section 2. System text is top level, tool calls and results are
// content blocks, and the stream is named SSE events ending in message_stop.

#include <fmt/format.h>

#include <map>
#include <optional>

#include "llm/protocol_support.hpp"
#include "llm/wire_protocol.hpp"
#include "net/stream_parsers.hpp"

namespace sb::llm {
namespace {

using domain::ChatMessage;
using domain::ChatResult;
using util::ErrorCode;
using util::Json;
using util::JsonArray;
using util::JsonObject;

// The API has no server default and answers 400 without it.
constexpr std::int64_t kDefaultMaxTokens = 4096;
// Several system messages become one top-level text, kept apart as paragraphs.
constexpr std::string_view kSystemSeparator = "\n\n";

util::Result<JsonObject> ImageBlock(const std::string& url) {
  if (auto data = ParseBase64DataUrl(url)) {
    return JsonObject{
        {"type", "image"},
        {"source",
         JsonObject{{"type", "base64"}, {"media_type", data->media_type}, {"data", data->data}}}};
  }
  if (IsHttpUrl(url)) {
    return JsonObject{{"type", "image"}, {"source", JsonObject{{"type", "url"}, {"url", url}}}};
  }
  return util::Fail(ErrorCode::kInvalidArgument,
                    "anthropic-messages takes images as base64 data: URLs or http(s) URLs");
}

// Text and image parts as blocks; empty text blocks are left out because the API rejects them.
util::Result<JsonArray> ContentBlocks(const ChatMessage& message) {
  JsonArray blocks;
  for (const auto& part : message.content) {
    if (part.kind == domain::ContentPart::Kind::kText) {
      if (!part.text.empty()) blocks.push_back(JsonObject{{"type", "text"}, {"text", part.text}});
      continue;
    }
    auto image = ImageBlock(part.image_url);
    if (!image) return tl::unexpected(image.error());
    blocks.push_back(std::move(*image));
  }
  return blocks;
}

// A plain string when the message is text only (the compact form), else blocks.
util::Result<Json> Content(const ChatMessage& message) {
  if (!HasImages(message)) return Json(JoinedText(message));
  auto blocks = ContentBlocks(message);
  if (!blocks) return tl::unexpected(blocks.error());
  return Json(std::move(*blocks));
}

util::Result<JsonObject> AssistantMessage(const ChatMessage& message) {
  if (message.tool_calls.empty()) {
    auto content = Content(message);
    if (!content) return tl::unexpected(content.error());
    return JsonObject{{"role", "assistant"}, {"content", std::move(*content)}};
  }
  auto blocks = ContentBlocks(message);
  if (!blocks) return tl::unexpected(blocks.error());
  for (const auto& call : message.tool_calls) {
    auto input = ArgumentsObject(call);
    if (!input) return tl::unexpected(input.error());
    blocks->push_back(JsonObject{
        {"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", std::move(*input)}});
  }
  return JsonObject{{"role", "assistant"}, {"content", std::move(*blocks)}};
}

util::Result<JsonObject> ToolResultBlock(const ChatMessage& message) {
  if (message.tool_call_id.empty()) {
    return util::Fail(ErrorCode::kInvalidArgument, "a tool message needs its tool_call_id");
  }
  auto content = Content(message);
  if (!content) return tl::unexpected(content.error());
  return JsonObject{{"type", "tool_result"},
                    {"tool_use_id", message.tool_call_id},
                    {"content", std::move(*content)}};
}

std::string NormalizeStopReason(std::string_view reason) {
  if (reason == "end_turn" || reason == "stop_sequence") return "stop";
  if (reason == "max_tokens") return "length";
  if (reason == "tool_use") return "tool_calls";
  if (reason == "refusal") return "content_filter";
  if (reason.empty()) return "";
  return "other";  // pause_turn and whatever is added later
}

// Reads the fields present in a usage object; message_delta's usage is cumulative, so present
// fields replace what message_start said.
void ReadUsage(const Json& usage, domain::Usage& out, std::int64_t& cache_tokens) {
  if (auto input = IntMember(usage, "input_tokens")) out.prompt_tokens = *input;
  if (auto output = IntMember(usage, "output_tokens")) out.completion_tokens = *output;
  const auto created = IntMember(usage, "cache_creation_input_tokens");
  const auto read = IntMember(usage, "cache_read_input_tokens");
  if (created || read) cache_tokens = created.value_or(0) + read.value_or(0);
}

// Cached prompt tokens are billed input too (llm.md 2.4: total input is the sum).
void FinishUsage(domain::Usage& usage, std::int64_t cache_tokens) {
  usage.prompt_tokens += cache_tokens;
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
}

bool IsRateError(std::string_view type) {
  return type == "rate_limit_error" || type == "overloaded_error" || type == "billing_error";
}

util::Error InBandError(const Json& body) {
  const Json* error = Member(body, "error");
  std::string type = error ? StringMember(*error, "type") : "";
  std::string message = error ? StringMember(*error, "message") : "";
  if (message.empty()) message = type;
  return StreamError(
      IsRateError(type) ? ErrorCode::kUpstreamRateLimited : ErrorCode::kUpstreamFailed, message);
}

class AnthropicChatStream final : public ChatStream {
 public:
  util::Result<void> Feed(std::string_view piece,
                          const std::function<void(const domain::ChatDelta&)>& on_delta) override {
    if (error_) return tl::unexpected(*error_);
    if (done_) return util::Ok();
    const bool fit =
        sse_.Feed(piece, [&](const net::SseEvent& event) { OnEvent(event, on_delta); });
    if (!fit && !error_) error_ = MalformedResponse("stream event too large");
    if (error_) return tl::unexpected(*error_);
    return util::Ok();
  }

  util::Result<ChatResult> Finish() override {
    if (!error_ && !done_) sse_.Finish([&](const net::SseEvent& event) { OnEvent(event, {}); });
    if (error_) return tl::unexpected(*error_);
    if (!done_) return util::Fail(ErrorCode::kUpstreamFailed, "stream ended early");
    for (auto& [index, block] : tool_inputs_) {
      // No input_json_delta at all: the input given at content_block_start is the whole input.
      if (!block.saw_delta) tool_calls_.AppendArguments(index, block.start_input);
    }
    // Compact, so that a streamed call reads exactly like the same call answered whole.
    result_.tool_calls = tool_calls_.Take(/*compact_arguments=*/true);
    FinishUsage(result_.usage, cache_tokens_);
    SettleFinishReason(result_);
    return std::move(result_);
  }

 private:
  struct ToolInput {
    std::string start_input;
    bool saw_delta = false;
  };

  void OnEvent(const net::SseEvent& event,
               const std::function<void(const domain::ChatDelta&)>& on_delta) {
    if (error_ || done_ || event.data.empty()) return;
    auto parsed = util::ParseJson(event.data);
    if (!parsed) {
      error_ = MalformedResponse("stream event is not JSON: " + parsed.error().message);
      return;
    }
    const Json& data = *parsed;
    // data.type repeats the event name; the event name is the fallback for a bare payload.
    std::string type = StringMember(data, "type");
    if (type.empty()) type = event.event;
    const auto index = IntMember(data, "index").value_or(0);
    if (type == "message_start") {
      if (const Json* message = Member(data, "message")) {
        if (const Json* usage = Member(*message, "usage")) {
          ReadUsage(*usage, result_.usage, cache_tokens_);
        }
      }
    } else if (type == "content_block_start") {
      OnBlockStart(index, Member(data, "content_block"), on_delta);
    } else if (type == "content_block_delta") {
      if (const Json* delta = Member(data, "delta")) OnBlockDelta(index, *delta, on_delta);
    } else if (type == "message_delta") {
      if (const Json* delta = Member(data, "delta")) {
        const std::string reason = NormalizeStopReason(StringMember(*delta, "stop_reason"));
        if (!reason.empty()) result_.finish_reason = reason;
      }
      if (const Json* usage = Member(data, "usage"))
        ReadUsage(*usage, result_.usage, cache_tokens_);
    } else if (type == "message_stop") {
      done_ = true;
    } else if (type == "error") {
      error_ = InBandError(data);
    }
    // ping, content_block_stop and event types added later carry nothing we need.
  }

  void OnBlockStart(std::int64_t index, const Json* block,
                    const std::function<void(const domain::ChatDelta&)>& on_delta) {
    if (block == nullptr) return;
    const std::string type = StringMember(*block, "type");
    if (type == "text") {
      AppendText(StringMember(*block, "text"), on_delta);
    } else if (type == "thinking") {
      result_.reasoning += StringMember(*block, "thinking");
    } else if (type == "tool_use") {
      tool_calls_.Start(index, StringMember(*block, "id"), StringMember(*block, "name"));
      auto& input = tool_inputs_[index];
      if (const auto* object = ObjectMember(*block, "input"); object && !object->empty()) {
        input.start_input = util::SerializeJson(*object);
      }
    }
  }

  void OnBlockDelta(std::int64_t index, const Json& delta,
                    const std::function<void(const domain::ChatDelta&)>& on_delta) {
    const std::string type = StringMember(delta, "type");
    if (type == "text_delta") {
      AppendText(StringMember(delta, "text"), on_delta);
    } else if (type == "thinking_delta") {
      result_.reasoning += StringMember(delta, "thinking");
    } else if (type == "input_json_delta") {
      tool_inputs_[index].saw_delta = true;
      tool_calls_.AppendArguments(index, StringMember(delta, "partial_json"));
    }
  }

  void AppendText(std::string text, const std::function<void(const domain::ChatDelta&)>& on_delta) {
    if (text.empty()) return;
    result_.content += text;
    if (on_delta) on_delta(domain::ChatDelta{std::move(text)});
  }

  net::SseParser sse_;
  ChatResult result_;
  ToolCallFragments tool_calls_;
  std::map<std::int64_t, ToolInput> tool_inputs_;
  std::int64_t cache_tokens_ = 0;
  bool done_ = false;
  std::optional<util::Error> error_;
};

class AnthropicProtocol final : public WireProtocol {
 public:
  util::Result<net::HttpRequest> BuildChat(const std::string& base_url, const std::string& api_key,
                                           const domain::ChatRequest& request) const override {
    std::string system;
    JsonArray messages;
    // The user message that holds the tool_result blocks of consecutive tool messages.
    JsonArray* open_results = nullptr;
    for (const auto& message : request.messages) {
      const auto& role = message.role;
      if (role != "tool") open_results = nullptr;
      if (role == "system") {
        if (HasImages(message)) {
          return util::Fail(ErrorCode::kInvalidArgument,
                            "anthropic-messages takes only text as system instructions");
        }
        if (!system.empty()) system += kSystemSeparator;
        system += JoinedText(message);
      } else if (role == "user") {
        auto content = Content(message);
        if (!content) return tl::unexpected(content.error());
        messages.push_back(JsonObject{{"role", "user"}, {"content", std::move(*content)}});
      } else if (role == "assistant") {
        auto wire = AssistantMessage(message);
        if (!wire) return tl::unexpected(wire.error());
        messages.push_back(std::move(*wire));
      } else if (role == "tool") {
        auto block = ToolResultBlock(message);
        if (!block) return tl::unexpected(block.error());
        if (open_results == nullptr) {
          messages.push_back(JsonObject{{"role", "user"}, {"content", JsonArray{}}});
          open_results = &messages.back().as_object()["content"].as_array();
        }
        open_results->push_back(std::move(*block));
      } else {
        return util::Fail(ErrorCode::kInvalidArgument,
                          fmt::format("anthropic-messages has no message role '{}'", role));
      }
    }
    JsonObject body{{"model", request.model}, {"max_tokens", kDefaultMaxTokens}};
    if (!system.empty()) body["system"] = system;
    body["messages"] = std::move(messages);
    if (!request.tools.empty()) {
      JsonArray tools;
      for (const auto& tool : request.tools) {
        JsonObject wire{{"name", tool.name}};
        if (!tool.description.empty()) wire["description"] = tool.description;
        wire["input_schema"] = ToolSchema(tool);
        tools.push_back(std::move(wire));
      }
      body["tools"] = std::move(tools);
    }
    body["stream"] = request.stream;
    util::DeepMerge(body, request.extra_args);

    std::vector<std::pair<std::string, std::string>> headers;
    if (!api_key.empty()) headers.emplace_back("x-api-key", api_key);
    headers.emplace_back("anthropic-version", "2023-06-01");
    headers.emplace_back("content-type", "application/json");
    return JsonPost(base_url + "/v1/messages", std::move(headers), body);
  }

  util::Result<ChatResult> ParseChat(const net::HttpResponse& response) const override {
    auto body = ParseProviderObject(response.body);
    if (!body) return tl::unexpected(body.error());
    if (StringMember(*body, "type") == "error") return tl::unexpected(InBandError(*body));
    const auto* content = ArrayMember(*body, "content");
    if (content == nullptr) return tl::unexpected(MalformedResponse("no content"));
    ChatResult result;
    for (const auto& block : *content) {
      const std::string type = StringMember(block, "type");
      if (type == "text") {
        result.content += StringMember(block, "text");
      } else if (type == "thinking") {
        result.reasoning += StringMember(block, "thinking");
      } else if (type == "tool_use") {
        const Json* input = Member(block, "input");
        result.tool_calls.push_back(
            domain::ToolCall{StringMember(block, "id"), StringMember(block, "name"),
                             input && input->is_object() ? util::SerializeJson(*input) : "{}"});
      }
    }
    result.finish_reason = NormalizeStopReason(StringMember(*body, "stop_reason"));
    std::int64_t cache_tokens = 0;
    if (const Json* usage = Member(*body, "usage")) ReadUsage(*usage, result.usage, cache_tokens);
    FinishUsage(result.usage, cache_tokens);
    SettleFinishReason(result);
    return result;
  }

  std::unique_ptr<ChatStream> NewChatStream() const override {
    return std::make_unique<AnthropicChatStream>();
  }

  util::Result<net::HttpRequest> BuildEmbedding(const std::string&, const std::string&,
                                                const domain::EmbeddingRequest&) const override {
    return util::Fail(ErrorCode::kInvalidArgument, "anthropic-messages does not offer embeddings");
  }

  util::Result<domain::EmbeddingResult> ParseEmbedding(const net::HttpResponse&) const override {
    return util::Fail(ErrorCode::kInvalidArgument, "anthropic-messages does not offer embeddings");
  }

  util::Error ClassifyError(const net::HttpResponse& response) const override {
    std::string type;
    std::string message;
    auto parsed = util::ParseJson(response.body);
    if (const Json* error = parsed ? Member(*parsed, "error") : nullptr) {
      type = StringMember(*error, "type");
      message = StringMember(*error, "message");
      if (message.empty()) message = type;
    } else {
      message = RawBodyMessage(response.body);  // the edge (413, 502) may answer in HTML
    }
    const int status = response.status;
    ErrorCode code = ErrorCode::kUpstreamFailed;
    if (status == 401 || status == 403 || type == "authentication_error" ||
        type == "permission_error") {
      code = ErrorCode::kUpstreamAuth;
    } else if (status == 404 || type == "not_found_error") {
      code = ErrorCode::kUpstreamNotFound;
    } else if (status == 429 || status == 529 || status == 402 || IsRateError(type)) {
      code = ErrorCode::kUpstreamRateLimited;
    }
    auto error = ProviderError(code, status, message);
    // Billing and a reached spend limit do not pass by waiting (llm.md 2.6).
    error.final = status == 402 || type == "billing_error" ||
                  response.body.find("enforced_spend_limit_reached") != std::string::npos;
    return error;
  }
};

}  // namespace

std::unique_ptr<WireProtocol> MakeAnthropicProtocol() {
  return std::make_unique<AnthropicProtocol>();
}

}  // namespace sb::llm
