// Knowledge-base ingestion and retrieval through the real service (issue 17): KnowledgeService
// on a real SQLite file with its FTS5 table, the real parser, chunker and vector index, and an
// embedder that answers at once (deterministic word-hash vectors of 256 dimensions), so the
// figures are Switchboard's own cost: parse, chunk, store, index, search.
//   sb_knowledge_ingest_bench [megabytes of text, default 8]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "llm/requester_catalogue.hpp"
#include "services/knowledge_service.hpp"
#include "services/model_service.hpp"
#include "services/provider_service.hpp"
#include "services/task_service.hpp"
#include "storage/sqlite/sqlite_storage.hpp"

namespace {

using namespace sb;
using Clock = std::chrono::steady_clock;

// Feature hashing of words into 256 signed buckets, normalised: texts sharing words are close.
std::vector<float> WordHashVector(const std::string& text) {
  std::vector<float> v(256, 0.0f);
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    const std::size_t h = std::hash<std::string>{}(word);
    v[h % 256] += (h >> 32) & 1 ? 1.0f : -1.0f;
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      flush();
    }
  }
  flush();
  float norm = 0;
  for (float x : v) norm += x * x;
  if (norm == 0) v[0] = 1, norm = 1;
  for (float& x : v) x /= std::sqrt(norm);
  return v;
}

class InstantGateway final : public domain::LlmGateway {
 public:
  std::shared_ptr<domain::CallHandle> Chat(
      const domain::ProviderEndpoint&, domain::ChatRequest,
      std::function<void(const domain::ChatDelta&)>,
      std::function<void(util::Result<domain::ChatResult>)> done) override {
    done(util::Fail(util::ErrorCode::kInvalidArgument, "no chat here"));
    return nullptr;
  }
  std::shared_ptr<domain::CallHandle> Embed(
      const domain::ProviderEndpoint&, domain::EmbeddingRequest request,
      std::function<void(util::Result<domain::EmbeddingResult>)> done) override {
    domain::EmbeddingResult r;
    for (const auto& text : request.inputs) r.vectors.push_back(WordHashVector(text));
    ++calls;
    done(std::move(r));
    return nullptr;
  }
  std::atomic<int> calls{0};
};

std::string Document(std::size_t bytes, std::mt19937& rng) {
  static const char* kWords[] = {
      "router",  "password", "reset",    "network", "printer", "invoice", "holiday", "office",
      "account", "server",   "backup",   "meeting", "policy",  "refund",  "deliver", "order",
      "client",  "manual",   "warranty", "battery", "screen",  "cable",   "signal",  "update",
      "license", "payment",  "travel",   "expense", "laptop",  "desk",    "badge",   "parking"};
  std::uniform_int_distribution<int> word(0, 31);
  std::uniform_int_distribution<int> sentence(6, 18);
  std::string out;
  int sentences = 0;
  while (out.size() < bytes) {
    const int n = sentence(rng);
    for (int i = 0; i < n; ++i) {
      out += kWords[word(rng)];
      out += i + 1 == n ? ". " : " ";
    }
    out += "code" + std::to_string(rng() % 100000) + ". ";
    if (++sentences % 6 == 0) out += "\n\n";
  }
  return out;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

long RssKiB() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kib = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t megabytes = argc > 1 ? std::stoul(argv[1]) : 8;
  const auto dir = std::filesystem::temp_directory_path() / ("sb-kb-bench-" + util::NewUuid());
  std::filesystem::create_directories(dir);
  int rc = 0;
  {
    auto storage = storage::sqlite::SqliteStorage::Open(
        (dir / "db.sqlite").string(),
        util::SecretBox::FromKeyMaterial("bench-key-0123456789abcdef"));
    if (!storage) {
      fmt::print(stderr, "{}\n", storage.error().message);
      return 1;
    }
    auto& st = **storage;
    util::SystemClock clock;
    auto requesters = llm::LoadRequesterCatalogue();
    services::ProviderService providers(st.providers(), *requesters, clock);
    services::ModelService models(st.models(), providers, clock);
    services::TaskService tasks(st.tasks(), clock);
    domain::Provider provider;
    provider.uuid = util::ProviderId::Generate();
    provider.name = "bench";
    provider.requester = "openai-chat-completions";
    provider.base_url = "http://127.0.0.1:9/v1";
    provider.api_keys = {"sk-bench"};
    provider.created_at = provider.updated_at = clock.Now();
    domain::Model model;
    model.kind = domain::ModelKind::kEmbedding;
    model.uuid = util::ModelId::Generate();
    model.name = "bench-embed";
    model.provider_uuid = provider.uuid;
    model.created_at = model.updated_at = clock.Now();
    (void)st.models().InsertWithProvider(provider, model);

    InstantGateway gateway;
    services::KnowledgeOptions options;
    options.files_dir = dir / "files";
    options.max_upload_bytes = 512u << 20;
    options.limits.max_input_bytes = 512u << 20;
    options.embedding_batch_size = 64;
    services::KnowledgeService kb(st.knowledge(), tasks, models, gateway, clock, options);
    (void)kb.Start();
    auto base = kb.CreateBase(util::JsonObject{
        {"name", "bench"},
        {"knowledge_engine_plugin_id", "switchboard/builtin"},
        {"creation_settings",
         util::JsonObject{
             {"embedding_model_uuid", model.uuid.str()}, {"chunk_size", 256}, {"overlap", 32}}}});
    std::mt19937 rng(42);
    const std::string text = Document(megabytes << 20, rng);
    auto key = kb.SaveDocument("bench.txt", text);
    const long rss_before = RssKiB();
    const auto start = Clock::now();
    auto task = kb.AddFile(base->str(), *key, "");
    std::int64_t chunks = 0;
    for (;;) {
      auto files = kb.ListFiles(base->str());
      if (files && !files->empty() && files->front().status == domain::FileStatus::kCompleted) {
        chunks = files->front().chunk_count;
        break;
      }
      if (files && !files->empty() && files->front().status == domain::FileStatus::kFailed) {
        fmt::print(stderr, "ingestion failed: {}\n", files->front().error);
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double ingest_s = std::chrono::duration<double>(Clock::now() - start).count();
    (void)task;

    // Retrieval through the service: the first search builds nothing (the index followed the
    // ingestion); hybrid runs the vector search, FTS5 and the passages' SQL.
    std::vector<double> hybrid_ms, vector_ms, text_ms;
    auto measure = [&](const char* type, std::vector<double>& out) {
      for (int i = 0; i < 300; ++i) {
        const std::string query =
            fmt::format("how to reset the router password code{}", rng() % 100000);
        const auto t0 = Clock::now();
        auto hits =
            kb.Retrieve(base->str(), query, util::JsonObject{{"search_type", type}, {"top_k", 5}});
        out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (!hits) {
          fmt::print(stderr, "retrieve failed: {}\n", hits.error().message);
          rc = 1;
          return;
        }
      }
    };
    measure("hybrid", hybrid_ms);
    measure("vector", vector_ms);
    measure("full_text", text_ms);
    const long rss_after = RssKiB();
    kb.Stop();

    fmt::print("| figure | value |\n|---|---|\n");
    fmt::print("| document | {} MiB of text, chunk_size 256, overlap 32, 256-dim vectors |\n",
               megabytes);
    fmt::print("| passages | {} |\n", chunks);
    fmt::print(
        "| ingestion (parse, chunk, embed at zero latency, store, index) | {:.2f} s, "
        "**{:.0f} chunks/s** |\n",
        ingest_s, chunks / ingest_s);
    fmt::print("| embedding calls | {} (batches of 64) |\n", gateway.calls.load());
    for (auto [name, v] : {std::pair{"hybrid", &hybrid_ms}, std::pair{"vector", &vector_ms},
                           std::pair{"full_text", &text_ms}}) {
      fmt::print("| retrieve `{}` through the service, p50 / p99 | {:.2f} / {:.2f} ms |\n", name,
                 Percentile(*v, 0.5), Percentile(*v, 0.99));
    }
    fmt::print("| RSS growth over ingestion and searches | {:.0f} MiB |\n",
               (rss_after - rss_before) / 1024.0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
