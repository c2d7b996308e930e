#include "common/data/npz.hpp"

#include <zip.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <limits>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

constexpr std::size_t kChunk = 1 << 20;

std::uint64_t le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    std::uint32_t m = mantissa;
    do {
      ++e;
      m <<= 1;
    } while ((m & 0x400u) == 0);
    bits = sign | ((112 - e) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// One element type of an .npy file.
struct Dtype {
  char kind = 0;  // 'f', 'i', 'u', 'b', 'S'
  int size = 0;
};

Dtype parse_descr(const std::string& descr, const std::string& where) {
  GCNLAB_CHECK(descr.size() >= 3, "{}: unsupported dtype '{}'", where, descr);
  GCNLAB_CHECK(descr[0] != '>', "{}: big-endian dtype '{}' is not supported", where, descr);
  const Dtype t{descr[1], std::atoi(descr.c_str() + 2)};
  const bool ok = (t.kind == 'f' && (t.size == 2 || t.size == 4 || t.size == 8)) ||
                  ((t.kind == 'i' || t.kind == 'u') && (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8)) ||
                  (t.kind == 'b' && t.size == 1) || (t.kind == 'S' && t.size >= 1);
  GCNLAB_CHECK(ok, "{}: unsupported dtype '{}'", where, descr);
  return t;
}

template <class T>
T element(const char* p, Dtype t) {
  switch (t.kind) {
    case 'f': {
      if (t.size == 2) return static_cast<T>(half_to_float(static_cast<std::uint16_t>(le(p, 2))));
      if (t.size == 4) {
        float f;
        std::memcpy(&f, p, 4);
        return static_cast<T>(f);
      }
      double d;
      std::memcpy(&d, p, 8);
      return static_cast<T>(d);
    }
    case 'i': {  // sign-extend
      const std::uint64_t u = le(p, t.size);
      const int shift = 64 - 8 * t.size;
      return static_cast<T>(static_cast<std::int64_t>(u << shift) >> shift);
    }
    default:  // 'u', 'b'
      return static_cast<T>(le(p, t.size));
  }
}

// The value of 'key': in numpy's header dict (a Python literal).
std::string dict_value(const std::string& dict, const std::string& key, const std::string& where) {
  const std::size_t k = dict.find("'" + key + "'");
  GCNLAB_CHECK(k != std::string::npos, "{}: the .npy header has no '{}'", where, key);
  std::size_t p = dict.find(':', k);
  GCNLAB_CHECK(p != std::string::npos, "{}: malformed .npy header", where);
  ++p;
  while (p < dict.size() && dict[p] == ' ') ++p;
  const char open = p < dict.size() ? dict[p] : 0;
  const char close = open == '\'' ? '\'' : open == '(' ? ')' : ',';
  const std::size_t end = dict.find(close, p + (open == '\'' || open == '(' ? 1 : 0));
  GCNLAB_CHECK(end != std::string::npos, "{}: malformed .npy header", where);
  return open == '\'' ? dict.substr(p + 1, end - p - 1) : dict.substr(p, end - p + (open == '(' ? 1 : 0));
}

// Parses the header at the start of `bytes`; returns the header's length, or 0 when more bytes are needed.
std::size_t parse_header(const std::string& bytes, NpyHeader& h, const std::string& where) {
  if (bytes.size() < 10) return 0;
  GCNLAB_CHECK(bytes.compare(0, 6, "\x93NUMPY") == 0, "{}: not an .npy member (bad magic)", where);
  const int major = static_cast<unsigned char>(bytes[6]);
  GCNLAB_CHECK(major >= 1 && major <= 3, "{}: .npy format version {} is not supported", where, major);
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (bytes.size() < prefix) return 0;
  const std::size_t len = prefix + le(bytes.data() + 8, major == 1 ? 2 : 4);
  if (bytes.size() < len) return 0;
  const std::string dict = bytes.substr(prefix, len - prefix);
  h.descr = dict_value(dict, "descr", where);
  h.fortran = dict_value(dict, "fortran_order", where).rfind("True", 0) == 0;
  const std::string shape = dict_value(dict, "shape", where);
  h.shape.clear();
  for (const char* p = shape.c_str() + 1; *p;) {
    char* end = nullptr;
    const long long d = std::strtoll(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    GCNLAB_CHECK(d >= 0, "{}: negative dimension in shape {}", where, shape);
    h.shape.push_back(d);
    p = end;
  }
  return len;
}

}  // namespace

std::int64_t NpyHeader::count() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    GCNLAB_CHECK(d == 0 || n <= std::numeric_limits<std::int64_t>::max() / d, "an .npy shape overflows 64 bits");
    n *= d;
  }
  return n;
}

void NpzArchive::Discard::operator()(::zip* z) const { zip_discard(z); }

NpzArchive::NpzArchive(std::string path) : path_(std::move(path)) {
  GCNLAB_CHECK(std::ifstream(path_).good(), "cannot open '{}'", path_);
  int code = 0;
  archive_.reset(zip_open(path_.c_str(), ZIP_RDONLY, &code));
  if (!archive_) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail("'{}' is not a zip archive (.npz): {}", path_, message);
  }
  const zip_int64_t entries = zip_get_num_entries(archive_.get(), 0);
  for (zip_int64_t e = 0; e < entries; ++e) {
    const char* raw = zip_get_name(archive_.get(), static_cast<zip_uint64_t>(e), ZIP_FL_ENC_RAW);
    GCNLAB_CHECK(raw, "'{}': damaged central directory (entry {})", path_, e);
    std::string name = raw;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    members_[name] = static_cast<std::uint64_t>(e);
  }
}

std::vector<std::string> NpzArchive::names() const {
  std::vector<std::string> out;
  for (const auto& [name, index] : members_) out.push_back(name);
  return out;
}

std::uint64_t NpzArchive::index(const std::string& name) const {
  const auto it = members_.find(name);
  if (it == members_.end()) {
    std::string all;
    for (const auto& n : names()) all += (all.empty() ? "" : ", ") + n;
    fail("'{}' has no array '{}' (it holds: {})", path_, name, all);
  }
  return it->second;
}

std::uint64_t NpzArchive::inflated_size(const std::string& name) const {
  zip_stat_t st;
  zip_stat_init(&st);
  GCNLAB_CHECK(zip_stat_index(archive_.get(), index(name), 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE),
               "'{}' member '{}': no recorded size ({})", path_, name, zip_strerror(archive_.get()));
  return st.size;
}

void NpzArchive::stream(const std::string& name, const std::function<bool(const char*, std::size_t)>& sink) const {
  const std::string where = fmt::format("'{}' member '{}'", path_, name);
  const std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(zip_fopen_index(archive_.get(), index(name), 0),
                                                                zip_fclose);
  GCNLAB_CHECK(file, "{} cannot be read ({})", where, zip_strerror(archive_.get()));
  std::vector<char> buf(kChunk);
  for (;;) {
    const zip_int64_t n = zip_fread(file.get(), buf.data(), buf.size());
    // libzip reports a bad deflate stream, a short member and a CRC-32 mismatch here
    GCNLAB_CHECK(n >= 0, "{} is damaged ({})", where, zip_file_strerror(file.get()));
    if (n == 0 || !sink(buf.data(), static_cast<std::size_t>(n))) return;
  }
}

NpyHeader NpzArchive::header(const std::string& name) const {
  const std::string where = fmt::format("'{}' member '{}'", path_, name);
  NpyHeader h;
  std::string head;
  std::size_t len = 0;
  stream(name, [&](const char* p, std::size_t n) {
    head.append(p, n);
    len = parse_header(head, h, where);
    return len == 0;  // enough once the header is whole
  });
  GCNLAB_CHECK(len > 0, "{}: the .npy header is cut off", where);
  return h;
}

template <class T>
std::vector<T> NpzArchive::read(const std::string& name) const {
  const std::string where = fmt::format("'{}' member '{}'", path_, name);
  NpyHeader h;
  Dtype t;
  std::string pending;  // the header until it is whole, then an element split between chunks
  bool started = false;
  std::vector<T> out;
  auto consume = [&](const char* p, std::size_t n) {
    std::size_t k = 0;
    if (!pending.empty()) {
      k = std::min<std::size_t>(t.size - pending.size(), n);
      pending.append(p, k);
      if (pending.size() < static_cast<std::size_t>(t.size)) return;
      out.push_back(element<T>(pending.data(), t));
      pending.clear();
    }
    for (; k + t.size <= n; k += t.size) out.push_back(element<T>(p + k, t));
    pending.assign(p + k, n - k);
  };
  stream(name, [&](const char* p, std::size_t n) {
    if (started) {
      consume(p, n);
      return true;
    }
    pending.append(p, n);
    const std::size_t len = parse_header(pending, h, where);
    if (len == 0) return true;
    t = parse_descr(h.descr, where);
    GCNLAB_CHECK(t.kind != 'S', "{}: holds bytes ({}), not numbers", where, h.descr);
    GCNLAB_CHECK(!h.fortran || h.shape.size() <= 2, "{}: Fortran-order arrays of {} dimensions are not supported",
                 where, h.shape.size());
    const std::uint64_t size = inflated_size(name), data_bytes = size - std::min<std::uint64_t>(size, len);
    GCNLAB_CHECK(static_cast<std::uint64_t>(h.count()) <= data_bytes / static_cast<std::uint64_t>(t.size),
                 "{}: its shape needs {} elements of {} bytes, the member holds {} bytes", where, h.count(), t.size,
                 data_bytes);
    out.reserve(static_cast<std::size_t>(h.count()));
    started = true;
    const std::string rest = pending.substr(len);
    pending.clear();
    consume(rest.data(), rest.size());
    return true;
  });
  GCNLAB_CHECK(started, "{}: the .npy header is cut off", where);
  GCNLAB_CHECK(static_cast<std::int64_t>(out.size()) == h.count() && pending.empty(),
               "{}: holds {} elements, its shape says {}", where, out.size(), h.count());
  if (h.fortran && h.shape.size() == 2) {  // column-major on disk
    const std::int64_t rows = h.shape[0], cols = h.shape[1];
    std::vector<T> c(out.size());
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) c[i * cols + j] = out[j * rows + i];
    out.swap(c);
  }
  return out;
}

template std::vector<float> NpzArchive::read<float>(const std::string&) const;
template std::vector<double> NpzArchive::read<double>(const std::string&) const;
template std::vector<std::int64_t> NpzArchive::read<std::int64_t>(const std::string&) const;

std::string NpzArchive::read_bytes(const std::string& name) const {
  const std::string where = fmt::format("'{}' member '{}'", path_, name);
  std::string all;
  stream(name, [&](const char* p, std::size_t n) {
    all.append(p, n);
    return true;
  });
  NpyHeader h;
  const std::size_t len = parse_header(all, h, where);
  GCNLAB_CHECK(len > 0, "{}: the .npy header is cut off", where);
  const Dtype t = parse_descr(h.descr, where);
  GCNLAB_CHECK(t.kind == 'S', "{}: holds {}, not bytes", where, h.descr);
  std::string s = all.substr(len);
  s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
  return s;
}

NpyCursor::NpyCursor(const NpzArchive& archive, const std::string& name)
    : archive_(archive), name_(name), where_(fmt::format("'{}' member '{}'", archive.path(), name)),
      index_(archive.index(name)) {
  zip_stat_t st;
  zip_stat_init(&st);
  GCNLAB_CHECK(zip_stat_index(archive_.archive_.get(), index_, 0, &st) == 0 && (st.valid & ZIP_STAT_COMP_METHOD),
               "{}: no recorded compression ({})", where_, zip_strerror(archive_.archive_.get()));
  stored_ = st.comp_method == ZIP_CM_STORE;
  open();
  std::string head;
  std::size_t len = 0;
  while (len == 0) {
    char buf[256];
    const zip_int64_t n = zip_fread(file_, buf, sizeof buf);
    GCNLAB_CHECK(n > 0, "{}: the .npy header is cut off", where_);
    head.append(buf, static_cast<std::size_t>(n));
    at_ += static_cast<std::uint64_t>(n);
    len = parse_header(head, header_, where_);
  }
  const Dtype t = parse_descr(header_.descr, where_);
  GCNLAB_CHECK(t.kind != 'S', "{}: holds bytes ({}), not numbers", where_, header_.descr);
  kind_ = t.kind, size_ = t.size, data_ = len;
  const std::uint64_t size = archive_.inflated_size(name), data_bytes = size - std::min<std::uint64_t>(size, len);
  GCNLAB_CHECK(static_cast<std::uint64_t>(header_.count()) <= data_bytes / static_cast<std::uint64_t>(size_),
               "{}: its shape needs {} elements of {} bytes, the member holds {} bytes", where_, header_.count(), size_,
               data_bytes);
}

NpyCursor::~NpyCursor() {
  if (file_) zip_fclose(file_);
}

void NpyCursor::open() {
  if (file_) zip_fclose(file_);
  file_ = zip_fopen_index(archive_.archive_.get(), index_, 0);
  GCNLAB_CHECK(file_, "{} cannot be read ({})", where_, zip_strerror(archive_.archive_.get()));
  at_ = 0;
}

void NpyCursor::seek(std::uint64_t byte) {
  if (byte == at_) return;
  if (stored_) {
    GCNLAB_CHECK(zip_fseek(file_, static_cast<zip_int64_t>(byte), SEEK_SET) == 0, "{}: cannot seek ({})", where_,
                 zip_file_strerror(file_));
    at_ = byte;
    return;
  }
  if (byte < at_) open();
  std::vector<char> skip(std::min<std::uint64_t>(kChunk, byte - at_));
  while (at_ < byte) fill(skip.data(), static_cast<std::size_t>(std::min<std::uint64_t>(skip.size(), byte - at_)));
}

void NpyCursor::fill(char* out, std::size_t bytes) {
  for (std::size_t done = 0; done < bytes;) {
    const zip_int64_t n = zip_fread(file_, out + done, bytes - done);
    // libzip reports a bad deflate stream, a short member and a CRC-32 mismatch here
    GCNLAB_CHECK(n >= 0, "{} is damaged ({})", where_, zip_file_strerror(file_));
    GCNLAB_CHECK(n > 0, "{}: holds fewer elements than its shape says", where_);
    done += static_cast<std::size_t>(n), at_ += static_cast<std::uint64_t>(n);
  }
}

template <class T>
void NpyCursor::read(std::int64_t k, std::span<T> out) {
  GCNLAB_ASSERT(k >= 0 && k + static_cast<std::int64_t>(out.size()) <= header_.count());
  const Dtype t{static_cast<char>(kind_), size_};
  seek(data_ + static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(size_));
  constexpr std::size_t kElements = 1 << 16;
  for (std::size_t first = 0; first < out.size(); first += kElements) {
    const std::size_t count = std::min(kElements, out.size() - first);
    bytes_.resize(count * static_cast<std::size_t>(size_));
    fill(bytes_.data(), bytes_.size());
    for (std::size_t e = 0; e < count; ++e) out[first + e] = element<T>(bytes_.data() + e * size_, t);
  }
}

template void NpyCursor::read<float>(std::int64_t, std::span<float>);
template void NpyCursor::read<double>(std::int64_t, std::span<double>);
template void NpyCursor::read<std::int64_t>(std::int64_t, std::span<std::int64_t>);

}  // namespace gcnlab
