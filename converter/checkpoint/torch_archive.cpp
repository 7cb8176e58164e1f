// PyTorch's two torch.save formats. The zip archive (since 1.6): <prefix>/data.pkl, the
// pickled object whose tensors name storages by key, each in entry <prefix>/data/<key>.
// The legacy format: pickles of a magic number, the protocol version and system
// information, the object, the list of storage keys, then each storage as an int64
// element count and its bytes, in that order.
#include <cstdint>
#include <map>

#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/checkpoint/pickle_reader.h"
#include "converter/checkpoint/zip_archive.h"
#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

using Kind = PyObject::Kind;

// ('storage', <torch.XStorage>, key, location, numel[, view metadata]) -> a storage object.
const PyObject* load_storage(const PyObject& pid, std::deque<PyObject>& arena) {
  if (pid.kind != Kind::kTuple || pid.items.size() < 5 || pid.items[0]->kind != Kind::kString || pid.items[0]->s != "storage")
    throw ConvertError("a persistent id is not ('storage', type, key, location, size)");
  const auto& it = pid.items;
  PyObject& s = arena.emplace_back();
  s.kind = Kind::kStorage;
  if (it[1]->kind != Kind::kGlobal || !storage_dtype(it[1]->s, s.dtype)) throw ConvertError("a persistent id names " + describe(*it[1]) + ", not a storage type");
  if (it[2]->kind != Kind::kString) throw ConvertError("a storage key is " + describe(*it[2]));
  if (it[4]->kind != Kind::kInt || it[4]->big || it[4]->i < 0) throw ConvertError("storage '" + it[2]->s + "' has a size that is not a count");
  if (it.size() > 5 && it[5]->kind != Kind::kNone) throw ConvertError("storage '" + it[2]->s + "' is a view of another (torch before 1.0; re-save it)");
  s.s = it[2]->s;
  s.numel = it[4]->i;
  return &s;
}

const PyObject* dict_get(const PyObject& d, const std::string& key) {
  for (const auto& [k, v] : d.dict)
    if (k->kind == Kind::kString && k->s == key) return v;
  return nullptr;
}

// The state dict inside the checkpoint's object: the object itself, or what a
// training framework wraps it in.
const PyObject& unwrap(const PyObject& root) {
  if (root.kind != Kind::kDict) throw ConvertError("holds " + describe(root) + ", not a state dict");
  for (const char* wrapper : {"params_ema", "params", "state_dict", "model", "generator", "netG", "net_g"}) {
    const PyObject* inner = dict_get(root, wrapper);
    if (inner && inner->kind == Kind::kDict) return *inner;
  }
  return root;
}

// The tensors of a state dict, each gathered from `bytes_of(storage)` with its view checked.
// `budget`: the elements all tensors may have together. Views of one storage (tied
// weights) may repeat it, but never beyond the file's size: a pickle of a few bytes
// naming one storage many times is refused instead of filling the memory.
template <typename BytesOf>
StateDict collect(const PyObject& root, const BytesOf& bytes_of, int64_t budget) {
  const PyObject& d = unwrap(root);
  StateDict sd;
  for (const auto& [k, v] : d.dict) {
    if (k->kind != Kind::kString || v->kind != Kind::kTensor) continue;  // e.g. an epoch count beside the weights
    const std::string& name = k->s;
    const PyObject& st = *v->storage;
    const std::string_view bytes = bytes_of(st);
    const size_t es = dtype_size(st.dtype);
    if (static_cast<uint64_t>(st.numel) > bytes.size() / es)
      throw ConvertError("tensor '" + name + "': its storage '" + st.s + "' of " + std::to_string(st.numel) + " " + dtype_name(st.dtype) +
                         " values needs more than the " + std::to_string(bytes.size()) + " bytes stored");
    const int64_t numel = checked_numel(v->shape, "tensor '" + name + "'");
    if (numel > st.numel) throw ConvertError("tensor '" + name + "' has more elements than its storage (an expanded view)");
    if ((budget -= numel) < 0) throw ConvertError("tensor '" + name + "': the tensors hold more elements than the file has bytes");
    if (numel > 0) {
      // The largest element the view reads must lie within the storage (in 128 bits:
      // sizes below 2^31 times any 64-bit stride cannot overflow it).
      if (v->offset < 0) throw ConvertError("tensor '" + name + "' has a negative storage offset");
      __int128 last = v->offset;
      for (size_t a = 0; a < v->shape.size(); ++a) {
        if (v->stride[a] < 0) throw ConvertError("tensor '" + name + "' has a negative stride");
        last += static_cast<__int128>(v->shape[a] - 1) * v->stride[a];
      }
      if (last >= st.numel)
        throw ConvertError("tensor '" + name + "' reads element " +
                           (last <= INT64_MAX ? std::to_string(static_cast<int64_t>(last)) : std::string("beyond 2^63")) + " of a storage of " +
                           std::to_string(st.numel));
    }
    TensorData td;
    td.shape = v->shape;
    td.stored = st.dtype;
    gather_to_float(reinterpret_cast<const uint8_t*>(bytes.data()), st.dtype, v->offset, v->shape, v->stride, td.values);
    if (!sd.tensors.emplace(name, std::move(td)).second) throw ConvertError("tensor '" + name + "' appears twice");
    sd.order.push_back(name);
  }
  if (sd.order.empty()) throw ConvertError("holds no tensors (not a state dict)");
  return sd;
}

}  // namespace

StateDict read_torch_zip(std::string_view bytes) {
  const ZipArchive zip(bytes);
  std::string prefix;
  int found = 0;
  for (const auto& [name, data] : zip.entries()) {
    const std::string tail = "data.pkl";
    if (name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0 &&
        (name.size() == tail.size() || name[name.size() - tail.size() - 1] == '/')) {
      prefix = name.substr(0, name.size() - tail.size());
      ++found;
    }
  }
  if (found != 1) throw ConvertError(found ? "zip archive holds several data.pkl" : "zip archive holds no data.pkl (not a torch.save file)");
  if (zip.has(prefix + "byteorder") && zip.entry(prefix + "byteorder") != "little") throw ConvertError("checkpoint was saved big-endian");
  const std::string_view pkl = zip.entry(prefix + "data.pkl");
  size_t pos = 0;
  const Pickle p = read_pickle(pkl, pos, load_storage);
  return collect(*p.root, [&](const PyObject& st) {
    const std::string entry = prefix + "data/" + st.s;
    if (!zip.has(entry)) throw ConvertError("storage '" + st.s + "' has no entry '" + entry + "' in the archive");
    return zip.entry(entry);
  }, static_cast<int64_t>(bytes.size()));
}

StateDict read_torch_legacy(std::string_view bytes) {
  const PersistentLoad none = [](const PyObject&, std::deque<PyObject>&) -> const PyObject* {
    throw ConvertError("a header pickle has a persistent id");
  };
  size_t pos = 0;
  const Pickle magic = read_pickle(bytes, pos, none);
  static const char kMagic[] = "\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";  // 0x1950a86a20f9469cfc6c, little-endian
  if (magic.root->kind != Kind::kInt || !magic.root->big || magic.root->s != std::string(kMagic, 10))
    throw ConvertError("legacy torch file without its magic number");
  const Pickle protocol = read_pickle(bytes, pos, none);
  if (protocol.root->kind != Kind::kInt || protocol.root->i != 1001)
    throw ConvertError("legacy torch file of protocol version " + (protocol.root->kind == Kind::kInt ? std::to_string(protocol.root->i) : describe(*protocol.root)) + " (1001 is read)");
  const Pickle sys_info = read_pickle(bytes, pos, none);
  if (sys_info.root->kind == Kind::kDict) {
    const PyObject* little = dict_get(*sys_info.root, "little_endian");
    if (little && little->kind == Kind::kBool && !little->i) throw ConvertError("checkpoint was saved big-endian");
  }
  std::map<std::string, const PyObject*> storages;
  const Pickle object = read_pickle(bytes, pos, [&](const PyObject& pid, std::deque<PyObject>& arena) {
    const PyObject* s = load_storage(pid, arena);
    const auto [it, fresh] = storages.emplace(s->s, s);
    if (!fresh && it->second->dtype != s->dtype) throw ConvertError("storage '" + s->s + "' is named with two types");
    return s;
  });
  const Pickle keys = read_pickle(bytes, pos, none);
  if (keys.root->kind != Kind::kList) throw ConvertError("legacy torch file without its list of storage keys");
  std::map<std::string, std::string_view> data;
  for (const PyObject* key : keys.root->items) {
    if (key->kind != Kind::kString) throw ConvertError("a storage key is " + describe(*key));
    const auto st = storages.find(key->s);
    if (st == storages.end()) throw ConvertError("storage key '" + key->s + "' is listed but no tensor uses it");
    if (bytes.size() - pos < 8) throw ConvertError("storage '" + key->s + "' lies past the end of the file");
    uint64_t n = 0;
    for (int k = 8; k-- > 0;) n = (n << 8) | static_cast<uint8_t>(bytes[pos + static_cast<size_t>(k)]);
    pos += 8;
    const size_t es = dtype_size(st->second->dtype);
    if (n > (bytes.size() - pos) / es)
      throw ConvertError("storage '" + key->s + "' of " + std::to_string(n) + " values lies past the end of the file");
    data[key->s] = bytes.substr(pos, static_cast<size_t>(n * es));
    pos += static_cast<size_t>(n * es);
  }
  return collect(*object.root, [&](const PyObject& st) {
    const auto it = data.find(st.s);
    if (it == data.end()) throw ConvertError("storage '" + st.s + "' is not in the file's list of storages");
    return it->second;
  }, static_cast<int64_t>(bytes.size()));
}

}  // namespace edgegan::converter::checkpoint
