// A file of the comm layer that includes a header of the model layer above it.
// It must not compile: tests/layers/check.sh builds it (target
// gcnlab_layer_probe, which links gcnlab_comm only) and expects the include to fail.
#include "common/model/trainer.hpp"
