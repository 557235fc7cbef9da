// OpenAI chat completions and embeddings, for the whole OpenAI-compatible family (DeepSeek,
// OpenRouter, vLLM, LM Studio, Ollama /v1, Gemini compat...): llm.md section 1.

#include <fmt/format.h>

#include <algorithm>
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

// A plain string when text only (what every compatible server accepts), else typed parts.
Json UserContent(const ChatMessage& message) {
  if (!HasImages(message)) return Json(JoinedText(message));
  JsonArray parts;
  for (const auto& part : message.content) {
    if (part.kind == domain::ContentPart::Kind::kText) {
      parts.push_back(JsonObject{{"type", "text"}, {"text", part.text}});
    } else {
      parts.push_back(
          JsonObject{{"type", "image_url"}, {"image_url", JsonObject{{"url", part.image_url}}}});
    }
  }
  return Json(std::move(parts));
}

util::Result<JsonObject> WireMessage(const ChatMessage& message) {
  const auto& role = message.role;
  if (role == "user") {
    return JsonObject{{"role", role}, {"content", UserContent(message)}};
  }
  if (role != "system" && role != "assistant" && role != "tool") {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("openai-chat-completions has no message role '{}'", role));
  }
  if (HasImages(message)) {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("openai-chat-completions accepts images only in user messages, "
                                  "not in a '{}' message",
                                  role));
  }
  JsonObject wire{{"role", role}};
  std::string text = JoinedText(message);
  if (role == "tool") {
    if (message.tool_call_id.empty()) {
      return util::Fail(ErrorCode::kInvalidArgument, "a tool message needs its tool_call_id");
    }
    wire["tool_call_id"] = message.tool_call_id;
    wire["content"] = std::move(text);
    return wire;
  }
  if (role == "assistant" && !message.tool_calls.empty()) {
    // The documented shape for a turn that only called tools is content:null.
    wire["content"] = text.empty() ? Json(nullptr) : Json(std::move(text));
    JsonArray calls;
    for (const auto& call : message.tool_calls) {
      calls.push_back(JsonObject{
          {"id", call.id},
          {"type", "function"},
          {"function", JsonObject{{"name", call.name},
                                  {"arguments", call.arguments.empty() ? "{}" : call.arguments}}}});
    }
    wire["tool_calls"] = std::move(calls);
    return wire;
  }
  wire["content"] = std::move(text);
  return wire;
}

std::string NormalizeFinishReason(const Json* reason) {
  if (reason == nullptr || !reason->is_string()) return "";
  const auto& text = reason->get_string();
  if (text == "stop" || text == "length" || text == "tool_calls" || text == "content_filter") {
    return std::string(text);
  }
  if (text == "function_call") return "tool_calls";  // the deprecated name of the same thing
  return "other";
}

// Arguments are a JSON string per the spec; a few compatible servers send the object itself.
std::string ArgumentsText(const Json* arguments) {
  if (arguments == nullptr || arguments->is_null()) return "";
  if (arguments->is_string()) return std::string(arguments->get_string());
  return util::SerializeJson(*arguments);
}

std::string ReasoningText(const Json& message) {
  // DeepSeek and vLLM say reasoning_content; Ollama /v1 and newer vLLM say reasoning.
  std::string text = StringMember(message, "reasoning_content");
  if (text.empty()) text = StringMember(message, "reasoning");
  return text;
}

void ReadUsage(const Json& body, domain::Usage& usage) {
  const Json* value = Member(body, "usage");
  if (value == nullptr || !value->is_object()) return;  // null on every chunk but the last
  usage.prompt_tokens = IntMember(*value, "prompt_tokens").value_or(0);
  usage.completion_tokens = IntMember(*value, "completion_tokens").value_or(0);
  usage.total_tokens = IntMember(*value, "total_tokens").value_or(0);
  SettleUsage(usage);
}

// What the family puts in an error body, whichever of its shapes it used.
struct ErrorInfo {
  std::string message;
  std::string type;
  std::string code;              // string codes ("model_not_found")
  std::optional<int> int_code;   // OpenRouter, vLLM and Gemini put the HTTP status here
  bool api_key_invalid = false;  // Gemini compat answers a bad key with 400 API_KEY_INVALID
};

void ReadErrorFields(const Json& error, ErrorInfo& info) {
  info.message = StringMember(error, "message");
  info.type = StringMember(error, "type");
  if (info.type.empty()) info.type = StringMember(error, "status");
  if (const Json* code = Member(error, "code")) {
    if (code->is_string()) {
      info.code = std::string(code->get_string());
    } else if (auto n = IntMember(error, "code")) {
      info.int_code = static_cast<int>(*n);
    }
  }
  if (const auto* details = ArrayMember(error, "details")) {
    for (const auto& detail : *details) {
      if (StringMember(detail, "reason") == "API_KEY_INVALID") info.api_key_invalid = true;
    }
  }
}

// Nested {"error":{...}}, vLLM's un-nested {"message":...}, LM Studio's {"error":"text"},
// Gemini's [{"error":{...}}]; nullopt when the JSON holds none of them.
std::optional<ErrorInfo> ReadError(const Json& body) {
  const Json* root = &body;
  if (const auto* array = body.if_array()) {
    if (array->empty()) return std::nullopt;
    root = &array->front();
  }
  ErrorInfo info;
  if (const Json* error = Member(*root, "error")) {
    if (error->is_string()) {
      info.message = std::string(error->get_string());
    } else if (error->is_object()) {
      ReadErrorFields(*error, info);
    } else {
      return std::nullopt;
    }
    return info;
  }
  if (Member(*root, "message") != nullptr && Member(*root, "choices") == nullptr) {
    ReadErrorFields(*root, info);
    return info;
  }
  return std::nullopt;
}

bool IsQuotaOrRate(const ErrorInfo& info) {
  for (const auto* value : {&info.code, &info.type}) {
    if (*value == "insufficient_quota" || *value == "rate_limit_exceeded" ||
        *value == "credit_balance_exhausted" || *value == "RESOURCE_EXHAUSTED") {
      return true;
    }
  }
  return false;
}

// A spent quota or balance: waiting does not help (llm.md 1.7), another key might.
bool IsSpentQuota(const ErrorInfo& info) {
  for (const auto* value : {&info.code, &info.type}) {
    if (*value == "insufficient_quota" || *value == "credit_balance_exhausted") return true;
  }
  return false;
}

std::string ErrorText(const ErrorInfo& info) {
  if (!info.message.empty()) return info.message;
  if (!info.code.empty()) return info.code;
  return info.type;
}

// An error object met inside a 200 (a stream event, LM Studio's unknown-path answer).
util::Error InBandError(const ErrorInfo& info) {
  const bool rate = IsQuotaOrRate(info) || info.int_code == 429 || info.int_code == 402 ||
                    info.int_code == 503 || info.int_code == 529;
  auto error = StreamError(rate ? ErrorCode::kUpstreamRateLimited : ErrorCode::kUpstreamFailed,
                           ErrorText(info));
  error.final = IsSpentQuota(info) || info.int_code == 402;
  return error;
}

class OpenAiChatStream final : public ChatStream {
 public:
  util::Result<void> Feed(std::string_view piece,
                          const std::function<void(const domain::ChatDelta&)>& on_delta) override {
    if (error_) return tl::unexpected(*error_);
    if (done_) return util::Ok();  // bytes after [DONE] carry nothing
    const bool fit =
        sse_.Feed(piece, [&](const net::SseEvent& event) { OnEvent(event, on_delta); });
    if (!fit && !error_) error_ = MalformedResponse("stream event too large");
    if (error_) return tl::unexpected(*error_);
    return util::Ok();
  }

  util::Result<ChatResult> Finish() override {
    if (!error_ && !done_) {
      sse_.Finish([&](const net::SseEvent& event) { OnEvent(event, {}); });
    }
    if (error_) return tl::unexpected(*error_);
    if (!done_) return util::Fail(ErrorCode::kUpstreamFailed, "stream ended early");
    result_.tool_calls = tool_calls_.Take(/*compact_arguments=*/false);
    SettleFinishReason(result_);
    return std::move(result_);
  }

 private:
  void OnEvent(const net::SseEvent& event,
               const std::function<void(const domain::ChatDelta&)>& on_delta) {
    if (error_ || done_) return;
    if (event.data == "[DONE]") {
      done_ = true;
      return;
    }
    if (event.data.empty()) return;
    auto parsed = util::ParseJson(event.data);
    if (!parsed) {
      error_ = MalformedResponse("stream event is not JSON: " + parsed.error().message);
      return;
    }
    if (HasError(*parsed)) {
      auto info = ReadError(*parsed);
      error_ = InBandError(info.value_or(ErrorInfo{}));
      return;
    }
    // vLLM sends choices:null in the usage chunk; treat it like the empty array.
    if (const auto* choices = ArrayMember(*parsed, "choices")) {
      for (const auto& choice : *choices) {
        if (IntMember(choice, "index").value_or(0) != 0) continue;  // we never ask for n > 1
        OnChoice(choice, on_delta);
      }
    }
    ReadUsage(*parsed, result_.usage);
  }

  void OnChoice(const Json& choice, const std::function<void(const domain::ChatDelta&)>& on_delta) {
    if (const Json* delta = Member(choice, "delta")) {
      std::string text = StringMember(*delta, "content");
      if (!text.empty()) {
        result_.content += text;
        if (on_delta) on_delta(domain::ChatDelta{std::move(text)});
      }
      result_.reasoning += ReasoningText(*delta);
      if (const auto* calls = ArrayMember(*delta, "tool_calls")) {
        for (const auto& call : *calls) OnToolCallFragment(call);
      }
    }
    const std::string reason = NormalizeFinishReason(Member(choice, "finish_reason"));
    if (!reason.empty()) result_.finish_reason = reason;
  }

  void OnToolCallFragment(const Json& fragment) {
    const std::string id = StringMember(fragment, "id");
    std::int64_t index;
    if (auto given = IntMember(fragment, "index")) {
      index = *given;
    } else {
      // Without an index, a new id starts a call and anything else continues the last one.
      if (!id.empty() && id != last_id_) ++last_unindexed_;
      index = std::max<std::int64_t>(last_unindexed_, 0);
    }
    if (!id.empty()) last_id_ = id;
    const Json* function = Member(fragment, "function");
    tool_calls_.Start(index, id, function ? StringMember(*function, "name") : "");
    if (function != nullptr)
      tool_calls_.AppendArguments(index, ArgumentsText(Member(*function, "arguments")));
  }

  net::SseParser sse_;
  ChatResult result_;
  ToolCallFragments tool_calls_;
  std::string last_id_;
  std::int64_t last_unindexed_ = -1;
  bool done_ = false;
  std::optional<util::Error> error_;
};

class OpenAiProtocol final : public WireProtocol {
 public:
  util::Result<net::HttpRequest> BuildChat(const std::string& base_url, const std::string& api_key,
                                           const domain::ChatRequest& request) const override {
    JsonArray messages;
    for (const auto& message : request.messages) {
      auto wire = WireMessage(message);
      if (!wire) return tl::unexpected(wire.error());
      messages.push_back(std::move(*wire));
    }
    JsonObject body{
        {"model", request.model}, {"messages", std::move(messages)}, {"stream", request.stream}};
    if (!request.tools.empty()) {
      JsonArray tools;
      for (const auto& tool : request.tools) {
        JsonObject function{{"name", tool.name}};
        if (!tool.description.empty()) function["description"] = tool.description;
        function["parameters"] = ToolSchema(tool);
        tools.push_back(JsonObject{{"type", "function"}, {"function", std::move(function)}});
      }
      body["tools"] = std::move(tools);
    }
    // Without include_usage a streamed answer carries no token counts at all.
    if (request.stream) body["stream_options"] = JsonObject{{"include_usage", true}};
    util::DeepMerge(body, request.extra_args);
    return JsonPost(base_url + "/chat/completions", BearerJsonHeaders(api_key), body);
  }

  util::Result<ChatResult> ParseChat(const net::HttpResponse& response) const override {
    auto body = ParseProviderObject(response.body);
    if (!body) return tl::unexpected(body.error());
    // LM Studio answers an unknown path with 200 and an error object.
    if (HasError(*body)) {
      return tl::unexpected(InBandError(ReadError(*body).value_or(ErrorInfo{})));
    }
    const auto* choices = ArrayMember(*body, "choices");
    if (choices == nullptr || choices->empty())
      return tl::unexpected(MalformedResponse("no choices"));
    const Json& choice = choices->front();
    const Json* message = Member(choice, "message");
    if (message == nullptr || !message->is_object()) {
      return tl::unexpected(MalformedResponse("choices[0] has no message"));
    }
    ChatResult result;
    result.content = StringMember(*message, "content");  // null for a tool-calls-only turn
    result.reasoning = ReasoningText(*message);
    if (const auto* calls = ArrayMember(*message, "tool_calls")) {
      for (const auto& call : *calls) {
        const Json* function = Member(call, "function");
        if (function == nullptr)
          return tl::unexpected(MalformedResponse("tool call without function"));
        std::string arguments = ArgumentsText(Member(*function, "arguments"));
        result.tool_calls.push_back(domain::ToolCall{StringMember(call, "id"),
                                                     StringMember(*function, "name"),
                                                     arguments.empty() ? "{}" : arguments});
      }
    }
    result.finish_reason = NormalizeFinishReason(Member(choice, "finish_reason"));
    ReadUsage(*body, result.usage);
    SettleFinishReason(result);
    return result;
  }

  std::unique_ptr<ChatStream> NewChatStream() const override {
    return std::make_unique<OpenAiChatStream>();
  }

  util::Result<net::HttpRequest> BuildEmbedding(
      const std::string& base_url, const std::string& api_key,
      const domain::EmbeddingRequest& request) const override {
    auto inputs = EmbeddingInputs(request);
    if (!inputs) return tl::unexpected(inputs.error());
    // Asking for floats explicitly: servers differ in their default, and the SDKs send base64.
    JsonObject body{
        {"model", request.model}, {"input", std::move(*inputs)}, {"encoding_format", "float"}};
    util::DeepMerge(body, request.extra_args);
    return JsonPost(base_url + "/embeddings", BearerJsonHeaders(api_key), body);
  }

  util::Result<domain::EmbeddingResult> ParseEmbedding(
      const net::HttpResponse& response) const override {
    auto body = ParseProviderObject(response.body);
    if (!body) return tl::unexpected(body.error());
    if (HasError(*body)) {
      return tl::unexpected(InBandError(ReadError(*body).value_or(ErrorInfo{})));
    }
    const auto* data = ArrayMember(*body, "data");
    if (data == nullptr) return tl::unexpected(MalformedResponse("no data"));
    std::vector<std::pair<std::int64_t, std::vector<float>>> indexed;
    for (std::size_t i = 0; i < data->size(); ++i) {
      const Json& item = (*data)[i];
      const Json* embedding = Member(item, "embedding");
      if (embedding == nullptr)
        return tl::unexpected(MalformedResponse("data item without embedding"));
      std::vector<float> vector;
      if (embedding->is_string()) {
        auto decoded = DecodeFloat32Base64(embedding->get_string());
        if (!decoded) return tl::unexpected(MalformedResponse("embedding is not base64 float32"));
        vector = std::move(*decoded);
      } else if (const auto* numbers = embedding->if_array()) {
        vector.reserve(numbers->size());
        for (const auto& number : *numbers) {
          if (!number.is_number())
            return tl::unexpected(MalformedResponse("embedding holds a non-number"));
          vector.push_back(static_cast<float>(number.to_number<double>()));
        }
      } else {
        return tl::unexpected(MalformedResponse("embedding is neither an array nor base64"));
      }
      indexed.emplace_back(IntMember(item, "index").value_or(static_cast<std::int64_t>(i)),
                           std::move(vector));
    }
    std::stable_sort(indexed.begin(), indexed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    domain::EmbeddingResult result;
    for (auto& [index, vector] : indexed) result.vectors.push_back(std::move(vector));
    ReadUsage(*body, result.usage);
    return result;
  }

  util::Error ClassifyError(const net::HttpResponse& response) const override {
    std::optional<ErrorInfo> info;
    if (auto parsed = util::ParseJson(response.body)) info = ReadError(*parsed);
    if (!info) {
      info.emplace();
      info->message = RawBodyMessage(response.body);  // a proxy's HTML page, a bare text
    }
    const int status = response.status;
    ErrorCode code = ErrorCode::kUpstreamFailed;
    if (status == 401 || status == 403 || info->api_key_invalid) {
      code = ErrorCode::kUpstreamAuth;
    } else if (status == 404 || info->code == "model_not_found") {
      code = ErrorCode::kUpstreamNotFound;
    } else if (status == 429 || status == 402 || IsQuotaOrRate(*info)) {
      code = ErrorCode::kUpstreamRateLimited;
    }
    auto error = ProviderError(code, status, ErrorText(*info));
    error.final = IsSpentQuota(*info) || status == 402;
    return error;
  }
};

}  // namespace

std::unique_ptr<WireProtocol> MakeOpenAiProtocol() { return std::make_unique<OpenAiProtocol>(); }

}  // namespace sb::llm
