#pragma once
// Model and training hyper-parameters (docs/design.md "The model (defaults)").

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gcnlab {

struct ModelConfig {
  std::string name = "gcn";  // --model: a registered model (models/registry.hpp, one folder each)
  int layers = 3;  // the model's layers (gcn: graph convolutions; scalegnn: GNN layers between projection and head)
  std::int64_t hidden = 128;
  std::string optimizer = "adam";  // adam | sgd
  float lr = 0.01f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weight_decay = 0;
  bool weight_decay_first_only = false;  // Kipf & Welling apply it to layer 0 only
  float dropout = 0;
  std::uint64_t seed = 1;
  // Trainable input features (node embeddings, as Plexus): H_0 is a parameter
  // updated by the optimiser from dL/dH_0 (no weight decay on it).
  bool learn_features = false;
  // scalegnn: ε of RMSNorm, x / sqrt(mean(x²) + ε) (Eq. 7).
  float norm_eps = 1e-6f;
  // gin: ε of h'_i = MLP((1 + ε) h_i + Σ_j h_j) (--gin-eps), its initial
  // value where it is learned (--train-eps: one ε per GIN layer).
  float gin_eps = 0;
  bool train_eps = false;
  // gat: the attention heads of each hidden layer (--heads, each --hidden
  // wide), concatenated or averaged (--concat on|off: PyG's GATConv concat),
  // the output layer's heads, averaged (--output-heads; the GAT paper's Cora
  // model has one, its PPI model six), and the dropout on the attention
  // coefficients (--attention-dropout; GATConv's `dropout`).
  int heads = 8;
  bool concat = true;
  int output_heads = 1;
  float attention_dropout = 0;
};

struct TrainConfig {
  int epochs = 100;
  // Run a dropout-free forward pass each epoch for val/test accuracy (when
  // dropout > 0); its traffic is accounted in Phase::eval, not in the epoch.
  bool eval_each_epoch = true;
  // Memory admission: each rank's analytic need must fit this many bytes
  // (0: unchecked), else setup fails before allocating activations and
  // vertex data. The device's free memory is checked too where it is known.
  double memory_budget = 0;
  std::string memory_budget_source;  // e.g. "--memory-limit", "MemAvailable / 4 ranks on the node"

  // Mini-batch training (ScaleGNN Sec. III-D, Alg. 1): each step trains on the
  // induced subgraph of B uniformly sampled vertices (0: full-graph epochs).
  std::int64_t batch_size = 0;
  int steps_per_epoch = 0;  // 0: ceil(N / (B D)), so that an epoch samples about N vertices
  int eval_every = 0;       // a full-graph evaluation every k steps besides each epoch's end (0: none)
  // Sec. V-A: the next step's sample is drawn and cut on a helper thread
  // while the current step trains (the same samples either way).
  bool prefetch = true;
  // Ranks per node of the job (block placement), for the results' split of the
  // modelled bytes into intra- and inter-node links (ByteModel, link_bytes); 0: one node.
  int ranks_per_node = 0;

  // Validation accuracy whose first crossing is timed (time to accuracy,
  // ScaleGNN Sec. VII-B); 0: none.
  double target_acc = 0;

  // Test hook: runs on this rank between each epoch's (or step's) forward and
  // backward pass with the epoch; the app installs it for fault injection
  // (GCNLAB_INJECT_FAULT, tests/cli/checkpoint.sh). Empty: nothing runs.
  std::function<void(int epoch)> between_passes;
};

}  // namespace gcnlab
