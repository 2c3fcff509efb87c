#!/usr/bin/python3
"""Exports the real networks beamlab is tested and benchmarked on to ONNX, with PyTorch's
outputs for a fixed input, in the ONNX backend test-data layout:

    OUT/resnet18/model.onnx, OUT/resnet18/test_data_set_0/{input_0,output_0}.pb
    OUT/mobilenet_v2/...    OUT/bert_layer/...

bert_layer_dynamic is the same BERT layer exported with a symbolic sequence length (its input
dim 1 is the dim_param "seq"), with PyTorch's outputs at three lengths (test_data_set_0..2:
128, 77 and 5): one model that serves every length.

ResNet-18 and MobileNetV2 are torchvision's definitions and BERT-base's encoder layer (hidden
768, 12 heads, intermediate 3072, GELU, sequence 128) is written out below; all at batch 1
with weights drawn from a fixed seed (nothing is downloaded). Debian's python3-torch,
python3-torchvision and python3-onnx run it (opset 17), and so does a current PyTorch (2.9 or
later: its torch.export-based exporter, opset 20):

    /usr/bin/python3 scripts/export_models.py OUT [--only NAME] [--latency RUNS]

--latency RUNS times PyTorch's forward pass (eval, no grad, the thread count of
torch.get_num_threads() or BEAMLAB_TORCH_THREADS) and prints one JSON line per model.
A model whose files exist is not exported again.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torchvision
from onnx import numpy_helper

OPSET = 17


def export_options():
    """Debian's PyTorch (1.13) exports with the TorchScript exporter at opset 17; PyTorch 2.9 and
    later default to the torch.export-based exporter, which writes opset 18 and up (20 here) and
    folds constants itself, weights kept inside the file."""
    major, minor = (int(v) for v in torch.__version__.split("+")[0].split(".")[:2])
    if (major, minor) >= (2, 9):
        return {"dynamo": True, "opset_version": 20, "external_data": False}
    return {"opset_version": OPSET, "do_constant_folding": True}


class BertSelfAttention(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = torch.nn.Linear(hidden, hidden)
        self.key = torch.nn.Linear(hidden, hidden)
        self.value = torch.nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        ctx = torch.matmul(scores.softmax(-1), v).transpose(1, 2)
        return ctx.reshape(x.shape)


class BertLayer(torch.nn.Module):
    """One BERT-base encoder layer as Hugging Face's BertLayer computes it at inference."""

    def __init__(self, hidden=768, heads=12, intermediate=3072):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attention_out = torch.nn.Linear(hidden, hidden)
        self.attention_norm = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = torch.nn.Linear(hidden, intermediate)
        self.output = torch.nn.Linear(intermediate, hidden)
        self.output_norm = torch.nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        h = self.attention_norm(x + self.attention_out(self.attention(x)))
        return self.output_norm(h + self.output(torch.nn.functional.gelu(self.intermediate(h))))


def models():
    return {
        "resnet18": (lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
        "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224)),
        "bert_layer": (lambda: BertLayer(), (1, 128, 768)),
        "bert_layer_dynamic": (lambda: BertLayer(), (1, 128, 768)),
    }


# The models exported with a symbolic dim: its axis and name, and the lengths of the test data.
DYNAMIC = {"bert_layer_dynamic": (1, "seq", (128, 77, 5))}


def dynamic_options(name):
    if name not in DYNAMIC:
        return {}
    axis, dim, _ = DYNAMIC[name]
    if export_options().get("dynamo"):
        return {"dynamic_shapes": ({axis: torch.export.Dim(dim, max=512)},)}
    return {"dynamic_axes": {"input": {axis: dim}, "output": {axis: dim}}}


def build(name):
    make, shape = models()[name]
    torch.manual_seed(0)
    model = make().eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    return model, x


def write_tensor(path, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def export(name, out_dir):
    folder = os.path.join(out_dir, name)
    lengths = DYNAMIC[name][2] if name in DYNAMIC else (None,)
    last = os.path.join(folder, f"test_data_set_{len(lengths) - 1}", "output_0.pb")
    if os.path.exists(last):
        return
    os.makedirs(folder, exist_ok=True)
    model, x = build(name)
    with torch.no_grad():
        torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"),
                          input_names=["input"], output_names=["output"], **export_options(),
                          **dynamic_options(name))
        for i, length in enumerate(lengths):
            data = os.path.join(folder, f"test_data_set_{i}")
            os.makedirs(data, exist_ok=True)
            xi = x if length is None else x.narrow(DYNAMIC[name][0], 0, length).contiguous()
            write_tensor(os.path.join(data, "input_0.pb"), xi.numpy())
            write_tensor(os.path.join(data, "output_0.pb"), model(xi).numpy())
    print(f"exported {name} to {folder}", file=sys.stderr)


def latency(name, runs):
    threads = int(os.environ.get("BEAMLAB_TORCH_THREADS", "0")) or os.cpu_count()
    torch.set_num_threads(threads)
    model, x = build(name)
    times = []
    with torch.no_grad():
        for _ in range(3):
            model(x)
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * (len(times) - 1) + 0.5))]
    print(json.dumps({"model": name, "threads": threads, "runs": runs, "median_ms": q(0.5),
                      "q1_ms": q(0.25), "q3_ms": q(0.75), "torch": torch.__version__}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--only", choices=sorted(models()))
    p.add_argument("--latency", type=int, default=0, metavar="RUNS")
    a = p.parse_args()
    names = [a.only] if a.only else sorted(models())
    for n in names:
        export(n, a.out)
        if a.latency:
            latency(n, a.latency)


if __name__ == "__main__":
    main()
