// Sample: generate a grid of images from a .egan generator with the C++ API.
//   generate_grid MODEL.egan OUT.png [COUNT] [SEED] [LABEL]
// Copy this file to start your own program; it uses only <edgegan/edgegan.h>, <edgegan/io.h> and
// <edgegan/image_io.h> (link edgegan and edgegan_image).
#include <edgegan/edgegan.h>
#include <edgegan/image_io.h>
#include <edgegan/io.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " MODEL.egan OUT.png [COUNT] [SEED] [LABEL]\n";
    return 2;
  }
  try {
    const int count = argc > 3 ? std::stoi(argv[3]) : 16;
    const uint64_t seed = argc > 4 ? std::stoull(argv[4]) : 0;
    const int label = argc > 5 ? std::stoi(argv[5]) : -1;

    auto model = edgegan::Model::load(argv[1]);      // mmap + verification
    edgegan::Session session(model, {.threads = 0, .batch = count});

    const auto noise = edgegan::normal_noise(static_cast<size_t>(count * model->noise_size()), seed);
    std::vector<int64_t> labels;
    if (model->label_count() > 0)                     // conditional model: one class per image
      for (int i = 0; i < count; ++i) labels.push_back(label >= 0 ? label : i % model->label_count());

    const edgegan::Tensor images = session.generate(noise, labels);  // NHWC floats
    const auto& out = model->outputs().front();
    edgegan::write_png_grid(argv[2], images, /*columns=*/0, /*scale=*/4, out.value_min, out.value_max);
    std::cout << "wrote " << count << " images to " << argv[2] << " (arena " << session.arena_bytes() << " bytes)\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
