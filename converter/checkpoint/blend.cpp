#include "converter/checkpoint/blend.h"

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

}  // namespace

void blend_into(StateDict& a, const StateDict& b, float t, const std::string& a_name, const std::string& b_name) {
  if (!(t >= 0.f && t <= 1.f)) throw ConvertError("blend weight " + std::to_string(t) + " is not in [0, 1]");
  const std::string pair = "cannot blend '" + a_name + "' with '" + b_name + "': ";
  for (const std::string& k : a.order) {
    const TensorData* other = b.find(k);
    if (!other) throw ConvertError(pair + "tensor '" + k + "' is only in the first (different architectures)");
    TensorData& mine = a.tensors.at(k);
    if (other->shape != mine.shape)
      throw ConvertError(pair + "tensor '" + k + "' is " + shape_text(mine.shape) + " in one and " + shape_text(other->shape) + " in the other (different architectures)");
  }
  for (const std::string& k : b.order)
    if (!a.has(k)) throw ConvertError(pair + "tensor '" + k + "' is only in the second (different architectures)");
  // In double, so t = 0 and t = 1 reproduce a and b bit for bit.
  const double ta = 1.0 - static_cast<double>(t), tb = t;
  for (const std::string& k : a.order) {
    std::vector<float>& v = a.tensors.at(k).values;
    const std::vector<float>& w = b.tensors.at(k).values;
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(ta * v[i] + tb * w[i]);
  }
}

}  // namespace edgegan::converter::checkpoint
