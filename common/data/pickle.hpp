#pragma once
// A reader for the subset of Python pickles (protocols 0-2) that the
// Planetoid files use: scipy CSR matrices, numpy arrays and a defaultdict of
// adjacency lists, written by Python 2. It builds a small object tree; it
// never executes anything — GLOBAL and REDUCE only record names and arguments.
// Every object belongs to the Document that parsed it, and objects refer to
// each other by plain pointers: a pickle may build cycles (a list appended to
// itself through the memo), which reference counting would leak.

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace gcnlab::pickle {

struct Object;
using Ref = const Object*;  // non-owning; null where a field is unset

struct Object {
  enum class Kind { none, boolean, integer, real, bytes, tuple, list, dict, global, instance };
  Kind kind = Kind::none;
  std::int64_t integer = 0;  // also boolean
  double real = 0;
  std::string bytes;         // bytes/str; for global: "module.name"
  std::vector<Ref> items;    // tuple, list; for instance: constructor args
  std::vector<std::pair<Ref, Ref>> entries;  // dict, or items set on an instance (defaultdict)
  Ref callable = nullptr;    // instance: the global it was made from
  Ref state = nullptr;       // instance: BUILD state
};

// The objects of one parsed pickle; its Refs live as long as it does.
class Document {
 public:
  Ref root() const { return root_; }

 private:
  friend class Parser;
  std::deque<Object> objects_;  // stable addresses
  Ref root_ = nullptr;
};

// Parses `data` (the whole file); `name` appears in error messages.
Document load(const std::string& data, const std::string& name);

// Helpers that throw gcnlab::Error naming `what` on a type mismatch.
const Object& expect(const Ref& r, Object::Kind k, const std::string& what);
// Value for key `key` in a dict-like object (dict or instance entries).
Ref lookup(const Object& dict, const std::string& key, const std::string& what);

// A numpy ndarray as raw little-endian bytes with its dtype code ("f4", "i8", ...).
struct Array {
  std::vector<std::int64_t> shape;
  std::string dtype;
  std::string data;
  std::int64_t size() const;
  // Element k converted to double.
  double at(std::int64_t k) const;
};
Array as_array(const Ref& r, const std::string& what);

}  // namespace gcnlab::pickle
