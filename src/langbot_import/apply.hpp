// Carries out a plan: writes what it creates or overwrites through the repositories and
// services, and when a write fails, undoes what this run wrote (in reverse: deletes what it
// created, puts back what it overwrote) so the import leaves nothing partial.
//   auto applied = ApplyPlan(plan, writers);
//   if (!applied.ok) report applied.failure and applied.undo_failures
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "domain/storage.hpp"
#include "langbot_import/plan.hpp"
#include "services/auth_service.hpp"
#include "services/webhook_service.hpp"

namespace sb::langbot_import {

struct Writers {
  domain::Storage* storage = nullptr;
  services::AuthService* auth = nullptr;
  services::WebhookService* webhooks = nullptr;
  // This server's config file, rewritten when the plan takes config.yaml settings.
  std::filesystem::path config_file;
  // Writes a whole file atomically (the composition root's private-file writer).
  std::function<util::Result<void>(const std::filesystem::path&, const std::string&)> write_file;
};

struct Applied {
  bool ok = true;
  std::string failure;                     // the write that failed, and why
  std::size_t written = 0;                 // writes that went through (before any undo)
  std::size_t undone = 0;                  // of those, undone after a failure
  std::vector<std::string> undo_failures;  // writes that could not be undone (left in place)
};

// Writes the plan's creates and overwrites: records first (in plan order), then the config
// file, then the account (the one write that cannot be undone, so nothing comes after it).
Applied ApplyPlan(const Plan& plan, const Writers& writers);

}  // namespace sb::langbot_import
