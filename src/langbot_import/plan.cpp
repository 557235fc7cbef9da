#include "langbot_import/plan.hpp"

#include <fmt/format.h>

#include <set>

#include "services/config_schema.hpp"
#include "services/mcp_service.hpp"
#include "util/crypto.hpp"

namespace sb::langbot_import {
namespace {

using util::ErrorCode;

util::TimePoint Or(const std::optional<util::TimePoint>& t, util::TimePoint now) {
  return t.value_or(now);
}

bool IsNotFound(const util::Error& e) { return e.code == ErrorCode::kNotFound; }

// Builds the plan kind by kind, in writing order, so that a record's references (a model's
// provider, a bot's pipeline) are decided before the record itself.
class Planner {
 public:
  explicit Planner(const PlanInputs& in) : in_(in), snap_(*in.snapshot), st_(*in.storage) {}

  util::Result<Plan> Build() {
    plan_.problems = snap_.problems;
    plan_.refused = !snap_.problems.empty() && !in_.skip_invalid;
    if (auto r = Accounts(); !r) return tl::unexpected(r.error());
    if (auto r = Providers(); !r) return tl::unexpected(r.error());
    if (auto r = Models(); !r) return tl::unexpected(r.error());
    if (auto r = Pipelines(); !r) return tl::unexpected(r.error());
    if (auto r = Bots(); !r) return tl::unexpected(r.error());
    if (auto r = ApiKeys(); !r) return tl::unexpected(r.error());
    if (auto r = McpServers(); !r) return tl::unexpected(r.error());
    if (auto r = Webhooks(); !r) return tl::unexpected(r.error());
    if (auto r = Plugins(); !r) return tl::unexpected(r.error());
    KnowledgeBases();
    ConfigSettings();
    return std::move(plan_);
  }

 private:
  Item& Add(Kind kind, std::string id, std::string name) {
    Item item;
    item.kind = kind;
    item.id = std::move(id);
    item.name = std::move(name);
    plan_.items.push_back(std::move(item));
    return plan_.items.back();
  }

  void Skip(Item& item, std::string reason) {
    item.outcome = Outcome::kSkip;
    item.reason = std::move(reason);
  }

  // Same identity found here: unchanged when `same`, else a conflict or (overwriting) an
  // overwrite that keeps `current` to put back.
  // Plans `wanted` against `current` as our storage read it: created when absent; unchanged, a
  // conflict or an overwrite when present (`same` compares what the import sets).
  template <typename T, typename Same>
  util::Result<void> Decide(Item& item, util::Result<T> current, T wanted, Same same) {
    if (current) {
      const bool unchanged = same(*current);
      Existing(item, unchanged, std::move(wanted), std::move(*current));
    } else if (IsNotFound(current.error())) {
      item.outcome = Outcome::kCreate;
      item.payload = std::move(wanted);
    } else {
      return tl::unexpected(current.error());
    }
    return util::Ok();
  }

  template <typename T>
  void Existing(Item& item, bool same, T wanted, T current) {
    if (same) {
      item.outcome = Outcome::kUnchanged;
      return;
    }
    if (in_.overwrite) {
      item.outcome = Outcome::kOverwrite;
      item.payload = std::move(wanted);
      item.previous = std::move(current);
    } else {
      item.outcome = Outcome::kConflict;
      item.reason = "exists here with other content; kept (--overwrite replaces it)";
    }
  }

  util::Result<void> Accounts() {
    auto count = st_.users().Count();
    if (!count) return tl::unexpected(count.error());
    bool creating = false;
    for (const auto& u : snap_.users) {
      Item& item = Add(Kind::kAccount, u.user, u.user);
      if (u.account_type != "local") {
        Skip(item, fmt::format("a LangBot Space account ({}): it signs in through LangBot Space, "
                               "which this server does not offer",
                               u.account_type));
        continue;
      }
      // argon2-cffi's encoded form, which libsodium verifies as is.
      if (u.password_hash.rfind("$argon2i", 0) != 0 || u.user.empty() || u.user.size() > 255) {
        Skip(item,
             "its password hash is not in argon2's encoded form; create the account with "
             "`switchboard user create`");
        continue;
      }
      auto existing = st_.users().Get(u.user);
      if (existing) {
        if (existing->password_hash == u.password_hash) {
          item.outcome = Outcome::kUnchanged;
        } else {
          item.outcome = Outcome::kConflict;
          item.reason =
              "an account of this name exists here with another password; kept (an "
              "account's password is never overwritten)";
        }
        continue;
      }
      if (!IsNotFound(existing.error())) return tl::unexpected(existing.error());
      if (*count > 0 || creating) {
        Skip(item, "this server has its account already (one account per server, as in LangBot)");
        continue;
      }
      domain::User user;
      user.username = u.user;
      user.password_hash = u.password_hash;
      user.created_at = user.updated_at = in_.clock->Now();
      item.outcome = Outcome::kCreate;
      item.notes.push_back("signs in with its LangBot password");
      item.payload = std::move(user);
      creating = true;
    }
    return util::Ok();
  }

  util::Result<void> Providers() {
    for (const auto& p : snap_.providers) {
      Item& item = Add(Kind::kProvider, p.uuid, p.name);
      auto prepared = in_.providers->Prepare({p.name, p.requester, p.base_url, p.api_keys});
      if (!prepared) {
        Skip(item, prepared.error().message);
        continue;
      }
      domain::Provider wanted = std::move(*prepared);
      wanted.uuid = util::ProviderId::FromTrusted(p.uuid);
      wanted.created_at = Or(p.times.created_at, wanted.created_at);
      wanted.updated_at = Or(p.times.updated_at, wanted.updated_at);
      auto current = st_.providers().Get(wanted.uuid).map([](auto v) { return v.provider; });
      auto decided = Decide(item, std::move(current), wanted, [&](const domain::Provider& c) {
        return c.name == wanted.name && c.requester == wanted.requester &&
               c.base_url == wanted.base_url && c.api_keys == wanted.api_keys;
      });
      if (!decided) return decided;
      providers_.insert(p.uuid);
    }
    return util::Ok();
  }

  util::Result<bool> ProviderAvailable(const std::string& uuid) {
    if (providers_.count(uuid)) return true;
    if (!util::IsUuid(uuid)) return false;
    auto here = st_.providers().Get(util::ProviderId::FromTrusted(uuid));
    if (here) return true;
    if (IsNotFound(here.error())) return false;
    return tl::unexpected(here.error());
  }

  util::Result<void> Models() {
    for (const auto& m : snap_.models) {
      const auto kind = m.embedding ? domain::ModelKind::kEmbedding : domain::ModelKind::kLlm;
      Item& item = Add(m.embedding ? Kind::kEmbeddingModel : Kind::kLlmModel, m.uuid, m.name);
      auto available = ProviderAvailable(m.provider_uuid);
      if (!available) return tl::unexpected(available.error());
      if (!*available) {
        Skip(item, fmt::format("its provider {} is not in the LangBot database or was skipped",
                               m.provider_uuid.substr(0, 64)));
        continue;
      }
      services::ModelDraft draft;
      draft.name = m.name;
      draft.provider_uuid = util::ProviderId::FromTrusted(m.provider_uuid);
      draft.abilities = m.abilities;
      draft.extra_args = m.extra_args;
      draft.prefered_ranking = m.prefered_ranking;
      auto prepared = in_.models->Prepare(kind, draft);
      if (!prepared) {
        Skip(item, prepared.error().message);
        continue;
      }
      domain::Model wanted = std::move(*prepared);
      wanted.uuid = util::ModelId::FromTrusted(m.uuid);
      wanted.created_at = Or(m.times.created_at, wanted.created_at);
      wanted.updated_at = Or(m.times.updated_at, wanted.updated_at);
      auto decided =
          Decide(item, st_.models().Get(kind, wanted.uuid), wanted, [&](const domain::Model& c) {
            return c.name == wanted.name && c.provider_uuid == wanted.provider_uuid &&
                   c.abilities == wanted.abilities && c.extra_args == wanted.extra_args &&
                   c.prefered_ranking == wanted.prefered_ranking &&
                   c.requester_config == wanted.requester_config &&
                   c.description == wanted.description;
          });
      if (!decided) return decided;
    }
    return util::Ok();
  }

  util::Result<void> Pipelines() {
    auto our_default = st_.pipelines().GetDefault();
    if (!our_default && !IsNotFound(our_default.error())) {
      return tl::unexpected(our_default.error());
    }
    for (const auto& p : snap_.pipelines) {
      Item& item = Add(Kind::kPipeline, p.uuid, p.name);
      if (p.name.empty() || p.name.size() > 255) {
        Skip(item, "name must be a non-empty string of at most 255 bytes");
        continue;
      }
      if (p.description.size() > 4096) {
        Skip(item, "description is longer than 4096 bytes");
        continue;
      }
      domain::Pipeline wanted;
      wanted.uuid = util::PipelineId::FromTrusted(p.uuid);
      wanted.name = p.name;
      wanted.description = p.description;
      wanted.emoji = p.emoji;
      wanted.config = p.config;
      wanted.stages = p.stages;
      wanted.for_version = p.for_version;
      wanted.extensions_preferences = p.extensions_preferences;
      wanted.is_default = p.is_default;
      const auto now = in_.clock->Now();
      wanted.created_at = Or(p.times.created_at, now);
      wanted.updated_at = Or(p.times.updated_at, now);
      if (p.is_default) {
        langbot_default_ = p.uuid;
        if (our_default && our_default->uuid != wanted.uuid) {
          // The repository keeps exactly one default and never moves it.
          wanted.is_default = false;
          item.notes.push_back(fmt::format(
              "LangBot's default pipeline; taken as a regular one (this server's default stays "
              "'{}')",
              our_default->name));
        }
      }
      NoteKnowledgeBases(item, wanted.config);
      auto decided =
          Decide(item, st_.pipelines().Get(wanted.uuid), wanted, [&](const domain::Pipeline& c) {
            return c.name == wanted.name && c.description == wanted.description &&
                   c.emoji == wanted.emoji && c.config == wanted.config &&
                   c.stages == wanted.stages && c.for_version == wanted.for_version &&
                   c.extensions_preferences == wanted.extensions_preferences;
          });
      if (!decided) return decided;
      pipelines_.insert(p.uuid);
    }
    if (our_default) our_default_ = our_default->uuid.str();
    return util::Ok();
  }

  // Knowledge bases are not imported (KnowledgeBases below): say which ones a pipeline names.
  void NoteKnowledgeBases(Item& item, const util::JsonObject& config) {
    const auto* ai = config.if_contains("ai");
    const auto* agent =
        ai && ai->is_object() ? ai->as_object().if_contains("local-agent") : nullptr;
    const auto* bases =
        agent && agent->is_object() ? agent->as_object().if_contains("knowledge-bases") : nullptr;
    if (!bases || !bases->is_array()) return;
    for (const auto& b : bases->as_array()) {
      if (!b.is_string()) continue;
      std::string name(b.as_string());
      for (const auto& k : snap_.knowledge_bases) {
        if (k.uuid == name) name = "'" + k.name + "'";
      }
      item.notes.push_back(fmt::format(
          "uses knowledge base {}, which is not imported: create it here and pick it again",
          name.substr(0, 100)));
    }
  }

  util::Result<bool> PipelineAvailable(const std::string& uuid) {
    if (pipelines_.count(uuid)) return true;
    if (!util::IsUuid(uuid)) return false;
    auto here = st_.pipelines().Get(util::PipelineId::FromTrusted(uuid));
    if (here) return true;
    if (IsNotFound(here.error())) return false;
    return tl::unexpected(here.error());
  }

  util::Result<void> Bots() {
    for (const auto& b : snap_.bots) {
      Item& item = Add(Kind::kBot, b.uuid, b.name);
      if (b.name.empty() || b.name.size() > 255) {
        Skip(item, "name must be a non-empty string of at most 255 bytes");
        continue;
      }
      if (b.description.size() > 4096) {
        Skip(item, "description is longer than 4096 bytes");
        continue;
      }
      const domain::CatalogueEntry* adapter = in_.adapters->Find(b.adapter);
      if (!adapter) {
        Skip(item, fmt::format("adapter '{}' is not available here", b.adapter.substr(0, 64)));
        continue;
      }
      auto config = services::ApplyConfigSchema(domain::ConfigItems(adapter->descriptor),
                                                b.adapter_config, "adapter_config");
      if (!config) {
        Skip(item, config.error().message);
        continue;
      }
      std::string pipeline;
      if (b.use_pipeline_uuid) {
        auto available = PipelineAvailable(*b.use_pipeline_uuid);
        if (!available) return tl::unexpected(available.error());
        if (!*available) {
          Skip(item, fmt::format("its pipeline {} is not in the LangBot database or was skipped",
                                 b.use_pipeline_uuid->substr(0, 64)));
          continue;
        }
        pipeline = *b.use_pipeline_uuid;
      } else if (!langbot_default_.empty() && pipelines_.count(langbot_default_)) {
        pipeline = langbot_default_;
        item.notes.push_back("had no pipeline; bound to LangBot's default pipeline");
      } else if (!our_default_.empty()) {
        pipeline = our_default_;
        item.notes.push_back("had no pipeline; bound to this server's default pipeline");
      } else {
        Skip(item, "it has no pipeline and there is no default pipeline");
        continue;
      }
      domain::Bot wanted;
      wanted.uuid = util::BotId::FromTrusted(b.uuid);
      wanted.name = b.name;
      wanted.description = b.description;
      wanted.adapter = b.adapter;
      wanted.adapter_config = std::move(*config);
      wanted.enable = b.enable;
      wanted.use_pipeline_uuid = util::PipelineId::FromTrusted(pipeline);
      const auto now = in_.clock->Now();
      wanted.created_at = Or(b.times.created_at, now);
      wanted.updated_at = Or(b.times.updated_at, now);
      if (b.enable) {
        item.notes.push_back(
            "enabled: it connects at the next `switchboard serve`; stop it in LangBot first (two "
            "servers on one bot account take each other's messages)");
      }
      auto decided = Decide(item, st_.bots().Get(wanted.uuid), wanted, [&](const domain::Bot& c) {
        return c.name == wanted.name && c.description == wanted.description &&
               c.adapter == wanted.adapter && c.adapter_config == wanted.adapter_config &&
               c.enable == wanted.enable && c.use_pipeline_uuid == wanted.use_pipeline_uuid;
      });
      if (!decided) return decided;
    }
    return util::Ok();
  }

  util::Result<void> ApiKeys() {
    for (const auto& k : snap_.api_keys) {
      const bool showable = k.key.size() >= 12;
      Item& item =
          Add(Kind::kApiKey,
              showable ? services::AuthService::MaskApiKey(k.key) : "id " + std::to_string(k.id),
              k.name);
      if (auto ok = services::AuthService::CheckImportedApiKey(k.key, k.name); !ok) {
        Skip(item, ok.error().message);
        continue;
      }
      ApiKeyImport wanted;
      wanted.key = k.key;
      wanted.record.name = k.name;
      wanted.record.description = k.description;
      wanted.record.key_hash = util::Sha256Hex(k.key);
      wanted.record.masked_key = services::AuthService::MaskApiKey(k.key);
      auto existing = st_.api_keys().FindByHash(wanted.record.key_hash);
      if (existing) {
        wanted.record.id = existing->id;
        Existing(item,
                 existing->name == wanted.record.name &&
                     existing->description == wanted.record.description,
                 wanted, ApiKeyImport{k.key, *existing});
      } else if (IsNotFound(existing.error())) {
        item.outcome = Outcome::kCreate;
        item.notes.push_back("the same key works here (stored as its SHA-256 hash)");
        item.payload = std::move(wanted);
      } else {
        return tl::unexpected(existing.error());
      }
    }
    return util::Ok();
  }

  util::Result<void> McpServers() {
    auto ours = st_.mcp_servers().List();
    if (!ours) return tl::unexpected(ours.error());
    for (const auto& m : snap_.mcp_servers) {
      Item& item = Add(Kind::kMcpServer, m.uuid, m.name);
      domain::McpServer wanted;
      wanted.uuid = m.uuid;
      wanted.name = m.name;
      wanted.enable = m.enable;
      wanted.mode = m.mode;
      wanted.extra_args = m.extra_args;
      const auto now = in_.clock->Now();
      wanted.created_at = Or(m.times.created_at, now);
      wanted.updated_at = Or(m.times.updated_at, now);
      if (auto ok = services::CheckMcpServer(wanted); !ok) {
        Skip(item, ok.error().message);
        continue;
      }
      const domain::McpServer* same_uuid = nullptr;
      const domain::McpServer* same_name = nullptr;
      for (const auto& s : *ours) {
        if (s.uuid == m.uuid) same_uuid = &s;
        if (s.name == m.name) same_name = &s;
      }
      // LangBot does not keep MCP server names unique; here the name is the server's address.
      if (!mcp_names_.insert(m.name).second) {
        Skip(item, "another MCP server of the LangBot database has this name");
        continue;
      }
      if (same_uuid) {
        if (same_name && same_name != same_uuid) {
          Skip(item, "another MCP server here has this name");
          continue;
        }
        Existing(item,
                 same_uuid->name == wanted.name && same_uuid->enable == wanted.enable &&
                     same_uuid->mode == wanted.mode && same_uuid->extra_args == wanted.extra_args,
                 wanted, *same_uuid);
      } else if (same_name) {
        Skip(item, "an MCP server of this name exists here with another uuid");
      } else {
        item.outcome = Outcome::kCreate;
        item.payload = std::move(wanted);
      }
    }
    return util::Ok();
  }

  util::Result<void> Webhooks() {
    auto ours = st_.webhooks().List();
    if (!ours) return tl::unexpected(ours.error());
    for (const auto& w : snap_.webhooks) {
      Item& item = Add(Kind::kWebhook, w.url, w.name);
      if (w.name.empty() || !services::IsHttpUrl(w.url)) {
        Skip(item, "a webhook needs a name and an http(s) url");
        continue;
      }
      domain::Webhook wanted;
      wanted.name = w.name;
      wanted.url = w.url;
      wanted.description = w.description;
      wanted.enabled = w.enabled;
      const domain::Webhook* found = nullptr;
      for (const auto& o : *ours) {
        if (o.name == w.name && o.url == w.url) found = &o;
      }
      if (found) {
        wanted.id = found->id;
        wanted.secret = found->secret;
        Existing(item, found->description == w.description && found->enabled == w.enabled, wanted,
                 *found);
      } else {
        item.outcome = Outcome::kCreate;
        item.notes.push_back(
            "pushes are signed here with a new secret (LangBot's were unsigned); see the console");
        item.payload = std::move(wanted);
      }
    }
    return util::Ok();
  }

  util::Result<void> Plugins() {
    for (const auto& p : snap_.plugins) {
      const std::string id = p.author + "/" + p.name;
      Item& item = Add(Kind::kPlugin, id, id);
      auto installed = st_.plugins().Get({p.author, p.name});
      if (!installed) {
        if (!IsNotFound(installed.error())) return tl::unexpected(installed.error());
        Skip(item, fmt::format("plugin packages are not copied: install {} from the marketplace, "
                               "then run the import again to apply its LangBot settings "
                               "(enabled, priority, config)",
                               id));
        continue;
      }
      const auto* schema = installed->manifest.if_contains("config");
      if (schema && schema->is_array()) {
        if (auto ok = services::CheckConfigTypes(schema->as_array(), p.config, "config"); !ok) {
          Skip(item,
               "its LangBot config does not fit the installed version: " + ok.error().message);
          continue;
        }
      }
      domain::InstalledPlugin wanted = *installed;
      wanted.enabled = p.enabled;
      wanted.priority = p.priority;
      wanted.config = p.config;
      wanted.updated_at = in_.clock->Now();
      Existing(item,
               installed->enabled == p.enabled && installed->priority == p.priority &&
                   installed->config == p.config,
               wanted, *installed);
      if (item.outcome == Outcome::kConflict) {
        item.reason =
            "installed here with other settings; kept (--overwrite applies LangBot's "
            "enabled, priority and config)";
      }
    }
    return util::Ok();
  }

  void KnowledgeBases() {
    for (const auto& k : snap_.knowledge_bases) {
      Item& item = Add(Kind::kKnowledgeBase, k.uuid, k.name);
      Skip(item, fmt::format("its documents live in LangBot's knowledge engine plugin ({}) and "
                             "vector database, which this server cannot read: create the base "
                             "here and upload its files again",
                             k.engine.empty() ? "none named" : k.engine.substr(0, 100)));
    }
  }

  void ConfigSettings() {
    if (!in_.config) return;
    for (const auto& s : in_.config->settings) {
      Item& item = Add(Kind::kConfig, s.langbot_key, s.our_key);
      if (s.value == s.current) {
        item.outcome = Outcome::kUnchanged;
      } else if (s.current_is_default || in_.overwrite) {
        item.outcome = s.current_is_default ? Outcome::kCreate : Outcome::kOverwrite;
        item.payload = s;
        plan_.writes_config = true;
      } else {
        item.outcome = Outcome::kConflict;
        item.reason =
            "set to another value in this server's config file; kept (--overwrite "
            "replaces it)";
      }
    }
    for (const auto& s : in_.config->skipped) {
      Item& item = Add(Kind::kConfig, s.langbot_key, "");
      Skip(item, s.reason);
    }
  }

  const PlanInputs& in_;
  const Snapshot& snap_;
  domain::Storage& st_;
  Plan plan_;
  std::set<std::string> providers_;  // LangBot providers that will exist here
  std::set<std::string> pipelines_;  // likewise pipelines
  std::set<std::string> mcp_names_;  // names of the LangBot MCP servers planned so far
  std::string langbot_default_;
  std::string our_default_;
};

}  // namespace

const char* KindTitle(Kind kind) {
  switch (kind) {
    case Kind::kAccount:
      return "accounts";
    case Kind::kProvider:
      return "providers";
    case Kind::kLlmModel:
      return "LLM models";
    case Kind::kEmbeddingModel:
      return "embedding models";
    case Kind::kPipeline:
      return "pipelines";
    case Kind::kBot:
      return "bots";
    case Kind::kApiKey:
      return "API keys";
    case Kind::kMcpServer:
      return "MCP servers";
    case Kind::kWebhook:
      return "webhooks";
    case Kind::kPlugin:
      return "plugin settings";
    case Kind::kKnowledgeBase:
      return "knowledge bases";
    case Kind::kConfig:
      return "config.yaml settings";
  }
  return "?";
}

util::Result<Plan> BuildPlan(const PlanInputs& in) { return Planner(in).Build(); }

}  // namespace sb::langbot_import
