#include "models/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/error.hpp"

namespace gcnlab {

// Every model, one line each (its entry is defined in models/<name>/).
// Adding a model: a folder with its entry function, and one line here.
#define GCNLAB_MODELS(X) \
  X(gcn_model)           \
  X(scalegnn_model)      \
  X(sage_model)          \
  X(gin_model)           \
  X(gat_model)

#define GCNLAB_DECLARE(entry) ModelInfo entry();
GCNLAB_MODELS(GCNLAB_DECLARE)
#undef GCNLAB_DECLARE

namespace {

std::vector<ModelInfo> checked(std::vector<ModelInfo> all) {
  for (std::size_t i = 0; i < all.size(); ++i) {
    GCNLAB_ASSERT(all[i].make && !all[i].name.empty() && all[i].demands.name == all[i].name);
    for (std::size_t j = 0; j < i; ++j) GCNLAB_ASSERT(all[j].name != all[i].name);
  }
  return all;
}

}  // namespace

const std::vector<ModelInfo>& models() {
#define GCNLAB_ENTRY(entry) entry(),
  static const std::vector<ModelInfo> all = checked({GCNLAB_MODELS(GCNLAB_ENTRY)});
#undef GCNLAB_ENTRY
  return all;
}

const ModelInfo& model_info(const std::string& name) {
  for (const ModelInfo& m : models())
    if (m.name == name) return m;
  fail("unknown --model '{}' (available: {})", name, fmt::join(model_names(), ", "));
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ModelInfo& m : models()) names.push_back(m.name);
  return names;
}

std::unique_ptr<Model> make_model(const std::string& name) { return model_info(name).make(); }

Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) {
  return make_model(c.name)->architecture(c, features, classes);
}

}  // namespace gcnlab
