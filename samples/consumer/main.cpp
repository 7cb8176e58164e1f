// A small generator program built against an installed edgegan (CMakeLists.txt here
// finds it with find_package; it also builds with pkg-config:
//   g++ -std=c++20 main.cpp $(pkg-config --cflags --libs edgegan edgegan-image) -o edgegan_consumer
//
//   edgegan_consumer MODEL.egan [OUT.png]
// Generates 16 images (seed 1; class = index mod classes for a conditional model),
// prints the library version and statistics of the images, and writes a PNG grid
// when OUT.png is given.
#include <edgegan/edgegan.h>
#include <edgegan/image_io.h>
#include <edgegan/io.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.egan [OUT.png]\n";
    return 2;
  }
  try {
    std::cout << "edgegan " << edgegan::version() << " (headers " << EDGEGAN_VERSION_STRING << ")\n";
    const int count = 16;
    auto model = edgegan::Model::load(argv[1]);
    edgegan::Session session(model, {.batch = count});
    const auto noise = edgegan::normal_noise(static_cast<size_t>(count * model->noise_size()), /*seed=*/1);
    std::vector<int64_t> labels;
    for (int i = 0; i < count && model->label_count() > 0; ++i) labels.push_back(i % model->label_count());
    const edgegan::Tensor images = session.generate(noise, labels);

    const auto [lo, hi] = std::minmax_element(images.f32.begin(), images.f32.end());
    const double mean = std::accumulate(images.f32.begin(), images.f32.end(), 0.0) / static_cast<double>(images.f32.size());
    std::cout << "generated " << images.shape[0] << " images of " << images.shape[1] << "x" << images.shape[2] << "x" << images.shape[3]
              << " (NHWC): min " << *lo << ", max " << *hi << ", mean " << mean << "\n";
    if (argc > 2) {
      const auto& out = model->outputs().front();
      edgegan::write_png_grid(argv[2], images, /*columns=*/0, /*scale=*/2, out.value_min, out.value_max);
      std::cout << "wrote " << argv[2] << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
