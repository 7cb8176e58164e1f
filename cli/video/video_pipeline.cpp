#include "cli/video/video_pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <exception>
#include <iomanip>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>
#include <variant>
#include <vector>

#include "cli/progress_bar.h"
#include "cli/video/video_reader.h"

namespace edgegan_cli::video {
namespace {

// A bounded queue between two pipeline stages. close(): no more items (pop drains the
// rest, then returns false); abort(): stop now, both sides return false.
template <class T>
class StageQueue {
 public:
  explicit StageQueue(size_t capacity) : capacity_(capacity) {}
  bool push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return aborted_ || items_.size() < capacity_; });
    if (aborted_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }
  bool pop(T& item) {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return aborted_ || closed_ || !items_.empty(); });
    if (aborted_ || items_.empty()) return false;
    item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }
  void abort() {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  size_t capacity_;
  bool closed_ = false, aborted_ = false;
};

// The first failure of any stage; the others stop when one fails.
class Failure {
 public:
  void set(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = e;
  }
  void rethrow() {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

// SIGINT / SIGTERM while a video is written: the pipeline stops at the next frame and
// the temporary file is removed (the writer's destructor) before the process exits.
std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  static void check() {
    if (g_interrupted.load()) throw edgegan::Error("interrupted; nothing was written");
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

using Item = VideoReader::Item;

bool copied_by(const AVStream* s, void* writer) { return static_cast<const VideoWriter*>(writer)->copies_stream(s->index); }

std::string fps_text(double fps) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(fps < 10 ? 2 : 1) << fps;
  return out.str();
}

}  // namespace

VideoResult run_video(const edgegan::ImageToImage& runner, const VideoJob& job, std::ostream& log, std::ostream& progress_out) {
  const auto start = std::chrono::steady_clock::now();
  InterruptGuard interrupts;
  // FFmpeg's own log lines would break the one-line errors; every failure it reports
  // reaches the user through the error codes instead.
  av_log_set_level(AV_LOG_QUIET);
  VideoReader reader(job.input, runner.input_channels(), edgegan::ImageLimits{});
  // The model's scale, or -s/--outscale's size (run() resizes every frame to it).
  const auto [out_width, out_height] = runner.output_size(reader.width(), reader.height());
  const edgegan::TilePlan plan = runner.plan(reader.width(), reader.height());
  VideoWriter writer(job.output, reader, static_cast<int>(out_width), static_cast<int>(out_height), runner.output_channels(), job.encoder);
  const AVRational rate = reader.frame_rate();
  int64_t expected = reader.announced_frames();
  if (expected <= 0 && reader.duration_seconds() > 0) expected = std::llround(reader.duration_seconds() * av_q2d(rate));
  if (!job.quiet) {
    log << job.input << ": " << reader.width() << "x" << reader.height() << " " << avcodec_get_name(reader.decoder()->codec_id) << " at "
        << fps_text(av_q2d(rate)) << " fps" << (expected > 0 ? ", " + std::to_string(expected) + " frames" : "") << " -> " << job.output << ": "
        << out_width << "x" << out_height << " " << writer.encoder_name() << " (" << writer.pixel_format() << "), "
        << plan.tiles() << (plan.tiles() == 1 ? " tile" : " tiles") << " per frame"
        << (plan.batch > 1 ? ", " + std::to_string(plan.batch) + " frames per model run" : "") << "\n";
    for (const std::string& s : writer.skipped()) log << "edgegan: warning: " << s << " cannot go into " << job.output << "; left out\n";
  }

  // decode -> model -> encode; a few frames in flight per queue bound the memory.
  const size_t in_flight = static_cast<size_t>(std::max(4, plan.batch));
  StageQueue<Item> decoded(in_flight), translated(in_flight);
  Failure failure;
  auto stop_all = [&] {
    decoded.abort();
    translated.abort();
  };
  std::thread decode_thread([&] {
    try {
      while (auto item = reader.next(copied_by, &writer))
        if (!decoded.push(std::move(*item))) return;
      decoded.close();
    } catch (...) {
      failure.set(std::current_exception());
      stop_all();
    }
  });
  std::thread encode_thread([&] {
    try {
      Item item;
      while (translated.pop(item)) {
        if (auto* f = std::get_if<DecodedFrame>(&item)) writer.write_frame(f->image, f->pts);
        else writer.write_copied(std::get<CopiedPacket>(item).packet.get());
      }
    } catch (...) {
      failure.set(std::current_exception());
      stop_all();
    }
  });

  int64_t frames = 0;
  const bool interactive = isatty(STDERR_FILENO) != 0;
  // On a terminal the bar is redrawn on `progress`; otherwise its lines go to `log`,
  // so a failed run's stderr is its one error line.
  ProgressBar bar(interactive ? progress_out : log, std::max<int64_t>(expected, 1), interactive, "frame");
  // Frames go through the model `plan.batch` at a time. A copied packet (audio) that
  // arrives while a batch fills waits for the batch's frames; the muxer interleaves by
  // timestamp, so the file is the same.
  std::vector<edgegan::Image> batch_images;
  std::vector<int64_t> batch_pts;
  std::vector<Item> held;
  auto run_batch = [&]() -> bool {
    if (!batch_images.empty()) {
      std::vector<edgegan::Image> outs = runner.run_batch(batch_images, plan);
      for (size_t n = 0; n < outs.size(); ++n) {
        ++frames;
        if (!job.quiet && expected > 0) bar.update(std::min(frames, expected), "");
        if (!translated.push(Item(DecodedFrame{std::move(outs[n]), batch_pts[n]}))) return false;
      }
    }
    for (Item& h : held)
      if (!translated.push(std::move(h))) return false;
    batch_images.clear();
    batch_pts.clear();
    held.clear();
    return true;
  };
  try {
    Item item;
    bool open = true;
    while (open && decoded.pop(item)) {
      InterruptGuard::check();
      if (auto* f = std::get_if<DecodedFrame>(&item)) {
        batch_images.push_back(std::move(f->image));
        batch_pts.push_back(f->pts);
        if (static_cast<int>(batch_images.size()) >= plan.batch) open = run_batch();
      } else if (batch_images.empty()) {
        open = translated.push(std::move(item));
      } else {
        held.push_back(std::move(item));
      }
    }
    InterruptGuard::check();
    if (open && run_batch()) translated.close();
  } catch (...) {
    failure.set(std::current_exception());
    stop_all();
  }
  decode_thread.join();
  encode_thread.join();
  if (!job.quiet && expected > 0) bar.finish();
  failure.rethrow();
  InterruptGuard::check();
  writer.finish();

  VideoResult r;
  r.frames = frames;
  r.width = static_cast<int>(out_width);
  r.height = static_cast<int>(out_height);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!job.quiet)
    log << "wrote " << job.output << ": " << frames << " frames of " << r.width << "x" << r.height << " in " << std::fixed << std::setprecision(2)
        << r.seconds << " s (" << fps_text(static_cast<double>(frames) / r.seconds) << " frames/s)\n";
  return r;
}

}  // namespace edgegan_cli::video
