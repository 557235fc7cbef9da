// Service rules over the real SQLite storage with a simulated clock.
#include <gtest/gtest.h>

#include <cctype>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "llm/requester_catalogue.hpp"
#include "pipeline/pipeline_template_data.hpp"
#include "platforms/adapter_catalogue.hpp"
#include "services/auth_service.hpp"
#include "services/bot_service.hpp"
#include "services/config_schema.hpp"
#include "services/model_service.hpp"
#include "services/pipeline_service.hpp"
#include "services/provider_service.hpp"
#include "services/system_service.hpp"
#include "services/task_service.hpp"
#include "storage/sqlite/sqlite_storage.hpp"
#include "util/crypto.hpp"
#include "util/simulated_clock.hpp"

namespace sb::services {
namespace {

using util::ErrorCode;

using FakeClock = util::SimulatedClock;

#define EXPECT_CODE(result, expected)                             \
  do {                                                            \
    const auto& r_ = (result);                                    \
    ASSERT_FALSE(r_) << "expected an error";                      \
    EXPECT_EQ(r_.error().code, (expected)) << r_.error().message; \
  } while (0)

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sb-svc-" + util::RandomUrlSafe(8));
    auto st = storage::sqlite::SqliteStorage::Open(
        (dir_ / "db.sqlite").string(),
        util::SecretBox::FromKeyMaterial("unit-test-key-material-0123456789"));
    ASSERT_TRUE(st) << st.error().message;
    storage_ = std::move(*st);
    requesters_ = *llm::LoadRequesterCatalogue();
    adapters_ = *platforms::LoadAdapterCatalogue();
    template_ = *pipeline::LoadPipelineTemplate();
    AuthOptions auth_options;
    auth_options.jwt_secret = "test-secret-test-secret";
    auth_options.recovery_key = "recovery-key-recovery-key";
    auth_options.login_max_failures = 3;
    auth_options.login_window_seconds = 60;
    auth_options.login_rate_per_second = 1000;  // the clock stands still: no refill
    auth_ = std::make_unique<AuthService>(storage_->users(), storage_->api_keys(), clock_,
                                          auth_options);
    providers_ = std::make_unique<ProviderService>(storage_->providers(), requesters_, clock_);
    models_ = std::make_unique<ModelService>(storage_->models(), *providers_, clock_);
    pipelines_ = std::make_unique<PipelineService>(storage_->pipelines(), template_, clock_);
    ASSERT_TRUE(pipelines_->EnsureDefault());
    bots_ =
        std::make_unique<BotService>(storage_->bots(), storage_->bot_logs(), storage_->pipelines(),
                                     adapters_, nullptr, clock_, BotServiceOptions{5});
  }

  void TearDown() override {
    storage_->Close();
    std::filesystem::remove_all(dir_);
  }

  util::ProviderId MakeProvider() {
    auto id = providers_->Create(
        {"p", "openai-chat-completions", "https://api.example.com/v1", {"sk-aaaaaaaaaaaaaaaa"}});
    EXPECT_TRUE(id);
    return *id;
  }

  std::filesystem::path dir_;
  FakeClock clock_{util::FromUnixMillis(1'790'000'000'000)};
  std::unique_ptr<storage::sqlite::SqliteStorage> storage_;
  domain::Catalogue requesters_;
  domain::Catalogue adapters_;
  domain::PipelineTemplate template_;
  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<ProviderService> providers_;
  std::unique_ptr<ModelService> models_;
  std::unique_ptr<PipelineService> pipelines_;
  std::unique_ptr<BotService> bots_;
};

TEST(ConfigSchema, FillsDefaultsChecksTypesAndKeepsUnknownKeys) {
  auto items = util::ParseJson(R"([
    {"name":"token","type":"string","required":true},
    {"name":"port","type":"integer","required":false,"default":8080},
    {"name":"mode","type":"select","default":"a","options":[{"name":"a"},{"name":"b"}]},
    {"name":"tags","type":"array[string]","default":[]}])")
                   ->as_array();
  auto ok = ApplyConfigSchema(items, util::ParseJson(R"({"token":"t","extra":1})")->as_object(),
                              "config");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(util::SerializeJson(*ok),
            R"({"token":"t","extra":1,"port":8080,"mode":"a","tags":[]})");

  auto missing = ApplyConfigSchema(items, {}, "config");
  EXPECT_CODE(missing, ErrorCode::kInvalidArgument);
  EXPECT_EQ(missing.error().message, "config.token is required");

  auto wrong = ApplyConfigSchema(
      items, util::ParseJson(R"({"token":"t","port":"80"})")->as_object(), "config");
  EXPECT_CODE(wrong, ErrorCode::kInvalidArgument);
  EXPECT_EQ(wrong.error().message, "config.port must be an integer, not string");

  auto option = ApplyConfigSchema(
      items, util::ParseJson(R"({"token":"t","mode":"c"})")->as_object(), "config");
  EXPECT_CODE(option, ErrorCode::kInvalidArgument);
  EXPECT_NE(option.error().message.find("config.mode"), std::string::npos);

  // Options may name their value as `value` (web_page_bot's language) instead of `name`.
  auto by_value = util::ParseJson(
                      R"([{"name":"lang","type":"select","default":"en",
                          "options":[{"value":"en"},{"value":"zh"}]}])")
                      ->as_array();
  EXPECT_TRUE(ApplyConfigSchema(by_value, util::ParseJson(R"({"lang":"zh"})")->as_object(), "c"));
  EXPECT_FALSE(ApplyConfigSchema(by_value, util::ParseJson(R"({"lang":"fr"})")->as_object(), "c"));

  auto list = ApplyConfigSchema(items, util::ParseJson(R"({"token":"t","tags":[1]})")->as_object(),
                                "config");
  EXPECT_CODE(list, ErrorCode::kInvalidArgument);

  auto empty = ApplyConfigSchema(items, util::ParseJson(R"({"token":""})")->as_object(), "config");
  EXPECT_CODE(empty, ErrorCode::kInvalidArgument);
  EXPECT_EQ(empty.error().message, "config.token must not be empty");
}

TEST(ConfigSchema, UrlItemsTakeHttpOrWebSocketSchemesInAnyCase) {
  auto items = util::ParseJson(R"([
    {"name":"callback_url","type":"string","default":"","format":"http-url"},
    {"name":"events","type":"string","default":"","format":"ws-url"}])")
                   ->as_array();
  auto check = [&](std::string_view config) {
    return ApplyConfigSchema(items, util::ParseJson(config)->as_object(), "config");
  };
  for (auto good : {R"({"callback_url":"https://a.example/x"})", R"({"callback_url":"HTTPS://a"})",
                    R"({"callback_url":"hTTp://a:80"})", R"({"callback_url":""})",
                    R"({"events":"WSS://a/e"})", R"({"events":"ws://127.0.0.1:5600/v1"})"}) {
    EXPECT_TRUE(check(good)) << good;
  }
  for (auto bad : {R"({"callback_url":"file:///etc/passwd"})", R"({"callback_url":"gopher://a"})",
                   R"({"callback_url":"http:/a"})", R"({"callback_url":"https://"})",
                   R"({"callback_url":"http://a b"})", R"({"callback_url":"ws://a"})"}) {
    auto r = check(bad);
    EXPECT_CODE(r, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message, "config.callback_url must be an http:// or https:// URL") << bad;
  }
  auto ws = check(R"({"events":"https://a"})");
  EXPECT_CODE(ws, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ws.error().message, "config.events must be a ws:// or wss:// URL");
  EXPECT_TRUE(IsHttpUrl("HTTPS://api.example.com/v1"));
  EXPECT_FALSE(IsHttpUrl("httpx://a"));
}

TEST(ConfigSchema, SecretItemsAreMaskedAndAMaskSentBackKeepsTheSecret) {
  auto items = util::ParseJson(R"([
    {"name":"token","type":"string","secret":true},
    {"name":"password","type":"password"},
    {"name":"name","type":"string"}])")
                   ->as_array();
  auto stored =
      util::ParseJson(
          R"({"token":"123456:ABCDEF-long-token","password":"pw","name":"plain-name-here"})")
          ->as_object();
  auto masked = MaskSecretItems(items, stored);
  EXPECT_EQ(util::SerializeJson(masked),
            R"({"token":"1234...oken","password":"****","name":"plain-name-here"})");
  EXPECT_EQ(MaskSecretItems(items, util::ParseJson(R"({"token":""})")->as_object()).at("token"),
            "");

  // The masks come back: unchanged. A new value, or a mask of something else, is taken as sent.
  auto kept = KeepMaskedSecrets(items, masked, stored);
  EXPECT_EQ(kept, stored);
  auto changed = KeepMaskedSecrets(
      items,
      util::ParseJson(R"({"token":"new-token-value","password":"1234...oken"})")->as_object(),
      stored);
  EXPECT_EQ(util::SerializeJson(changed),
            R"({"token":"new-token-value","password":"1234...oken"})");
  // A non-secret item that happens to equal a mask is never replaced.
  auto name = KeepMaskedSecrets(items, util::ParseJson(R"({"name":"****"})")->as_object(),
                                util::ParseJson(R"({"name":"abc"})")->as_object());
  EXPECT_EQ(name.at("name"), "****");
}

TEST(ConfigSchema, AdapterSchemasMarkTheirSecretsAndUrls) {
  auto adapters = platforms::LoadAdapterCatalogue();
  ASSERT_TRUE(adapters);
  int secrets = 0;
  for (const auto& entry : adapters->entries()) {
    bool base_url = false;
    for (const auto& raw : domain::ConfigItems(entry.descriptor)) {
      const auto& item = raw.as_object();
      std::string name(item.at("name").as_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (name == "api_base_url" || name == "callback_url") {
        EXPECT_EQ(item.at("format"), "http-url") << entry.name << "." << name;
        base_url = base_url || name == "api_base_url";
      }
      const bool looks_secret = name.find("secret") != std::string::npos ||
                                name.find("token") != std::string::npos ||
                                name.find("aeskey") != std::string::npos;
      if (looks_secret) {
        EXPECT_TRUE(IsSecretItem(item)) << entry.name << "." << name;
        ++secrets;
      }
    }
    EXPECT_TRUE(base_url) << entry.name;
  }
  EXPECT_GT(secrets, 20);
}

TEST_F(ServicesTest, InitOnceThenConflict) {
  EXPECT_FALSE(*auth_->IsInitialized());
  EXPECT_CODE(auth_->InitAdmin("admin", "short"), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  EXPECT_TRUE(*auth_->IsInitialized());
  EXPECT_CODE(auth_->InitAdmin("other", "long-enough-password"), ErrorCode::kConflict);
}

TEST_F(ServicesTest, LoginThrottleIsPerAddressSoFailuresElsewhereCannotLockTheAdminOut) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_CODE(auth_->Login("admin", "wrong-password", "10.0.0.1"), ErrorCode::kUnauthenticated);
  }
  // The failing address is refused, even with the right password, and told for how long.
  auto refused = auth_->Login("admin", "long-enough-password", "10.0.0.1");
  EXPECT_CODE(refused, ErrorCode::kRateLimited);
  EXPECT_GE(refused.error().retry_after_seconds, 1);
  EXPECT_LE(refused.error().retry_after_seconds, 60);
  ASSERT_TRUE(auth_->LoginRefusal("admin", "10.0.0.1"));
  EXPECT_EQ(auth_->LoginRefusal("admin", "10.0.0.1")->code, ErrorCode::kRateLimited);
  // A clean address is not: the real admin logs in while the attacker is locked out.
  EXPECT_FALSE(auth_->LoginRefusal("admin", "10.0.0.2"));
  auto token = auth_->Login("admin", "long-enough-password", "10.0.0.2");
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(*auth_->VerifyToken(*token), "admin");
  // The account is under attack: another address that fails on it gets one try only.
  EXPECT_CODE(auth_->Login("admin", "wrong-password", "10.0.0.3"), ErrorCode::kUnauthenticated);
  EXPECT_CODE(auth_->Login("admin", "long-enough-password", "10.0.0.3"), ErrorCode::kRateLimited);
  EXPECT_TRUE(auth_->Login("admin", "long-enough-password", "10.0.0.4"));
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_TRUE(auth_->Login("admin", "long-enough-password", "10.0.0.1"));
}

TEST_F(ServicesTest, AnIpv6ClientIsThrottledByItsSlash64) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  for (const char* address : {"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"}) {
    EXPECT_CODE(auth_->Login("nobody", "wrong-password", address), ErrorCode::kUnauthenticated);
  }
  EXPECT_CODE(auth_->Login("admin", "long-enough-password", "2001:db8:1:2::9"),
              ErrorCode::kRateLimited);
  EXPECT_TRUE(auth_->Login("admin", "long-enough-password", "2001:db8:1:3::9"));
}

TEST_F(ServicesTest, TheGlobalLoginRateRefusesBeyondItsBurstAndRefills) {
  AuthOptions options;
  options.jwt_secret = "test-secret-test-secret";
  options.login_max_failures = 100;
  options.login_rate_per_second = 2;
  AuthService auth(storage_->users(), storage_->api_keys(), clock_, options);
  ASSERT_TRUE(auth.InitAdmin("admin", "long-enough-password"));
  EXPECT_CODE(auth.Login("admin", "wrong-password", "10.0.0.1"), ErrorCode::kUnauthenticated);
  EXPECT_CODE(auth.Login("admin", "wrong-password", "10.0.0.2"), ErrorCode::kUnauthenticated);
  // Every address shares the rate: a third, from anywhere, is refused before hashing.
  ASSERT_TRUE(auth.LoginRefusal("admin", "10.0.0.3"));
  auto refused = auth.Login("admin", "long-enough-password", "10.0.0.3");
  EXPECT_CODE(refused, ErrorCode::kRateLimited);
  EXPECT_EQ(refused.error().retry_after_seconds, 1);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_FALSE(auth.LoginRefusal("admin", "10.0.0.3"));
  EXPECT_TRUE(auth.Login("admin", "long-enough-password", "10.0.0.3"));
}

// Holds every Get until released, so a test can keep a login inside its hashing slot.
class GatedUsers final : public domain::UserRepository {
 public:
  explicit GatedUsers(domain::UserRepository& inner) : inner_(inner) {}
  util::Result<int> Count() override { return inner_.Count(); }
  util::Result<domain::User> Get(const std::string& username) override {
    std::unique_lock lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    return inner_.Get(username);
  }
  util::Result<void> Insert(const domain::User& user, bool only_if_none) override {
    return inner_.Insert(user, only_if_none);
  }
  util::Result<void> UpdatePassword(const std::string& username, const std::string& hash,
                                    util::TimePoint now) override {
    return inner_.UpdatePassword(username, hash, now);
  }
  bool WaitForCaller() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return waiting_ > 0; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  domain::UserRepository& inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST_F(ServicesTest, HashingAtCapacityIsRefusedAtOnce) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  GatedUsers gated(storage_->users());
  AuthOptions options;
  options.jwt_secret = "test-secret-test-secret";
  options.recovery_key = "recovery-key-recovery-key";
  options.max_concurrent_hashes = 1;
  AuthService auth(gated, storage_->api_keys(), clock_, options);
  util::Result<std::string> first = util::Fail(ErrorCode::kInternal, "not run");
  std::thread holder([&] { first = auth.Login("admin", "long-enough-password", "10.0.0.1"); });
  ASSERT_TRUE(gated.WaitForCaller());  // the first login holds the only slot
  const auto started = std::chrono::steady_clock::now();
  auto refused = auth.Login("admin", "long-enough-password", "10.0.0.2");
  EXPECT_CODE(refused, ErrorCode::kRateLimited);
  EXPECT_EQ(refused.error().retry_after_seconds, 1);
  ASSERT_TRUE(auth.LoginRefusal("admin", "10.0.0.2"));
  EXPECT_CODE(auth.ChangePassword("admin", "long-enough-password", "another-password"),
              ErrorCode::kRateLimited);
  EXPECT_CODE(auth.ResetPassword("admin", "recovery-key-recovery-key", "another-password", "x"),
              ErrorCode::kRateLimited);
  // Refused without waiting for the slot (generous bound: a hash alone takes tens of ms).
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  gated.Open();
  holder.join();
  EXPECT_TRUE(first) << first.error().message;
  EXPECT_FALSE(auth.LoginRefusal("admin", "10.0.0.2"));
  EXPECT_TRUE(auth.Login("admin", "long-enough-password", "10.0.0.2"));
}

TEST_F(ServicesTest, ResetPasswordIsThrottledPerAddress) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_CODE(auth_->ResetPassword("admin", "guess", "another-password", "10.0.0.1"),
                ErrorCode::kPermissionDenied);
  }
  auto refused =
      auth_->ResetPassword("admin", "recovery-key-recovery-key", "another-password", "10.0.0.1");
  EXPECT_CODE(refused, ErrorCode::kRateLimited);
  EXPECT_GE(refused.error().retry_after_seconds, 1);
  EXPECT_TRUE(
      auth_->ResetPassword("admin", "recovery-key-recovery-key", "another-password", "10.0.0.2"));
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_TRUE(
      auth_->ResetPassword("admin", "recovery-key-recovery-key", "third-password-1", "10.0.0.1"));
}

TEST_F(ServicesTest, PasswordChangeAndResetEndTheTokensIssuedBefore) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  auto before = auth_->Login("admin", "long-enough-password", "a");
  ASSERT_TRUE(before);
  ASSERT_TRUE(auth_->VerifyToken(*before));  // now cached as known
  ASSERT_TRUE(auth_->ChangePassword("admin", "long-enough-password", "another-password"));
  EXPECT_CODE(auth_->VerifyToken(*before), ErrorCode::kUnauthenticated);
  auto cached = auth_->VerifyTokenCached(*before);
  EXPECT_TRUE(!cached || !*cached);
  // Renewal and a new login give tokens of the new generation.
  auto renewed = auth_->RenewToken("admin");
  ASSERT_TRUE(renewed);
  EXPECT_EQ(*auth_->VerifyToken(*renewed), "admin");
  auto after = auth_->Login("admin", "another-password", "a");
  ASSERT_TRUE(after);
  ASSERT_TRUE(auth_->VerifyToken(*after));
  ASSERT_TRUE(auth_->ResetPassword("admin", "recovery-key-recovery-key", "third-password", "a"));
  EXPECT_CODE(auth_->VerifyToken(*after), ErrorCode::kUnauthenticated);
  EXPECT_CODE(auth_->VerifyToken(*renewed), ErrorCode::kUnauthenticated);
  // A server that never saw them (no cache) refuses them from the stored generation.
  AuthOptions options;
  options.jwt_secret = "test-secret-test-secret";
  AuthService fresh(storage_->users(), storage_->api_keys(), clock_, options);
  EXPECT_CODE(fresh.VerifyToken(*after), ErrorCode::kUnauthenticated);
  EXPECT_CODE(fresh.VerifyToken(*before), ErrorCode::kUnauthenticated);
  EXPECT_TRUE(fresh.VerifyToken(*auth_->Login("admin", "third-password", "a")));
}

TEST_F(ServicesTest, AChangeByAnotherProcessEndsCachedTokensWithinSeconds) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  auto token = auth_->Login("admin", "long-enough-password", "a");
  ASSERT_TRUE(token);
  ASSERT_TRUE(auth_->VerifyToken(*token));
  ASSERT_TRUE(auth_->VerifyTokenCached(*token));  // answered from memory
  // The CLI is another AuthService over the same database (another process).
  AuthOptions options;
  options.jwt_secret = "test-secret-test-secret";
  AuthService cli(storage_->users(), storage_->api_keys(), clock_, options);
  ASSERT_TRUE(cli.UpsertUser("admin", "set-from-the-cli"));
  clock_.Advance(std::chrono::seconds(11));
  EXPECT_FALSE(auth_->VerifyTokenCached(*token));  // too old to trust: read again
  EXPECT_CODE(auth_->VerifyToken(*token), ErrorCode::kUnauthenticated);
  auto renewed = auth_->RenewToken("admin");
  ASSERT_TRUE(renewed);
  EXPECT_TRUE(auth_->VerifyToken(*renewed));
}

TEST_F(ServicesTest, TokensExpireAndTamperingIsRefused) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  const auto token = auth_->IssueToken("admin", 0);
  ASSERT_TRUE(auth_->VerifyToken(token));
  std::string tampered = token;
  tampered[tampered.size() - 2] = tampered[tampered.size() - 2] == 'a' ? 'b' : 'a';
  EXPECT_CODE(auth_->VerifyToken(tampered), ErrorCode::kUnauthenticated);
  EXPECT_CODE(auth_->VerifyToken("a.b.c"), ErrorCode::kUnauthenticated);
  EXPECT_CODE(auth_->VerifyToken(auth_->IssueToken("ghost", 0)), ErrorCode::kUnauthenticated);
  clock_.Advance(std::chrono::hours(24 * 8));
  EXPECT_CODE(auth_->VerifyToken(token), ErrorCode::kUnauthenticated);
}

TEST_F(ServicesTest, PasswordChangeAndRecoveryReset) {
  ASSERT_TRUE(auth_->InitAdmin("admin", "long-enough-password"));
  EXPECT_CODE(auth_->ChangePassword("admin", "wrong-current", "another-password"),
              ErrorCode::kInvalidArgument);
  ASSERT_TRUE(auth_->ChangePassword("admin", "long-enough-password", "another-password"));
  EXPECT_TRUE(auth_->Login("admin", "another-password", "a"));
  EXPECT_CODE(auth_->ResetPassword("admin", "not-the-key", "third-password", "a"),
              ErrorCode::kPermissionDenied);
  ASSERT_TRUE(auth_->ResetPassword("admin", "recovery-key-recovery-key", "third-password", "a"));
  EXPECT_TRUE(auth_->Login("admin", "third-password", "a"));
}

TEST_F(ServicesTest, ApiKeysAreShownOnceStoredHashedAndRevocable) {
  auto created = auth_->CreateApiKey("ci", "");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->key.rfind("lbk_", 0), 0u);
  EXPECT_EQ(created->key.size(), 4u + 43u);
  EXPECT_EQ(created->record.key_hash, util::Sha256Hex(created->key));
  EXPECT_EQ(created->record.masked_key.find(created->key.substr(10, 20)), std::string::npos);
  auto verified = auth_->VerifyApiKey(created->key);
  ASSERT_TRUE(verified);
  EXPECT_EQ(verified->id, created->record.id);
  ASSERT_TRUE(auth_->DeleteApiKey(created->record.id));
  EXPECT_CODE(auth_->VerifyApiKey(created->key), ErrorCode::kUnauthenticated);
  EXPECT_FALSE(auth_->VerifyApiKeyCached(created->key));
}

TEST_F(ServicesTest, ProviderRulesAndDeleteWhileReferenced) {
  EXPECT_CODE(providers_->Create({"p", "no-such-requester", "https://x", {}}),
              ErrorCode::kInvalidArgument);
  EXPECT_CODE(providers_->Create({"p", "openai-chat-completions", "ftp://x", {}}),
              ErrorCode::kInvalidArgument);
  EXPECT_CODE(providers_->Create({"", "openai-chat-completions", "https://x", {}}),
              ErrorCode::kInvalidArgument);
  const auto before = providers_->generation();
  const auto provider = MakeProvider();
  EXPECT_GT(providers_->generation(), before);
  ModelDraft draft;
  draft.name = "gpt-test";
  draft.provider_uuid = provider;
  auto model = models_->Create(domain::ModelKind::kLlm, draft);
  ASSERT_TRUE(model) << model.error().message;
  auto view = models_->Get(domain::ModelKind::kLlm, *model);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->model.requester_config.at("model"), util::Json("gpt-test"));
  EXPECT_EQ(view->provider.uuid, provider);

  auto del = providers_->Delete(provider);
  EXPECT_CODE(del, ErrorCode::kInvalidArgument);
  EXPECT_NE(del.error().message.find("1 LLM model(s) and 0 embedding model(s)"), std::string::npos);
  ASSERT_TRUE(models_->Delete(domain::ModelKind::kLlm, *model));
  EXPECT_TRUE(providers_->Delete(provider));
  EXPECT_CODE(providers_->Get(provider), ErrorCode::kNotFound);
}

TEST_F(ServicesTest, ModelNeedsAnExistingProviderAndKnownAbilities) {
  ModelDraft draft;
  draft.name = "m";
  draft.provider_uuid = util::ProviderId::Generate();
  EXPECT_CODE(models_->Create(domain::ModelKind::kLlm, draft), ErrorCode::kInvalidArgument);
  draft.provider_uuid = MakeProvider();
  draft.abilities = {"chat", "telepathy"};
  EXPECT_CODE(models_->Create(domain::ModelKind::kLlm, draft), ErrorCode::kInvalidArgument);
  draft.provider_uuid.reset();
  draft.abilities = {"chat"};
  draft.inline_provider = ProviderDraft{"", "anthropic-messages", "https://api.anthropic.com", {}};
  auto id = models_->Create(domain::ModelKind::kLlm, draft);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(models_->Get(domain::ModelKind::kLlm, *id)->provider.requester, "anthropic-messages");
}

TEST_F(ServicesTest, PipelineConfigIsMergedOverDefaultsAndValidated) {
  auto again = pipelines_->EnsureDefault();
  ASSERT_TRUE(again);
  EXPECT_EQ(pipelines_->List()->size(), 1u);

  PipelineDraft draft;
  draft.name = "custom";
  draft.config = util::ParseJson(R"({"safety":{"rate-limit":{"limitation":5}}})")->as_object();
  auto id = pipelines_->Create(draft);
  ASSERT_TRUE(id) << id.error().message;
  auto p = pipelines_->Get(*id);
  const auto& rate = p->config.at("safety").at("rate-limit").as_object();
  EXPECT_EQ(rate.at("limitation"), util::Json(5));
  EXPECT_EQ(rate.at("strategy"), util::Json("drop"));  // from the default config
  EXPECT_TRUE(p->config.contains("trigger"));

  draft.config =
      util::ParseJson(R"({"safety":{"rate-limit":{"strategy":"explode"}}})")->as_object();
  auto bad = pipelines_->Create(draft);
  EXPECT_CODE(bad, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("config.safety.rate-limit.strategy"), std::string::npos);

  draft.config =
      util::ParseJson(R"({"trigger":{"group-respond-rules":{"at":"yes"}}})")->as_object();
  EXPECT_CODE(pipelines_->Create(draft), ErrorCode::kInvalidArgument);
  draft.config = util::ParseJson(R"({"ai":"nope"})")->as_object();
  EXPECT_CODE(pipelines_->Create(draft), ErrorCode::kInvalidArgument);
}

TEST_F(ServicesTest, PipelineUpdateMergesOverTheStoredConfig) {
  PipelineDraft draft;
  draft.name = "p";
  draft.config = util::ParseJson(R"({"safety":{"rate-limit":{"limitation":5}}})")->as_object();
  auto id = pipelines_->Create(draft);
  ASSERT_TRUE(id);
  PipelinePatch patch;
  patch.config = util::ParseJson(R"({"ai":{"local-agent":{"max-round":3}}})")->as_object();
  ASSERT_TRUE(pipelines_->Update(*id, patch));
  const auto config = pipelines_->Get(*id)->config;
  EXPECT_EQ(config.at("safety").at("rate-limit").at("limitation"), util::Json(5));
  EXPECT_EQ(config.at("ai").at("local-agent").at("max-round"), util::Json(3));
}

TEST_F(ServicesTest, CopyNeverCutsAMultiByteCharacter) {
  auto def = pipelines_->EnsureDefault();
  PipelinePatch patch;
  std::string name(239, 'a');
  patch.name = name + "é";  // 241 bytes: the cut at 240 would split "é"
  ASSERT_TRUE(pipelines_->Update(*def, patch));
  auto copy = pipelines_->Copy(*def);
  ASSERT_TRUE(copy);
  EXPECT_EQ(pipelines_->Get(*copy)->name, name + " (Copy)");
}

TEST_F(ServicesTest, ModelWithInlineProviderIsStoredWithItOrNotAtAll) {
  const auto before = providers_->List()->size();
  ModelDraft draft;
  draft.name = "m";
  draft.inline_provider = ProviderDraft{"", "openai-chat-completions", "ftp://bad", {}};
  auto bad = models_->Create(domain::ModelKind::kLlm, draft);
  EXPECT_CODE(bad, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message.rfind("provider.", 0), 0u);
  EXPECT_EQ(providers_->List()->size(), before);
}

TEST_F(ServicesTest, DefaultAndUsedPipelinesCannotBeDeleted) {
  auto def = pipelines_->EnsureDefault();
  EXPECT_CODE(pipelines_->Delete(*def), ErrorCode::kConflict);
  auto copy = pipelines_->Copy(*def);
  ASSERT_TRUE(copy);
  EXPECT_EQ(pipelines_->Get(*copy)->name, "ChatPipeline (Copy)");
  EXPECT_FALSE(pipelines_->Get(*copy)->is_default);

  BotDraft bot;
  bot.name = "b";
  bot.adapter = "webhook";
  bot.config =
      util::ParseJson(R"({"secret":"s3cret","callback_url":"http://127.0.0.1:9/cb"})")->as_object();
  bot.use_pipeline_uuid = *copy;
  auto bot_id = bots_->Create(bot);
  ASSERT_TRUE(bot_id) << bot_id.error().message;
  EXPECT_CODE(pipelines_->Delete(*copy), ErrorCode::kConflict);
  ASSERT_TRUE(bots_->Delete(*bot_id));
  EXPECT_TRUE(pipelines_->Delete(*copy));
}

TEST_F(ServicesTest, BotsGetTheDefaultPipelineAndSchemaDefaults) {
  BotDraft bot;
  bot.name = "tg";
  bot.adapter = "telegram";
  bot.config = util::ParseJson(R"({"token":"123:abc"})")->as_object();
  auto id = bots_->Create(bot);
  ASSERT_TRUE(id) << id.error().message;
  auto view = bots_->Get(*id);
  EXPECT_EQ(view->bot.use_pipeline_uuid, *pipelines_->EnsureDefault());
  EXPECT_EQ(view->bot.adapter_config.at("api_base_url"), util::Json("https://api.telegram.org"));
  EXPECT_EQ(view->runtime.state, domain::RuntimeState::kStopped);

  bot.adapter = "no-such-adapter";
  EXPECT_CODE(bots_->Create(bot), ErrorCode::kInvalidArgument);
  bot.adapter = "webhook";
  bot.config = {};
  auto missing = bots_->Create(bot);
  EXPECT_CODE(missing, ErrorCode::kInvalidArgument);
  EXPECT_EQ(missing.error().message, "config.secret is required");

  domain::OutgoingMessage msg;
  msg.target_id = "1";
  msg.chain.push_back({});
  // Without a runtime the answer comes at once, on this thread.
  auto send = [&](const util::BotId& target) {
    std::optional<util::Result<domain::SendReceipt>> out;
    bots_->SendMessage(target, msg, [&](util::Result<domain::SendReceipt> r) { out = r; });
    EXPECT_TRUE(out.has_value());
    return out.value_or(util::Fail(ErrorCode::kInternal, "no answer"));
  };
  EXPECT_CODE(send(*id), ErrorCode::kConflict);
  EXPECT_CODE(send(util::BotId::Generate()), ErrorCode::kNotFound);
}

TEST_F(ServicesTest, BotLogsKeepTheNewestEntriesWithGrowingSequence) {
  BotDraft bot;
  bot.name = "w";
  bot.adapter = "webhook";
  bot.config =
      util::ParseJson(R"({"secret":"s","callback_url":"http://127.0.0.1:9/cb"})")->as_object();
  auto id = bots_->Create(bot);
  ASSERT_TRUE(id);
  for (int i = 0; i < 8; ++i) {
    domain::BotLogEntry e;
    e.text = "entry " + std::to_string(i);
    e.timestamp = clock_.Now();
    ASSERT_TRUE(bots_->AppendLog(bots_->Get(*id)->bot, e));
  }
  auto page = bots_->Logs(*id, -1, 3);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total_count, 5);  // retention 5
  ASSERT_EQ(page->entries.size(), 3u);
  EXPECT_EQ(page->entries.front().text, "entry 5");  // entries 3..7 retained
  EXPECT_EQ(page->entries.back().text, "entry 7");
  EXPECT_EQ(page->entries.back().seq_id, 8);  // the first entry is 1
  EXPECT_CODE(bots_->Logs(util::BotId::Generate(), -1, 3), ErrorCode::kNotFound);

  // A bot's own retention wins over the instance default.
  BotPatch patch;
  patch.log_retention = 2;
  ASSERT_TRUE(bots_->Update(*id, patch));
  const auto updated = bots_->Get(*id)->bot;
  domain::BotLogEntry e;
  e.text = "entry 8";
  ASSERT_TRUE(bots_->AppendLog(updated, e));
  EXPECT_EQ(bots_->Logs(*id, -1, 10)->total_count, 2);
  patch.log_retention = 0;
  EXPECT_CODE(bots_->Update(*id, patch), ErrorCode::kInvalidArgument);
}

TEST_F(ServicesTest, TasksInterruptedByARestartAreFailed) {
  TaskService tasks(storage_->tasks(), clock_);
  domain::Task t;
  t.task_type = "plugin-operation";
  t.kind = "plugin-install";
  t.status = domain::TaskStatus::kRunning;
  auto id = tasks.Create(t);
  ASSERT_TRUE(id);
  EXPECT_EQ(*tasks.FailInterrupted(), 1);
  auto got = tasks.Get(*id);
  EXPECT_EQ(got->status, domain::TaskStatus::kFailed);
  EXPECT_NE(got->exception.find("interrupted"), std::string::npos);
  EXPECT_CODE(tasks.Get(999), ErrorCode::kNotFound);
}

TEST_F(ServicesTest, WizardStatusIsValidatedAndPersisted) {
  SystemService system(storage_->settings(), SystemInfo{});
  ASSERT_TRUE(system.Load());
  EXPECT_EQ(system.Info().wizard_status, "none");
  EXPECT_CODE(system.SetWizardStatus("done"), ErrorCode::kInvalidArgument);
  const auto g = system.generation();
  ASSERT_TRUE(system.SetWizardStatus("completed"));
  EXPECT_GT(system.generation(), g);
  SystemService reloaded(storage_->settings(), SystemInfo{});
  ASSERT_TRUE(reloaded.Load());
  EXPECT_EQ(reloaded.Info().wizard_status, "completed");
}

// Another instance on the same database makes the default between this one's look and insert:
// the one it made is used, and the start goes on.
TEST_F(ServicesTest, EnsureDefaultTakesTheDefaultAnotherInstanceMadeMeanwhile) {
  class LateLooker final : public domain::PipelineRepository {
   public:
    explicit LateLooker(domain::PipelineRepository& real) : real_(real) {}
    util::Result<std::vector<domain::Pipeline>> List() override { return real_.List(); }
    util::Result<domain::Pipeline> Get(const util::PipelineId& id) override {
      return real_.Get(id);
    }
    util::Result<domain::Pipeline> GetDefault() override {
      if (first_) {  // the race: not there when looked for, there when inserted
        first_ = false;
        return util::Fail(util::ErrorCode::kNotFound, "no default pipeline");
      }
      return real_.GetDefault();
    }
    util::Result<void> Insert(const domain::Pipeline& p) override { return real_.Insert(p); }
    util::Result<void> Update(const domain::Pipeline& p) override { return real_.Update(p); }
    util::Result<void> Delete(const util::PipelineId& id) override { return real_.Delete(id); }
    util::Result<int> CountBotsUsing(const util::PipelineId& id) override {
      return real_.CountBotsUsing(id);
    }

   private:
    domain::PipelineRepository& real_;
    bool first_ = true;
  };
  const auto made = storage_->pipelines().GetDefault();
  ASSERT_TRUE(made);
  LateLooker late(storage_->pipelines());
  PipelineService second(late, template_, clock_);
  auto id = second.EnsureDefault();
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, made->uuid);
  EXPECT_EQ(pipelines_->List()->size(), 1u);
}

}  // namespace
}  // namespace sb::services
