#include "cli/image_commands.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "cli/image_jobs.h"
#include "cli/model_loading.h"
#include "cli/precision_choice.h"
#include "cli/progress_bar.h"
#include "cli/video/video_path.h"
#include "edgegan/image.h"
#include "edgegan/image_io.h"
#include "edgegan/image_to_image.h"
#include "edgegan/io.h"

namespace edgegan_cli {
namespace {

namespace fs = std::filesystem;

// The process's resident memory now (VmRSS), in bytes; 0 where /proc is not there.
uint64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmRSS:   1234 kB"
  return 0;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

std::string mib(uint64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return s.str();
}

}  // namespace

uint64_t parse_byte_size(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  double factor = 0;
  if (unit.empty() || unit == "B") factor = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") factor = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") factor = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") factor = 1024.0 * 1024 * 1024;
  if (used == 0 || factor == 0 || !(value > 0) || value * factor > 1e15)
    throw edgegan::Error("memory size '" + text + "' is not a size like 256M, 1.5G or 1000000");
  return static_cast<uint64_t>(value * factor);
}

void check_model_fits_command(const edgegan::ImageToImage& runner, const ImageCommandArgs& a) {
  if (a.upscale && runner.scale() == 1) throw edgegan::Error("'" + a.model + "' keeps the image's size; use 'edgegan translate'");
  if (!a.upscale && runner.scale() > 1)
    throw edgegan::Error("'" + a.model + "' enlarges images " + std::to_string(runner.scale()) + "x; use 'edgegan upscale'");
}

namespace {

// The model's options from the command line (pictures and videos alike).
edgegan::ImageToImageOptions model_options(const ImageCommandArgs& a) {
  edgegan::ImageToImageOptions options;
  options.threads = a.threads;
  options.backend = edgegan::backend_from_string(a.backend);
  options.device = a.device;
  options.precision = edgegan_cli::choose_precision(a.precision, options.backend, a.device).precision;
  options.tile = a.tile;
  options.overlap = a.overlap;
  options.batch = a.batch;
  options.outscale = a.outscale;
  options.alpha = a.alpha == "model" ? edgegan::AlphaMode::kModel : edgegan::AlphaMode::kLanczos;
  if (a.tile_stats == "exact" && options.backend != edgegan::Backend::kCpu)
    throw edgegan::Error("--tile-stats exact runs on the cpu backend only; use --tile-stats approx or --backend cpu");
  options.tile_statistics = a.tile_stats == "approx" ? edgegan::TileStatistics::kPerTile : edgegan::TileStatistics::kWholePicture;
  if (!a.memory_limit.empty()) options.memory_limit_bytes = parse_byte_size(a.memory_limit);
  if (!a.input_range.empty()) options.input = edgegan::PixelNormalisation::parse_range(a.input_range);
  if (!a.mean.empty() || !a.std.empty()) {
    if (a.mean.empty() || a.std.empty()) throw edgegan::Error("--mean and --std go together");
    options.input = edgegan::PixelNormalisation::mean_std(a.mean, a.std);
  }
  if (!a.output_range.empty()) options.output = edgegan::PixelNormalisation::parse_range(a.output_range);
  return options;
}

// What a picture run will do, worked out (and every argument checked) before a model is loaded.
struct ImageRun {
  edgegan::ImageToImageOptions options;
  edgegan::EncodeOptions encode;
  std::vector<ImageJob> all_jobs, jobs;  // jobs: this shard's
};

ImageRun plan_run(const ImageCommandArgs& a, const edgegan::ImageToImageOptions& options) {
  ImageRun run;
  run.options = options;
  if (!a.codec.empty() || a.crf >= 0) throw edgegan::Error("--codec and --crf are for a video output");
  std::vector<std::string> inputs = a.inputs;
  if (!a.list.empty()) {
    const std::vector<std::string> listed = read_list_file(a.list);
    inputs.insert(inputs.end(), listed.begin(), listed.end());
  }
  if (inputs.empty()) throw edgegan::Error("no pictures: name files or folders, or give --list FILE");
  std::error_code ec;
  bool any_folder = false;
  for (const std::string& in : inputs) any_folder = any_folder || fs::is_directory(in, ec);
  // One picture may go to a named file; several, a folder or a list go into a folder.
  const bool to_folder = inputs.size() > 1 || any_folder || !a.list.empty() || fs::is_directory(a.output, ec);
  edgegan::ImageFormat named = edgegan::ImageFormat::kPng;
  const bool has_named = !to_folder && edgegan::image_format_of_path(a.output, &named);
  if (!to_folder && !has_named) throw edgegan::Error("-o must name a .png, .jpg, .jpeg or .webp file (or a folder for several pictures)");
  run.encode.format = a.format.empty() ? named : edgegan::parse_image_format(a.format);
  if (has_named && run.encode.format != named)
    throw edgegan::Error("-f " + a.format + " and -o " + a.output + " disagree: name the file ." + edgegan::image_format_extension(run.encode.format));
  if (a.quality >= 0) {
    if (run.encode.format == edgegan::ImageFormat::kPng) throw edgegan::Error("--quality applies to jpg and webp; png is always lossless");
    run.encode.quality = a.quality;
  }
  run.all_jobs = list_jobs(inputs, a.output, to_folder, edgegan::image_format_extension(run.encode.format));
  run.jobs = a.shard.empty() ? run.all_jobs : shard_jobs(run.all_jobs, parse_shard(a.shard));
  std::vector<std::string> input_names = {a.model};
  for (const ImageJob& job : run.all_jobs) input_names.push_back(job.input.string());
  for (const ImageJob& job : run.jobs) edgegan::ensure_not_an_input(job.output.string(), input_names);
  return run;
}

}  // namespace

int run_image_command(const ImageCommandArgs& a) {
  const char* command = a.upscale ? "upscale" : "translate";
  ImageRun setup;
  std::shared_ptr<const edgegan::Model> model;
  std::unique_ptr<edgegan::ImageToImage> runner_holder;
  // A video goes its own way (cli/video/); its failures reach main as before.
  if (a.inputs.size() == 1 && a.list.empty() && a.shard.empty() && video::is_video_path(a.inputs[0])) {
    if (!a.format.empty() || a.quality >= 0) throw edgegan::Error("-f and --quality are for pictures; a video's container is -o's extension (--codec, --crf)");
    return run_video_command(a, model_options(a));
  }
  // Anything wrong before the first picture (arguments, list, model) exits 2 with nothing written.
  try {
    setup = plan_run(a, model_options(a));
    model = load_model(a.model);
    runner_holder = std::make_unique<edgegan::ImageToImage>(model, setup.options);
    check_model_fits_command(*runner_holder, a);
  } catch (const std::exception& e) {
    std::cerr << "edgegan: error: " << e.what() << "\n";
    return kExitNothingRun;
  }
  const edgegan::ImageToImage& runner = *runner_holder;
  const edgegan::ImageToImageOptions& options = setup.options;
  const std::vector<ImageJob>& jobs = setup.jobs;
  if (!a.quiet) {
    std::cout << a.model << ": " << (runner.input_channels() == 1 ? "grey" : "RGB") << " in, " << (runner.output_channels() == 1 ? "grey" : "RGB")
              << " out, x" << runner.scale() << ", sizes in multiples of " << runner.alignment() << "; pixels in: "
              << runner.input_normalisation().to_string() << ", out: " << runner.output_normalisation().to_string() << " ("
              << runner.normalisation_source() << ")\n";
    if (!a.shard.empty()) std::cout << "shard " << a.shard << ": " << jobs.size() << " of " << setup.all_jobs.size() << " pictures\n";
  }

  bool warned = false;
  int failed = 0;
  const bool interactive = isatty(STDERR_FILENO) != 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const fs::path& input = jobs[i].input;
    const fs::path& output = jobs[i].output;
    try {
      const auto start = std::chrono::steady_clock::now();
      const edgegan::Image image = edgegan::read_image(input.string());
      // Refused before the model runs: JPEG would have to drop this picture's alpha.
      if (setup.encode.format == edgegan::ImageFormat::kJpeg && edgegan::has_transparency(image))
        throw edgegan::Error("'" + input.string() + "' has transparent pixels and JPEG has no alpha; write png or webp (-f)");
      // --memory-limit bounds the process's peak RSS: what it holds already (code, libraries,
      // the decoded image; not the mapped model, which the plan counts) comes off the budget,
      // and so does a margin for what no plan sees (code pages the kernels touch, the
      // allocator's slack): measured, a plan of 248 MiB peaked at 259 MiB with 7 MiB held.
      uint64_t budget = 0;
      if (options.memory_limit_bytes > 0) {
        runner.release_session();  // the last picture's Session is not this one's to count
        const uint64_t resident = resident_bytes(), mapped = model->file_bytes();
        const uint64_t margin = (uint64_t{16} << 20) + options.memory_limit_bytes / 32;
        const uint64_t held = (resident > mapped ? resident - mapped : 0) + margin;
        if (held >= options.memory_limit_bytes)
          throw edgegan::Error("--memory-limit " + a.memory_limit + " is below what the process already holds (" + std::to_string(held >> 20) +
                               " MiB with the margin for code and allocator slack)");
        budget = options.memory_limit_bytes - held;
      }
      const edgegan::TilePlan plan = runner.plan(image.width, image.height, budget);
      if (plan.tiles() > 1 && !runner.whole_image_op().empty() && !warned) {
        const bool attention = runner.whole_image_op().rfind("MatMul", 0) == 0;
        std::cerr << "edgegan: warning: " << runner.whole_image_op()
                  << (attention ? " mixes every position of the image (attention); each tile sees only its own"
                                : " takes statistics of the whole image; each tile takes its own")
                  << ", so the tiled result differs from an untiled run everywhere, not only at the seams (use larger tiles or none"
                  << (attention ? "" : a.backend == "cpu" ? "; --tile-stats exact gathers them over the whole image" : "; on --backend cpu, whole-image statistics are gathered")
                  << ")\n";
        warned = true;
      }
      ProgressBar bar(std::cerr, plan.tiles() * (1 + plan.statistics_passes), interactive, "tile");
      const std::string label = "image " + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + " " + input.filename().string();
      edgegan::Image result;
      try {
        result = runner.run(image, plan, [&](int64_t done, int64_t) {
          if (!a.quiet && plan.tiles() > 1) bar.update(done, label);
        });
      } catch (const edgegan::Error& e) {
        throw edgegan::Error("'" + input.string() + "': " + e.what());
      }
      if (!a.quiet && plan.tiles() > 1) bar.finish();
      if (output.has_parent_path()) {
        std::error_code ec;
        fs::create_directories(output.parent_path(), ec);
        if (ec) throw edgegan::Error("cannot create the folder '" + output.parent_path().string() + "': " + ec.message());
      }
      edgegan::write_image(output.string(), result, setup.encode);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!a.quiet)
        std::cout << "wrote " << output.string() << " (" << result.width << "x" << result.height << ") from " << input.string() << " ("
                  << image.width << "x" << image.height << "): " << plan.tiles() << (plan.tiles() == 1 ? " tile" : " tiles") << " of "
                  << plan.tile_width << "x" << plan.tile_height
                  << (plan.statistics_passes > 0 ? " (+" + std::to_string(plan.statistics_passes) + " passes for whole-image statistics)" : std::string())
                  << ", arena " << mib(plan.arena_bytes) << ", planned " << mib(plan.total_bytes())
                  << ", " << std::fixed << std::setprecision(2) << seconds << " s\n";
    } catch (const std::exception& e) {
      std::cerr << "edgegan: error: " << e.what() << "\n";
      ++failed;
    }
  }
  if (!a.quiet) std::cout << "peak memory (RSS) " << std::fixed << std::setprecision(1) << peak_rss_mib() << " MiB\n";
  if (failed > 0 && jobs.size() > 1) {
    std::cerr << "edgegan " << command << ": " << failed << " of " << jobs.size() << " images failed; nothing was written for them\n";
  }
  return failed > 0 ? kExitSomeFailed : 0;
}

}  // namespace edgegan_cli
