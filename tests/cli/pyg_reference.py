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
x64 = torch.tensor(np.fromfile(f"{prep}/x.bin", dtype="<f4").reshape(n, f), dtype=torch.float64)
y = torch.tensor(np.fromfile(f"{prep}/labels.bin", dtype="<i4"), dtype=torch.long)
split = np.fromfile(f"{prep}/split.bin", dtype="u1")  # ew::Split: 1 train, 2 val, 3 test

def w(stage, name):
    return np.load(f"{wdir}/{stage}/{name}.npy").astype(np.float64)

def head_major(m, h, width):  # columns c·h + k (gcnlab's averaged heads) -> k·width + c (PyG's)
    return m.reshape(-1, width, h).transpose(0, 2, 1).reshape(m.shape)

def class_major(m, h, width):  # its inverse
    return m.reshape(-1, h, width).transpose(0, 2, 1).reshape(m.shape)

def reference(dtype):
    """PyG's model in `dtype` from gcnlab's initial weights: its output and
    {name: (parameter, stored transposed, into gcnlab's column order or None)},
    after the loss's backward."""
    x = x64.to(dtype)
    if model == "sage":
        convs = [SAGEConv(16 if l else f, 16 if l == 0 else meta["classes"]).to(dtype) for l in range(2)]
        params = {}
        for l, conv in enumerate(convs):
            with torch.no_grad():
                conv.lin_l.weight.copy_(torch.tensor(w("initial", f"W{l}").T))
                conv.lin_l.bias.copy_(torch.tensor(w("initial", f"b{l}").reshape(-1)))
                conv.lin_r.weight.copy_(torch.tensor(w("initial", f"Wroot{l}").T))
            params[f"W{l}"] = (conv.lin_l.weight, True, None)
            params[f"b{l}"] = (conv.lin_l.bias, False, None)
            params[f"Wroot{l}"] = (conv.lin_r.weight, True, None)
        out = convs[1](F.relu(convs[0](x, edge_index)), edge_index)
    elif model == "gin":  # weight layers 2k, 2k + 1: GIN layer k's MLP; eps<k>
        widths = [f, 16, meta["classes"]]
        convs = []
        params = {}
        for k in range(2):
            mlp = torch.nn.Sequential(torch.nn.Linear(widths[k], widths[k + 1]), torch.nn.ReLU(),
                                      torch.nn.Linear(widths[k + 1], widths[k + 1]))
            conv = GINConv(mlp, eps=0.1, train_eps=True).to(dtype)
            for j, lin in ((2 * k, mlp[0]), (2 * k + 1, mlp[2])):
                with torch.no_grad():
                    lin.weight.copy_(torch.tensor(w("initial", f"W{j}").T))
                    lin.bias.copy_(torch.tensor(w("initial", f"b{j}").reshape(-1)))
                params[f"W{j}"] = (lin.weight, True, None)
                params[f"b{j}"] = (lin.bias, False, None)
            assert float(w("initial", f"eps{k}")) == np.float32(0.1)
            params[f"eps{k}"] = (conv.eps, False, None)
            convs.append(conv)
        out = convs[1](F.relu(convs[0](x, edge_index)), edge_index)
    elif model in ("gat", "gat-mean"):
        # gat: 8 heads of 8 concatenated, ELU, one output head (GAT's Cora model);
        # gat-mean: 4 heads of 8 averaged (--concat off), 3 output heads averaged (--output-heads 3)
        C = meta["classes"]
        if model == "gat":
            convs = [GATConv(f, 8, heads=8), GATConv(8 * 8, C, heads=1, concat=False)]
        else:
            convs = [GATConv(f, 8, heads=4, concat=False), GATConv(8, C, heads=3, concat=False)]
        params = {}
        for l, conv in enumerate(convs):
            conv.to(dtype)
            h, width = conv.heads, conv.out_channels
            # An averaging layer's columns are class-major in gcnlab (column c·H + h:
            # Architecture::head_mean), head-major in PyG (h·C + c).
            to_pyg = (lambda m: m) if conv.concat else (lambda m: head_major(m, h, width))
            with torch.no_grad():
                conv.lin_src.weight.copy_(torch.tensor(to_pyg(w("initial", f"W{l}")).T))
                conv.att_src.copy_(torch.tensor(to_pyg(w("initial", f"att_src{l}")).reshape(1, h, width)))
                conv.att_dst.copy_(torch.tensor(to_pyg(w("initial", f"att_dst{l}")).reshape(1, h, width)))
                conv.bias.copy_(torch.tensor(w("initial", f"b{l}").reshape(-1)))
            to_ours = None if conv.concat else (lambda m, h=h, width=width: class_major(m, h, width))
            params[f"W{l}"] = (conv.lin_src.weight, True, to_ours)
            params[f"att_src{l}"] = (conv.att_src, False, to_ours)
            params[f"att_dst{l}"] = (conv.att_dst, False, to_ours)
            params[f"b{l}"] = (conv.bias, False, None)
        out = convs[1](F.elu(convs[0](x, edge_index)), edge_index)
    else:
        sys.exit(f"no reference for --model {model}")
    loss = F.cross_entropy(out[train], y[train])
    loss.backward()
    return out, loss, params


def gradient(param):
    p, transposed, order = param
    grad = p.grad.double().numpy()
    grad = grad.T if transposed else grad.reshape(1, -1)
    return order(grad) if order else grad


def worst(a, b):  # |a - b| / (|b| + max |b|)
    return float(np.max(np.abs(a - b) / (np.abs(b) + np.abs(b).max())))


train = torch.tensor(split == 1)
out, loss, params = reference(torch.float64)
# PyG's own float32 error against its float64 (the same weights): float32's
# limit on a quantity that cancels (a bias gradient summed over every row, an
# averaged output layer's tiny attention gradients); gcnlab (float32) passes
# within 1e-5 or within twice that limit.
_, loss32, params32 = reference(torch.float32)
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
for name, param in params.items():
    grad = gradient(param)
    ours = (w("initial", name) - w("final", name)) / lr
    err, limit = worst(ours, grad), worst(gradient(params32[name]), grad)
    print(f"{model}: d{name} {grad.shape}: worst |gcnlab - PyG| / (|PyG| + max |PyG|) = {err:.2e} "
          f"(PyG float32: {limit:.2e})")
    if not err <= max(1e-5, 2 * limit):
        failures.append(f"d{name}")
if failures:
    sys.exit(f"{model}: differs from PyG in {', '.join(failures)}")
