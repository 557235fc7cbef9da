#include "langbot_import/report.hpp"

#include <fmt/format.h>

#include <array>
#include <map>

namespace sb::langbot_import {
namespace {

// What happened to an item, worded for how the run ended.
std::string Status(const Item& item, bool wrote, bool undone) {
  switch (item.outcome) {
    case Outcome::kCreate:
      if (undone) return "not created (undone)";
      return wrote ? "created" : "to create";
    case Outcome::kOverwrite:
      if (undone) return "not overwritten (undone)";
      return wrote ? "overwritten" : "to overwrite";
    case Outcome::kUnchanged:
      return "already present, unchanged";
    case Outcome::kConflict:
      return "conflict: " + item.reason;
    case Outcome::kSkip:
      return "skipped: " + item.reason;
  }
  return "?";
}

char Mark(Outcome o) {
  switch (o) {
    case Outcome::kCreate:
      return '+';
    case Outcome::kOverwrite:
      return '~';
    case Outcome::kUnchanged:
      return '=';
    case Outcome::kConflict:
      return '!';
    case Outcome::kSkip:
      return '-';
  }
  return '?';
}

}  // namespace

std::string RenderReport(const ReportHeader& header, const Plan& plan, const Applied* applied) {
  std::string out;
  const bool wrote = applied && applied->ok;
  const bool undone = applied && !applied->ok;
  fmt::format_to(std::back_inserter(out), "Import from LangBot: {} (schema version {})\n",
                 header.source, header.schema_version);
  fmt::format_to(std::back_inserter(out), "LangBot config: {}\n", header.config);
  if (header.dry_run) out += "Dry run: nothing was written.\n";
  if (plan.refused) out += "Refused: some rows cannot be read (below); nothing was written.\n";

  std::map<Kind, std::vector<const Item*>> by_kind;
  for (const auto& item : plan.items) by_kind[item.kind].push_back(&item);
  std::array<int, 5> totals{};
  for (const auto& [kind, items] : by_kind) {
    std::array<int, 5> counts{};
    for (const Item* item : items) ++counts[static_cast<int>(item->outcome)];
    for (int i = 0; i < 5; ++i) totals[i] += counts[i];
    std::string summary;
    auto part = [&](int n, const char* what) {
      if (n == 0) return;
      if (!summary.empty()) summary += ", ";
      summary += fmt::format("{} {}", n, what);
    };
    part(counts[static_cast<int>(Outcome::kCreate)],
         wrote ? "created" : (undone ? "not created (undone)" : "to create"));
    part(counts[static_cast<int>(Outcome::kOverwrite)],
         wrote ? "overwritten" : (undone ? "not overwritten (undone)" : "to overwrite"));
    part(counts[static_cast<int>(Outcome::kUnchanged)], "already present, unchanged");
    part(counts[static_cast<int>(Outcome::kConflict)], "conflicting (kept)");
    part(counts[static_cast<int>(Outcome::kSkip)], "skipped");
    fmt::format_to(std::back_inserter(out), "\n{}: {}\n", KindTitle(kind), summary);
    for (const Item* item : items) {
      std::string label = item->name.empty() ? item->id : item->name;
      if (item->kind == Kind::kConfig && !item->name.empty()) {
        label = item->id + " -> " + item->name;  // LangBot's key -> ours
      } else if (!item->name.empty() && item->id != item->name) {
        label += " [" + item->id + "]";
      }
      fmt::format_to(std::back_inserter(out), "  {} {}: {}\n", Mark(item->outcome), label,
                     Status(*item, wrote, undone));
      if (item->outcome == Outcome::kCreate || item->outcome == Outcome::kOverwrite) {
        for (const auto& note : item->notes) {
          fmt::format_to(std::back_inserter(out), "      note: {}\n", note);
        }
      }
    }
  }
  if (!plan.problems.empty()) {
    fmt::format_to(std::back_inserter(out), "\nrows that cannot be read ({}){}:\n",
                   plan.problems.size(), plan.refused ? "" : ", skipped (--skip-invalid)");
    for (const auto& p : plan.problems) {
      fmt::format_to(std::back_inserter(out), "  - {} {}: {}\n", p.table, p.key, p.message);
    }
  }
  if (applied && !applied->ok) {
    fmt::format_to(std::back_inserter(out), "\nFAILED: {}\nUndone: {} of {} writes of this run.\n",
                   applied->failure, applied->undone, applied->written);
    for (const auto& f : applied->undo_failures) {
      fmt::format_to(std::back_inserter(out), "  could not undo (left in place): {}\n", f);
    }
  }
  fmt::format_to(std::back_inserter(out),
                 "\nSummary: {} {}, {} {}, {} already present, {} conflicting, {} skipped, "
                 "{} unreadable rows\n",
                 totals[static_cast<int>(Outcome::kCreate)],
                 wrote ? "created" : (undone ? "not created" : "to create"),
                 totals[static_cast<int>(Outcome::kOverwrite)],
                 wrote ? "overwritten" : (undone ? "not overwritten" : "to overwrite"),
                 totals[static_cast<int>(Outcome::kUnchanged)],
                 totals[static_cast<int>(Outcome::kConflict)],
                 totals[static_cast<int>(Outcome::kSkip)], plan.problems.size());
  return out;
}

}  // namespace sb::langbot_import
