// Knowledge bases below the API: retrieval scoring (keyword text, query terms, fusion), the file
// store's names and keys, the SQLite repository with its FTS5 table (on a real database file),
// the local agent's passage prompt, and multipart uploads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "http/multipart.hpp"
#include "knowledge/retrieval_scoring.hpp"
#include "pipeline/local_agent_runner.hpp"
#include "services/file_store.hpp"
#include "services/knowledge_indexes.hpp"
#include "storage/sqlite/sqlite_storage.hpp"
#include "support/temp_dir.hpp"
#include "util/ids.hpp"

namespace sb {
namespace {

namespace fs = std::filesystem;
using knowledge::Candidate;
using knowledge::SearchType;

using sb::test_support::TempDir;

// ---- retrieval scoring --------------------------------------------------------------------

TEST(KeywordText, SpacesCjkCharactersAndKeepsLatinWords) {
  EXPECT_EQ(knowledge::KeywordText("Router X-200"), "Router X-200");
  EXPECT_EQ(knowledge::KeywordText("知识库ab"), " 知  识  库 ab");
}

TEST(KeywordQuery, QuotesEveryTermSoNothingIsFtsSyntax) {
  // Very common words say nothing about a passage: left out, unless nothing else is left.
  EXPECT_EQ(knowledge::KeywordQuery("How do I reset the router?"), "\"reset\" OR \"router\"");
  EXPECT_EQ(knowledge::KeywordQuery("To be or not to be"),
            "\"To\" OR \"be\" OR \"or\" OR \"not\" OR \"to\"");
  EXPECT_EQ(knowledge::KeywordQuery("ZQ-7781-K"), "\"ZQ\" OR \"7781\" OR \"K\"");
  // FTS5 operators and quotes in the query are just separators.
  EXPECT_EQ(knowledge::KeywordQuery("x\" OR NEAR(b* c) ^d"),
            "\"x\" OR \"NEAR\" OR \"b\" OR \"c\" OR \"d\"");
  // A CJK run is a phrase of single characters; punctuation ends it.
  EXPECT_EQ(knowledge::KeywordQuery("知识库。检索"), "\"知 识 库\" OR \"检 索\"");
  EXPECT_EQ(knowledge::KeywordQuery("  ...  "), "");
  EXPECT_EQ(knowledge::KeywordQuery("tea, Tea, tea"), "\"tea\" OR \"Tea\"");
  std::string many;
  for (int i = 0; i < 100; ++i) many += "w" + std::to_string(i) + " ";
  const std::string q = knowledge::KeywordQuery(many, 5);
  EXPECT_EQ(std::count(q.begin(), q.end(), '"'), 10);
  // Invalid UTF-8 is repaired, never passed through.
  EXPECT_NE(knowledge::KeywordQuery("bad\xff\xfe"), "");
}

TEST(RankCandidates, FusesByWeightAndAppliesTheThreshold) {
  std::vector<Candidate> c{{1, 0.9f, std::nullopt},    // vector only
                           {2, 0.1f, -8.0},            // best keyword match, weak vector
                           {3, 0.5f, -4.0},            // both
                           {4, -0.3f, std::nullopt}};  // negative cosine counts as 0
  auto hybrid = knowledge::RankCandidates(c, SearchType::kHybrid, 0.7, 0.0, 10);
  ASSERT_EQ(hybrid.size(), 4u);
  EXPECT_EQ(hybrid[0].id, 1);  // 0.7 * 0.9
  EXPECT_NEAR(hybrid[0].score, 0.63, 1e-6);
  EXPECT_EQ(hybrid[1].id, 3);  // 0.7 * 0.5 + 0.3 * 4 / 8
  EXPECT_NEAR(hybrid[1].score, 0.5, 1e-6);
  EXPECT_EQ(hybrid[2].id, 2);  // 0.7 * 0.1 + 0.3 * 1: the exact keyword match still scores
  EXPECT_NEAR(hybrid[2].score, 0.37, 1e-6);
  EXPECT_EQ(hybrid[3].id, 4);
  EXPECT_EQ(hybrid[3].score, 0);
  auto vector = knowledge::RankCandidates(c, SearchType::kVector, 0.7, 0.2, 10);
  ASSERT_EQ(vector.size(), 2u);
  EXPECT_EQ(vector[0].id, 1);
  auto text = knowledge::RankCandidates(c, SearchType::kFullText, 0.7, 0.0, 1);
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].id, 2);
  EXPECT_EQ(text[0].keyword_score, 1.0);
  // A weight outside [0, 1] is clamped.
  auto all_vector = knowledge::RankCandidates(c, SearchType::kHybrid, 7, 0.0, 1);
  EXPECT_EQ(all_vector[0].id, 1);
}

TEST(RankCandidates, OrdersBestFirst) {
  std::vector<Candidate> c{
      {5, 0.2f, std::nullopt}, {6, 0.8f, std::nullopt}, {7, 0.8f, std::nullopt}};
  auto r = knowledge::RankCandidates(c, SearchType::kVector, 0.7, 0, 10);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].id, 6);  // ties by id
  EXPECT_EQ(r[1].id, 7);
  EXPECT_EQ(r[2].id, 5);
}

// ---- file store ---------------------------------------------------------------------------

TEST(FileStore, SanitizesNames) {
  EXPECT_EQ(services::SanitizeFileName("../../etc/passwd"), "passwd");
  EXPECT_EQ(services::SanitizeFileName("C:\\Users\\ann\\report.PDF"), "report.PDF");
  EXPECT_EQ(services::SanitizeFileName("..hidden"), "hidden");
  EXPECT_EQ(services::SanitizeFileName("a\x01\x7f"
                                       "b.txt"),
            "ab.txt");
  EXPECT_EQ(services::SanitizeFileName(""), "file");
  EXPECT_EQ(services::SanitizeFileName("/.."), "file");
  const std::string long_name = std::string(300, 'x') + ".docx";
  const std::string cut = services::SanitizeFileName(long_name);
  EXPECT_LE(cut.size(), 120u);
  EXPECT_EQ(services::ExtensionOf(cut), "docx");
  EXPECT_EQ(services::ExtensionOf("Report.PDF"), "pdf");
  EXPECT_EQ(services::ExtensionOf("noext"), "");
}

TEST(FileStore, SavesLoadsAndRefusesPathsInKeys) {
  TempDir dir;
  services::FileStore store(dir.path() / "documents");
  auto key = store.Save("../Notes..v2.txt", "hello");
  ASSERT_TRUE(key) << key.error().message;
  EXPECT_TRUE(services::FileStore::IsWellFormedKey(*key)) << *key;
  EXPECT_EQ(key->find(".."), std::string::npos);
  EXPECT_TRUE(key->ends_with(".txt"));
  EXPECT_EQ(fs::status(dir.path() / "documents" / *key).permissions() & fs::perms::group_read,
            fs::perms::none);
  EXPECT_EQ(*store.Load(*key, 100), "hello");
  EXPECT_EQ(*store.Size(*key), 5);
  EXPECT_EQ(store.Load(*key, 3).error().code, util::ErrorCode::kPayloadTooLarge);
  // Something outside the folder is never reached through a key.
  std::ofstream(dir.path() / "secret.txt") << "secret";
  for (const char* bad : {"../secret.txt", "..", "/etc/passwd", "a/b", "a\\b", "x\x01y", ""}) {
    EXPECT_FALSE(store.Load(bad, 100)) << bad;
    EXPECT_FALSE(store.Exists(bad)) << bad;
  }
  // A symbolic link in the folder is not followed.
  fs::create_symlink(dir.path() / "secret.txt", dir.path() / "documents" / "link.txt");
  EXPECT_FALSE(store.Load("link.txt", 100));
  store.Remove(*key);
  EXPECT_FALSE(store.Exists(*key));
  EXPECT_TRUE(fs::exists(dir.path() / "secret.txt"));
}

// ---- repository ---------------------------------------------------------------------------

class KnowledgeRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = storage::sqlite::SqliteStorage::Open(
        (dir_.path() / "db.sqlite").string(),
        util::SecretBox::FromKeyMaterial("knowledge-test-key-material-0123456789abcdef"));
    ASSERT_TRUE(s) << s.error().message;
    storage_ = std::move(*s);
    base_.uuid = util::KnowledgeBaseId::Generate();
    base_.name = "kb";
    base_.engine = "switchboard/builtin";
    base_.creation_settings = {{"embedding_model_uuid", "m"}};
    ASSERT_TRUE(repo().CreateBase(base_));
  }
  domain::KnowledgeRepository& repo() { return storage_->knowledge(); }

  domain::KnowledgeFile AddFile(const std::string& name) {
    domain::KnowledgeFile f;
    f.uuid = util::KnowledgeFileId::Generate();
    f.base = base_.uuid;
    f.file_name = name;
    f.storage_key = name;
    EXPECT_TRUE(repo().InsertFile(f));
    return f;
  }
  static domain::NewChunk Searchable(std::string text, std::vector<float> v,
                                     std::optional<std::size_t> parent = std::nullopt) {
    return {text, knowledge::KeywordText(text), std::move(v), parent};
  }

  TempDir dir_;
  std::unique_ptr<storage::sqlite::SqliteStorage> storage_;
  domain::KnowledgeBase base_;
};

TEST_F(KnowledgeRepositoryTest, CompletesFilesSearchesAndDeletes) {
  auto a = AddFile("a.txt");
  auto b = AddFile("b.txt");
  auto added = repo().CompleteFile(a.uuid,
                                   {Searchable("The vault code is ZQ-7781-K.", {1, 0, 0}),
                                    Searchable("知识库可以检索文档。", {0, 1, 0})},
                                   util::FromUnixMillis(5));
  ASSERT_TRUE(added) << added.error().message;
  EXPECT_EQ(added->ids.size(), 2u);
  EXPECT_EQ(added->generation_after, added->generation_before + 1);
  auto stored = repo().GetFile(a.uuid);
  EXPECT_EQ(stored->status, domain::FileStatus::kCompleted);
  EXPECT_EQ(stored->chunk_count, 2);
  EXPECT_EQ(stored->storage_key, "");

  // Parent-child: the child is searched, the parent returned.
  auto child = repo().CompleteFile(
      b.uuid,
      {{"A long parent passage about tortoises and gardens.", "", {}, std::nullopt},
       Searchable("tortoises", {0, 0, 1}, 0)},
      util::FromUnixMillis(6));
  ASSERT_TRUE(child);
  ASSERT_EQ(child->ids.size(), 1u);
  EXPECT_EQ(child->generation_before, added->generation_after);

  auto hits = repo().KeywordSearch(base_.uuid, knowledge::KeywordQuery("ZQ-7781-K"), 10);
  ASSERT_TRUE(hits);
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ(hits->front().chunk_id, added->ids[0]);
  EXPECT_LT(hits->front().bm25, 0);
  auto cjk = repo().KeywordSearch(base_.uuid, knowledge::KeywordQuery("检索"), 10);
  ASSERT_EQ(cjk->size(), 1u);
  EXPECT_EQ(cjk->front().chunk_id, added->ids[1]);
  EXPECT_TRUE(repo().KeywordSearch(base_.uuid, knowledge::KeywordQuery("索检"), 10)->empty());

  auto passages = repo().Passages({child->ids[0], added->ids[0], 999999});
  ASSERT_EQ(passages->size(), 2u);
  EXPECT_EQ((*passages)[0].text, "A long parent passage about tortoises and gardens.");
  EXPECT_NE((*passages)[0].returned_id, child->ids[0]);
  EXPECT_EQ((*passages)[0].file_name, "b.txt");
  EXPECT_EQ((*passages)[1].text, "The vault code is ZQ-7781-K.");

  std::map<std::int64_t, std::vector<float>> vectors;
  auto generation = repo().ForEachVector(base_.uuid, [&](std::int64_t id, auto v) {
    vectors[id] = std::vector<float>(v.begin(), v.end());
  });
  ASSERT_TRUE(generation);
  EXPECT_EQ(*generation, child->generation_after);
  EXPECT_EQ(vectors.size(), 3u);
  EXPECT_EQ(vectors[added->ids[1]], (std::vector<float>{0, 1, 0}));

  auto removed = repo().DeleteFile(base_.uuid, a.uuid);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->ids, added->ids);
  EXPECT_TRUE(repo().KeywordSearch(base_.uuid, knowledge::KeywordQuery("ZQ"), 10)->empty());
  EXPECT_EQ(repo().GetFile(a.uuid).error().code, util::ErrorCode::kNotFound);
  EXPECT_EQ(repo().DeleteFile(base_.uuid, a.uuid).error().code, util::ErrorCode::kNotFound);
  // A file of the base cannot be deleted through another base.
  EXPECT_FALSE(repo().DeleteFile(util::KnowledgeBaseId::Generate(), b.uuid));

  auto pending = AddFile("c.txt");
  auto keys = repo().DeleteBase(base_.uuid);
  ASSERT_TRUE(keys);
  EXPECT_EQ(*keys, std::vector<std::string>{"c.txt"});
  EXPECT_TRUE(repo().KeywordSearch(base_.uuid, knowledge::KeywordQuery("tortoises"), 10)->empty());
  EXPECT_EQ(repo().GetFile(b.uuid).error().code, util::ErrorCode::kNotFound);
  EXPECT_EQ(repo().GetBase(base_.uuid).error().code, util::ErrorCode::kNotFound);
}

TEST_F(KnowledgeRepositoryTest, AFileDeletedMeanwhileIsNotCompletedAndUnfinishedFilesAreListed) {
  auto a = AddFile("a.txt");
  auto b = AddFile("b.txt");
  auto unfinished = repo().ListUnfinishedFiles();
  ASSERT_EQ(unfinished->size(), 2u);
  ASSERT_TRUE(repo().DeleteFile(base_.uuid, a.uuid));
  auto r = repo().CompleteFile(a.uuid, {Searchable("x", {1})}, util::FromUnixMillis(1));
  EXPECT_EQ(r.error().code, util::ErrorCode::kNotFound);
  b.status = domain::FileStatus::kFailed;
  b.error = "the PDF cannot be read";
  ASSERT_TRUE(repo().UpdateFileStatus(b));
  EXPECT_TRUE(repo().ListUnfinishedFiles()->empty());
  EXPECT_EQ(repo().GetFile(b.uuid)->error, "the PDF cannot be read");
}

TEST_F(KnowledgeRepositoryTest, IndexesLoadExactThenSwapInTheGraphAndFollowChanges) {
  auto file = AddFile("many.txt");
  std::vector<domain::NewChunk> chunks;
  for (int i = 0; i < 300; ++i) {
    std::vector<float> v(8, 0.0f);
    v[i % 8] = 1.0f;
    v[(i / 8) % 8] += 0.5f + static_cast<float>(i) / 1000.0f;
    chunks.push_back(Searchable("chunk " + std::to_string(i), v));
  }
  auto stored = repo().CompleteFile(file.uuid, chunks, util::FromUnixMillis(1));
  ASSERT_TRUE(stored);
  knowledge::VectorIndexOptions graph;
  graph.exact_below = 100;  // a graph once past 100 vectors
  services::KnowledgeIndexes indexes(repo(), graph);
  auto index = indexes.Get(base_.uuid);
  ASSERT_TRUE(index && *index);
  EXPECT_EQ((*index)->size(), 300u);
  const auto query = chunks[42].vector;
  EXPECT_EQ((*index)->Search(query, 1).front().id, stored->ids[42]);
  for (int i = 0; i < 500 && !indexes.Idle(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(indexes.Idle());
  auto swapped = indexes.Get(base_.uuid);
  ASSERT_TRUE(swapped && *swapped);
  EXPECT_NE(swapped->get(), index->get());  // the graph took the exact index's place
  EXPECT_EQ((*swapped)->Search(query, 1).front().id, stored->ids[42]);

  // A file this process adds or removes is applied in place.
  auto more = AddFile("more.txt");
  std::vector<float> odd(8, 0.0f);
  odd[3] = -1.0f;
  odd[5] = 1.0f;
  auto added =
      repo().CompleteFile(more.uuid, {Searchable("odd one", odd)}, util::FromUnixMillis(2));
  ASSERT_TRUE(added);
  indexes.Apply(base_.uuid, *added, {odd});
  auto after = indexes.Get(base_.uuid);
  EXPECT_EQ(after->get(), swapped->get());
  EXPECT_EQ((*after)->Search(odd, 1).front().id, added->ids[0]);
  auto removed = repo().DeleteFile(base_.uuid, more.uuid);
  ASSERT_TRUE(removed);
  indexes.Apply(base_.uuid, *removed, {});
  EXPECT_NE((*indexes.Get(base_.uuid))->Search(odd, 1).front().id, added->ids[0]);

  // A change made elsewhere (not applied here) moves the generation: the next Get reloads.
  auto elsewhere = repo().DeleteFile(base_.uuid, file.uuid);
  ASSERT_TRUE(elsewhere);
  auto reloaded = indexes.Get(base_.uuid);
  ASSERT_TRUE(reloaded);
  EXPECT_EQ(*reloaded, nullptr);  // no vector left
  indexes.Stop();
}

// ---- the local agent's prompt -------------------------------------------------------------

TEST(WithKnowledge, NamesFilesAndKeepsToTheBudget) {
  std::vector<domain::RetrievedPassage> passages{{"b", "manual.pdf", "Press reset for 5 s.", 0.9},
                                                 {"b", "faq.md", std::string(50, 'x'), 0.5}};
  std::size_t used = 0;
  auto text = pipeline::WithKnowledge("How to reset?", passages, 30, &used);
  EXPECT_EQ(used, 1u);
  EXPECT_NE(text.find("[1] (from manual.pdf)\nPress reset for 5 s."), std::string::npos);
  EXPECT_EQ(text.find("faq.md"), std::string::npos);
  EXPECT_NE(text.find("<user_message>\nHow to reset?\n</user_message>"), std::string::npos);
  text = pipeline::WithKnowledge("q", passages, 1000, &used);
  EXPECT_EQ(used, 2u);
  EXPECT_NE(text.find("[2] (from faq.md)"), std::string::npos);
  EXPECT_EQ(pipeline::WithKnowledge("q", passages, 5, &used), "");
  EXPECT_EQ(used, 0u);
}

TEST(AgentSettings, ReadsKnowledgeBasesInBothForms) {
  auto s = pipeline::ReadAgentSettings(
      util::ParseJson(R"({"ai":{"local-agent":{"knowledge-bases":["a","",7,"b"]}}})")->as_object());
  EXPECT_EQ(s.knowledge_bases, (std::vector<std::string>{"a", "b"}));
  s = pipeline::ReadAgentSettings(
      util::ParseJson(R"({"ai":{"local-agent":{"knowledge-base":"kb1"}}})")->as_object());
  EXPECT_EQ(s.knowledge_bases, (std::vector<std::string>{"kb1"}));
  s = pipeline::ReadAgentSettings(
      util::ParseJson(R"({"ai":{"local-agent":{"knowledge-base":"__none__"}}})")->as_object());
  EXPECT_TRUE(s.knowledge_bases.empty());
}

// ---- multipart ----------------------------------------------------------------------------

http::Request Upload(std::string content_type, std::string body) {
  http::Request r;
  r.method = "POST";
  r.headers.emplace_back("content-type", std::move(content_type));
  r.body = std::move(body);
  return r;
}

TEST(Multipart, FindsTheFilePartAndItsName) {
  auto req = Upload("multipart/form-data; boundary=XyZ",
                    "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n"
                    "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; "
                    "filename=\"a \\\"b\\\".txt\"\r\nContent-Type: text/plain\r\n\r\n"
                    "line1\r\nline2\r\n--XyZ--\r\n");
  auto f = http::UploadedFile(req);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->filename, "a \"b\".txt");
  EXPECT_EQ(f->bytes, "line1\r\nline2");
  // RFC 5987 names win over the plain one; a quoted boundary works.
  req = Upload("multipart/form-data; boundary=\"q q\"",
               "--q q\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"; "
               "filename*=UTF-8''%E7%9F%A5%E8%AF%86.md\r\n\r\ndata\r\n--q q--");
  f = http::UploadedFile(req);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->filename, "知识.md");
  EXPECT_EQ(f->bytes, "data");
}

TEST(Multipart, RefusesWhatIsNotAnUpload) {
  EXPECT_FALSE(http::UploadedFile(Upload("application/json", "{}")));
  EXPECT_FALSE(http::UploadedFile(Upload("multipart/form-data", "--a\r\n")));
  EXPECT_FALSE(http::UploadedFile(
      Upload("multipart/form-data; boundary=a",
             "--a\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--a--")));
  // Truncated: no closing delimiter after the data.
  EXPECT_FALSE(http::UploadedFile(
      Upload("multipart/form-data; boundary=a",
             "--a\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\nabc")));
}

}  // namespace
}  // namespace sb
