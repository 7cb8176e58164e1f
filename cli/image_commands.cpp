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

#include "cli/model_loading.h"
#include "cli/progress_bar.h"
#include "cli/video/video_path.h"
#include "edgegan/image.h"
#include "edgegan/image_to_image.h"
#include "edgegan/io.h"

namespace edgegan_cli {
namespace {

namespace fs = std::filesystem;

bool is_image_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// Files as given; a folder's PNG and JPEG files, sorted (not recursive).
std::vector<fs::path> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(in, ec))
        if (e.is_regular_file() && is_image_file(e.path())) found.push_back(e.path());
      if (ec) throw edgegan::Error("cannot list '" + in + "': " + ec.message());
      if (found.empty()) throw edgegan::Error("'" + in + "' holds no .png, .jpg or .jpeg files");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(in, ec)) {
      files.emplace_back(in);
    } else {
      throw edgegan::Error("'" + in + "' does not exist");
    }
  }
  return files;
}

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

int run_image_command(const ImageCommandArgs& a) {
  const char* command = a.upscale ? "upscale" : "translate";
  edgegan::ImageToImageOptions options;
  options.threads = a.threads;
  options.tile = a.tile;
  options.overlap = a.overlap;
  if (!a.memory_limit.empty()) options.memory_limit_bytes = parse_byte_size(a.memory_limit);
  if (!a.input_range.empty()) options.input = edgegan::PixelNormalisation::parse_range(a.input_range);
  if (!a.mean.empty() || !a.std.empty()) {
    if (a.mean.empty() || a.std.empty()) throw edgegan::Error("--mean and --std go together");
    options.input = edgegan::PixelNormalisation::mean_std(a.mean, a.std);
  }
  if (!a.output_range.empty()) options.output = edgegan::PixelNormalisation::parse_range(a.output_range);

  if (a.inputs.size() == 1 && video::is_video_path(a.inputs[0])) return run_video_command(a, options);
  if (!a.codec.empty() || a.crf >= 0) throw edgegan::Error("--codec and --crf are for a video output");
  const std::vector<fs::path> files = expand_inputs(a.inputs);
  // One input may go to a named .png; several go into a folder, one <name>.png each.
  std::error_code ec;
  const bool to_folder = files.size() > 1 || fs::is_directory(a.output, ec) || a.inputs.size() > 1 || fs::is_directory(a.inputs[0], ec);
  if (!to_folder && fs::path(a.output).extension() != ".png") throw edgegan::Error("-o must name a .png file (or a folder for several images)");
  std::vector<fs::path> outputs;
  for (const fs::path& f : files) outputs.push_back(to_folder ? fs::path(a.output) / (f.stem().string() + ".png") : fs::path(a.output));
  std::vector<std::string> input_names = {a.model};
  for (const fs::path& f : files) input_names.push_back(f.string());
  for (size_t i = 0; i < outputs.size(); ++i) {
    edgegan::ensure_not_an_input(outputs[i].string(), input_names);
    for (size_t j = 0; j < i; ++j)
      if (outputs[j] == outputs[i]) throw edgegan::Error("'" + files[j].string() + "' and '" + files[i].string() + "' would both be written to " + outputs[i].string());
  }

  auto model = load_model(a.model);
  const edgegan::ImageToImage runner(model, options);
  check_model_fits_command(runner, a);
  if (to_folder) {
    fs::create_directories(a.output, ec);
    if (ec) throw edgegan::Error("cannot create the folder '" + a.output + "': " + ec.message());
  }
  if (!a.quiet)
    std::cout << a.model << ": " << (runner.input_channels() == 1 ? "grey" : "RGB") << " in, " << (runner.output_channels() == 1 ? "grey" : "RGB")
              << " out, x" << runner.scale() << ", sizes in multiples of " << runner.alignment() << "; pixels in: "
              << runner.input_normalisation().to_string() << ", out: " << runner.output_normalisation().to_string() << " ("
              << runner.normalisation_source() << ")\n";

  bool warned = false;
  int failed = 0;
  const bool interactive = isatty(STDERR_FILENO) != 0;
  for (size_t i = 0; i < files.size(); ++i) {
    try {
      const auto start = std::chrono::steady_clock::now();
      const edgegan::Image image = edgegan::read_image(files[i].string(), runner.input_channels());
      // --memory-limit bounds the process's peak RSS: what it holds already (code, libraries,
      // the decoded image; not the mapped model, which the plan counts) comes off the budget,
      // and so does a margin for what no plan sees (code pages the kernels touch, the
      // allocator's slack): measured, a plan of 248 MiB peaked at 259 MiB with 7 MiB held.
      uint64_t budget = 0;
      if (options.memory_limit_bytes > 0) {
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
        std::cerr << "edgegan: warning: " << runner.whole_image_op()
                  << " normalises over the whole image; each tile is normalised on its own, so the tiled result differs from an untiled run"
                     " everywhere, not only at the seams (use larger tiles or none)\n";
        warned = true;
      }
      ProgressBar bar(std::cerr, plan.tiles(), interactive, "tile");
      const std::string label = "image " + std::to_string(i + 1) + "/" + std::to_string(files.size()) + " " + files[i].filename().string();
      const edgegan::Image result = runner.run(image, plan, [&](int64_t done, int64_t) {
        if (!a.quiet && plan.tiles() > 1) bar.update(done, label);
      });
      if (!a.quiet && plan.tiles() > 1) bar.finish();
      edgegan::write_png(outputs[i].string(), result);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!a.quiet)
        std::cout << "wrote " << outputs[i].string() << " (" << result.width << "x" << result.height << ") from " << files[i].string() << " ("
                  << image.width << "x" << image.height << "): " << plan.tiles() << (plan.tiles() == 1 ? " tile" : " tiles") << " of "
                  << plan.tile_width << "x" << plan.tile_height << ", arena " << mib(plan.arena_bytes) << ", planned " << mib(plan.total_bytes())
                  << ", " << std::fixed << std::setprecision(2) << seconds << " s\n";
    } catch (const std::exception& e) {
      std::cerr << "edgegan: error: " << e.what() << "\n";
      ++failed;
    }
  }
  if (!a.quiet) std::cout << "peak memory (RSS) " << std::fixed << std::setprecision(1) << peak_rss_mib() << " MiB\n";
  if (failed > 0 && files.size() > 1) {
    std::cerr << "edgegan " << command << ": " << failed << " of " << files.size() << " images failed; nothing was written for them\n";
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace edgegan_cli
