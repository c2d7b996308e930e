// mtx:FILE[,features=F,classes=K,seed=S] — Matrix Market coordinate files
// (real / integer / pattern; general / symmetric / skew-symmetric; 1-based;
// plain or gzip). Only the structure is used: entry (i, j) is an edge i -> j,
// diagonal entries are dropped (self-loops are added once by the
// normalisation). Symmetric and skew-symmetric files, and general files whose
// structure is symmetric, are undirected graphs. Vertex data is synthetic.

#include <cerrno>
#include <cstdlib>
#include <cstring>
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

}  // namespace

Dataset read_matrix_market(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"features", "classes", "seed"});
  const std::string path = a.str("path");
  LineReader in(path);
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
  const bool has_value = field != "pattern";

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

  std::vector<Coo> edges;
  edges.reserve(nnz * (symmetry == "general" ? 1 : 2));
  long long seen = 0;
  while (in.next(line)) {
    if (line.empty() || line[0] == '%' || blank(line)) continue;
    GCNLAB_CHECK(seen < nnz, "'{}' line {}: more entries than the {} declared", path, in.number(), nnz);
    const char* p = line.c_str();
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(p, &end, 10);
    const bool ok_i = end != p && errno == 0;
    p = end;
    const long long j = std::strtoll(p, &end, 10);
    const bool ok_j = end != p && errno == 0;
    p = end;
    GCNLAB_CHECK(ok_i && ok_j, "'{}' line {}: malformed entry '{}'", path, in.number(), line);
    if (has_value) {
      const double v = std::strtod(p, &end);
      GCNLAB_CHECK(end != p && errno == 0, "'{}' line {}: non-numeric value in '{}'", path, in.number(), line);
      (void)v;  // structure only
      p = end;
    }
    GCNLAB_CHECK(blank(p), "'{}' line {}: unexpected text in '{}'", path, in.number(), line);
    GCNLAB_CHECK(i >= 1 && i <= rows && j >= 1 && j <= cols,
                 "'{}' line {}: index ({}, {}) out of range 1..{}", path, in.number(), i, j, rows);
    ++seen;
    if (i == j) continue;
    edges.push_back({i - 1, j - 1, 1.f});
    if (symmetry != "general") edges.push_back({j - 1, i - 1, 1.f});
  }
  GCNLAB_CHECK(seen == nnz, "'{}': {} entries declared but {} found", path, nnz, seen);

  Dataset d;
  const auto slash = path.find_last_of('/');
  d.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  if (auto dot = d.name.find(".mtx"); dot != std::string::npos) d.name.resize(dot);
  d.adj = csr_from_coo(rows, cols, std::move(edges), /*sum_duplicates=*/false);
  d.directed = symmetry == "general" && !structurally_symmetric(d.adj);
  add_synthetic_vertex_data(d, a.integer("features", 128, 1),
                            static_cast<int>(a.integer("classes", 32, 1)), a.integer("seed", 1));
  return d;
}

}  // namespace gcnlab
