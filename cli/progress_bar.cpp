#include "cli/progress_bar.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <utility>

namespace edgegan_cli {

std::string format_duration(double seconds) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(std::llround(seconds)));
  char text[32];
  if (s >= 3600) std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  else std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return text;
}

ProgressBar::ProgressBar(std::ostream& out, int64_t total_steps, bool interactive, std::string unit)
    : out_(out), total_(std::max<int64_t>(1, total_steps)), interactive_(interactive), start_(std::chrono::steady_clock::now()), last_draw_(start_),
      unit_(std::move(unit)) {}

double ProgressBar::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressBar::update(int64_t done, const std::string& figures) {
  const auto now = std::chrono::steady_clock::now();
  const bool last = done >= total_;
  if (interactive_) {
    if (!last && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  } else if (!last && done % std::max<int64_t>(1, total_ / 20) != 0) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  const double elapsed = elapsed_seconds();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double left = rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0;
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(kWidth * done / total_);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
  char rate_text[64];
  std::snprintf(rate_text, sizeof rate_text, "%.1f %ss/s", rate, unit_.c_str());
  const std::string width = std::to_string(total_);
  std::string step = std::to_string(done);
  step = std::string(width.size() - std::min(width.size(), step.size()), ' ') + step;
  out_ << (interactive_ ? "\r" : "") << unit_ << " " << step << "/" << total_ << " [" << bar << "] " << figures << "  " << rate_text
       << "  " << (last ? "took " + format_duration(elapsed) : "left " + format_duration(left)) << (interactive_ ? "\033[K" : "\n")
       << std::flush;
}

void ProgressBar::finish() {
  if (interactive_ && drawn_) out_ << "\n" << std::flush;
}

}  // namespace edgegan_cli
