// mtx:FILE[,features=F,classes=K,seed=S] — Matrix Market coordinate files
// (real / integer / pattern; general / symmetric / skew-symmetric; 1-based;
// plain or gzip). Only the structure is used: entry (i, j) is an edge i -> j,
// diagonal entries are dropped (self-loops are added once by the
// normalisation). Symmetric and skew-symmetric files, and general files whose
// structure is symmetric, are undirected graphs. Vertex data is synthetic.
//
// Read whole by read_matrix_market, or by draws (matrix_market_draws: the
// entry lines of a byte range, or of a range of lines of a gzip stream) by
// ranks that prepare it together.

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "common/data/dataset.hpp"
#include "common/data/line_reader.hpp"
#include "common/data/spec_args.hpp"

namespace gcnlab {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The banner and the size line, and where the entries start.
struct MtxHeader {
  std::string path;
  std::int64_t n = 0, entries = 0;
  bool has_value = false;
  std::string symmetry;
  std::int64_t lines = 0;       // the header's lines, the size line's included
  std::int64_t data_byte = 0;   // the first byte after the size line (of the uncompressed text)
};

MtxHeader read_header(LineReader& in) {
  MtxHeader h;
  h.path = in.path();
  const std::string& path = h.path;
  std::string line;
  GCNLAB_CHECK(in.next(line), "'{}' is empty (expected a Matrix Market header)", path);
  std::istringstream header(line);
  std::string banner, object, format, field, symmetry;
  header >> banner >> object >> format >> field >> symmetry;
  GCNLAB_CHECK(banner == "%%MatrixMarket", "'{}' line 1: missing '%%MatrixMarket' header", path);
  object = lower(object), format = lower(format), field = lower(field), symmetry = lower(symmetry);
  GCNLAB_CHECK(object == "matrix" && format == "coordinate",
               "'{}' line 1: only 'matrix coordinate' files are supported (got '{} {}')", path, object,
               format);
  GCNLAB_CHECK(field == "real" || field == "integer" || field == "pattern",
               "'{}' line 1: unsupported field '{}' (expected real, integer or pattern)", path, field);
  GCNLAB_CHECK(symmetry == "general" || symmetry == "symmetric" || symmetry == "skew-symmetric",
               "'{}' line 1: unsupported symmetry '{}' (expected general, symmetric or skew-symmetric)",
               path, symmetry);
  h.has_value = field != "pattern";
  h.symmetry = symmetry;

  // size line (after comments)
  do {
    GCNLAB_CHECK(in.next(line), "'{}': missing size line", path);
  } while (line.empty() || line[0] == '%' || blank(line));
  long long rows = 0, cols = 0, nnz = 0;
  {
    std::istringstream s(line);
    std::string extra;
    GCNLAB_CHECK((s >> rows >> cols >> nnz) && !(s >> extra) && rows >= 0 && cols >= 0 && nnz >= 0,
                 "'{}' line {}: malformed size line '{}' (expected ROWS COLS NNZ)", path, in.number(),
                 line);
  }
  GCNLAB_CHECK(rows == cols, "'{}': matrix is {}x{}; a graph adjacency must be square", path, rows, cols);
  h.n = rows, h.entries = nnz;
  h.lines = in.number();
  h.data_byte = in.tell();
  return h;
}

// One line after the size line (`where`: "line N" or "byte B" for messages):
// emit(i - 1, j - 1) for an entry (i, j), diagonal entries included.
void read_entry(const MtxHeader& h, const std::string& line, LinePlace where, const EdgeEmit& emit) {
  if (line.empty() || line[0] == '%' || blank(line)) return;
  const char* p = line.c_str();
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(p, &end, 10);
  const bool ok_i = end != p && errno == 0;
  p = end;
  const long long j = std::strtoll(p, &end, 10);
  const bool ok_j = end != p && errno == 0;
  p = end;
  GCNLAB_CHECK(ok_i && ok_j, "'{}' {}: malformed entry '{}'", h.path, where, line);
  if (h.has_value) {
    const double v = std::strtod(p, &end);
    GCNLAB_CHECK(end != p && errno == 0, "'{}' {}: non-numeric value in '{}'", h.path, where, line);
    (void)v;  // structure only
    p = end;
  }
  GCNLAB_CHECK(blank(p), "'{}' {}: unexpected text in '{}'", h.path, where, line);
  GCNLAB_CHECK(i >= 1 && i <= h.n && j >= 1 && j <= h.n, "'{}' {}: index ({}, {}) out of range 1..{}", h.path, where,
               i, j, h.n);
  emit(i - 1, j - 1);
}

void check_entries(const MtxHeader& h, std::int64_t found) {
  GCNLAB_CHECK(found == h.entries, "'{}': {} entries declared but {} found", h.path, h.entries, found);
}

MtxHeader header_of(const std::string& path) {
  LineReader in(path);
  return read_header(in);
}

std::string name_of(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (auto dot = name.find(".mtx"); dot != std::string::npos) name.resize(dot);
  return name;
}

}  // namespace

Dataset read_matrix_market(const DatasetSpec& spec) {
  Dataset d = matrix_market_vertex_facts(spec);
  LineReader in(SpecArgs(spec, {"features", "classes", "seed"}).str("path"));
  const MtxHeader h = read_header(in);
  std::vector<Coo> edges;
  edges.reserve(h.entries * (h.symmetry == "general" ? 1 : 2));
  std::int64_t seen = 0;
  std::string line;
  while (in.next(line)) {
    read_entry(h, line, LinePlace{"line", in.number()}, [&](std::int64_t u, std::int64_t v) {
      GCNLAB_CHECK(seen < h.entries, "'{}' line {}: more entries than the {} declared", h.path, in.number(),
                   h.entries);
      ++seen;
      if (u == v) return;
      edges.push_back({u, v, 1.f});
      if (h.symmetry != "general") edges.push_back({v, u, 1.f});
    });
  }
  check_entries(h, seen);
  d.adj = csr_from_coo(h.n, h.n, std::move(edges), /*sum_duplicates=*/false);
  d.directed = h.symmetry == "general" && !structurally_symmetric(d.adj);
  add_synthetic_vertex_data(d, d.features, d.classes, d.feature_seed);
  return d;
}

Dataset matrix_market_vertex_facts(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"features", "classes", "seed"});
  Dataset d;
  d.name = name_of(a.str("path"));
  set_synthetic_facts(d, a.integer("features", 128, 1), static_cast<int>(a.integer("classes", 32, 1)),
                      a.integer("seed", 1));
  return d;
}

EdgeDraws matrix_market_draws(const DatasetSpec& spec) {
  const std::string path = SpecArgs(spec, {"features", "classes", "seed"}).str("path");
  const MtxHeader h = header_of(path);
  EdgeDraws g;
  g.n = h.n;
  g.directed = h.symmetry == "general";
  g.undirected_if_symmetric = g.directed;
  std::shared_ptr<LineStream> stream;
  if (gzipped(path)) {
    g.stream = path, g.draws = -1;
    stream = std::make_shared<LineStream>(path);
  } else {
    g.draws = static_cast<std::int64_t>(std::filesystem::file_size(path)) - h.data_byte;
  }
  g.draw = [h, stream](std::int64_t k0, std::int64_t k1, const EdgeEmit& emit) {
    if (stream)
      stream->read(std::max(k0, h.lines), k1, [&](const std::string& line, std::int64_t k) {
        read_entry(h, line, LinePlace{"line", k + 1}, emit);
      });
    else
      for_lines_in_bytes(h.path, h.data_byte + k0, h.data_byte + k1, [&](const std::string& line, std::int64_t at) {
        read_entry(h, line, LinePlace{"byte", at}, emit);
      });
  };
  g.check_edges = [h](std::int64_t read) { check_entries(h, read); };
  return g;
}

}  // namespace gcnlab
