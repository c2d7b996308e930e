#pragma once
// The models' registry: the one place that knows which models exist (as
// algorithms/registry.hpp knows the strategies). Each model describes itself
// in its own folder, models/<name>/, with a ModelInfo: name, one line with its
// paper, what it demands of a strategy and its factory. The CLI (--model's
// choices), `gcnlab models [--json]`, the results, checkpoints and the test
// harness read it; no code outside models/<name>/ branches on a model's name.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/model/model.hpp"

namespace gcnlab {

struct ModelInfo {
  std::string name;     // --model NAME
  std::string summary;  // one line, with its paper
  ModelDemands demands;  // what it asks of a strategy (StrategyOptions::model)
  // The flags of ModelConfig that only it reads ("--train-eps"): given with
  // another --model, they are refused.
  std::vector<std::string> flags;
  std::unique_ptr<Model> (*make)() = nullptr;
};

// Every registered model, in the registry's order.
const std::vector<ModelInfo>& models();
// The entry of --model NAME; an unknown name fails with the list.
const ModelInfo& model_info(const std::string& name);
std::vector<std::string> model_names();
std::unique_ptr<Model> make_model(const std::string& name);
// The weight layers of c's model for `features` inputs and `classes` outputs.
Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes);

template <class M>
std::unique_ptr<Model> make() {
  return std::make_unique<M>();
}

}  // namespace gcnlab
