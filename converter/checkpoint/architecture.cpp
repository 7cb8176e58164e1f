#include "converter/checkpoint/architecture.h"

#include <algorithm>

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

}  // namespace

std::string Architecture::line() const {
  std::string s = name + ":";
  for (size_t k = 0; k < parameters.size(); ++k) s += (k ? ", " : " ") + parameters[k].first + " " + std::to_string(parameters[k].second);
  if (!option.first.empty()) s += ", " + option.first + " " + option.second;
  return s;
}

const TensorData* KeyUse::get(const std::string& key) {
  const TensorData* t = sd_.find(key);
  if (t) used_.push_back(key);
  return t;
}

const TensorData& KeyUse::need(const std::string& key, size_t rank) {
  const TensorData* t = sd_.find(key);
  if (!t) throw Misfit{"expected '" + key + "', which is missing"};
  if (t->shape.size() != rank) throw Misfit{"'" + key + "' has shape " + shape_text(t->shape) + ", expected rank " + std::to_string(rank)};
  for (int64_t d : t->shape)  // an empty layer: no network has one (and the scale search would never end)
    if (d == 0) throw Misfit{"'" + key + "' has shape " + shape_text(t->shape) + ", with an empty dimension"};
  used_.push_back(key);
  return *t;
}

FamilyMatch KeyUse::finish(const std::string& family) {
  FamilyMatch m;
  m.family = family;
  std::vector<std::string> sorted = used_;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  m.fitted = sorted.size();
  for (const std::string& k : sd_.order)
    if (!std::binary_search(sorted.begin(), sorted.end(), k)) {
      m.first_misfit = "'" + k + "' " + shape_text(sd_.tensors.at(k).shape);
      break;
    }
  if (!expected_.empty()) m.first_misfit = expected_;
  return m;
}

Architecture detect_architecture(const StateDict& sd) {
  if (sd.order.empty()) throw ConvertError("holds no tensors");
  std::vector<FamilyMatch> tries = {match_compact(sd), match_rrdbnet(sd), match_resnet_generator(sd), match_span(sd),
                                 match_unet_generator(sd), match_realcugan(sd), match_realplksr(sd),
                                 match_plksr(sd)};
  for (FamilyMatch& m : tries)
    if (m.arch) return std::move(*m.arch);
  const FamilyMatch& best = *std::max_element(tries.begin(), tries.end(), [](const FamilyMatch& a, const FamilyMatch& b) { return a.fitted < b.fitted; });
  throw ConvertError("unknown checkpoint layout (" + std::to_string(sd.order.size()) + " tensors, first '" + sd.order.front() +
                     "'): closest known architecture is " + best.family + " (" + std::to_string(best.fitted) + " tensors fit); " +
                     (best.first_misfit.empty() ? std::string("it does not fit") : "first that does not fit: " + best.first_misfit));
}

}  // namespace edgegan::converter::checkpoint
