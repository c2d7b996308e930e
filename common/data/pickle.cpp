#include "common/data/pickle.hpp"

#include <cstring>
#include <unordered_map>

#include "common/core/error.hpp"

namespace gcnlab::pickle {

using K = Object::Kind;

// The pickle virtual machine. Objects are created in the Document it returns;
// the stack and the memo hold them mutable (APPEND, SETITEM and BUILD change
// the object on top), the objects' own fields only see them const.
class Parser {
 public:
  Parser(const std::string& data, const std::string& name) : d_(data), name_(name) {}

  Document run() {
    while (true) {
      const auto op = static_cast<unsigned char>(byte());
      switch (op) {
        case 0x80: byte(); break;  // PROTO
        case '.': {                // STOP
          GCNLAB_CHECK(stack_.size() == 1, "malformed pickle '{}': stack holds {} items at STOP", name_,
                       stack_.size());
          doc_.root_ = stack_.back();
          return std::move(doc_);
        }
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case 'N': push(make(K::none)); break;
        case 0x88: push(boolean(true)); break;   // NEWTRUE
        case 0x89: push(boolean(false)); break;  // NEWFALSE
        case 'K': push(integer(uint_le(1))); break;           // BININT1
        case 'M': push(integer(uint_le(2))); break;           // BININT2
        case 'J': push(integer(static_cast<std::int32_t>(uint_le(4)))); break;  // BININT
        case 0x8a: {                                          // LONG1
          const auto n = uint_le(1);
          GCNLAB_CHECK(n <= 8, "pickle '{}': integer of {} bytes is too large", name_, n);
          std::int64_t v = static_cast<std::int64_t>(uint_le(static_cast<int>(n)));
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v -= std::int64_t{1} << (8 * n);
          push(integer(v));
          break;
        }
        case 'G': {  // BINFLOAT, big-endian double
          std::uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<unsigned char>(byte());
          auto r = make(K::real);
          std::memcpy(&r->real, &bits, 8);
          push(r);
          break;
        }
        case 'U': push(bytes(uint_le(1))); break;   // SHORT_BINSTRING
        case 'T': push(bytes(uint_le(4))); break;   // BINSTRING
        case 'X': push(bytes(uint_le(4))); break;   // BINUNICODE (utf-8)
        case 0x8c: push(bytes(uint_le(1))); break;  // SHORT_BINUNICODE
        case 'C': push(bytes(uint_le(1))); break;   // SHORT_BINBYTES
        case 'B': push(bytes(uint_le(4))); break;   // BINBYTES
        case ')': push(make(K::tuple)); break;      // EMPTY_TUPLE
        case ']': push(make(K::list)); break;       // EMPTY_LIST
        case '}': push(make(K::dict)); break;       // EMPTY_DICT
        case 't': push(collect(K::tuple)); break;   // TUPLE
        case 'l': push(collect(K::list)); break;    // LIST
        case 'd': {                                 // DICT
          auto items = collect(K::list);
          auto r = make(K::dict);
          set_items(*r, items->items);
          push(r);
          break;
        }
        case 0x85: push(tuple_of(1)); break;  // TUPLE1
        case 0x86: push(tuple_of(2)); break;  // TUPLE2
        case 0x87: push(tuple_of(3)); break;  // TUPLE3
        case 'q': memo(uint_le(1)); break;    // BINPUT
        case 'r': memo(uint_le(4)); break;    // LONG_BINPUT
        case 'h': push(recall(uint_le(1))); break;  // BINGET
        case 'j': push(recall(uint_le(4))); break;  // LONG_BINGET
        case 'c': {                                  // GLOBAL "module\nname\n"
          auto r = make(K::global);
          r->bytes = line() + "." + line();
          push(r);
          break;
        }
        case 'R':     // REDUCE: callable(*args)
        case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
          auto args = pop();
          auto callable = pop();
          auto r = make(K::instance);
          r->callable = callable;
          r->items = args->items;
          push(r);
          break;
        }
        case 'b': {  // BUILD
          auto state = pop();
          top()->state = state;
          break;
        }
        case 'a': {  // APPEND
          auto v = pop();
          list_target().items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          auto items = collect(K::list);
          auto& target = list_target();
          target.items.insert(target.items.end(), items->items.begin(), items->items.end());
          break;
        }
        case 's': {  // SETITEM
          auto v = pop();
          auto k = pop();
          set_items(*top(), {k, v});
          break;
        }
        case 'u': {  // SETITEMS
          auto items = collect(K::list);
          set_items(*top(), items->items);
          break;
        }
        default:
          fail("pickle '{}': unsupported opcode 0x{:02x} at byte {}", name_, op, pos_ - 1);
      }
    }
  }

 private:
  char byte() {
    GCNLAB_CHECK(pos_ < d_.size(), "pickle '{}' is truncated (ends at byte {})", name_, d_.size());
    return d_[pos_++];
  }
  std::uint64_t uint_le(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(byte())) << (8 * i);
    return v;
  }
  std::string line() {
    const auto nl = d_.find('\n', pos_);
    GCNLAB_CHECK(nl != std::string::npos, "pickle '{}' is truncated (in a GLOBAL name)", name_);
    std::string s = d_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return s;
  }
  Object* bytes(std::uint64_t n) {
    GCNLAB_CHECK(n <= d_.size() - pos_, "pickle '{}' is truncated (string of {} bytes at byte {})", name_, n,
                 pos_);
    auto r = make(K::bytes);
    r->bytes = d_.substr(pos_, n);
    pos_ += n;
    return r;
  }
  Object* make(K k) {
    Object& o = doc_.objects_.emplace_back();
    o.kind = k;
    return &o;
  }
  Object* integer(std::int64_t v) {
    auto r = make(K::integer);
    r->integer = v;
    return r;
  }
  Object* boolean(bool v) {
    auto r = make(K::boolean);
    r->integer = v;
    return r;
  }
  void push(Object* r) { stack_.push_back(r); }
  Object* pop() {
    GCNLAB_CHECK(stack_.size() > (marks_.empty() ? 0 : marks_.back()), "malformed pickle '{}': stack underflow",
                 name_);
    Object* r = stack_.back();
    stack_.pop_back();
    return r;
  }
  Object* top() {
    GCNLAB_CHECK(!stack_.empty(), "malformed pickle '{}': empty stack", name_);
    return stack_.back();
  }
  Object* collect(K kind) {  // everything above the last MARK
    GCNLAB_CHECK(!marks_.empty(), "malformed pickle '{}': missing MARK", name_);
    auto r = make(kind);
    r->items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return r;
  }
  Object* tuple_of(int n) {
    auto r = make(K::tuple);
    r->items.resize(n);
    for (int i = n - 1; i >= 0; --i) r->items[i] = pop();
    return r;
  }
  Object& list_target() {
    Object* t = top();
    GCNLAB_CHECK(t->kind == K::list, "malformed pickle '{}': APPEND to a non-list", name_);
    return *t;
  }
  void set_items(Object& target, const std::vector<Ref>& kv) {
    GCNLAB_CHECK(target.kind == K::dict || target.kind == K::instance,
                 "malformed pickle '{}': SETITEMS on a non-dict", name_);
    GCNLAB_CHECK(kv.size() % 2 == 0, "malformed pickle '{}': odd SETITEMS", name_);
    for (std::size_t i = 0; i < kv.size(); i += 2) target.entries.emplace_back(kv[i], kv[i + 1]);
  }
  void memo(std::uint64_t idx) { memo_[idx] = top(); }
  Object* recall(std::uint64_t idx) {
    const auto it = memo_.find(idx);
    GCNLAB_CHECK(it != memo_.end(), "malformed pickle '{}': unknown memo {}", name_, idx);
    return it->second;
  }

  const std::string& d_;
  const std::string& name_;
  std::size_t pos_ = 0;
  Document doc_;
  std::vector<Object*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Object*> memo_;  // sparse: an index is any 32-bit number
};

Document load(const std::string& data, const std::string& name) { return Parser(data, name).run(); }

const Object& expect(const Ref& r, Object::Kind k, const std::string& what) {
  GCNLAB_CHECK(r && r->kind == k, "{}: unexpected object type", what);
  return *r;
}

Ref lookup(const Object& dict, const std::string& key, const std::string& what) {
  const auto* entries = &dict.entries;
  if (dict.kind == K::instance && dict.state && dict.state->kind == K::dict) entries = &dict.state->entries;
  for (const auto& [k, v] : *entries)
    if (k->kind == K::bytes && k->bytes == key) return v;
  fail("{}: missing '{}'", what, key);
}

std::int64_t Array::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

double Array::at(std::int64_t k) const {
  const char* p = data.data();
  auto read = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p + k * sizeof(v), sizeof(v));
    return static_cast<double>(v);
  };
  if (dtype == "f4") return read(float{});
  if (dtype == "f8") return read(double{});
  if (dtype == "i4") return read(std::int32_t{});
  if (dtype == "i8") return read(std::int64_t{});
  if (dtype == "u1" || dtype == "b1") return read(std::uint8_t{});
  if (dtype == "i1") return read(std::int8_t{});
  fail("unsupported numpy dtype '{}'", dtype);
}

// numpy.core.multiarray._reconstruct(ndarray, (0,), 'b') with BUILD state
// (version, shape, dtype, is_fortran, raw bytes).
Array as_array(const Ref& r, const std::string& what) {
  const Object& o = expect(r, K::instance, what);
  GCNLAB_CHECK(o.state && o.state->kind == K::tuple && o.state->items.size() == 5,
               "{}: not a numpy array", what);
  const auto& st = o.state->items;
  Array a;
  for (const auto& s : expect(st[1], K::tuple, what).items) a.shape.push_back(expect(s, K::integer, what).integer);
  const Object& dtype = expect(st[2], K::instance, what);
  GCNLAB_CHECK(!dtype.items.empty(), "{}: numpy dtype without a code", what);
  a.dtype = expect(dtype.items[0], K::bytes, what).bytes;
  if (dtype.state && dtype.state->kind == K::tuple && dtype.state->items.size() > 1 &&
      dtype.state->items[1]->kind == K::bytes)
    GCNLAB_CHECK(dtype.state->items[1]->bytes != ">", "{}: big-endian arrays are not supported", what);
  GCNLAB_CHECK(!expect(st[3], K::boolean, what).integer, "{}: Fortran-ordered arrays are not supported", what);
  a.data = expect(st[4], K::bytes, what).bytes;
  std::int64_t itemsize = 0;
  if (a.dtype == "f4" || a.dtype == "i4") itemsize = 4;
  else if (a.dtype == "f8" || a.dtype == "i8") itemsize = 8;
  else if (a.dtype == "u1" || a.dtype == "b1" || a.dtype == "i1") itemsize = 1;
  else fail("{}: unsupported numpy dtype '{}'", what, a.dtype);
  GCNLAB_CHECK(static_cast<std::int64_t>(a.data.size()) == a.size() * itemsize,
               "{}: array data has {} bytes, expected {}", what, a.data.size(), a.size() * itemsize);
  return a;
}

}  // namespace gcnlab::pickle
