// Ollama's native API: llm.md section 3. Streams by default (so `stream` is always sent), NDJSON
// framing, tool arguments as JSON objects, images as bare base64.

#include <fmt/format.h>

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

// The name of the tool a tool message answers: Ollama matches results by `tool_name`, and our
// messages only carry the call id, so it is looked up in the assistant turns before it.
std::string ToolNameFor(const std::vector<ChatMessage>& messages, std::size_t before,
                        const std::string& call_id) {
  for (std::size_t i = before; i-- > 0;) {
    for (const auto& call : messages[i].tool_calls) {
      if (call.id == call_id) return call.name;
    }
  }
  return {};
}

util::Result<JsonObject> WireMessage(const std::vector<ChatMessage>& messages, std::size_t i) {
  const ChatMessage& message = messages[i];
  const auto& role = message.role;
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    return util::Fail(ErrorCode::kInvalidArgument,
                      fmt::format("ollama-chat has no message role '{}'", role));
  }
  JsonObject wire{{"role", role}, {"content", JoinedText(message)}};
  if (HasImages(message)) {
    JsonArray images;
    for (const auto& part : message.content) {
      if (part.kind != domain::ContentPart::Kind::kImage) continue;
      auto data = ParseBase64DataUrl(part.image_url);
      if (!data) {
        return util::Fail(ErrorCode::kInvalidArgument,
                          "ollama needs inline images (base64 data: URLs), not links");
      }
      images.emplace_back(data->data);
    }
    wire["images"] = std::move(images);
  }
  if (!message.tool_calls.empty()) {
    JsonArray calls;
    for (const auto& call : message.tool_calls) {
      auto arguments = ArgumentsObject(call);
      if (!arguments) return tl::unexpected(arguments.error());
      JsonObject wire_call;
      if (!call.id.empty()) wire_call["id"] = call.id;
      wire_call["function"] = JsonObject{{"name", call.name}, {"arguments", std::move(*arguments)}};
      calls.push_back(std::move(wire_call));
    }
    wire["tool_calls"] = std::move(calls);
  }
  if (role == "tool") {
    if (std::string name = ToolNameFor(messages, i, message.tool_call_id); !name.empty()) {
      wire["tool_name"] = std::move(name);
    }
    if (!message.tool_call_id.empty()) wire["tool_call_id"] = message.tool_call_id;
  }
  return wire;
}

std::string NormalizeDoneReason(std::string_view reason) {
  if (reason == "stop" || reason == "length") return std::string(reason);
  if (reason.empty()) return "";
  return "other";  // load, unload
}

// Whole tool calls of one message; older servers send no id, so one is made up from the
// position: the pipeline needs an id to pair the call with its result.
void ReadToolCalls(const Json& message, std::vector<domain::ToolCall>& out) {
  const auto* calls = ArrayMember(message, "tool_calls");
  if (calls == nullptr) return;
  for (const auto& call : *calls) {
    const Json* function = Member(call, "function");
    if (function == nullptr) continue;
    domain::ToolCall tool_call;
    tool_call.id = StringMember(call, "id");
    if (tool_call.id.empty()) tool_call.id = fmt::format("call_{}", out.size());
    tool_call.name = StringMember(*function, "name");
    const Json* arguments = Member(*function, "arguments");
    if (arguments == nullptr || arguments->is_null()) {
      tool_call.arguments = "{}";
    } else if (arguments->is_string()) {
      tool_call.arguments = std::string(arguments->get_string());
    } else {
      tool_call.arguments = util::SerializeJson(*arguments);
    }
    out.push_back(std::move(tool_call));
  }
}

// The metrics of the final object: counts are left out when zero.
void ReadDone(const Json& body, ChatResult& result) {
  result.finish_reason = NormalizeDoneReason(StringMember(body, "done_reason"));
  result.usage.prompt_tokens = IntMember(body, "prompt_eval_count").value_or(0);
  result.usage.completion_tokens = IntMember(body, "eval_count").value_or(0);
  SettleUsage(result.usage);
}

util::Error InBandError(const Json& body) {
  const Json* error = Member(body, "error");
  std::string message;
  if (error != nullptr && error->is_string()) {
    message = std::string(error->get_string());
  } else if (error != nullptr) {
    message = util::SerializeJson(*error);
  }
  return StreamError(ErrorCode::kUpstreamFailed, message);
}

class OllamaChatStream final : public ChatStream {
 public:
  util::Result<void> Feed(std::string_view piece,
                          const std::function<void(const domain::ChatDelta&)>& on_delta) override {
    if (error_) return tl::unexpected(*error_);
    if (done_) return util::Ok();
    const bool fit = lines_.Feed(piece, [&](std::string_view line) { OnLine(line, on_delta); });
    if (!fit && !error_) error_ = MalformedResponse("stream line too long");
    if (error_) return tl::unexpected(*error_);
    return util::Ok();
  }

  util::Result<ChatResult> Finish() override {
    if (!error_ && !done_) lines_.Finish([&](std::string_view line) { OnLine(line, {}); });
    if (error_) return tl::unexpected(*error_);
    if (!done_) return util::Fail(ErrorCode::kUpstreamFailed, "stream ended early");
    SettleFinishReason(result_);
    return std::move(result_);
  }

 private:
  void OnLine(std::string_view line,
              const std::function<void(const domain::ChatDelta&)>& on_delta) {
    if (error_ || done_) return;
    auto parsed = util::ParseJson(line);
    if (!parsed || !parsed->is_object()) {
      error_ = MalformedResponse("stream line is not a JSON object");
      return;
    }
    if (HasError(*parsed)) {
      error_ = InBandError(*parsed);
      return;
    }
    if (const Json* message = Member(*parsed, "message")) {
      std::string text = StringMember(*message, "content");
      if (!text.empty()) {
        result_.content += text;
        if (on_delta) on_delta(domain::ChatDelta{std::move(text)});
      }
      result_.reasoning += StringMember(*message, "thinking");
      ReadToolCalls(*message, result_.tool_calls);
    }
    if (const Json* done = Member(*parsed, "done"); done && done->is_bool() && done->get_bool()) {
      ReadDone(*parsed, result_);
      done_ = true;
    }
  }

  net::LineSplitter lines_;
  ChatResult result_;
  bool done_ = false;
  std::optional<util::Error> error_;
};

class OllamaProtocol final : public WireProtocol {
 public:
  util::Result<net::HttpRequest> BuildChat(const std::string& base_url, const std::string& api_key,
                                           const domain::ChatRequest& request) const override {
    JsonArray messages;
    for (std::size_t i = 0; i < request.messages.size(); ++i) {
      auto wire = WireMessage(request.messages, i);
      if (!wire) return tl::unexpected(wire.error());
      messages.push_back(std::move(*wire));
    }
    // Explicit even when false: an absent `stream` means streaming to Ollama.
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
    // `options`, `think`, `keep_alive`, `format` all sit at the top level, as the user gave them.
    util::DeepMerge(body, request.extra_args);
    return JsonPost(base_url + "/api/chat", BearerJsonHeaders(api_key), body);
  }

  util::Result<ChatResult> ParseChat(const net::HttpResponse& response) const override {
    auto body = ParseProviderObject(response.body);
    if (!body) return tl::unexpected(body.error());
    if (HasError(*body)) return tl::unexpected(InBandError(*body));
    const Json* message = Member(*body, "message");
    if (message == nullptr || !message->is_object()) {
      return tl::unexpected(MalformedResponse("no message"));
    }
    ChatResult result;
    result.content = StringMember(*message, "content");
    result.reasoning = StringMember(*message, "thinking");
    ReadToolCalls(*message, result.tool_calls);
    ReadDone(*body, result);
    SettleFinishReason(result);
    return result;
  }

  std::unique_ptr<ChatStream> NewChatStream() const override {
    return std::make_unique<OllamaChatStream>();
  }

  util::Result<net::HttpRequest> BuildEmbedding(
      const std::string& base_url, const std::string& api_key,
      const domain::EmbeddingRequest& request) const override {
    auto inputs = EmbeddingInputs(request);
    if (!inputs) return tl::unexpected(inputs.error());
    JsonObject body{{"model", request.model}, {"input", std::move(*inputs)}};
    util::DeepMerge(body, request.extra_args);
    return JsonPost(base_url + "/api/embed", BearerJsonHeaders(api_key), body);
  }

  util::Result<domain::EmbeddingResult> ParseEmbedding(
      const net::HttpResponse& response) const override {
    auto body = ParseProviderObject(response.body);
    if (!body) return tl::unexpected(body.error());
    if (HasError(*body)) return tl::unexpected(InBandError(*body));
    const auto* embeddings = ArrayMember(*body, "embeddings");
    if (embeddings == nullptr) return tl::unexpected(MalformedResponse("no embeddings"));
    domain::EmbeddingResult result;
    for (const auto& embedding : *embeddings) {
      const auto* numbers = embedding.if_array();
      if (numbers == nullptr) return tl::unexpected(MalformedResponse("embedding is not an array"));
      std::vector<float> vector;
      vector.reserve(numbers->size());
      for (const auto& number : *numbers) {
        if (!number.is_number()) {
          return tl::unexpected(MalformedResponse("embedding holds a non-number"));
        }
        vector.push_back(static_cast<float>(number.to_number<double>()));
      }
      result.vectors.push_back(std::move(vector));
    }
    result.usage.prompt_tokens = IntMember(*body, "prompt_eval_count").value_or(0);
    SettleUsage(result.usage);
    return result;
  }

  util::Error ClassifyError(const net::HttpResponse& response) const override {
    std::string message;
    auto parsed = util::ParseJson(response.body);
    const Json* error = parsed ? Member(*parsed, "error") : nullptr;
    if (error != nullptr && error->is_string()) {
      message = std::string(error->get_string());
    } else if (error != nullptr) {
      message = StringMember(*error, "message");  // proxies in front of Ollama speak OpenAI
    } else {
      message = RawBodyMessage(response.body);
    }
    const int status = response.status;
    ErrorCode code = ErrorCode::kUpstreamFailed;
    if (status == 401 || status == 403) {
      code = ErrorCode::kUpstreamAuth;
    } else if (status == 404) {
      code = ErrorCode::kUpstreamNotFound;
    } else if (status == 429 || status == 503) {
      // 503 is Ollama's full request queue ("server busy"), its local form of overload.
      code = ErrorCode::kUpstreamRateLimited;
    }
    return ProviderError(code, status, message);
  }
};

}  // namespace

std::unique_ptr<WireProtocol> MakeOllamaProtocol() { return std::make_unique<OllamaProtocol>(); }

}  // namespace sb::llm
