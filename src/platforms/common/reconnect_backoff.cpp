#include "platforms/common/reconnect_backoff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace sb::platforms::common {

double Random01() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

ReconnectBackoff::ReconnectBackoff(ReconnectOptions options, std::function<double()> random01)
    : options_(options), random01_(random01 ? std::move(random01) : Random01) {}

void ReconnectBackoff::Connected(util::TimePoint now) {
  connected_ = true;
  connected_at_ = now;
}

util::Duration ReconnectBackoff::NextDelay(util::TimePoint now) {
  if (connected_ && now - connected_at_ >= options_.stable_after) attempts_ = 0;
  connected_ = false;
  const double base = static_cast<double>(options_.initial.count()) *
                      std::pow(options_.multiplier, std::min(attempts_, 30));
  const double capped = std::min(base, static_cast<double>(options_.max.count()));
  const double factor = 1.0 + options_.jitter * (2.0 * random01_() - 1.0);
  ++attempts_;
  return util::Duration(static_cast<std::int64_t>(std::max(0.0, capped * factor)));
}

std::string ReconnectBackoff::Describe(util::Duration delay) const {
  const auto ms = delay.count();
  const std::string wait = ms < 1'000 ? fmt::format("{} ms", ms)
                                      : fmt::format("{:.1f} s", static_cast<double>(ms) / 1e3);
  return fmt::format("retrying in {} (attempt {})", wait, attempts_);
}

}  // namespace sb::platforms::common
