#include "converter/checkpoint/pickle_reader.h"

#include <cstring>
#include <map>
#include <set>

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

using Kind = PyObject::Kind;

// The globals a state dict refers to. Everything else (os.system, builtins.eval,
// a pickled nn.Module class, numpy) is refused when the pickle names it.
const std::set<std::string>& allowed_globals() {
  static const std::set<std::string> names = {
      "collections.OrderedDict",
      "torch._utils._rebuild_tensor",
      "torch._utils._rebuild_tensor_v2",
      "torch._utils._rebuild_parameter",
      "torch._utils._rebuild_parameter_with_state",
      "torch._tensor._rebuild_from_type_v2",
      "torch.Tensor",
      "torch.nn.parameter.Parameter",
  };
  return names;
}

class Reader {
 public:
  Reader(std::string_view b, size_t pos, const PersistentLoad& load) : b_(b), pos_(pos), load_(load) {}

  Pickle run(size_t& end) {
    for (;;) {
      const uint8_t op = byte();
      if (op == '.') break;  // STOP
      step(op);
    }
    if (stack_.size() != 1 || !marks_.empty()) throw ConvertError("pickle ends with " + std::to_string(stack_.size()) + " objects on its stack");
    end = pos_;
    out_.root = stack_.back();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw ConvertError("pickle at byte " + std::to_string(pos_) + ": " + why); }

  uint8_t byte() {
    if (pos_ >= b_.size()) fail("truncated (no STOP opcode)");
    return static_cast<uint8_t>(b_[pos_++]);
  }
  uint64_t uint(int n) {
    if (b_.size() - pos_ < static_cast<size_t>(n)) fail("truncated");
    uint64_t v = 0;
    for (int k = n; k-- > 0;) v = (v << 8) | static_cast<uint8_t>(b_[pos_ + static_cast<size_t>(k)]);
    pos_ += static_cast<size_t>(n);
    return v;
  }
  std::string take(uint64_t n) {
    if (b_.size() - pos_ < n) fail("a string of " + std::to_string(n) + " bytes runs past the end");
    std::string s(b_.substr(pos_, static_cast<size_t>(n)));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  std::string line() {
    const size_t nl = b_.find('\n', pos_);
    if (nl == std::string_view::npos) fail("truncated (unterminated name)");
    std::string s(b_.substr(pos_, nl - pos_));
    pos_ = nl + 1;
    return s;
  }

  PyObject* make(Kind k) {
    PyObject& o = out_.arena.emplace_back();
    o.kind = k;
    return &o;
  }
  void push(const PyObject* o) { stack_.push_back(o); }
  const PyObject* pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("pops from an empty stack");
    const PyObject* o = stack_.back();
    stack_.pop_back();
    return o;
  }
  const PyObject* top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("reads an empty stack");
    return stack_.back();
  }
  std::vector<const PyObject*> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<const PyObject*> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  // The containers the pickle fills in place (memoised objects are shared): only
  // objects this reader made, so the const_cast never touches anything else.
  PyObject* mutable_top(Kind k, const char* op) {
    const PyObject* o = top();
    if (o->kind != k) fail(std::string(op) + " on " + describe(*o));
    return const_cast<PyObject*>(o);
  }
  const PyObject* integer(int64_t v) {
    PyObject* o = make(Kind::kInt);
    o->i = v;
    return o;
  }
  const PyObject* string(Kind k, std::string s) {
    PyObject* o = make(k);
    o->s = std::move(s);
    return o;
  }
  const PyObject* tuple(std::vector<const PyObject*> items) {
    PyObject* o = make(Kind::kTuple);
    o->items = std::move(items);
    return o;
  }
  const PyObject* global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    DType ignored;
    if (!allowed_globals().count(full) && !storage_dtype(full, ignored))
      fail("refers to '" + full + "', which a state dict never uses (refused; nothing was run)");
    return string(Kind::kGlobal, full);
  }
  void memo_put(uint64_t k) {
    if (memo_.size() >= (1u << 24) && !memo_.count(k)) fail("memo too large");
    memo_[k] = top();
  }
  const PyObject* memo_get(uint64_t k) {
    const auto it = memo_.find(k);
    if (it == memo_.end()) fail("reads memo entry " + std::to_string(k) + ", which was never stored");
    return it->second;
  }

  static std::vector<int64_t> ints(const PyObject* o, const char* what, const std::string& fn) {
    if (o->kind != Kind::kTuple && o->kind != Kind::kList) throw ConvertError(fn + ": " + what + " is " + describe(*o) + ", not a tuple");
    std::vector<int64_t> v;
    for (const PyObject* x : o->items) {
      if (x->kind != Kind::kInt || x->big) throw ConvertError(fn + ": " + what + " holds " + describe(*x));
      v.push_back(x->i);
    }
    return v;
  }

  const PyObject* rebuild_tensor(const std::string& fn, const std::vector<const PyObject*>& a) {
    if (a.size() < 4) fail(fn + " takes at least 4 arguments, got " + std::to_string(a.size()));
    if (a[0]->kind != Kind::kStorage) fail(fn + ": its first argument is " + describe(*a[0]) + ", not a storage");
    if (a[1]->kind != Kind::kInt || a[1]->big) fail(fn + ": its offset is " + describe(*a[1]));
    PyObject* t = make(Kind::kTensor);
    t->storage = a[0];
    t->offset = a[1]->i;
    t->shape = ints(a[2], "its size", fn);
    t->stride = ints(a[3], "its stride", fn);
    if (t->shape.size() != t->stride.size()) fail(fn + ": size and stride differ in rank");
    return t;
  }

  // REDUCE: the allowed functions, interpreted.
  const PyObject* call(const PyObject* fn, const PyObject* args) {
    if (fn->kind != Kind::kGlobal) fail("calls " + describe(*fn) + " (refused; nothing was run)");
    if (args->kind != Kind::kTuple) fail("calls '" + fn->s + "' with " + describe(*args) + " as arguments");
    const auto& a = args->items;
    const std::string& f = fn->s;
    if (f == "collections.OrderedDict") {
      if (!a.empty()) fail("calls OrderedDict with arguments");
      return make(Kind::kDict);
    }
    if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor") return rebuild_tensor(f, a);
    if (f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || a[0]->kind != Kind::kTensor) fail(f + ": its first argument is not a tensor");
      return a[0];
    }
    if (f == "torch._tensor._rebuild_from_type_v2") {  // (func, type, args, state): a plain tensor or parameter
      if (a.size() < 3) fail(f + " takes 4 arguments");
      if (a[1]->kind != Kind::kGlobal || (a[1]->s != "torch.Tensor" && a[1]->s != "torch.nn.parameter.Parameter"))
        fail(f + " rebuilds " + describe(*a[1]) + " (only torch.Tensor and Parameter)");
      if (a[0]->kind == Kind::kGlobal && a[0]->s == "torch._tensor._rebuild_from_type_v2") fail(f + " calls itself");
      return call(a[0], a[2]);
    }
    fail("calls '" + f + "' (refused; nothing was run)");
  }

  void step(uint8_t op) {
    switch (op) {
      case 0x80: {  // PROTO
        const uint8_t v = byte();
        if (v > 5) fail("pickle protocol " + std::to_string(v) + " is not known");
        return;
      }
      case 0x95: uint(8); return;  // FRAME: a length hint
      case '(': marks_.push_back(stack_.size()); return;
      case '0': pop(); return;
      case '1': pop_mark(); return;
      case '2': push(top()); return;
      case 'N': push(make(Kind::kNone)); return;
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        PyObject* o = make(Kind::kBool);
        o->i = op == 0x88;
        push(o);
        return;
      }
      case 'J': push(integer(static_cast<int32_t>(uint(4)))); return;
      case 'K': push(integer(static_cast<int64_t>(uint(1)))); return;
      case 'M': push(integer(static_cast<int64_t>(uint(2)))); return;
      case 0x8a: case 0x8b: {  // LONG1, LONG4: little-endian two's complement
        const uint64_t n = op == 0x8a ? uint(1) : uint(4);
        const std::string raw = take(n);
        PyObject* o = make(Kind::kInt);
        if (n > 8) {
          o->big = true;
          o->s = raw;
        } else {
          uint64_t v = 0;
          for (size_t k = raw.size(); k-- > 0;) v = (v << 8) | static_cast<uint8_t>(raw[k]);
          if (n > 0 && n < 8 && (static_cast<uint8_t>(raw.back()) & 0x80)) v |= ~uint64_t{0} << (8 * n);
          o->i = static_cast<int64_t>(v);
        }
        push(o);
        return;
      }
      case 'G': {  // BINFLOAT, big-endian
        const uint64_t bits = [&] {
          if (b_.size() - pos_ < 8) fail("truncated");
          uint64_t v = 0;
          for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<uint8_t>(b_[pos_ + static_cast<size_t>(k)]);
          pos_ += 8;
          return v;
        }();
        PyObject* o = make(Kind::kFloat);
        std::memcpy(&o->f, &bits, 8);
        push(o);
        return;
      }
      case 'X': push(string(Kind::kString, take(uint(4)))); return;   // BINUNICODE
      case 0x8c: push(string(Kind::kString, take(uint(1)))); return;  // SHORT_BINUNICODE
      case 0x8d: push(string(Kind::kString, take(uint(8)))); return;  // BINUNICODE8
      case 'T': push(string(Kind::kBytes, take(uint(4)))); return;    // BINSTRING
      case 'U': push(string(Kind::kBytes, take(uint(1)))); return;    // SHORT_BINSTRING
      case 'B': push(string(Kind::kBytes, take(uint(4)))); return;    // BINBYTES
      case 'C': push(string(Kind::kBytes, take(uint(1)))); return;    // SHORT_BINBYTES
      case 0x8e: push(string(Kind::kBytes, take(uint(8)))); return;   // BINBYTES8
      case ')': push(tuple({})); return;
      case 't': push(tuple(pop_mark())); return;
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        std::vector<const PyObject*> items(static_cast<size_t>(op - 0x84));
        for (size_t k = items.size(); k-- > 0;) items[k] = pop();
        push(tuple(std::move(items)));
        return;
      }
      case ']': push(make(Kind::kList)); return;
      case 'l': {
        PyObject* o = make(Kind::kList);
        o->items = pop_mark();
        push(o);
        return;
      }
      case 'a': {
        const PyObject* x = pop();
        mutable_top(Kind::kList, "APPEND")->items.push_back(x);
        return;
      }
      case 'e': {
        auto items = pop_mark();
        auto& list = mutable_top(Kind::kList, "APPENDS")->items;
        list.insert(list.end(), items.begin(), items.end());
        return;
      }
      case '}': push(make(Kind::kDict)); return;
      case 'd': {
        const auto items = pop_mark();
        if (items.size() % 2) fail("DICT with an odd number of items");
        PyObject* o = make(Kind::kDict);
        for (size_t k = 0; k < items.size(); k += 2) o->dict.emplace_back(items[k], items[k + 1]);
        push(o);
        return;
      }
      case 's': {
        const PyObject* v = pop();
        const PyObject* k = pop();
        mutable_top(Kind::kDict, "SETITEM")->dict.emplace_back(k, v);
        return;
      }
      case 'u': {
        const auto items = pop_mark();
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        PyObject* d = mutable_top(Kind::kDict, "SETITEMS");
        for (size_t k = 0; k < items.size(); k += 2) d->dict.emplace_back(items[k], items[k + 1]);
        return;
      }
      case 'q': memo_put(uint(1)); return;
      case 'r': memo_put(uint(4)); return;
      case 0x94: memo_put(memo_.size()); return;  // MEMOIZE
      case 'h': push(memo_get(uint(1))); return;
      case 'j': push(memo_get(uint(4))); return;
      case 'c': {  // GLOBAL "module\nname\n"
        const std::string module = line();
        push(global(module, line()));
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        const PyObject* name = pop();
        const PyObject* module = pop();
        if (name->kind != Kind::kString || module->kind != Kind::kString) fail("STACK_GLOBAL with non-string names");
        push(global(module->s, name->s));
        return;
      }
      case 'R': {
        const PyObject* args = pop();
        const PyObject* fn = pop();
        push(call(fn, args));
        return;
      }
      case 'b': {  // BUILD: attributes of a dict (a state dict's _metadata) or a tensor: ignored
        const PyObject* state = pop();
        const PyObject* o = top();
        if (o->kind != Kind::kDict && o->kind != Kind::kTensor) fail("sets the state of " + describe(*o) + " (refused)");
        if (state->kind != Kind::kDict && state->kind != Kind::kNone && state->kind != Kind::kTuple) fail("BUILD with " + describe(*state));
        return;
      }
      case 'Q': {  // BINPERSID
        const PyObject* pid = pop();
        const PyObject* s = load_(*pid, out_.arena);
        push(s);
        return;
      }
      default: break;
    }
    auto hex = [](uint8_t v) {
      const char* d = "0123456789abcdef";
      return std::string("0x") + d[v >> 4] + d[v & 15];
    };
    fail("opcode " + hex(op) + " is not one a state dict is written with (refused)");
  }

  std::string_view b_;
  size_t pos_;
  const PersistentLoad& load_;
  Pickle out_;
  std::vector<const PyObject*> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, const PyObject*> memo_;
};

}  // namespace

bool storage_dtype(const std::string& g, DType& out) {
  static const std::map<std::string, DType> types = {
      {"torch.FloatStorage", DType::kF32}, {"torch.HalfStorage", DType::kF16},  {"torch.BFloat16Storage", DType::kBF16},
      {"torch.DoubleStorage", DType::kF64}, {"torch.LongStorage", DType::kI64}, {"torch.IntStorage", DType::kI32},
      {"torch.ShortStorage", DType::kI16}, {"torch.CharStorage", DType::kI8},   {"torch.ByteStorage", DType::kU8},
      {"torch.BoolStorage", DType::kBool}};
  const auto it = types.find(g);
  if (it == types.end()) return false;
  out = it->second;
  return true;
}

std::string describe(const PyObject& o) {
  switch (o.kind) {
    case Kind::kNone: return "None";
    case Kind::kBool: return "a bool";
    case Kind::kInt: return "an int";
    case Kind::kFloat: return "a float";
    case Kind::kString: return "a string";
    case Kind::kBytes: return "bytes";
    case Kind::kTuple: return "a tuple";
    case Kind::kList: return "a list";
    case Kind::kDict: return "a dict";
    case Kind::kGlobal: return "'" + o.s + "'";
    case Kind::kStorage: return "a storage";
    case Kind::kTensor: return "a tensor";
  }
  return "an object";
}

Pickle read_pickle(std::string_view bytes, size_t& pos, const PersistentLoad& persistent_load) {
  if (pos > bytes.size()) throw ConvertError("pickle starts past the end of its data");
  return Reader(bytes, pos, persistent_load).run(pos);
}

}  // namespace edgegan::converter::checkpoint
