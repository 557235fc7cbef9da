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
#include <numeric>
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

// Text from a vocabulary of 20,000 made-up words drawn with a Zipf-like law (a few words very
// common, most rare), as in real prose, plus a code number per sentence.
std::string Word(std::size_t rank) {
  static const char* kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
                                     "ze", "pa", "qu", "dr", "ex", "fi", "go", "hu"};
  std::string w;
  do {
    w += kSyllables[rank % 16];
    rank /= 16;
  } while (rank > 0);
  return w;
}

std::string Document(std::size_t bytes, std::mt19937& rng) {
  std::vector<double> weights(20000);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0 / std::pow(i + 1.0, 1.07);
  std::discrete_distribution<std::size_t> word(weights.begin(), weights.end());
  std::uniform_int_distribution<int> sentence(6, 18);
  std::string out;
  int sentences = 0;
  while (out.size() < bytes) {
    const int n = sentence(rng);
    for (int i = 0; i < n; ++i) {
      out += Word(word(rng));
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

    // Retrieval through the service. The first search loads the vectors into an exact index;
    // the HNSW graph is built on its own thread meanwhile and swapped in when ready.
    std::uniform_int_distribution<std::size_t> pick(0, 3000);
    auto query = [&] {
      return fmt::format("how to {} the {} {} code{}", Word(pick(rng)), Word(pick(rng)),
                         Word(pick(rng)), rng() % 100000);
    };
    auto t0 = Clock::now();
    auto first = kb.Retrieve(base->str(), query(), util::JsonObject{{"search_type", "vector"}});
    const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!first) {
      fmt::print(stderr, "retrieve failed: {}\n", first.error().message);
      return 1;
    }
    auto measure = [&](const char* type, int n) {
      std::vector<double> out;
      for (int i = 0; i < n; ++i) {
        const auto start_query = Clock::now();
        auto hits = kb.Retrieve(base->str(), query(),
                                util::JsonObject{{"search_type", type}, {"top_k", 5}});
        out.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start_query).count());
        if (!hits) {
          fmt::print(stderr, "retrieve failed: {}\n", hits.error().message);
          rc = 1;
          break;
        }
      }
      return out;
    };
    const auto exact_ms = measure("vector", 50);
    t0 = Clock::now();
    while (!kb.IndexBuildsIdle()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double graph_s = std::chrono::duration<double>(Clock::now() - t0).count() +
                           std::accumulate(exact_ms.begin(), exact_ms.end(), 0.0) / 1000.0;
    const auto vector_ms = measure("vector", 300);
    const auto hybrid_ms = measure("hybrid", 300);
    const auto text_ms = measure("full_text", 300);
    const long rss_after = RssKiB();
    kb.Stop();

    fmt::print("| figure | value |\n|---|---|\n");
    fmt::print("| document | {} MiB of text, chunk_size 256, overlap 32, 256-dim vectors |\n",
               megabytes);
    fmt::print("| passages | {} |\n", chunks);
    fmt::print(
        "| ingestion (parse, chunk, embed at zero latency, store) | {:.2f} s, "
        "**{:.0f} chunks/s** |\n",
        ingest_s, chunks / ingest_s);
    fmt::print("| embedding calls | {} (batches of 64) |\n", gateway.calls.load());
    fmt::print("| first search after ingestion (loads the vectors, exact index) | {:.0f} ms |\n",
               first_ms);
    fmt::print(
        "| `vector` while the HNSW graph builds (exact search), p50 / p99 | {:.2f} / {:.2f} "
        "ms |\n",
        Percentile(exact_ms, 0.5), Percentile(exact_ms, 0.99));
    fmt::print("| HNSW graph built in the background after the first search | {:.1f} s |\n",
               graph_s);
    for (auto [name, v] : {std::pair{"vector", &vector_ms}, std::pair{"hybrid", &hybrid_ms},
                           std::pair{"full_text", &text_ms}}) {
      fmt::print(
          "| `{}` through the service once the graph is in, p50 / p99 | {:.2f} / {:.2f} "
          "ms |\n",
          name, Percentile(*v, 0.5), Percentile(*v, 0.99));
    }
    fmt::print("| RSS growth over ingestion and searches | {:.0f} MiB |\n",
               (rss_after - rss_before) / 1024.0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
