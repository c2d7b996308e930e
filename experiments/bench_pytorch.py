#!/usr/bin/python3
"""The same full-graph GCN as `gcnlab train --algo serial`, in plain PyTorch.

Reads a dataset written by `gcnlab prepare --dataset SPEC --out FILE.gcl`, builds
Â = D^-1/2 (A + I) D^-1/2 (gcnlab's normalisation), and trains the model
gcnlab trains (L layers, Z_l = Âᵀ X_l W_l, ReLU, inverted dropout, masked
softmax cross-entropy over the training vertices, Adam) with torch.sparse.mm
and autograd, timing each epoch. Synthetic features (not stored in the file)
are drawn at random: timings do not depend on the values.

--framework pyg-sparse | pyg-edge-index trains the same model with PyTorch
Geometric's GCNConv (normalize=False: Â is given, as above; no bias, no added
self-loops), as most GNN users would: Âᵀ as a torch.sparse adjacency, or as
edge_index with edge weights (message passing over edges). GCNConv multiplies
X W first, then aggregates.

--model gcn,sage,gin,gat-4x32,gat-8x8-out8 trains the other models gcnlab
trains, each with PyG's layer as gcnlab's model folder describes it:
SAGEConv (mean, root weight, bias), GINConv (MLP Linear-ReLU-Linear, learned ε),
GATConv (H heads of W concatenated in the hidden layers; the output layer one
head, or O averaged with -outO). sage and gin run on adj_t (pyg-sparse: the
pattern as a torch.sparse CSR) or edge_index; gat on edge_index only (GATConv's
form); plain PyTorch (--framework pytorch) only gcn. The graph's pattern as
of Âᵀ (A + I, as for gcn), no self-loops added by the layers.

--framework dgl trains every model with DGL's layer (GraphConv with norm="both"
on A + I, which is Â, or on a directed graph norm="none" with Âᵀ's values as
edge weights; SAGEConv mean, GINConv sum with a learned ε,
GATConv), DGL's g-SpMM and g-SDDMM kernels on a DGLGraph of the same edges: the
strongest CPU peer (experiments/setup_pyg.sh installs DGL 1.1.3 beside PyG).

--flush-subnormals runs the frameworks with subnormal floats flushed to zero
(torch.set_flush_denormal(True), before any parallel region, so that the
intra-op threads inherit it), as gcnlab's CPU backend always runs; the epoch
lines' framework becomes e.g. dgl+ftz. Where the model's values underflow (a
saturated softmax: GIN's sums on R-MAT), the x86 cores' assists for subnormal
operands slow every framework, so the comparison is made both ways.

--framework and --model take comma-separated lists: the graph is read once and
the (model, framework) epochs interleaved over --rounds rounds (one line per
model, framework and round). --device cuda runs on the GPU (CUDA timings synchronise before
reading the clock; experiments/gpu_check.sh).

Prints the same `key=value` lines as `gcnlab bench`, so experiments/bench.sh
can set them side by side:
  bench=spmm kernel=torch.sparse.mm ... f=F threads=T median_ms=...
  bench=epoch framework=pytorch|pyg-sparse|pyg-edge-index model=M ... median_ms=...

Optional dependencies: Debian's python3-torch (apt-get install python3-torch);
for PyG, torch_geometric 2.3.1 from PyPI in a venv over it, and DGL 1.1.3
beside it (experiments/setup_pyg.sh).
"""

import argparse
import json
import statistics
import struct
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # reported by main() after the arguments, so that --help works without it
    torch = None


def import_dgl():
    """DGL 1.1.3 over Debian's torch 1.13 (experiments/setup_pyg.sh). DGL's import check compares
    torch.__version__ with "1.13.0", and Debian tags its build of the 1.13.0 release "1.13.0a0", which
    compares as older; the check alone is shown the release's number (DGL's tensor adapter for 1.13.0
    is the one it loads), and torch's own is put back once DGL is imported."""
    real = torch.__version__
    if str(real).startswith("1.13.0a0"):
        torch.__version__ = "1.13.0"
    try:
        import dgl
        import dgl.nn.pytorch  # noqa: F401 (the layers)
    finally:
        torch.__version__ = real
    return dgl


def read_gcl(path):
    """The gcl format of common/data/gcl.cpp."""
    with open(path, "rb") as f:
        if f.read(8) != b"GCNLAB\x00\x01":
            sys.exit(f"bench_pytorch: '{path}' is not a gcl file (gcnlab prepare --out FILE.gcl)")
        (length,) = struct.unpack("<Q", f.read(8))
        head = json.loads(f.read(length))
        n, nnz, feats = head["nodes"], head["nnz"], head["features"]
        rowptr = np.frombuffer(f.read(8 * (n + 1)), dtype="<i8")
        col = np.frombuffer(f.read(8 * nnz), dtype="<i8")
        x = None
        if not head["synthetic_features"]:
            x = np.frombuffer(f.read(4 * n * feats), dtype="<f4").reshape(n, feats)
        labels = np.frombuffer(f.read(4 * n), dtype="<i4")
        split = np.frombuffer(f.read(n), dtype="u1")
    return head, rowptr, col, x, labels, split


def normalized_adjacency_t(n, rowptr, col, directed):
    """Âᵀ as a torch CSR tensor: Â = D^-1/2 (A + I) D^-1/2, D the row sums of A + I."""
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(rowptr))
    r = np.concatenate([rows, np.arange(n, dtype=np.int64)])
    c = np.concatenate([col, np.arange(n, dtype=np.int64)])
    deg = np.bincount(r, minlength=n).astype(np.float64)
    dinv = 1.0 / np.sqrt(deg)
    v = (dinv[r] * dinv[c]).astype(np.float32)
    # Âᵀ: swap rows and columns (the same matrix when undirected)
    rt, ct = (c, r) if directed else (r, c)
    coo = torch.sparse_coo_tensor(torch.from_numpy(np.stack([rt, ct])), torch.from_numpy(v), (n, n))
    return coo.coalesce().to_sparse_csr()


def timed(fn, warmup, reps, device="cpu"):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    times = []
    for k in range(warmup + reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        if k >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def line(kind, fields, times, flops=None):
    med = statistics.median(times)
    out = f"bench={kind} " + " ".join(f"{k}={v}" for k, v in fields.items())
    out += f" median_ms={med * 1e3:.3f} min_ms={min(times) * 1e3:.3f} max_ms={max(times) * 1e3:.3f}"
    if flops is not None:
        out += f" gflops={flops / med * 1e-9:.2f}"
    print(out, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gcl", help="a dataset written by gcnlab prepare --out FILE.gcl")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--epochs", type=int, default=5, help="timed epochs (after one warm-up)")
    ap.add_argument("--spmm", default="16,64,128", help="widths for the torch.sparse.mm benchmark ('' to skip)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--framework", default="pytorch",
                    help="pytorch | pyg-sparse | pyg-edge-index, or several comma-separated (interleaved)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds of --epochs timed epochs each")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--model", default="gcn", help="comma-separated: gcn, sage, gin, gat-HxW[-outO]")
    ap.add_argument("--flush-subnormals", action="store_true",
                    help="subnormal floats flushed to zero (FTZ and DAZ), as gcnlab's CPU backend runs")
    args = ap.parse_args()
    if torch is None:
        sys.exit("bench_pytorch: PyTorch is not installed (Debian: apt-get install python3-torch)")
    if args.flush_subnormals and not torch.set_flush_denormal(True):
        sys.exit("bench_pytorch: this CPU cannot flush subnormals (torch.set_flush_denormal)")
    frameworks = args.framework.split(",")
    for fw in frameworks:
        if fw not in ("pytorch", "pyg-sparse", "pyg-edge-index", "dgl"):
            sys.exit(f"bench_pytorch: unknown framework '{fw}' (pytorch, pyg-sparse, pyg-edge-index, dgl)")
    dev = torch.device(args.device)

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    head, rowptr, col, x, labels, split = read_gcl(args.gcl)
    n, feats, classes = head["nodes"], head["features"], head["classes"]
    a_t = normalized_adjacency_t(n, rowptr, col, head["directed"]).to(dev)
    nnz = a_t.values().numel()
    common = {"graph": head["name"], "n": n, "nnz": nnz, "threads": args.threads, "device": args.device}
    if args.device == "cuda":
        common["gpu"] = torch.cuda.get_device_name().replace(" ", "_")

    for f in [int(w) for w in args.spmm.split(",") if w]:
        xf = (torch.rand(n, f) * 2 - 1).to(dev)
        times = timed(lambda: torch.sparse.mm(a_t, xf), 2, args.reps, args.device)
        line("spmm", {"kernel": "torch.sparse.mm", **common, "f": f}, times, 2.0 * nnz * f)

    torch.manual_seed(1)  # the model's draws do not depend on whether the SpMM benchmark ran
    x = torch.from_numpy(np.array(x)) if x is not None else torch.rand(n, feats) * 2 - 1
    x = x.to(dev)
    y = torch.from_numpy(labels.astype(np.int64)).clamp(min=0).to(dev)
    train = torch.from_numpy(split == 1).to(dev)
    dims = [feats] + [args.hidden] * (args.layers - 1) + [classes]
    initial = []
    for l in range(args.layers):  # Glorot uniform, as gcnlab
        bound = (6.0 / (dims[l] + dims[l + 1])) ** 0.5
        initial.append((torch.rand(dims[l], dims[l + 1]) * 2 - 1) * bound)

    def pattern_forms():
        """The graph's pattern (rows: targets), unweighted: adj_t as a torch.sparse CSR, and edge_index."""
        if "pattern" not in cache:
            coo = a_t.to_sparse_coo().coalesce()
            idx = coo.indices()
            ones = torch.ones(idx.shape[1], device=dev)
            adj = torch.sparse_coo_tensor(idx, ones, (n, n)).coalesce().to_sparse_csr()
            cache["pattern"] = (adj, torch.stack([idx[1], idx[0]]))
        return cache["pattern"]

    def gat_widths(model):
        """gat-HxW[-outO]: the hidden heads, the output heads and each layer's per-head width."""
        parts = model.split("-")
        heads, width = (int(v) for v in parts[1].split("x"))
        out_heads = int(parts[2][3:]) if len(parts) > 2 else 1
        return heads, out_heads, [feats] + [width] * (args.layers - 1) + [classes]

    def gin_mlp(l):
        """GIN layer l's MLP: Linear, ReLU, Linear."""
        return torch.nn.Sequential(torch.nn.Linear(dims[l], dims[l + 1]), torch.nn.ReLU(),
                                   torch.nn.Linear(dims[l + 1], dims[l + 1]))

    def unknown(model):
        sys.exit(f"bench_pytorch: unknown model '{model}' (gcn, sage, gin, gat-HxW[-outO])")

    def layers_epoch(convs, layer, act):
        """One epoch (dropout, layer(l, conv, h) for each layer, `act` between them, the masked loss, Adam)."""
        net = torch.nn.ModuleList(convs).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=args.lr)

        def epoch():
            opt.zero_grad()
            h = x
            for l, conv in enumerate(net):
                if args.dropout > 0:
                    h = torch.nn.functional.dropout(h, args.dropout, training=True)
                h = layer(l, conv, h)
                if l + 1 < args.layers:
                    h = act(h)
            loss = torch.nn.functional.cross_entropy(h[train], y[train])
            loss.backward()
            opt.step()
            return loss

        return epoch

    def make_model_epoch(model, framework):
        """One epoch of PyG's layer for sage, gin or gat-HxW[-outO] (pyg-sparse or pyg-edge-index)."""
        from torch_geometric.nn import GATConv, GINConv, SAGEConv
        adj, edge_index = pattern_forms()
        graph = adj if framework == "pyg-sparse" else edge_index
        convs = []
        if model.startswith("gat"):
            if framework != "pyg-edge-index":
                return None
            heads, out_heads, widths = gat_widths(model)
            for l in range(args.layers):
                last = l + 1 == args.layers
                convs.append(GATConv(widths[l] * (heads if l > 0 else 1), widths[l + 1], heads=out_heads if last else heads,
                                     concat=not last, add_self_loops=False))
            act = torch.nn.functional.elu
        else:
            for l in range(args.layers):
                if model == "sage":
                    convs.append(SAGEConv(dims[l], dims[l + 1]))
                elif model == "gin":
                    convs.append(GINConv(gin_mlp(l), train_eps=True))
                else:
                    unknown(model)
            act = torch.relu
        return layers_epoch(convs, lambda l, conv, h: conv(h, graph), act)

    def make_dgl_epoch(model):
        """One epoch of DGL's layer for `model` on a DGLGraph of the pattern's edges j -> i (gcn: Âᵀ's values as
        edge weights), the same widths, activations and loss as the PyG forms."""
        dgl = import_dgl()
        from dgl.nn.pytorch import GATConv, GINConv, GraphConv, SAGEConv
        _, edge_index = pattern_forms()
        graph = dgl.graph((edge_index[0], edge_index[1]), num_nodes=n).to(dev)
        weight = None
        convs, act, gat = [], torch.relu, model.startswith("gat")
        if model == "gcn":  # undirected: norm="both" on A + I is Â (DGL's own form); directed: Âᵀ's values as weights
            directed = head["directed"]
            if directed:
                coo = a_t.to_sparse_coo().coalesce()
                graph = dgl.graph((coo.indices()[1], coo.indices()[0]), num_nodes=n).to(dev)
                weight = coo.values()
            for l in range(args.layers):
                conv = GraphConv(dims[l], dims[l + 1], norm="none" if directed else "both", bias=False,
                                 allow_zero_in_degree=True)
                with torch.no_grad():
                    conv.weight.copy_(initial[l])
                convs.append(conv)
        elif gat:
            heads, out_heads, widths = gat_widths(model)
            for l in range(args.layers):
                last = l + 1 == args.layers
                convs.append(GATConv(widths[l] * (heads if l > 0 else 1), widths[l + 1],
                                     out_heads if last else heads, allow_zero_in_degree=True))
            act = torch.nn.functional.elu
        else:
            for l in range(args.layers):
                if model == "sage":
                    convs.append(SAGEConv(dims[l], dims[l + 1], "mean"))
                elif model == "gin":
                    convs.append(GINConv(gin_mlp(l), "sum", learn_eps=True))
                else:
                    unknown(model)

        def layer(l, conv, h):
            h = conv(graph, h, edge_weight=weight) if weight is not None else conv(graph, h)
            if gat:  # (n, heads, width): concatenated in the hidden layers, averaged at the output
                h = h.flatten(1) if l + 1 < args.layers else h.mean(1)
            return h

        return layers_epoch(convs, layer, act)

    def make_epoch(model, framework):
        """One training epoch of `model` under `framework` from the same initial weights, as a closure."""
        if framework == "dgl":
            return make_dgl_epoch(model)
        if model != "gcn":
            return None if framework == "pytorch" else make_model_epoch(model, framework)
        weights = [torch.nn.Parameter(w.clone().to(dev)) for w in initial]
        layers = None
        if framework != "pytorch":
            from torch_geometric.nn import GCNConv  # torch_geometric 2.3.1 (experiments/setup_pyg.sh)
            layers = []
            for l in range(args.layers):
                conv = GCNConv(dims[l], dims[l + 1], normalize=False, add_self_loops=False, bias=False).to(dev)
                with torch.no_grad():
                    conv.lin.weight.copy_(weights[l].detach().t())
                layers.append(conv)
            weights = [p for conv in layers for p in conv.parameters()]
            if framework == "pyg-sparse":
                graph, weight = a_t, None  # rows: targets (PyG's adj_t)
            else:  # out[i] += w * x[j] for each edge j -> i of Âᵀ's row i
                coo = a_t.to_sparse_coo().coalesce()
                graph, weight = torch.stack([coo.indices()[1], coo.indices()[0]]), coo.values()
        opt = torch.optim.Adam(weights, lr=args.lr)

        def epoch():
            opt.zero_grad()
            h = x
            for l in range(args.layers):
                if args.dropout > 0:
                    h = torch.nn.functional.dropout(h, args.dropout, training=True)
                if layers is None:
                    h = torch.sparse.mm(a_t, h) @ weights[l]  # (Âᵀ X) W, gcnlab's default order
                else:
                    h = layers[l](h, graph, weight)  # GCNConv: Âᵀ (X W)
                if l + 1 < args.layers:
                    h = torch.relu(h)
            loss = torch.nn.functional.cross_entropy(h[train], y[train])
            loss.backward()
            opt.step()
            return loss

        return epoch

    versions = {"torch": torch.__version__}
    if any(fw.startswith("pyg") for fw in frameworks):
        import torch_geometric
        versions["pyg"] = torch_geometric.__version__
    if "dgl" in frameworks:
        versions["dgl"] = import_dgl().__version__
    def failed(key, e):  # a framework that does not fit the device (or cannot run the form) is a result, not a crash
        kind = "out_of_memory" if isinstance(e, torch.cuda.OutOfMemoryError) else type(e).__name__
        print(f"bench=epoch framework={key[1]} model={key[0]} device={args.device} n={n} nnz={nnz} error={kind} "
              f"detail={str(e).splitlines()[0].replace(' ', '_')[:160] if str(e) else ''}", flush=True)
        epochs.pop(key, None)
        if args.device == "cuda":
            torch.cuda.empty_cache()

    cache, epochs, first = {}, {}, {}
    for model in args.model.split(","):
        for fw in frameworks:
            key = (model, fw)
            try:
                e = make_epoch(model, fw)
                if e is None:
                    continue  # a form the model has no layer for (plain PyTorch: gcn only; GATConv: edge_index)
                epochs[key] = e
                first[key] = float(e().detach())  # the warm-up epoch: its loss shows the frameworks train one model
            except (torch.cuda.OutOfMemoryError, RuntimeError, NotImplementedError, ImportError) as err:
                failed(key, err)
    for r in range(args.rounds):
        for key in list(epochs):
            try:
                times = timed(epochs[key], 0, args.epochs, args.device)
            except (torch.cuda.OutOfMemoryError, RuntimeError) as err:  # pragma: no cover
                failed(key, err)
                continue
            label = key[1] + ("+ftz" if args.flush_subnormals else "")
            line("epoch", {"framework": label, "model": key[0], **versions, **common, "dims": "-".join(map(str, dims)),
                           "dropout": f"{args.dropout:g}", "epochs": args.epochs, "round": r,
                           "loss0": f"{first[key]:.6f}"}, times)


if __name__ == "__main__":
    main()
