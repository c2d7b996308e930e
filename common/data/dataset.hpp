#pragma once
// A graph learning dataset as read or generated, before distribution: the raw
// adjacency A (no self-loops, values ignored), vertex features, labels and the
// train/val/test split. Loaders live next to this file; `load_dataset` picks
// one from a SPEC string (docs/running.md "Datasets").

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <span>
#include <vector>

#include "common/backend/elementwise.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

class ShardStore;

struct Dataset {
  std::string spec;   // as given by the user
  std::string name;   // short name for tables and plots
  HostCsr adj;        // n x n, A_uv != 0 <=> edge u -> v; no self-loops (empty when prepared)
  bool directed = false;
  std::int64_t nodes() const;

  // Features: either stored (n x f row-major) or synthetic (drawn from the
  // counter-based RNG on demand, so no rank ever materialises all of them).
  std::int64_t features = 0;
  std::vector<float> x;
  bool synthetic_features = false;
  std::uint64_t feature_seed = 0;
  // SBM only: class-dependent signal added to synthetic features.
  float class_signal = 0.f;

  int classes = 0;
  std::vector<std::int32_t> labels;  // -1 = unlabeled (only allowed outside the splits), else below kLabelLimit
  std::vector<std::uint8_t> split;   // ew::Split per vertex

  // A prepared dataset (gcl:DIR): `adj`, `x`, `labels` and `split` are empty;
  // the graph and the vertex data stay on disk, and each rank reads only the
  // rows it asks for through the accessors below.
  std::shared_ptr<const ShardStore> shards;
  std::int64_t nnz() const;  // of A

  // Features [c0, c1) of each vertex, row after row.
  void feature_rows(std::span<const std::int64_t> vertices, std::int64_t c0, std::int64_t c1, float* out) const;
  std::vector<std::int32_t> labels_of(std::span<const std::int64_t> vertices) const;
  std::vector<std::uint8_t> split_of(std::span<const std::int64_t> vertices) const;
  std::int64_t count(ew::Split s) const;

 private:
  // Synthetic features of vertex v with label y, columns [c0, c1).
  void synthetic_row(std::int64_t v, std::int32_t y, std::int64_t c0, std::int64_t c1, float* out) const;
};

// "kind:rest" -> kind and a key=value map; the first comma-separated item
// without '=' is stored under key "path".
struct DatasetSpec {
  std::string kind;
  std::map<std::string, std::string> args;
};
DatasetSpec parse_dataset_spec(const std::string& spec);

// Labels are int32 class numbers and `classes` the largest + 1: a file's
// label at or above this is refused (never wrapped into a smaller class).
inline constexpr std::int64_t kLabelLimit = 2147483647;  // INT32_MAX

// The default dataset (no --dataset): a synthetic SBM that needs no files.
inline constexpr const char* kDefaultDataset = "sbm:nodes=20000,classes=8,avg-degree=16,features=64,seed=1";

// What a SPEC states of its dataset before anything is loaded or generated
// (admission before loading): from a generator's arguments, an edge list's
// declared nodes=N, a prepared directory's meta.json. 0 where not known.
struct DatasetFacts {
  std::int64_t nodes = 0;
  std::int64_t nnz = 0;  // of A; exact for a prepared directory, else 0 (not known)
  std::int64_t features = 0;
  std::int64_t classes = 0;
  bool stored_features = false;  // held in memory when loaded (not synthetic)
  bool prepared = false;         // a prepared directory: each rank reads its own rows (not loaded whole)
};
// nullopt: the spec's kind states nothing before loading (planetoid, mtx, ogb, reddit, gcl:FILE).
// Throws on a malformed spec, as load_dataset would.
std::optional<DatasetFacts> dataset_facts(const std::string& spec);
DatasetFacts sbm_facts(const DatasetSpec& spec);        // generators.cpp
DatasetFacts rmat_facts(const DatasetSpec& spec);       // generators.cpp
DatasetFacts edge_list_facts(const DatasetSpec& spec);  // edge_list.cpp

// Loads or generates; validates (labels in range, finite features, split
// vertices labeled) and throws gcnlab::Error naming the problem.
Dataset load_dataset(const std::string& spec);

// Row-normalises stored features in place (Planetoid preprocessing): each row
// divided by its sum; all-zero rows stay zero.
void row_normalize_features(Dataset& d);

// Individual sources (data/*.cpp).
Dataset generate_sbm(const DatasetSpec& spec);
Dataset generate_rmat(const DatasetSpec& spec);
Dataset read_matrix_market(const DatasetSpec& spec);
Dataset read_planetoid(const DatasetSpec& spec);
Dataset read_edge_list(const DatasetSpec& spec);  // edges:FILE (edge_list.cpp)
Dataset read_ogb(const DatasetSpec& spec);        // ogb:DIR (edge_list.cpp)
Dataset read_reddit(const DatasetSpec& spec);     // reddit:DIR (npz_datasets.cpp)
// OGB's .npz form (raw/data.npz, raw/node-label.npz): features, graph and
// labels into d; false when DIR has no raw/data.npz (npz_datasets.cpp).
bool read_ogb_npz(const std::string& dir, Dataset& d);
Dataset read_gcl(const std::string& path);
void write_gcl(const Dataset& d, const std::string& path);

// Synthetic vertex data for structure-only graphs (as Plexus does): random
// features and labels = degree buckets of equal size; split by hash.
void add_synthetic_vertex_data(Dataset& d, std::int64_t features, int classes, std::uint64_t seed);
// Its facts alone (checked): synthetic features of width `features`, `classes`, `seed`.
void set_synthetic_facts(Dataset& d, std::int64_t features, int classes, std::uint64_t seed);
// Assigns each vertex to train/val/test by a counter-based draw: random_split
// of each vertex, a pure function of (v, seed).
void assign_random_split(Dataset& d, double train, double val, std::uint64_t seed);
std::uint8_t random_split(std::int64_t v, double train, double val, std::uint64_t seed);
// add_synthetic_vertex_data's parts, for a graph no process holds whole
// (partitioners/prepare_ranks.hpp): the label of the vertex at `rank` in the
// stable order by degree, and the split's fractions.
inline std::int32_t degree_bucket(std::int64_t rank, int classes, std::int64_t n) {
  return static_cast<std::int32_t>(rank * classes / (n > 1 ? n : 1));
}
inline constexpr double kSyntheticTrain = 0.6, kSyntheticVal = 0.2;

// A generated graph drawn in parts: `draw(k0, k1, emit)` emits the edges of
// draws [k0, k1) of `draws`, each draw a pure function of the spec and its
// index, so that any range is drawn alone, on any rank, in any order.
// Self-loops are dropped and duplicates merged where the CSR is built, and
// an undirected graph is symmetrised there (as csr_from_edge_passes does).
struct EdgeDraws {
  std::int64_t n = 0, draws = 0;
  bool directed = false;
  // Matrix Market's 'general' files: directed unless their structure is
  // symmetric (then undirected, as read_matrix_market makes them).
  bool undirected_if_symmetric = false;
  // Non-empty: a file read as one stream (gzip, a deflated npz member), so
  // that its draws are read in order by one reader on one thread of rank 0;
  // `draws` < 0 until they are counted (a text file's lines, LineStream::count).
  std::string stream;
  // Read by one thread on each rank (a reader kept between calls: a stored npz member).
  bool serial = false;
  std::function<void(std::int64_t k0, std::int64_t k1, const EdgeEmit& emit)> draw;
  // Where the source declares how many edges it holds (Matrix Market's size
  // line): throws unless `read`, the edges of all draws (self-loops
  // included), is that number. Null: nothing declared.
  std::function<void(std::int64_t read)> check_edges;
};
// The labels and split of a source that gives them vertex by vertex (SBM's:
// functions of v; OGB's: its files). A null `label`: the graph's degree
// buckets (add_synthetic_vertex_data).
struct VertexLabels {
  std::function<std::int32_t(std::int64_t v)> label;
  std::function<std::uint8_t(std::int64_t v)> split;
};
// SBM's draws (generators.cpp), its dataset without arrays (name, classes,
// synthetic features and their class signal), and its labels and split.
EdgeDraws sbm_draws(const DatasetSpec& spec);
Dataset sbm_vertex_facts(const DatasetSpec& spec);
VertexLabels sbm_vertex_labels(const DatasetSpec& spec);
// R-MAT's draws (generators.cpp) and its dataset without arrays: name,
// features (synthetic), classes and seed; add_synthetic_vertex_data's labels
// and split are derived from the graph.
EdgeDraws rmat_draws(const DatasetSpec& spec);
Dataset rmat_vertex_facts(const DatasetSpec& spec);
// A text edge list (edges:FILE, edge_list.cpp) drawn by byte ranges: draw k
// is the line that starts at byte k, if any; a gzip file is drawn as a
// stream, draw k its line k. With n < 0 and no nodes=N in the spec, n is not
// known (-1) and ids are not checked against it: edge_list_scan of every
// range, then edge_list_nodes, find it as the 1-process loader does.
struct EdgeScan {
  long long max_id = -1;
  std::int64_t edges = 0;
};
EdgeDraws edge_list_draws(const DatasetSpec& spec, std::int64_t n = -1);
EdgeScan edge_list_scan(const DatasetSpec& spec, std::int64_t k0, std::int64_t k1);  // draws [k0, k1)
std::int64_t edge_list_nodes(const std::string& path, long long max_id, std::int64_t edges);
Dataset edge_list_vertex_facts(const DatasetSpec& spec);
// An OGB directory (ogb:DIR, edge_list.cpp) in parts: its facts (name,
// directed); the vertex data read by one reader (the features' width and
// rows, checked but not kept; labels, classes and split, checked as
// load_dataset checks them), returning n; its edges drawn (the csv form's
// edge list as edges: draws; the npz form's edge_index by element ranges
// when stored, inflated in order by one reader when deflated); the features
// streamed into a binary file (x.bin's f32[n x f]). The npz form's parts are
// in npz_datasets.cpp.
Dataset ogb_vertex_facts(const DatasetSpec& spec);
std::int64_t read_ogb_vertex_data(const DatasetSpec& spec, Dataset& d);
EdgeDraws ogb_edge_draws(const DatasetSpec& spec, std::int64_t n);
void write_ogb_features(const DatasetSpec& spec, const std::string& path);
std::int64_t read_ogb_npz_vertex_data(const std::string& dir, Dataset& d);
EdgeDraws ogb_npz_edge_draws(const std::string& dir, std::int64_t n, bool directed);
void write_ogb_npz_features(const std::string& dir, const std::string& path);
// A Matrix Market file (mtx:FILE, matrix_market.cpp) drawn alike: draw k is
// the entry line that starts at byte k after the size line (line k of a gzip
// file); entry (i, j) is the edge i - 1 -> j - 1.
EdgeDraws matrix_market_draws(const DatasetSpec& spec);
Dataset matrix_market_vertex_facts(const DatasetSpec& spec);

// A hash of the graph, labels and split (and the synthetic-feature seed): what
// a checkpoint records to refuse a resume on other data of the same size. A
// prepared directory answers with the fingerprint recorded when it was prepared
// ("" for directories prepared before fingerprints were recorded).
// `like`: a recorded fingerprint whose kind to compute (one recorded before
// xxHash is FNV-1a, common/core/fingerprint.hpp); empty: the current kind.
std::string dataset_fingerprint(const Dataset& d, std::string_view like = {});

// Statistics printed by `gcnlab info`.
struct DatasetInfo {
  std::int64_t nodes, nnz, nnz_with_self_loops, edges_undirected;
  std::int64_t degree_min, degree_max;
  double degree_mean;
  std::int64_t isolated;
};
DatasetInfo dataset_info(const Dataset& d);

}  // namespace gcnlab
