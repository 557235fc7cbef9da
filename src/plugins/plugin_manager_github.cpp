// Installing plugins from GitHub release assets (LangBot's /plugins/github/* and
// /plugins/install/github): the listing goes through the GitHub client, the install is a task
// that downloads the asset and then installs it exactly as an uploaded package.
#include <fmt/format.h>

#include "plugins/plugin_manager.hpp"
#include "plugins/plugin_task_run.hpp"

namespace sb::plugins {
namespace {

using util::ErrorCode;

util::Error NoGithub() {
  return {ErrorCode::kUnavailable, "installing from GitHub is not set up on this server"};
}

// The operation key of a GitHub install until its package names the plugin: one download of the
// same asset at a time.
std::string PendingId(const std::string& asset_url) { return "github:" + asset_url; }

}  // namespace

util::Result<domain::GithubReleaseList> ProcessPluginManager::GithubReleases(
    std::string_view repo_url) {
  if (!deps_.github) return tl::unexpected(NoGithub());
  auto repo = ParseGithubRepoUrl(repo_url);
  if (!repo) return tl::unexpected(repo.error());
  auto releases = deps_.github->Releases(repo->owner, repo->repo);
  if (!releases) return tl::unexpected(releases.error());
  return domain::GithubReleaseList{repo->owner, repo->repo, std::move(*releases)};
}

util::Result<std::vector<domain::GithubAsset>> ProcessPluginManager::GithubReleaseAssets(
    const std::string& owner, const std::string& repo, std::int64_t release_id) {
  if (!deps_.github) return tl::unexpected(NoGithub());
  return deps_.github->ReleaseAssets(owner, repo, release_id);
}

util::Result<std::int64_t> ProcessPluginManager::InstallFromGithub(
    const domain::GithubInstall& install) {
  if (!deps_.github) return tl::unexpected(NoGithub());
  if (install.asset_url.empty() || install.asset_url.size() > 2048) {
    return util::Fail(ErrorCode::kInvalidArgument, "asset_url must be 1-2048 bytes");
  }
  if (auto ok = AllowedDownloadUrl(install.asset_url, deps_.github->api_url()); !ok) {
    return tl::unexpected(ok.error());
  }
  // They only name the task, but a task's label is shown to people: GitHub-shaped or nothing.
  const bool named = ValidGithubOwner(install.owner) && ValidGithubRepo(install.repo);
  std::string label = "Installing plugin from GitHub";
  if (named) {
    label += " " + install.owner + "/" + install.repo;
    if (!install.release_tag.empty() && install.release_tag.size() <= 100 &&
        ValidGithubRepo(install.release_tag)) {
      label += "@" + install.release_tag;
    }
  }
  const std::string pending = PendingId(install.asset_url);
  if (auto ok = Reserve(pending); !ok) {
    return util::Fail(ErrorCode::kConflict, "this asset is being installed already");
  }
  return StartTask("plugin-install", label, pending,
                   {{"source", "github"}, {"asset_url", install.asset_url}},
                   [this, url = install.asset_url](TaskRun& run) { return FromGithub(run, url); });
}

util::Result<void> ProcessPluginManager::ResumeFromGithub(const domain::Task& task,
                                                          const std::string& url) {
  if (!deps_.github) return tl::unexpected(NoGithub());
  if (auto ok = AllowedDownloadUrl(url, deps_.github->api_url()); !ok) {
    return tl::unexpected(ok.error());
  }
  const std::string pending = PendingId(url);
  if (auto ok = Reserve(pending); !ok) {
    return util::Fail(ErrorCode::kConflict, "cannot resume: this asset is being installed already");
  }
  RunTask(task, pending, [this, url](TaskRun& run) {
    run.Action(kResumed);
    return FromGithub(run, url);
  });
  return util::Ok();
}

util::Result<util::Json> ProcessPluginManager::FromGithub(TaskRun& run, const std::string& url) {
  run.Action("downloading the release asset");
  auto zip = deps_.github->Download(
      url, [&run](std::uint64_t bytes) { run.Progress("downloaded_bytes", bytes); });
  if (!zip) return tl::unexpected(zip.error());
  return InstallPackage(run, std::move(*zip), "github");
}

util::Result<util::Json> ProcessPluginManager::InstallPackage(TaskRun& run, std::string package,
                                                              const std::string& source) {
  if (package.size() > options_.package_limits.max_package_bytes) {
    return util::Fail(ErrorCode::kPayloadTooLarge,
                      fmt::format("the package is larger than {} bytes",
                                  options_.package_limits.max_package_bytes));
  }
  run.Action("reading the package's manifest");
  auto manifest = PeekManifest(package);
  if (!manifest) return tl::unexpected(manifest.error());
  const domain::PluginKey key{manifest->author, manifest->name};
  if (auto ok = Reserve(key.id()); !ok) return tl::unexpected(ok.error());
  util::Result<util::Json> result = util::Fail(ErrorCode::kInternal, "not installed");
  if (auto existing = deps_.plugins->Get(key); existing) {
    result = util::Fail(
        ErrorCode::kConflict,
        fmt::format("plugin {} is installed already (version {})", key.id(), existing->version));
  } else {
    result = Install(run, key, manifest->version, std::move(package), source);
  }
  Release(key.id());
  return result;
}

}  // namespace sb::plugins
