// Architectures recognised from a state dict's names and shapes alone, as the
// community's loaders recognise them, each with its hyper-parameters and the ONNX
// graph it computes.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converter/checkpoint/state_dict.h"

namespace edgegan::converter::checkpoint {

struct Architecture {
  std::string name;                                           // "RRDBNet"
  std::vector<std::pair<std::string, int64_t>> parameters;    // ("features", 64), in print order
  std::pair<std::string, std::string> option;                 // ("activation", "prelu"), ("norm", "instance"); empty: none
  int64_t scale = 1;
  int64_t in_channels = 3;
  std::string pixel_range = "0,1";                            // the values pixels map to, recorded for translate/upscale
  onnx::ModelProto graph;                                     // input [N, in, size, size]
  std::string line() const;                                   // "RRDBNet: in 3, out 3, features 64, ..."
};

// One family's attempt: the architecture when every tensor fits, else how far it got.
struct FamilyMatch {
  std::string family;
  size_t fitted = 0;           // tensors the family accounted for
  std::string first_misfit;    // the first tensor (file order) it did not, or the key it expected
  std::optional<Architecture> arch;
};

// Keeps track of which tensors a family's detector consumed.
class KeyUse {
 public:
  explicit KeyUse(const StateDict& sd) : sd_(sd) {}
  const TensorData* get(const std::string& key);           // nullptr when absent (and noted as expected)
  const TensorData& need(const std::string& key, size_t rank);  // throws Misfit when absent or of another rank
  bool has(const std::string& key) const { return sd_.has(key); }
  FamilyMatch finish(const std::string& family);            // the misfit: first unused key, or the first expected one
  size_t used() const { return used_.size(); }
  const std::string& expected() const { return expected_; }
  void expect(const std::string& what) { if (expected_.empty()) expected_ = what; }

 private:
  const StateDict& sd_;
  std::vector<std::string> used_;
  std::string expected_;
};

// Thrown inside a detector when the layout stops fitting; caught by detect_architecture.
struct Misfit {
  std::string why;
};

// One family's attempt on `sd`: `fit(use)` takes the tensors it expects through `use`
// (throwing Misfit where the layout stops fitting) and returns the architecture with its
// graph. The match carries it only when every tensor of the file was taken; otherwise it
// names the first tensor left over or the first one expected, for the closest-family line.
template <class Fit>
FamilyMatch match_family(const StateDict& sd, const std::string& family, Fit&& fit) {
  KeyUse use(sd);
  try {
    Architecture a = fit(use);
    FamilyMatch m = use.finish(family);
    if (m.first_misfit.empty()) m.arch = std::move(a);
    return m;
  } catch (const Misfit& e) {
    use.expect(e.why);
    return use.finish(family);
  }
}

// Image size the graphs are written at (the engine re-plans for each picture's tile size).
constexpr int64_t kGraphSize = 64;

FamilyMatch match_compact(const StateDict& sd);
FamilyMatch match_rrdbnet(const StateDict& sd);
FamilyMatch match_resnet_generator(const StateDict& sd);
FamilyMatch match_span(const StateDict& sd);
FamilyMatch match_unet_generator(const StateDict& sd);
FamilyMatch match_realcugan(const StateDict& sd);
FamilyMatch match_realplksr(const StateDict& sd);
FamilyMatch match_plksr(const StateDict& sd);

// The architecture of `sd`; throws ConvertError "unknown checkpoint layout: closest is X (...);
// first tensor that does not fit: 'key'" when no family fits every tensor.
Architecture detect_architecture(const StateDict& sd);

}  // namespace edgegan::converter::checkpoint
