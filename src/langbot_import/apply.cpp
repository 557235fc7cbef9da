#include "langbot_import/apply.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "config/config.hpp"

namespace sb::langbot_import {
namespace {

using Undo = std::function<util::Result<void>()>;

// One write of a record; on success, how to take it back.
class RecordWriter {
 public:
  explicit RecordWriter(const Writers& w) : w_(w), st_(*w.storage) {}

  util::Result<Undo> Write(const Item& item) {
    const bool create = item.outcome == Outcome::kCreate;
    return std::visit(
        [&](const auto& payload) -> util::Result<Undo> { return Do(payload, item, create); },
        item.payload);
  }

 private:
  static util::Result<Undo> Done(Undo undo) { return undo; }

  util::Result<Undo> Do(const std::monostate&, const Item&, bool) {
    return util::Fail(util::ErrorCode::kInternal, "nothing to write");
  }
  util::Result<Undo> Do(const domain::User&, const Item&, bool) {
    return util::Fail(util::ErrorCode::kInternal, "accounts are written last");
  }
  util::Result<Undo> Do(const ConfigSetting&, const Item&, bool) {
    return util::Fail(util::ErrorCode::kInternal, "config settings are written together");
  }

  util::Result<Undo> Do(const domain::Provider& p, const Item& item, bool create) {
    auto& repo = st_.providers();
    if (create) {
      if (auto r = repo.Insert(p); !r) return tl::unexpected(r.error());
      return Done([&repo, id = p.uuid] { return repo.Delete(id); });
    }
    if (auto r = repo.Update(p); !r) return tl::unexpected(r.error());
    return Done(
        [&repo, prev = std::get<domain::Provider>(item.previous)] { return repo.Update(prev); });
  }

  util::Result<Undo> Do(const domain::Model& m, const Item& item, bool create) {
    auto& repo = st_.models();
    if (create) {
      if (auto r = repo.Insert(m); !r) return tl::unexpected(r.error());
      return Done([&repo, kind = m.kind, id = m.uuid] { return repo.Delete(kind, id); });
    }
    if (auto r = repo.Update(m); !r) return tl::unexpected(r.error());
    return Done(
        [&repo, prev = std::get<domain::Model>(item.previous)] { return repo.Update(prev); });
  }

  util::Result<Undo> Do(const domain::Pipeline& p, const Item& item, bool create) {
    auto& repo = st_.pipelines();
    if (create) {
      if (auto r = repo.Insert(p); !r) return tl::unexpected(r.error());
      return Done([&repo, id = p.uuid] { return repo.Delete(id); });
    }
    if (auto r = repo.Update(p); !r) return tl::unexpected(r.error());
    return Done(
        [&repo, prev = std::get<domain::Pipeline>(item.previous)] { return repo.Update(prev); });
  }

  util::Result<Undo> Do(const domain::Bot& b, const Item& item, bool create) {
    auto& repo = st_.bots();
    if (create) {
      if (auto r = repo.Insert(b); !r) return tl::unexpected(r.error());
      return Done([&repo, id = b.uuid] { return repo.Delete(id); });
    }
    if (auto r = repo.Update(b); !r) return tl::unexpected(r.error());
    return Done([&repo, prev = std::get<domain::Bot>(item.previous)] { return repo.Update(prev); });
  }

  util::Result<Undo> Do(const ApiKeyImport& k, const Item& item, bool create) {
    auto& auth = *w_.auth;
    if (create) {
      auto stored = auth.ImportApiKey(k.key, k.record.name, k.record.description);
      if (!stored) return tl::unexpected(stored.error());
      return Done([&auth, id = stored->id] { return auth.DeleteApiKey(id); });
    }
    if (auto r = auth.UpdateApiKey(k.record.id, k.record.name, k.record.description); !r) {
      return tl::unexpected(r.error());
    }
    return Done([&auth, prev = std::get<ApiKeyImport>(item.previous).record] {
      return auth.UpdateApiKey(prev.id, prev.name, prev.description);
    });
  }

  util::Result<Undo> Do(const domain::McpServer& s, const Item& item, bool create) {
    auto& repo = st_.mcp_servers();
    if (create) {
      if (auto r = repo.Insert(s); !r) return tl::unexpected(r.error());
      return Done([&repo, id = s.uuid] { return repo.Delete(id); });
    }
    if (auto r = repo.Update(s); !r) return tl::unexpected(r.error());
    return Done(
        [&repo, prev = std::get<domain::McpServer>(item.previous)] { return repo.Update(prev); });
  }

  util::Result<Undo> Do(const domain::Webhook& hook, const Item& item, bool create) {
    if (create) {
      auto& service = *w_.webhooks;
      services::WebhookFields fields;
      fields.name = hook.name;
      fields.url = hook.url;
      fields.description = hook.description;
      fields.enabled = hook.enabled;
      auto stored = service.Create(fields);
      if (!stored) return tl::unexpected(stored.error());
      return Done([&service, id = stored->id] { return service.Delete(id); });
    }
    auto& repo = st_.webhooks();
    if (auto r = repo.Update(hook); !r) return tl::unexpected(r.error());
    return Done(
        [&repo, prev = std::get<domain::Webhook>(item.previous)] { return repo.Update(prev); });
  }

  util::Result<Undo> Do(const domain::InstalledPlugin& p, const Item& item, bool) {
    auto& repo = st_.plugins();
    if (auto r = repo.Put(p); !r) return tl::unexpected(r.error());
    return Done([&repo, prev = std::get<domain::InstalledPlugin>(item.previous)] {
      return repo.Put(prev);
    });
  }

  const Writers& w_;
  domain::Storage& st_;
};

util::Result<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return util::Fail(util::ErrorCode::kInternal, fmt::format("cannot read {}", path.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rewrites this server's config file with the settings applied; on success, how to put the old
// text back.
util::Result<Undo> WriteConfig(const Plan& plan, const Writers& w) {
  auto before = ReadFile(w.config_file);
  if (!before) return tl::unexpected(before.error());
  // The file's own values, without environment overrides: those stay in the environment.
  auto cfg = config::LoadConfig(w.config_file.string(), {});
  if (!cfg) return tl::unexpected(cfg.error());
  for (const auto& item : plan.items) {
    if (item.outcome != Outcome::kCreate && item.outcome != Outcome::kOverwrite) continue;
    if (const auto* s = std::get_if<ConfigSetting>(&item.payload)) s->apply(*cfg);
  }
  if (auto r = w.write_file(w.config_file, config::RenderConfig(*cfg)); !r) {
    return tl::unexpected(r.error());
  }
  return Undo([&w, text = std::move(*before)] { return w.write_file(w.config_file, text); });
}

std::string Describe(const Item& item) {
  return fmt::format("{} {} ({})", KindTitle(item.kind), item.id, item.name);
}

}  // namespace

Applied ApplyPlan(const Plan& plan, const Writers& writers) {
  Applied out;
  std::vector<std::pair<std::string, Undo>> undo;
  RecordWriter records(writers);
  const Item* account = nullptr;
  auto fail = [&](std::string what) {
    out.ok = false;
    out.failure = std::move(what);
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (auto r = it->second(); r) {
        ++out.undone;
      } else {
        out.undo_failures.push_back(fmt::format("{}: {}", it->first, r.error().message));
      }
    }
    return out;
  };
  for (const auto& item : plan.items) {
    if (item.outcome != Outcome::kCreate && item.outcome != Outcome::kOverwrite) continue;
    if (item.kind == Kind::kConfig) continue;
    if (item.kind == Kind::kAccount) {
      account = &item;
      continue;
    }
    auto done = records.Write(item);
    if (!done)
      return fail(fmt::format("writing {} failed: {}", Describe(item), done.error().message));
    ++out.written;
    undo.emplace_back(Describe(item), std::move(*done));
  }
  if (plan.writes_config) {
    auto done = WriteConfig(plan, writers);
    if (!done)
      return fail(
          fmt::format("writing {} failed: {}", writers.config_file.string(), done.error().message));
    ++out.written;
    undo.emplace_back(writers.config_file.string(), std::move(*done));
  }
  if (account) {
    const auto& user = std::get<domain::User>(account->payload);
    if (auto r = writers.storage->users().Insert(user, /*only_if_none=*/true); !r) {
      return fail(fmt::format("writing {} failed: {}", Describe(*account), r.error().message));
    }
    ++out.written;
  }
  return out;
}

}  // namespace sb::langbot_import
