// A one-line progress display for long CLI jobs (fine-tuning, tiled images): step, bar, the
// caller's figures, steps/s and time left. On a terminal the line is redrawn in
// place (at most 10 times a second); into a file or pipe it prints a plain line
// every `steps / 20` steps, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace edgegan_cli {

class ProgressBar {
 public:
  // `unit` names what is counted ("step", "tile").
  ProgressBar(std::ostream& out, int64_t total_steps, bool interactive, std::string unit = "step");
  // Call after step `done` (1-based) with what to show beside the bar, e.g. "D 1.23  G 0.71".
  void update(int64_t done, const std::string& figures);
  // Ends the line (terminal) so the summary starts on its own.
  void finish();
  double elapsed_seconds() const;

 private:
  std::ostream& out_;
  int64_t total_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
  std::string unit_;
};

// "1:05" / "1:02:09"
std::string format_duration(double seconds);

}  // namespace edgegan_cli
