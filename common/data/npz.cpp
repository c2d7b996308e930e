#include "common/data/npz.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <limits>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

constexpr std::uint32_t kEndOfCentralDirectory = 0x06054b50, kZip64Locator = 0x07064b50, kZip64End = 0x06064b50,
                        kCentralHeader = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr std::size_t kChunk = 1 << 20;

std::uint64_t le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string read_at(std::ifstream& in, const std::string& path, std::uint64_t offset, std::size_t n) {
  std::string s(n, '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(s.data(), static_cast<std::streamsize>(n));
  GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(n), "'{}' is truncated (a zip record at byte {} is cut off)",
               path, offset);
  return s;
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

NpzArchive::NpzArchive(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path_);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  // the end-of-central-directory record: the last 22 bytes plus a comment of up to 64 KiB
  const std::uint64_t tail_size = std::min<std::uint64_t>(size, 22 + 65535);
  const std::string tail = read_at(in, path_, size - tail_size, tail_size);
  std::size_t eocd = std::string::npos;
  for (std::size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;)
    if (le(tail.data() + i, 4) == kEndOfCentralDirectory) {
      eocd = i;
      break;
    }
  GCNLAB_CHECK(eocd != std::string::npos, "'{}' is not a zip archive (.npz): no end-of-central-directory record", path_);
  std::uint64_t entries = le(tail.data() + eocd + 10, 2), cd_size = le(tail.data() + eocd + 12, 4),
                cd_offset = le(tail.data() + eocd + 16, 4);
  if (entries == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {  // zip64
    const std::uint64_t at = size - tail_size + eocd;
    GCNLAB_CHECK(at >= 20, "'{}': zip64 archive without its locator", path_);
    const std::string locator = read_at(in, path_, at - 20, 20);
    GCNLAB_CHECK(le(locator.data(), 4) == kZip64Locator, "'{}': zip64 archive without its locator", path_);
    const std::string end = read_at(in, path_, le(locator.data() + 8, 8), 56);
    GCNLAB_CHECK(le(end.data(), 4) == kZip64End, "'{}': damaged zip64 end-of-central-directory record", path_);
    entries = le(end.data() + 32, 8), cd_size = le(end.data() + 40, 8), cd_offset = le(end.data() + 48, 8);
  }
  GCNLAB_CHECK(cd_offset + cd_size <= size, "'{}' is truncated (its central directory ends past the file)", path_);
  const std::string cd = read_at(in, path_, cd_offset, cd_size);
  std::size_t p = 0;
  for (std::uint64_t e = 0; e < entries; ++e) {
    GCNLAB_CHECK(p + 46 <= cd.size() && le(cd.data() + p, 4) == kCentralHeader,
                 "'{}': damaged central directory (entry {})", path_, e);
    Member m;
    m.method = static_cast<std::uint16_t>(le(cd.data() + p + 10, 2));
    m.crc = static_cast<std::uint32_t>(le(cd.data() + p + 16, 4));
    m.compressed = le(cd.data() + p + 20, 4);
    m.size = le(cd.data() + p + 24, 4);
    const std::size_t name_len = le(cd.data() + p + 28, 2), extra_len = le(cd.data() + p + 30, 2),
                      comment_len = le(cd.data() + p + 32, 2);
    m.header_offset = le(cd.data() + p + 42, 4);
    GCNLAB_CHECK(p + 46 + name_len + extra_len + comment_len <= cd.size(), "'{}': damaged central directory", path_);
    std::string name = cd.substr(p + 46, name_len);
    for (std::size_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {  // zip64 sizes and offset
      const std::size_t id = le(cd.data() + x, 2), len = le(cd.data() + x + 2, 2);
      if (id == 0x0001) {
        std::size_t q = x + 4;
        for (std::uint64_t* field : {&m.size, &m.compressed, &m.header_offset})
          if (*field == 0xffffffff && q + 8 <= x + 4 + len) *field = le(cd.data() + q, 8), q += 8;
      }
      x += 4 + len;
    }
    GCNLAB_CHECK(m.header_offset + 30 <= size, "'{}': member '{}' lies past the end of the file", path_, name);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    members_[name] = m;
    p += 46 + name_len + extra_len + comment_len;
  }
}

std::vector<std::string> NpzArchive::names() const {
  std::vector<std::string> out;
  for (const auto& [name, m] : members_) out.push_back(name);
  return out;
}

const NpzArchive::Member& NpzArchive::member(const std::string& name) const {
  const auto it = members_.find(name);
  if (it == members_.end()) {
    std::string all;
    for (const auto& n : names()) all += (all.empty() ? "" : ", ") + n;
    fail("'{}' has no array '{}' (it holds: {})", path_, name, all);
  }
  return it->second;
}

void NpzArchive::stream(const std::string& name, const std::function<bool(const char*, std::size_t)>& sink) const {
  const Member& m = member(name);
  const std::string where = fmt::format("'{}' member '{}'", path_, name);
  std::ifstream in(path_, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path_);
  const std::string local = read_at(in, path_, m.header_offset, 30);
  GCNLAB_CHECK(le(local.data(), 4) == kLocalHeader, "{}: damaged local header", where);
  in.seekg(static_cast<std::streamoff>(m.header_offset + 30 + le(local.data() + 26, 2) + le(local.data() + 28, 2)));
  GCNLAB_CHECK(m.method == 0 || m.method == 8,
               "{}: compression method {} is not supported (numpy writes stored or deflated members)", where, m.method);
  std::vector<char> in_buf(kChunk), out_buf(kChunk);
  std::uint64_t left = m.compressed, produced = 0;
  uLong crc = crc32(0L, Z_NULL, 0);
  bool wanted = true;
  auto emit = [&](const char* p, std::size_t n) {
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n));
    produced += n;
    wanted = sink(p, n);
  };
  struct Inflater {  // ended however the stream ends (a sink may throw)
    z_stream z{};
    bool live = false;
    ~Inflater() {
      if (live) inflateEnd(&z);
    }
  } inflater;
  z_stream& z = inflater.z;
  if (m.method == 8) {
    GCNLAB_CHECK(inflateInit2(&z, -MAX_WBITS) == Z_OK, "zlib: cannot start inflating");
    inflater.live = true;
  }
  int status = Z_OK;
  while (left > 0 && wanted) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kChunk));
    in.read(in_buf.data(), static_cast<std::streamsize>(n));
    GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(n), "{} is truncated", where);
    left -= n;
    if (m.method == 0) {
      emit(in_buf.data(), n);
      continue;
    }
    z.next_in = reinterpret_cast<Bytef*>(in_buf.data());
    z.avail_in = static_cast<uInt>(n);
    do {
      z.next_out = reinterpret_cast<Bytef*>(out_buf.data());
      z.avail_out = static_cast<uInt>(out_buf.size());
      status = inflate(&z, Z_NO_FLUSH);
      GCNLAB_CHECK(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, "{} is damaged (inflate: {})",
                   where, z.msg ? z.msg : "error");
      emit(out_buf.data(), out_buf.size() - z.avail_out);
    } while (z.avail_out == 0 && status != Z_STREAM_END && wanted);
  }
  if (!wanted) return;
  GCNLAB_CHECK(m.method == 0 || status == Z_STREAM_END, "{} is truncated (the deflate stream does not end)", where);
  GCNLAB_CHECK(produced == m.size, "{} inflates to {} bytes, the directory records {}", where, produced, m.size);
  GCNLAB_CHECK(crc == m.crc, "{} is damaged (CRC-32 {:08x}, the directory records {:08x})", where, crc, m.crc);
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
    const std::uint64_t data_bytes = member(name).size - std::min<std::uint64_t>(member(name).size, len);
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

}  // namespace gcnlab
