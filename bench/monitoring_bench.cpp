// The heaviest monitoring query over one million records: what GET /monitoring/data asks of the
// repository (the overview's five counts, then a page and a total of messages, model calls,
// embedding calls, sessions and errors), on a real SQLite file filled through the repository.
// Prints a Markdown table for docs/performance.md.
//   sb_monitoring_bench [records=1000000] [db path]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/sql/monitoring_repository.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/migrations.hpp"
#include "util/ids.hpp"

namespace {

using namespace sb;
using Clock = std::chrono::steady_clock;

constexpr int kBots = 20;
constexpr int kSessions = 20000;
constexpr int kDays = 30;  // records spread over the default retention

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The same calls as the /monitoring/data handler, in the same order.
bool DataQuery(domain::MonitoringRepository& repo, domain::MonitoringFilter f) {
  f.limit = 50;
  if (!repo.Overview(f)) return false;
  for (auto t : {domain::MonitoringTable::kMessages, domain::MonitoringTable::kLlmCalls,
                 domain::MonitoringTable::kEmbeddingCalls, domain::MonitoringTable::kSessions,
                 domain::MonitoringTable::kErrors}) {
    // As the handler: the overview's totals stand for the first three.
    f.with_total = t == domain::MonitoringTable::kSessions || t == domain::MonitoringTable::kErrors;
    auto page = repo.Page(t, f);
    if (!page) return false;
  }
  return true;
}

struct Timing {
  double p50, p95, max;
};

Timing Time(domain::MonitoringRepository& repo, const domain::MonitoringFilter& f, int runs) {
  std::vector<double> ms;
  DataQuery(repo, f);  // warm the page cache
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    if (!DataQuery(repo, f)) {
      std::fprintf(stderr, "query failed\n");
      std::exit(1);
    }
    ms.push_back(Ms(Clock::now() - t0));
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 95 / 100], ms.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const long records = argc > 1 ? std::stol(argv[1]) : 1'000'000;
  const std::string path =
      argc > 2 ? argv[2]
               : (std::filesystem::temp_directory_path() / "sb-monitoring-bench.db").string();
  for (auto suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  auto db = storage::sqlite::Database::Open(path);
  if (!db || !storage::sql::ApplyMigrations(**db, storage::sqlite::SchemaMigrations(), "test")) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    return 1;
  }
  storage::sql::SqlMonitoringRepository repo(**db);

  // The mix of a busy bot fleet: per message received one reply and one model call, some
  // embedding calls and errors. 6 : 3 : 0.5 : 0.5 of every 10 records.
  const auto now = std::chrono::system_clock::now();
  const auto span = std::chrono::hours(24 * kDays);
  const auto t_fill = Clock::now();
  long written = 0;
  long i = 0;
  while (written < records) {
    domain::MonitoringBatch batch;
    for (int k = 0; k < 5000 && written < records; ++k, ++i) {
      const auto at = now - span + span * i / records;
      const int bot = static_cast<int>(i % kBots);
      domain::MonitoringContext c;
      c.bot_id = fmt::format("bot-{}", bot);
      c.bot_name = c.bot_id;
      c.pipeline_id = fmt::format("pipe-{}", bot % 5);
      c.pipeline_name = c.pipeline_id;
      c.session_id = fmt::format("person_{}", i % kSessions);
      switch (i % 20) {
        case 0 ... 11: {
          domain::MonitoredMessage m;
          m.id = util::NewUuid();
          m.timestamp = at;
          m.context = c;
          m.message_content = "a message of ordinary length, as people write to a bot";
          m.status = i % 40 == 1 ? "error" : "success";
          m.level = "info";
          m.platform = "webhook";
          m.role = i % 2 ? "assistant" : "user";
          batch.messages.push_back(std::move(m));
          break;
        }
        case 12 ... 17: {
          domain::MonitoredLlmCall l;
          l.id = util::NewUuid();
          l.timestamp = at;
          l.context = c;
          l.model_name = "gpt-4o";
          l.input_tokens = 500;
          l.output_tokens = 80;
          l.duration_ms = 900;
          l.status = "success";
          batch.llm_calls.push_back(std::move(l));
          break;
        }
        case 18: {
          domain::MonitoredEmbeddingCall e;
          e.id = util::NewUuid();
          e.timestamp = at;
          e.context = c;
          e.model_name = "text-embedding-3-small";
          e.prompt_tokens = e.total_tokens = 20;
          e.input_count = 1;
          e.status = "success";
          batch.embedding_calls.push_back(std::move(e));
          break;
        }
        default: {
          domain::MonitoredError e;
          e.id = util::NewUuid();
          e.timestamp = at;
          e.context = c;
          e.error_type = "delivery";
          e.error_message = "the platform answered 502";
          batch.errors.push_back(std::move(e));
        }
      }
      ++written;
    }
    if (auto ok = repo.Write(batch); !ok) {
      std::fprintf(stderr, "write failed: %s\n", ok.error().message.c_str());
      return 1;
    }
  }
  const double fill_s = Ms(Clock::now() - t_fill) / 1000;
  domain::MonitoringFilter count_only;
  count_only.limit = 0;
  const auto sessions = repo.Page(domain::MonitoringTable::kSessions, count_only);

  domain::MonitoringFilter all;
  domain::MonitoringFilter one_bot;
  one_bot.bot_ids = {"bot-3"};
  domain::MonitoringFilter last_day;
  last_day.start_ms = util::ToUnixMillis(now - std::chrono::hours(24));
  domain::MonitoringFilter bot_week;
  bot_week.bot_ids = {"bot-3"};
  bot_week.start_ms = util::ToUnixMillis(now - std::chrono::hours(24 * 7));

  std::printf(
      "Filled %ld records (plus %lld sessions derived from them) in %.1f s (%.0f records/s "
      "through the repository, 5,000 per transaction).\n\n",
      records, static_cast<long long>(sessions ? sessions->total : 0), fill_s,
      static_cast<double>(records) / fill_s);
  std::printf("| /monitoring/data query (limit 50), %d runs | p50 | p95 | max | target |\n", 20);
  std::printf("|---|---|---|---|---|\n");
  for (auto [name, f] :
       {std::pair{"no filter (everything, 30 days)", all}, std::pair{"one bot of 20", one_bot},
        std::pair{"the last day", last_day}, std::pair{"one bot, the last 7 days", bot_week}}) {
    const Timing t = Time(repo, f, 20);
    std::printf("| %s | %.1f ms | %.1f ms | %.1f ms | ≤ 50 ms%s |\n", name, t.p50, t.p95, t.max,
                t.p50 <= 50 ? "" : " MISSED");
  }
  db->reset();
  for (auto suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return 0;
}
