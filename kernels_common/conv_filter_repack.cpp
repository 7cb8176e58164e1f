#include "kernels_common/conv_filter_repack.h"

#include <stdexcept>

#include "kernels_common/half.h"

namespace edgegan::kernels {

int64_t padded_channel_count(int64_t channels, int64_t multiple) {
  if (multiple < 1 || channels < 0) throw std::invalid_argument("padded_channel_count: channels must be >= 0 and the multiple >= 1");
  return (channels + multiple - 1) / multiple * multiple;
}

namespace {

float source_value(const FilterSource& w, int64_t i) { return w.f32 ? w.f32[i] : half_to_float(w.f16[i]); }
void store(float* out, int64_t i, float v) { out[i] = v; }
void store(uint16_t* out, int64_t i, float v) { out[i] = float_to_half(v); }

template <typename T>
void repack(const FilterSource& w, int64_t cin_padded, int64_t cout_padded, T* out) {
  const int64_t cin = w.layout.rows, cout = w.layout.cols;
  if ((w.f32 == nullptr) == (w.f16 == nullptr)) throw std::invalid_argument("repack_filter_krsc: give exactly one of f32 and f16 weights");
  if (cin_padded < cin || cout_padded < cout) throw std::invalid_argument("repack_filter_krsc: padded channel counts below the filter's");
  const int64_t taps = w.taps_h * w.taps_w, tap_size = cin * cout;
  for (int64_t k = 0; k < cout_padded; ++k)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t c = 0; c < cin_padded; ++c) {
        const int64_t stored = w.flip_taps ? taps - 1 - t : t;  // (r, s) -> (taps_h-1-r, taps_w-1-s) in row-major order
        const float v = k < cout && c < cin ? source_value(w, stored * tap_size + w.layout.index(c, k)) : 0.f;
        store(out, (k * taps + t) * cin_padded + c, v);
      }
}

}  // namespace

void repack_filter_krsc(const FilterSource& w, int64_t cin_padded, int64_t cout_padded, float* out) { repack(w, cin_padded, cout_padded, out); }
void repack_filter_krsc(const FilterSource& w, int64_t cin_padded, int64_t cout_padded, uint16_t* out) {
  repack(w, cin_padded, cout_padded, out);
}

}  // namespace edgegan::kernels
