// The strategy and model options every command that builds a run reads (train, bench, plan, simulate).
#include "apps/gcnlab/run_options.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/registry.hpp"
#include "common/core/error.hpp"
#include "models/registry.hpp"

namespace gcnlab::cli {

StrategyOptions read_strategy_options(Args& args, const char* command, const std::string& default_algo) {
  StrategyOptions sopts;
  sopts.algo = args.value_or("--algo", default_algo);
  GCNLAB_CHECK(!sopts.algo.empty(), "{} needs --algo (one of: {})", command, fmt::join(strategy_names(), ", "));
  sopts.order = args.value_or("--order", "auto");
  sopts.comm_precision = args.value_or("--comm-precision", "fp32");
  // Every registered strategy's options (the chosen one reads its own; the
  // others' are kept for plan --algo LIST, which builds several).
  for (const RegisteredOption& r : registered_options()) {
    const std::string flag = "--" + r.option.name;
    if (r.option.kind == StrategyOption::Kind::integer) {
      const long long v = args.integer(flag, std::numeric_limits<long long>::min(), r.option.min);
      if (v != std::numeric_limits<long long>::min()) sopts.options[r.option.name] = std::to_string(v);
    } else if (const auto v = args.value(flag)) {
      sopts.options[r.option.name] = *v;
    }
  }
  return sopts;
}

ModelConfig read_model_config(Args& args) {
  ModelConfig model;
  model.name = model_info(args.value_or("--model", "gcn")).name;
  model.layers = static_cast<int>(args.integer("--layers", 3, 1));
  model.hidden = args.integer("--hidden", 128, 1);
  model.optimizer = args.value_or("--optimizer", "adam");
  model.lr = static_cast<float>(args.real("--lr", 0.01));
  model.weight_decay = static_cast<float>(args.real("--weight-decay", 0));
  const std::string wd_layers = args.value_or("--weight-decay-layers", "all");
  GCNLAB_CHECK(wd_layers == "all" || wd_layers == "first", "--weight-decay-layers must be all or first");
  model.weight_decay_first_only = wd_layers == "first";
  model.dropout = static_cast<float>(args.real("--dropout", 0));
  model.seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0));
  model.learn_features = args.flag("--learn-features");
  // The flags one model reads (ModelInfo::flags), refused with any other.
  const ModelInfo& chosen = model_info(model.name);
  const auto owned = [&](const std::string& flag, bool given) {
    if (!given || std::find(chosen.flags.begin(), chosen.flags.end(), flag) != chosen.flags.end()) return;
    std::vector<std::string> owners;
    for (const ModelInfo& m : gcnlab::models())
      if (std::find(m.flags.begin(), m.flags.end(), flag) != m.flags.end()) owners.push_back("--model " + m.name);
    fail("{} is for {}; --model {} has no such setting", flag, fmt::join(owners, ", "), model.name);
  };
  owned("--gin-eps", args.value("--gin-eps").has_value());
  model.gin_eps = static_cast<float>(args.real("--gin-eps", 0));
  model.train_eps = args.flag("--train-eps");
  owned("--train-eps", model.train_eps);
  owned("--heads", args.value("--heads").has_value());
  model.heads = static_cast<int>(args.integer("--heads", 8, 1));
  owned("--concat", args.value("--concat").has_value());
  model.concat = args.value_or("--concat", "on") == "on";  // the spec's choices: on | off
  owned("--output-heads", args.value("--output-heads").has_value());
  model.output_heads = static_cast<int>(args.integer("--output-heads", 1, 1));
  owned("--attention-dropout", args.value("--attention-dropout").has_value());
  model.attention_dropout = static_cast<float>(args.real("--attention-dropout", 0));
  GCNLAB_CHECK(model.attention_dropout >= 0 && model.attention_dropout < 1,
               "--attention-dropout must be in [0, 1) (got {})", model.attention_dropout);
  return model;
}
}  // namespace gcnlab::cli
