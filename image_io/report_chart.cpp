// write_report_chart: per layer, one bar per algorithm for the memory the
// layer touches (activations in + out + workspace) and for its estimated traffic.
// One layout drawn on two canvases: SVG (text as text) and PNG (rasterised here,
// text from stb_easy_font's segment font), so both pictures are the same.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "engine/text_stream.h"
#include "edgegan/image_io.h"
#include "edgegan/io.h"

#include <stb/stb_easy_font.h>


namespace edgegan {
namespace {

struct Color {
  uint8_t r, g, b;
  std::string hex() const {
    char s[8];
    std::snprintf(s, sizeof s, "#%02x%02x%02x", r, g, b);
    return s;
  }
};

const Color kInk{30, 30, 30}, kGrid{215, 215, 215}, kPaper{255, 255, 255};
const Color kAlgoColor[] = {{42, 157, 143}, {231, 111, 81}, {233, 176, 50}};  // split, zero-insert, col2im

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void rect(int x, int y, int w, int h, Color c) = 0;
  // Text with its top-left corner at (x, y); `big` for titles.
  virtual void text(int x, int y, const std::string& s, Color c, bool big = false) = 0;
  static int text_width(const std::string& s, bool big = false) {
    std::string copy = s;
    return stb_easy_font_width(copy.data()) * (big ? 3 : 2);
  }
};

class SvgCanvas final : public Canvas {
 public:
  SvgCanvas(int w, int h) {
    out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
         << "\" font-family=\"monospace\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  }
  void rect(int x, int y, int w, int h, Color c) override {
    out_ << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << std::max(w, 0) << "\" height=\"" << h << "\" fill=\"" << c.hex() << "\"/>\n";
  }
  void text(int x, int y, const std::string& s, Color c, bool big) override {
    std::string escaped;
    for (char ch : s) {
      if (ch == '<') escaped += "&lt;";
      else if (ch == '>') escaped += "&gt;";
      else if (ch == '&') escaped += "&amp;";
      else escaped += ch;
    }
    out_ << "<text x=\"" << x << "\" y=\"" << y + (big ? 17 : 11) << "\" font-size=\"" << (big ? 18 : 12) << "\" fill=\"" << c.hex()
         << "\">" << escaped << "</text>\n";
  }
  std::string finish() { return out_.str() + "</svg>\n"; }

 private:
  std::ostringstream out_ = text_stream();
};

class PngCanvas final : public Canvas {
 public:
  PngCanvas(int w, int h) : w_(w), h_(h), pixels_(static_cast<size_t>(w * h * 3), 255) {}
  void rect(int x, int y, int w, int h, Color c) override {
    for (int yy = std::max(0, y); yy < std::min(h_, y + h); ++yy)
      for (int xx = std::max(0, x); xx < std::min(w_, x + w); ++xx) {
        uint8_t* p = &pixels_[static_cast<size_t>((yy * w_ + xx) * 3)];
        p[0] = c.r;
        p[1] = c.g;
        p[2] = c.b;
      }
  }
  void text(int x, int y, const std::string& s, Color c, bool big) override {
    // stb_easy_font emits axis-aligned quads (4 vertices of 16 bytes) for its segments.
    std::vector<char> quads(s.size() * 64 * 16 + 64);
    std::string copy = s;
    unsigned char color[4] = {c.r, c.g, c.b, 255};
    const int n = stb_easy_font_print(0, 0, copy.data(), color, quads.data(), static_cast<int>(quads.size()));
    const int scale = big ? 3 : 2;
    for (int q = 0; q < n; ++q) {
      const float* v0 = reinterpret_cast<const float*>(quads.data() + q * 64);
      const float* v2 = reinterpret_cast<const float*>(quads.data() + q * 64 + 32);
      rect(x + static_cast<int>(v0[0]) * scale, y + static_cast<int>(v0[1]) * scale, static_cast<int>(v2[0] - v0[0]) * scale,
           static_cast<int>(v2[1] - v0[1]) * scale, c);
    }
  }
  std::vector<uint8_t> finish() const {
    Image image;
    image.width = w_;
    image.height = h_;
    image.channels = 3;
    image.pixels = pixels_;
    return encode_image(image, {});
  }

 private:
  int w_, h_;
  std::vector<uint8_t> pixels_;
};

std::string human(uint64_t bytes) {
  auto os = text_stream();
  os << std::fixed << std::setprecision(bytes < 10 * 1024 * 1024 ? 1 : 0);
  if (bytes < 1024) os << bytes << " B";
  else if (bytes < 1024 * 1024) os << bytes / 1024.0 << " KiB";
  else os << bytes / (1024.0 * 1024.0) << " MiB";
  return os.str();
}

constexpr int kBar = 14, kBarGap = 4, kLayerGap = 16, kLabelWidth = 250, kPanelWidth = 430, kTop = 96;

void draw(Canvas& c, const MemoryReport& r, int width, int height) {
  c.rect(0, 0, width, height, kPaper);
  c.text(16, 12, "edgegan memory report: " + (r.model.empty() ? std::string("model") : r.model), kInk, true);
  c.text(16, 42, "batch " + std::to_string(r.batch) + ", per layer, one bar per algorithm", kInk);
  const char* panel_title[] = {"activations in+out + workspace", "estimated memory traffic per run"};
  // Per panel, the largest value sets the scale.
  uint64_t max_value[2] = {1, 1};
  for (const LayerMemory& l : r.layers)
    for (const auto& a : l.by_algorithm) {
      max_value[0] = std::max(max_value[0], l.input_bytes + l.output_bytes + a.workspace_bytes);
      max_value[1] = std::max(max_value[1], a.traffic_bytes);
    }
  for (int panel = 0; panel < 2; ++panel) {
    const int x0 = kLabelWidth + panel * (kPanelWidth + 40);
    c.text(x0, 70, panel_title[panel], kInk);
    c.rect(x0, kTop - 6, 1, height - kTop - 40, kGrid);
  }
  int y = kTop;
  for (const LayerMemory& l : r.layers) {
    std::string label = "#";
    label += std::to_string(l.index);
    label += ' ';
    label += l.kind;
    std::string dims;
    for (size_t i = 1; i < l.output_shape.size(); ++i) {
      if (i > 1) dims += 'x';
      dims += std::to_string(l.output_shape[i]);
    }
    c.text(16, y + 2, label, kInk);
    c.text(16, y + 20, "-> " + dims, kInk);
    for (size_t a = 0; a < l.by_algorithm.size() && a < 3; ++a) {
      const uint64_t values[2] = {l.input_bytes + l.output_bytes + l.by_algorithm[a].workspace_bytes, l.by_algorithm[a].traffic_bytes};
      for (int panel = 0; panel < 2; ++panel) {
        const int x0 = kLabelWidth + panel * (kPanelWidth + 40);
        const int len = static_cast<int>(static_cast<double>(values[panel]) / static_cast<double>(max_value[panel]) * (kPanelWidth - 90));
        const int by = y + static_cast<int>(a) * (kBar + kBarGap);
        c.rect(x0 + 1, by, std::max(len, 1), kBar, kAlgoColor[a]);
        c.text(x0 + len + 6, by + 1, human(values[panel]), kInk);
      }
    }
    y += 3 * (kBar + kBarGap) + kLayerGap;
  }
  // Legend.
  int lx = 16;
  for (size_t a = 0; a < r.algorithms.size() && a < 3; ++a) {
    c.rect(lx, height - 30, 14, 14, kAlgoColor[a]);
    const std::string name = r.algorithms[a].algorithm + ": arena " + human(r.algorithms[a].arena_bytes);
    c.text(lx + 20, height - 30, name, kInk);
    lx += 40 + Canvas::text_width(name);
  }
}

}  // namespace

void write_report_chart(const MemoryReport& report, const std::string& path) {
  const int width = kLabelWidth + 2 * kPanelWidth + 60;
  const int height = kTop + static_cast<int>(report.layers.size()) * (3 * (kBar + kBarGap) + kLayerGap) + 50;
  auto ends_with = [&](const char* ext) {
    const std::string e(ext);
    return path.size() >= e.size() && std::equal(e.rbegin(), e.rend(), path.rbegin(), [](char a, char b) { return std::tolower(a) == b; });
  };
  if (ends_with(".svg")) {
    SvgCanvas c(width, height);
    draw(c, report, width, height);
    const std::string svg = c.finish();
    write_file_atomically(path, svg.data(), svg.size());
  } else if (ends_with(".png")) {
    PngCanvas c(width, height);
    draw(c, report, width, height);
    const std::vector<uint8_t> png = c.finish();
    write_file_atomically(path, png.data(), png.size());
  } else {
    throw Error("chart: '" + path + "' must end in .svg or .png");
  }
}

}  // namespace edgegan
