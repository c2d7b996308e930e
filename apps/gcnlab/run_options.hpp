#pragma once
// The strategy and model options of every command that builds a run (train,
// bench epoch, plan, simulate), read from the command line.

#include "apps/gcnlab/options.hpp"
#include "common/model/strategy.hpp"
#include "common/model/trainer.hpp"

namespace gcnlab::cli {

// The strategy options (all but --grid, which the caller reads): --algo, --order,
// --comm-precision and every registered strategy's own.
// --algo (`default_algo` when absent; an error when that is empty) and every registered strategy's options.
StrategyOptions read_strategy_options(Args& args, const char* command, const std::string& default_algo = "");
// The model: --model and its hyper-parameters, the flags only one model reads refused with the others.
ModelConfig read_model_config(Args& args);

}  // namespace gcnlab::cli
