// A restricted reader of Python pickles that executes nothing. It knows the opcodes
// a PyTorch state dict is written with and a fixed list of globals (OrderedDict, the
// torch tensor-rebuilding functions, the storage types); any other global, or a call
// of anything but those functions, is refused by name before anything is built from
// it. Calls are interpreted here: _rebuild_tensor_v2(...) becomes a tensor
// description, OrderedDict() an empty dict. Nothing is imported or run.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "converter/checkpoint/state_dict.h"

namespace edgegan::converter::checkpoint {

struct PyObject {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kBytes, kTuple, kList, kDict, kGlobal, kStorage, kTensor };
  Kind kind = Kind::kNone;
  int64_t i = 0;          // bool, int (big: a LONG wider than 64 bits, its bytes in s)
  bool big = false;
  double f = 0;
  std::string s;          // str, bytes, "module.name" of a global, a storage's key
  std::vector<const PyObject*> items;                               // tuple, list
  std::vector<std::pair<const PyObject*, const PyObject*>> dict;    // dict, in insertion order
  // A storage (from a persistent id): its element type and element count.
  DType dtype = DType::kF32;
  int64_t numel = 0;
  // A tensor: a view of `storage`.
  const PyObject* storage = nullptr;
  int64_t offset = 0;
  std::vector<int64_t> shape, stride;
};

// The objects of one pickle. Containers point into `arena` (no ownership cycles, no
// recursive destruction, whatever the pickle's memo does).
struct Pickle {
  std::deque<PyObject> arena;
  const PyObject* root = nullptr;
};

// Turns a persistent id (BINPERSID's tuple) into a storage object made in `arena`.
using PersistentLoad = std::function<const PyObject*(const PyObject& pid, std::deque<PyObject>& arena)>;

// Reads one pickle from bytes[pos...], leaves `pos` after its STOP. Throws ConvertError
// (the reason) for a refused global or call, an unknown opcode or a malformed stream.
Pickle read_pickle(std::string_view bytes, size_t& pos, const PersistentLoad& persistent_load);

// The storage type of a torch global such as "torch.HalfStorage"; false for any other name.
bool storage_dtype(const std::string& global, DType& out);

// Describes an object's kind for error messages ("a list", "'os.system'").
std::string describe(const PyObject& o);

}  // namespace edgegan::converter::checkpoint
