"""beamlab: lazy tensors compiled to fused kernels, tuned by BEAM search.

    import numpy as np, beamlab
    from beamlab import Tensor

    a = Tensor(np.random.rand(512, 512).astype(np.float32))
    b = Tensor.rand(512, 512, seed=1)
    c = (a @ b).relu()
    print(c.numpy()[0, :4])          # realizes: compiles fused kernels and runs them

    report = beamlab.tune(c, beam=4, budget=30)   # a BEAM search per kernel, journaled
    c.realize()                      # later realizes use the tuned plans (the tuning cache)

Names follow tinygrad's Tensor. Realizing honours BEAM=W in the environment as `beamlab run`
does (a search of width W, its plans cached), else uses the tuning cache's plans where it has
them. Results of runs are plain Python data: runs(), tunings(run), candidates(tuning),
cache_entries(). Errors raise beamlab.UserError (a ValueError) with the same one-line messages
as the command line.
"""

from __future__ import annotations

import os as _os

from . import _beamlab
from ._beamlab import (Dim, DType, OnnxModel, Plan, RuntimeFailure, Tensor, UserError, Variable,
                       cache_entries, candidates, compiler_identity, default_db, dtypes, runs,
                       tunings, workload, workloads)

__version__ = _beamlab.__version__
__all__ = ["Tensor", "Variable", "Dim", "DType", "dtypes", "UserError", "RuntimeFailure", "realize", "tune", "expr",
           "load_onnx", "OnnxModel", "CompiledModel", "Plan", "plan", "storage", "workload", "workloads", "runs", "tunings", "candidates",
           "cache_entries", "default_db", "compiler_identity"]


def realize(*tensors, beam=None, db=None, threads=0, **values):
    """Computes several tensors at once (shared work done once); returns them. Symbolic ones
    are computed at the variables' values given as keywords (seq=77)."""
    _beamlab.realize(list(tensors), beam, db, threads, values)
    return tensors


def tune(*tensors, beam=4, budget=0.0, kernel_budget=60.0, max_candidates=5000, runs=3,
         threads=0, jobs=1, db=None, cache="use", label="", quiet=True, warm_start=False,
         resume=False):
    """Tunes every kernel the tensors need with a BEAM search of width `beam`, as
    `beamlab tune` does: each candidate compiled, checked and timed in a sandboxed worker, the
    whole run journaled in the database `db` (default: default_db()) and each winner stored in
    its tuning cache (cache: "use", "ignore", "read-only" or "off"). `budget` caps the whole
    run in seconds (0: none), `kernel_budget` each kernel's search. `warm_start` seeds each
    search with the plans that won for the nearest tuned kernels of the same structure (the same
    AST up to sizes), as `beamlab tune --warm-start`; each kernel's "warm_seeds" counts them.

    Returns a dict: {"run": id, "db": path, "wall_s": s, "kernels": [per kernel: "kernel",
    "key", "outcome", "heuristic_ms", "tuned_ms", "speedup", "winner_opts", ...]}.
    Ctrl-C stops the search; the run is kept as interrupted.

    resume=True continues the newest unfinished tuning run in `db`, resume=N run N, wherever it
    was begun (here, `beamlab tune` or the GUI), with that run's own kernels and settings:
    tensors and the other arguments but `db` and `quiet` are not needed, and not used."""
    if resume is True:
        resume_run = 0
    elif resume is False or resume is None:
        resume_run = -1
    elif isinstance(resume, int) and resume > 0:
        resume_run = resume
    else:
        raise UserError(f"tune: resume={resume!r}: expected True (the newest unfinished run) "
                        "or a run id")
    if not tensors and resume_run < 0:
        raise UserError("tune: give at least one tensor (or resume=True)")
    return _beamlab._tune(list(tensors), beam, budget, kernel_budget, max_candidates, runs,
                          threads, jobs, db, cache, label, quiet, warm_start, resume_run)


def expr(text, **inputs):
    """A kernel written as an expression in tinygrad's syntax over named inputs (Tensors, numpy
    arrays or lists): beamlab.expr("(a @ w + b).relu()", a=..., w=..., b=...)."""
    return _beamlab._expr(text, {k: v if isinstance(v, Tensor) else Tensor(v)
                                 for k, v in inputs.items()})


def load_onnx(path, **input_shapes):
    """An ONNX model; input_shapes give its symbolic dims: load_onnx("m.onnx", input=(1, 3, 224,
    224)). Call it with its inputs by name (model(input=...)) or model(model.random_inputs()).
    A symbolic dim (dim_param) stays symbolic given as a Variable of its name:
    load_onnx("bert.onnx", seq=beamlab.Variable("seq", 1, 512)); its outputs then realize at any
    length from one compile: model(input_ids=ids) with an array of 77 ids binds seq=77 and
    returns them realized, or beamlab.realize(*model(model.random_inputs()), seq=77)."""
    kept = {k: v for k, v in input_shapes.items() if isinstance(v, Dim)}
    shapes = {k: list(v) for k, v in input_shapes.items() if not isinstance(v, Dim)}
    return _beamlab._load_onnx(_os.fspath(path), shapes, kept)


def _feed_array(model, name, value, variables, bound, compiled=False):
    """Input `name` of `model` as an array (a list takes the input's element type; an array
    keeps its own, checked against the input's), checked against the input's shape; its sizes
    bind the variables of the input's symbolic dims into `bound` (each in its range, and equal
    wherever a variable appears twice)."""
    import numpy as np
    spec = next((i for i in model.inputs if i["name"] == name), None)
    if spec is None:
        raise UserError(f"{model.path}: the model has no input {name}; its inputs are "
                        f"{', '.join(i['name'] for i in model.inputs)}")
    shape = spec["shape"]
    array = value if isinstance(value, np.ndarray) else np.asarray(value, str(spec["dtype"]))
    if array.ndim != len(shape) or any(isinstance(d, int) and d != n
                                       for d, n in zip(shape, array.shape)):
        raise UserError(f"{model.path}: input {name} has shape "
                        f"({', '.join(str(d) for d in shape)}), not the array's {array.shape}")
    for d, n in zip(shape, array.shape):
        if isinstance(d, int):
            continue
        if str(d) not in variables:
            fix = (f"load the model with input {name}'s shape fixed" if compiled else
                   f"pass a Tensor and realize(..., {', '.join(f'{v}=...' for v in variables)})")
            raise UserError(f"{model.path}: input {name}'s dim {d} is not one variable, so an "
                            f"array can't bind it: {fix}")
        if not d.min <= n <= d.max:
            raise UserError(f"{model.path}: input {name} binds {d}={n}, outside {d}'s range "
                            f"[{d.min}, {d.max}]")
        if bound.setdefault(str(d), n) != n:
            raise UserError(f"{model.path}: input {name} binds {d}={n}, another dim bound "
                            f"{d}={bound[str(d)]}")
    return array


def _check_all_bound(model, bound, variables, compiled=False):
    unbound = [v for v in variables if v not in bound]
    if unbound:
        raise UserError(f"{model.path}: the arrays given bind "
                        f"{', '.join(f'{k}={n}' for k, n in bound.items()) or 'nothing'} but not "
                        f"{', '.join(unbound)}: give those inputs as arrays too"
                        + ("" if compiled else f", or every input as a Tensor and "
                           f"realize(..., {unbound[0]}=...)"))


def _largest(shape):
    return [d if isinstance(d, int) else d.max for d in shape]


def _corner(shape):
    """The view of an input's largest-size storage at its variables' sizes."""
    return tuple((0, d) for d in shape)


def _call_model(self, feeds=None, **named):
    """The model's outputs (lazy tensors, in the graph's order) over its inputs by name.

    Where an input has symbolic dims (load_onnx with a Variable) and is given as an array, the
    array's sizes bind those variables (seq=77 from an array of 77 rows): the outputs come back
    realized at those values. Each call schedules the graph anew (about 0.1 s for a BERT
    layer); a serving loop compiles the model once with model.compile()."""
    feeds = dict(feeds or {}, **named)
    variables = {str(v): v for v in self.variables}
    shapes = {i["name"]: i["shape"] for i in self.inputs}
    bound, tensors = {}, {}
    for name, value in feeds.items():
        shape = shapes.get(name)
        if isinstance(value, Tensor) or not shape or all(isinstance(d, int) for d in shape):
            tensors[name] = value if isinstance(value, Tensor) else Tensor(value)
            continue
        import numpy as np
        array = _feed_array(self, name, value, variables, bound)
        # The array in the corner of a buffer of the dims' largest sizes, viewed at the variables'
        # sizes: at each value the view's strides are the buffer's, whatever the layout.
        base = np.zeros(_largest(shape), array.dtype)
        base[tuple(slice(0, n) for n in array.shape)] = array
        tensors[name] = Tensor(base).shrink(_corner(shape))
    outputs = self._build(tensors)
    if bound:
        _check_all_bound(self, bound, variables)
        realize(*outputs, **bound)
    return outputs


class CompiledModel:
    """An ONNX model compiled once (OnnxModel.compile): calling it with arrays by name (a
    Tensor is realized to one) runs the one plan at the sizes they bind and returns the outputs
    as new numpy arrays, in the graph's order, as onnxruntime's session.run(None, feeds) does.
    Nothing is scheduled or compiled per call; a symbolic dim (load_onnx(..., seq=Variable("seq",
    1, 512))) takes any size in its range. Calls from several threads take turns. A model that
    reads an input's values to build its graph (a Reshape to a shape given as an input) can't be
    compiled: compile() names the node."""

    def __init__(self, model, beam=None, db=None, threads=0):
        import threading
        self.model = model
        self._turn = threading.Lock()
        self._variables = {str(v): v for v in model.variables}
        # Each input lives in a beamlab buffer of its largest sizes that every call writes
        # into; the graph reads the corner at the variables' sizes.
        self._storage = {i["name"]: storage(_largest(i["shape"]), i["dtype"])
                         for i in model.inputs}
        feeds = {i["name"]: Tensor(self._storage[i["name"]]).shrink(_corner(i["shape"]))
                 for i in model.inputs}
        self.plan = _beamlab.Plan(model._build(feeds), beam, db, threads)

    @property
    def variables(self):
        return list(self._variables.values())

    @property
    def outputs(self):
        return self.model.outputs

    def __call__(self, feeds=None, **named):
        feeds = dict(feeds or {}, **named)
        bound, arrays = {}, {}
        for name, value in feeds.items():
            if isinstance(value, Tensor):
                value = value.numpy()
            array = _feed_array(self.model, name, value, self._variables, bound, compiled=True)
            store = self._storage[name]
            if array.dtype != store.dtype:
                raise UserError(f"{self.model.path}: input {name} is {store.dtype}, not the "
                                f"array's {array.dtype}: pass np.asarray(x, '{store.dtype}')")
            arrays[name] = array
        missing = [i["name"] for i in self.model.inputs if i["name"] not in feeds]
        if missing:
            raise UserError(f"{self.model.path}: no value for input {', '.join(missing)}")
        _check_all_bound(self.model, bound, self._variables, compiled=True)
        used = {str(v) for v in self.plan.variables}  # an input's dim no output depends on
        with self._turn:
            for name, array in arrays.items():
                self._storage[name][tuple(slice(0, n) for n in array.shape)] = array
            return self.plan.run(**{k: n for k, n in bound.items() if k in used})


def _compile_model(self, beam=None, db=None, threads=0):
    """The model compiled once for a serving loop: compiled(input_ids=ids) returns its outputs
    as numpy arrays at the sizes the arrays bind, compiling nothing per call (see
    CompiledModel). beam, db and threads as realize() takes them."""
    return CompiledModel(self, beam, db, threads)


def plan(*tensors, beam=None, db=None, threads=0):
    """The tensors compiled once into one plan (beamlab.Plan): plan.run(seq=77) computes them
    at those values with nothing compiled and returns their values as new arrays. An input
    made from a storage() array is read anew each run, so writing into it between runs serves
    new requests."""
    return _beamlab.Plan(list(tensors), beam, db, threads)


def storage(shape, dtype="float32"):
    """A zeroed, writable numpy array in beamlab's own memory: Tensor(a) shares it rather than
    copying it, so a plan over that tensor reads whatever was written to `a` before each run."""
    return _beamlab._storage(list(shape), dtype)


# ---- indexing: ints, slices (any step), None and ..., as numpy's basic indexing

def _getitem(self, key):
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > self.ndim:
        raise IndexError(f"too many indices for a tensor of {self.ndim} dimensions: {used}")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (self.ndim - used) + key[at + 1:]
    else:
        key = key + (slice(None),) * (self.ndim - used)
    t, dim, squeeze, new_axes = self, 0, [], []
    for k in key:
        if k is None:
            new_axes.append(dim + len(new_axes) - len(squeeze))
            continue
        n = t.shape[dim]
        if isinstance(k, Tensor) or hasattr(k, "__len__"):
            raise IndexError("indexing with a tensor or a list is not supported; use gather()")
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            t = _slice_axis(t, dim, start, stop, step)
        else:
            i = int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} of size {n}")
            i %= n
            t = t.shrink(tuple((i, i + 1) if d == dim else (0, s) for d, s in enumerate(t.shape)))
            squeeze.append(dim)
        dim += 1
    for d in reversed(squeeze):
        t = t.squeeze(d)
    for d in new_axes:
        t = t.unsqueeze(d)
    return t


def _slice_axis(t, dim, start, stop, step):
    if step < 0:  # walk it backwards: flip, then slice forwards
        n = t.shape[dim]
        t = t.flip(dim)
        start, stop, step = n - 1 - start, n - 1 - stop, -step
    count = max(0, (stop - start + step - 1) // step)
    if count == 0:
        raise IndexError(f"the slice selects nothing of dimension {dim}; beamlab has no empty "
                         "tensors")
    bounds = [(0, s) for s in t.shape]
    bounds[dim] = (start, start + count * step)
    if count * step > t.shape[dim] - start:  # the last step runs past the end: pad
        t = t.pad(tuple((0, count * step - (t.shape[dim] - start)) if d == dim else (0, 0)
                        for d in range(t.ndim)))
    t = t.shrink(tuple(bounds))
    if step == 1:
        return t
    shape = list(t.shape)
    t = t.reshape(shape[:dim] + [count, step] + shape[dim + 1:])
    keep = [(0, s) for s in t.shape]
    keep[dim + 1] = (0, 1)
    return t.shrink(tuple(keep)).reshape(shape[:dim] + [count] + shape[dim + 1:])


Tensor.__getitem__ = _getitem
OnnxModel.__call__ = _call_model
OnnxModel.compile = _compile_model
