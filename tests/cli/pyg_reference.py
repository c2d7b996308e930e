"""gcnlab's serial model against PyTorch Geometric 2.3.1 on a prepared graph
(tests/cli/pyg_reference.sh): same graph, features, labels and initial weights;
float64 in the reference. Exits non-zero, printing the worst difference, when
the loss, an accuracy or a gradient differs."""
import json
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torch_geometric
from torch_geometric.nn import GATConv, GINConv, SAGEConv

prep, wdir, results, model, lr = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
assert torch_geometric.__version__ == "2.3.1", torch_geometric.__version__
meta = json.load(open(f"{prep}/meta.json"))
n, f = meta["nodes"], meta["features"]

# Âᵀ's pattern in ordering-0 positions: row = target, column = source (common/data/shards.hpp)
order = np.fromfile(f"{prep}/order0.bin", dtype="<i8")
with open(f"{prep}/adj-0-0-0-0.bin", "rb") as a:
    rows, cols, nnz = np.frombuffer(a.read(24), dtype="<i8")
    rowptr = np.frombuffer(a.read(8 * (rows + 1)), dtype="<i8")
    col = np.frombuffer(a.read(4 * nnz), dtype="<i4")
row = np.repeat(np.arange(rows), np.diff(rowptr))
target, source = order[row], order[col]
off = target != source  # A + I: the diagonal is gcnlab's self-loop, not an edge
edge_index = torch.tensor(np.stack([source[off], target[off]]), dtype=torch.long)
x = torch.tensor(np.fromfile(f"{prep}/x.bin", dtype="<f4").reshape(n, f), dtype=torch.float64)
y = torch.tensor(np.fromfile(f"{prep}/labels.bin", dtype="<i4"), dtype=torch.long)
split = np.fromfile(f"{prep}/split.bin", dtype="u1")  # ew::Split: 1 train, 2 val, 3 test

def w(stage, name):
    return np.load(f"{wdir}/{stage}/{name}.npy").astype(np.float64)

if model == "sage":
    convs = [SAGEConv(16 if l else f, 16 if l == 0 else meta["classes"]).double() for l in range(2)]
    params = {}
    for l, conv in enumerate(convs):
        with torch.no_grad():
            conv.lin_l.weight.copy_(torch.tensor(w("initial", f"W{l}").T))
            conv.lin_l.bias.copy_(torch.tensor(w("initial", f"b{l}").reshape(-1)))
            conv.lin_r.weight.copy_(torch.tensor(w("initial", f"Wroot{l}").T))
        params[f"W{l}"] = (conv.lin_l.weight, True)
        params[f"b{l}"] = (conv.lin_l.bias, False)
        params[f"Wroot{l}"] = (conv.lin_r.weight, True)
    out = convs[1](F.relu(convs[0](x, edge_index)), edge_index)
elif model == "gin":  # weight layers 2k, 2k + 1: GIN layer k's MLP; eps<k>
    widths = [f, 16, meta["classes"]]
    convs = []
    params = {}
    for k in range(2):
        mlp = torch.nn.Sequential(torch.nn.Linear(widths[k], widths[k + 1]), torch.nn.ReLU(),
                                  torch.nn.Linear(widths[k + 1], widths[k + 1]))
        conv = GINConv(mlp, eps=0.1, train_eps=True).double()
        for j, lin in ((2 * k, mlp[0]), (2 * k + 1, mlp[2])):
            with torch.no_grad():
                lin.weight.copy_(torch.tensor(w("initial", f"W{j}").T))
                lin.bias.copy_(torch.tensor(w("initial", f"b{j}").reshape(-1)))
            params[f"W{j}"] = (lin.weight, True)
            params[f"b{j}"] = (lin.bias, False)
        assert float(w("initial", f"eps{k}")) == np.float32(0.1)
        params[f"eps{k}"] = (conv.eps, False)
        convs.append(conv)
    out = convs[1](F.relu(convs[0](x, edge_index)), edge_index)
elif model == "gat":  # 8 heads of 8 concatenated, ELU, one output head (GAT's Cora model)
    heads, hidden, C = 8, 8, meta["classes"]
    convs = [GATConv(f, hidden, heads=heads).double(), GATConv(heads * hidden, C, heads=1, concat=False).double()]
    params = {}
    for l, conv in enumerate(convs):
        h, width = conv.heads, conv.out_channels
        with torch.no_grad():
            conv.lin_src.weight.copy_(torch.tensor(w("initial", f"W{l}").T))
            conv.att_src.copy_(torch.tensor(w("initial", f"att_src{l}").reshape(1, h, width)))
            conv.att_dst.copy_(torch.tensor(w("initial", f"att_dst{l}").reshape(1, h, width)))
            conv.bias.copy_(torch.tensor(w("initial", f"b{l}").reshape(-1)))
        params[f"W{l}"] = (conv.lin_src.weight, True)
        params[f"att_src{l}"] = (conv.att_src, False)
        params[f"att_dst{l}"] = (conv.att_dst, False)
        params[f"b{l}"] = (conv.bias, False)
    out = convs[1](F.elu(convs[0](x, edge_index)), edge_index)
else:
    sys.exit(f"no reference for --model {model}")

train = torch.tensor(split == 1)
loss = F.cross_entropy(out[train], y[train])
loss.backward()

failures = []
epoch = json.load(open(results))["epochs"][0]
rel = abs(epoch["loss"] - loss.item()) / abs(loss.item())
print(f"{model}: loss gcnlab {epoch['loss']:.9f} PyG {loss.item():.9f} (relative {rel:.2e})")
if rel > 1e-5:
    failures.append("loss")
pred = out.argmax(1).numpy()
for name, s in (("train_acc", 1), ("val_acc", 2), ("test_acc", 3)):
    ref = float((pred[split == s] == y.numpy()[split == s]).mean())
    if name in epoch and abs(epoch[name] - ref) > 1e-9:
        failures.append(f"{name} {epoch[name]} vs {ref}")
for name, (p, transposed) in params.items():
    grad = p.grad.numpy()
    grad = grad.T if transposed else grad.reshape(1, -1)
    ours = (w("initial", name) - w("final", name)) / lr
    worst = np.max(np.abs(ours - grad) / (np.abs(grad) + np.abs(grad).max()))
    print(f"{model}: d{name} {grad.shape}: worst |gcnlab - PyG| / (|PyG| + max |PyG|) = {worst:.2e}")
    if not worst <= 1e-5:
        failures.append(f"d{name}")
if failures:
    sys.exit(f"{model}: differs from PyG in {', '.join(failures)}")
