"""The Python module end to end: values against numpy (hand-picked cases and randomized
programs), memory shared with numpy, tuning journaled in a real database, and errors raised as
Python exceptions with the command line's messages.

Run by ctest (tests/python/CMakeLists.txt) with the build tree's python/ on PYTHONPATH."""

import os
import subprocess
import sys

import numpy as np
import pytest

import beamlab
from beamlab import Tensor, dtypes


def close(t, ref, rtol=1e-5, atol=1e-5):
    got = t if isinstance(t, np.ndarray) else t.numpy()
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- values

def test_hand_computed():
    a = Tensor([[1.0, 2.0], [3.0, 4.0]])
    assert a.shape == (2, 2) and a.dtype == dtypes.float32
    assert (a @ a).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert a.sum().item() == 10.0
    assert a.sum(axis=0).tolist() == [4.0, 6.0]
    assert (a * 2 + 1).tolist() == [[3.0, 5.0], [7.0, 9.0]]
    assert (10 - a).tolist() == [[9.0, 8.0], [7.0, 6.0]]
    assert Tensor.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert Tensor.arange(5).dtype == dtypes.int32
    assert (Tensor.arange(5) * 2.5).dtype == dtypes.float32  # a float promotes an int tensor
    assert (Tensor([1, 2, 3]) > 1).tolist() == [False, True, True]


@pytest.mark.parametrize("seed", range(6))
def test_random_programs_match_numpy(seed):
    rng = np.random.default_rng(seed)
    m, k, n = (int(x) for x in rng.integers(1, 40, 3))
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    ta, tw, tb = Tensor(a), Tensor(w), Tensor(b)
    close((ta @ tw + tb).relu(), np.maximum(a @ w + b, 0), rtol=1e-4, atol=1e-4)
    close(ta.exp().sum(axis=1, keepdim=True), np.exp(a).sum(1, keepdims=True), rtol=1e-4)
    close(ta.max(axis=0), a.max(0))
    close(ta.T.reshape(-1), a.T.reshape(-1))
    e = np.exp(a - a.max(-1, keepdims=True))
    close(ta.softmax(), e / e.sum(-1, keepdims=True), rtol=1e-4)
    close(ta.mean(axis=(0, 1)), a.mean(), rtol=1e-4)
    close(ta.sigmoid(), 1 / (1 + np.exp(-a)), rtol=1e-4)


def test_conv2d_matches_a_direct_loop():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 9, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    ref = np.zeros((1, 4, 9, 8), np.float32)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    for o in range(4):
        for i in range(9):
            for j in range(8):
                ref[0, o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * w[o]).sum()
    close(Tensor(x).conv2d(Tensor(w), padding=1), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_indexing_matches_numpy(seed):
    rng = np.random.default_rng(100 + seed)
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    t = Tensor(a)
    keys = [1, -1, (slice(None), 2), (Ellipsis, 3), (None, 2), (slice(1, 4), slice(None, None, 2)),
            (slice(None, None, -1),), (0, slice(5, 0, -2), None, slice(None, None, 3))]
    for _ in range(6):
        keys.append(tuple(slice(int(rng.integers(-6, 6)), int(rng.integers(-6, 7)),
                                int(rng.choice([1, 2, 3, -1, -2])))
                          for _ in range(int(rng.integers(1, 4)))))
    for key in keys:
        if a[key].size == 0:  # beamlab has no empty tensors: an empty selection is an error
            with pytest.raises(IndexError, match="selects nothing"):
                t[key]
            continue
        np.testing.assert_array_equal(t[key].numpy(), a[key], err_msg=f"key {key!r}")


def test_dtypes_round_trip():
    for np_type in (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
                    np.uint8, np.uint32, np.bool_):
        a = (np.arange(12) % 3).reshape(3, 4).astype(np_type)
        out = Tensor(a).numpy()
        assert out.dtype == a.dtype
        np.testing.assert_array_equal(out, a)
    assert Tensor([1.5, 2.5], dtype="float16").dtype == dtypes.float16
    assert Tensor(np.ones(3), dtype=dtypes.float32).numpy().dtype == np.float32
    bf = Tensor([1.0, 2.0]).cast(dtypes.bfloat16)
    assert bf.numpy().dtype == np.float32  # numpy has no bfloat16


def test_expression_and_workload():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    close(beamlab.expr("(a * 2).sum(axis=1)", a=a), (a * 2).sum(1))
    mm = beamlab.workload("matmul", M=8, N=16, K=4)
    assert mm.shape == (8, 16)
    names = [w["name"] for w in beamlab.workloads()]
    assert "matmul" in names and "conv2d" in names


def test_onnx_model_matches_numpy(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "w")])
    path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    model = beamlab.load_onnx(path, x=(2, 3))
    assert [i["name"] for i in model.inputs] == ["x"] and model.inputs[0]["shape"] == (2, 3)
    x = np.array([[1, -2, 3], [-1, 0.5, 2]], np.float32)
    (z,) = model(x=x)
    close(z, np.maximum(x @ w, 0), rtol=1e-5)


def test_onnx_symbolic_dim_runs_at_keyword_lengths(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    # z = relu(x @ w) reshaped by its own Shape (the shape arithmetic exporters write)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Shape", ["y"], ["s"]),
         helper.make_node("Relu", ["y"], ["r"]), helper.make_node("Reshape", ["r", "s"], ["z"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["seq", 4])],
        [numpy_helper.from_array(w, "w")])
    path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    seq = beamlab.Variable("seq", 1, 8)
    model = beamlab.load_onnx(path, seq=seq)
    assert model.inputs[0]["shape"] == (seq, 3) and model.variables == [seq]
    data = model.random_inputs()["x"]  # the feed's values: its largest shape's, flat
    beamlab.realize(data, seq=8)
    flat = data.numpy().reshape(-1)
    feeds = model.random_inputs()
    for n in (8, 3):
        (z,) = model(feeds)
        beamlab.realize(z, seq=n)
        assert z.shape == (n, 4)
        close(z, np.maximum(flat[:n * 3].reshape(n, 3) @ w, 0), rtol=1e-5)
    with pytest.raises(beamlab.UserError, match="must be the Variable of that name"):
        beamlab.load_onnx(path, seq=beamlab.Variable("len", 1, 8))
    # Arrays bind seq by their length; the outputs come back realized at it.
    rng = np.random.default_rng(3)
    for n in (5, 1, 8, 5):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        (z,) = model(x=x)
        assert z.shape == (n, 4)
        close(z, np.maximum(x @ w, 0), rtol=1e-5)
    with pytest.raises(beamlab.UserError, match=r"input x binds seq=9, outside seq's range \[1, 8\]"):
        model(x=np.zeros((9, 3), np.float32))
    with pytest.raises(beamlab.UserError, match=r"input x has shape \(seq, 3\), not the array's \(4, 2\)"):
        model(x=np.zeros((4, 2), np.float32))


def test_a_compiled_model_serves_every_length_from_one_plan(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10 - 0.5
    b = np.arange(4, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"]),
         helper.make_node("Add", ["z", "b"], ["out"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 3]),
                 helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["seq", 4])],
        [numpy_helper.from_array(w, "w")])
    path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    seq = beamlab.Variable("seq", 1, 8)
    model = beamlab.load_onnx(path, seq=seq)
    compiled = model.compile(threads=1)
    assert compiled.variables == [seq] and compiled.outputs == ["out"]
    kernels = compiled.plan.kernels
    rng = np.random.default_rng(5)
    results = []
    for n in (8, 3, 1, 5, 8):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        bias = rng.standard_normal(4).astype(np.float32)
        (out,) = compiled(x=x, b=bias)
        assert isinstance(out, np.ndarray) and out.shape == (n, 4)
        close(out, np.maximum(x @ w, 0) + bias, rtol=1e-5)
        (again,) = model(x=x, b=bias)  # the per-call path agrees
        close(again, out, rtol=1e-6)
        results.append((out.copy(), out))
    assert compiled.plan.kernels == kernels  # one plan, nothing compiled per call
    for kept, returned in results:
        np.testing.assert_array_equal(kept, returned)  # each call's arrays are its own
    with pytest.raises(beamlab.UserError, match=r"input x binds seq=9, outside seq's range"):
        compiled(x=np.zeros((9, 3), np.float32), b=np.zeros(4, np.float32))
    with pytest.raises(beamlab.UserError, match=r"input x is float32, not the array's float64"):
        compiled(x=np.zeros((2, 3)), b=np.zeros(4, np.float32))
    with pytest.raises(beamlab.UserError, match="no value for input b"):
        compiled(x=np.zeros((2, 3), np.float32))
    with pytest.raises(beamlab.UserError, match="the model has no input y; its inputs are x, b"):
        compiled(x=np.zeros((2, 3), np.float32), b=np.zeros(4, np.float32), y=1)
    # A model whose graph depends on an input's values (a Reshape to a shape given as an input)
    # runs per call, but can't be compiled: the plan would keep the first values.
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    dyn = beamlab.load_onnx(path)
    (y,) = dyn(x=np.arange(6, dtype=np.float32).reshape(2, 3), shape=np.array([3, 2]))
    assert y.shape == (3, 2)
    with pytest.raises(beamlab.UserError, match=r"node 'reshape' .*reads the values of a model "
                       r"input while the graph is built"):
        dyn.compile()


def test_a_plan_reads_its_storage_anew_each_run():
    seq = beamlab.Variable("seq", 1, 16)
    rows = beamlab.storage((16, 8))
    assert rows.flags.writeable and not rows.any()
    x = Tensor(rows).shrink(((0, seq), (0, 8)))
    w = np.random.default_rng(6).standard_normal((8, 4)).astype(np.float32)
    p = beamlab.plan((x @ Tensor(w)).softmax(1), x.sum(1), threads=1)
    assert p.variables == [seq] and p.kernels >= 2
    rng = np.random.default_rng(7)
    for n in (16, 4, 1, 9):
        data = rng.standard_normal((n, 8)).astype(np.float32)
        rows[:n] = data
        probs, sums = p.run(seq=n)
        e = np.exp(data @ w - (data @ w).max(1, keepdims=True))
        close(probs, e / e.sum(1, keepdims=True), rtol=1e-4)
        close(sums, data.sum(1), rtol=1e-4)
    with pytest.raises(beamlab.UserError, match="seq"):
        p.run(seq=17)
    with pytest.raises(beamlab.UserError, match="plan: give at least one tensor"):
        beamlab.plan()


# ---------------------------------------------------------------- memory

def test_numpy_is_a_view_of_the_tensor():
    t = (Tensor.rand(64, 64, seed=3) + 1).realize()
    a, b = t.numpy(), t.numpy()
    assert np.shares_memory(a, b)  # both views of the tensor's one buffer
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 5


def test_tensor_from_its_own_numpy_shares_the_buffer():
    t = (Tensor.rand(16, 16, seed=4) * 3).realize()
    view = t.numpy()
    again = Tensor(view)
    assert np.shares_memory(again.numpy(), view)
    close(again * 2, view * 2)


def test_aligned_arrays_are_shared_and_others_copied():
    raw = np.zeros(64 * 64 + 16, np.float32)
    offset = (-raw.ctypes.data % 64) // 4
    aligned = raw[offset:offset + 64 * 64].reshape(64, 64)
    aligned[:] = 1
    t = Tensor(aligned)
    aligned[0, 0] = 7  # shared, as torch.from_numpy: the change shows in the tensor
    assert (t + 0).numpy()[0, 0] == 7
    odd = raw[offset + 1:offset + 1 + 100]  # misaligned: copied
    u = Tensor(odd)
    odd[0] = 9
    assert (u + 0).numpy()[0] == 1


# ---------------------------------------------------------------- tuning and its data

def test_tune_journals_a_run_and_realize_uses_its_plans(tmp_path):
    db = str(tmp_path / "t.db")
    rng = np.random.default_rng(1)
    a, w = rng.standard_normal((32, 48)).astype(np.float32), rng.standard_normal((48, 16)).astype(np.float32)
    c = (Tensor(a) @ Tensor(w)).relu()
    report = beamlab.tune(c, beam=1, max_candidates=12, kernel_budget=20, db=db, label="py")
    assert report["run"] >= 1 and report["db"] == db
    assert len(report["kernels"]) >= 1
    k = report["kernels"][0]
    assert k["outcome"] == "tuned", k
    assert k["tuned_ms"] > 0 and k["candidates"] >= 2
    runs = beamlab.runs(db=db)
    assert [(r["id"], r["label"], r["status"]) for r in runs] == [(report["run"], "py", "done")]
    tunings = beamlab.tunings(report["run"], db=db)
    assert tunings[0]["kernel"] == k["kernel"] and tunings[0]["status"] == "done"
    assert k["speedup"] == tunings[0]["speedup"]  # one speedup, paired, in both
    cands = beamlab.candidates(tunings[0]["id"], db=db)
    assert len(cands) >= 2 and any(c["samples_ms"] for c in cands)
    entries = beamlab.cache_entries(db=db)
    assert [e["kernel"] for e in entries] == [k["kernel"]]
    close(c.realize(db=db), np.maximum(a @ w, 0), rtol=1e-4, atol=1e-4)
    # Nothing to compute is an empty run, not an error.
    nothing = beamlab.tune(Tensor(a), beam=1, db=db)
    assert nothing["kernels"] == [] and nothing["run"] > report["run"]


def test_one_speedup_in_the_cli_summary_the_report_and_python(tmp_path):
    cli = os.environ.get("BEAMLAB_CLI")
    if not cli:
        pytest.skip("BEAMLAB_CLI is not set")
    import json
    db = str(tmp_path / "s.db")
    tuned = subprocess.run([cli, "tune", "matmul", "--M", "48", "--N", "64", "--K", "32",
                            "--beam", "1", "--max-candidates", "8", "--db", db, "--quiet",
                            "--json", "-"], capture_output=True, text=True, timeout=300)
    assert tuned.returncode == 0, tuned.stderr
    summary = json.loads(tuned.stdout)
    [kernel] = summary["kernels"]
    report = subprocess.run([cli, "report", "--run", str(summary["run"]), "--format", "json",
                             "--db", db], capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    [reported] = json.loads(report.stdout)["tunings"]
    [tuning] = beamlab.tunings(summary["run"], db=db)
    assert kernel["speedup"] is not None
    assert kernel["speedup"] == pytest.approx(reported["speedup"], rel=1e-9)
    assert tuning["speedup"] == pytest.approx(reported["speedup"], rel=1e-9)


def test_tune_with_warm_start_seeds_another_size(tmp_path):
    db = str(tmp_path / "w.db")
    # On one core the unoptimized kernel never wins: the first winner is a plan to lend.
    a = Tensor.rand(64, 64, seed=1) @ Tensor.rand(64, 64, seed=2)
    beamlab.tune(a, beam=1, max_candidates=8, kernel_budget=20, threads=1, db=db)
    b = Tensor.rand(48, 64, seed=1) @ Tensor.rand(64, 32, seed=2)
    report = beamlab.tune(b, beam=1, max_candidates=8, kernel_budget=20, threads=1, db=db,
                          warm_start=True)
    k = report["kernels"][0]
    assert k["outcome"] == "tuned" and k["warm_seeds"] >= 1, k


def run_python(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                          timeout=300)


def test_beam_environment_variable_is_honoured(tmp_path):
    db = str(tmp_path / "env.db")
    code = ("import beamlab; t = (beamlab.Tensor.rand(16, 16, seed=1) * 2).sum(axis=1).realize();"
            "print(len(beamlab.cache_entries()))")
    out = run_python(code, BEAM="1", BEAMLAB_DB=db)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) >= 1  # the search stored its winner
    bad = run_python("import beamlab; beamlab.Tensor([1.0]).realize()", BEAM="wide")
    assert bad.returncode != 0
    assert "BEAM='wide': expected a beam width, an integer from 0 (off) to 1024" in bad.stderr


# ---------------------------------------------------------------- errors

def test_a_symbolic_sequence_runs_at_keyword_values_from_one_compile():
    seq = beamlab.Variable("seq", 1, 16)
    base = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    w = np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32)
    x = Tensor(base).shrink(((0, seq), (0, 8)))
    y = (x @ Tensor(w)).softmax(0).reshape(seq, 2, 4)
    assert y.shape == (seq, 2, 4) and str(y.shape[0]) == "seq" and y.shape[0].max == 16
    for n in (1, 5, 16):
        e = np.exp(base[:n] @ w - (base[:n] @ w).max(0))
        close(Tensor(y).realize(seq=n), (e / e.sum(0)).reshape(n, 2, 4), rtol=1e-4)
    pos = x + Tensor.arange(seq, dtype=np.float32).reshape(seq, 1)  # position ids
    close(Tensor(pos).realize(seq=5), base[:5] + np.arange(5, dtype=np.float32)[:, None])
    close(Tensor(Tensor.arange(0, seq)).realize(seq=3), np.arange(3))
    for n in (1, 7):  # a mean over the sequence divides by its length at run time
        close(Tensor(x.mean(0)).realize(seq=n), base[:n].mean(0), rtol=1e-5)
    with pytest.raises(beamlab.UserError, match="a symbolic arange counts from 0 by 1"):
        Tensor.arange(seq, 8)
    with pytest.raises(beamlab.UserError, match="variable seq has no value"):
        Tensor(y).realize()
    with pytest.raises(beamlab.UserError, match="seq"):
        beamlab.realize(Tensor(y), seq=17)


def test_errors_are_python_exceptions_with_the_engines_messages():
    with pytest.raises(beamlab.UserError) as e:
        Tensor.ones(2, 3) @ Tensor.ones(4, 5)
    assert "matmul" in str(e.value) and isinstance(e.value, ValueError)
    with pytest.raises(beamlab.UserError, match="unknown workload 'matmull'"):
        beamlab.workload("matmull")
    with pytest.raises(beamlab.UserError, match="has no beamlab dtype"):
        Tensor(np.zeros(3, np.complex64))
    with pytest.raises(beamlab.UserError, match="ambiguous"):
        bool(Tensor([1.0]))
    with pytest.raises(beamlab.UserError, match=r"expr:1:\d+: unknown method 'relux'"):
        beamlab.expr("a.relux()", a=np.ones(3, np.float32))
    with pytest.raises(IndexError):
        Tensor.ones(3)[3]
    with pytest.raises(beamlab.UserError, match="tune: cache"):
        beamlab.tune(Tensor.ones(4) * 2, cache="sometimes", db=os.devnull)
    with pytest.raises(beamlab.UserError, match="no database at"):
        beamlab.runs(db="/nonexistent/beamlab.db")
    with pytest.raises(beamlab.UserError, match=r"resume='yes': expected True"):
        beamlab.tune(resume="yes")
    with pytest.raises(beamlab.UserError, match="give at least one tensor"):
        beamlab.tune()
    with pytest.raises(beamlab.UserError, match=r"warm_start=True seeds searches from the tuning "
                       r"cache; it needs the database \(not cache=\"off\"\)"):
        beamlab.tune(Tensor.ones(4) * 2, cache="off", warm_start=True)


def test_same_message_as_the_command_line(tmp_path):
    cli = os.environ.get("BEAMLAB_CLI")
    if not cli:
        pytest.skip("BEAMLAB_CLI is not set")
    out = subprocess.run([cli, "run", "matmull"], capture_output=True, text=True)
    with pytest.raises(beamlab.UserError) as e:
        beamlab.workload("matmull")
    assert str(e.value) in out.stderr


def interrupted_python_run(tmp_path):
    """A database holding one run begun by beamlab.tune() in another process and stopped there by
    Ctrl-C (SIGINT) once its search had measured something."""
    import signal
    import time
    db = str(tmp_path / "int.db")
    code = ("import beamlab\n"
            "y = (beamlab.Tensor.rand(512, 512, seed=1) @ beamlab.Tensor.rand(512, 512, seed=2)).relu()\n"
            "try:\n"
            f"    beamlab.tune(y, beam=8, kernel_budget=120, db={db!r})\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:  # until the search has measured something
        time.sleep(0.5)
        if os.path.exists(db) and any(t["id"] for r in beamlab.runs(db=db)
                                      for t in beamlab.tunings(r["id"], db=db)):
            break
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert out.strip() == "interrupted"
    assert [r["status"] for r in beamlab.runs(db=db)] == ["interrupted"]
    return db


def test_ctrl_c_stops_a_tuning_and_keeps_its_run(tmp_path):
    interrupted_python_run(tmp_path)


def test_a_run_begun_from_python_resumes_from_python_and_from_the_cli(tmp_path):
    # Interrupted as above; the search cut short is journaled, so a resume has nothing left to
    # search and ends the same run, wherever it is asked for.
    db = interrupted_python_run(tmp_path)
    [run] = beamlab.runs(db=db)
    settings = run["settings"]
    assert settings["door"] == "python" and len(settings["kernels"]) == 1, settings
    report = beamlab.tune(resume=True, db=db)
    assert report["run"] == run["id"]
    assert [k["outcome"] for k in report["kernels"]] == ["resumed"]
    assert [r["status"] for r in beamlab.runs(db=db)] == ["done"]
    with pytest.raises(beamlab.UserError, match=r"resume= \d+: run \d+ finished already"):
        beamlab.tune(resume=run["id"], db=db)

    cli = os.environ.get("BEAMLAB_CLI")
    if not cli:
        pytest.skip("BEAMLAB_CLI is not set")
    other = tmp_path / "cli"
    other.mkdir()
    db = interrupted_python_run(other)
    out = subprocess.run([cli, "tune", "--resume", "--db", db, "--quiet"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "resuming run 1: beamlab.tune(" in out.stderr, out.stderr
    assert [r["status"] for r in beamlab.runs(db=db)] == ["done"]
    # Every door stores one settings shape: the CLI's run has the same fields.
    cli_run = subprocess.run([cli, "tune", "matmul", "--M", "16", "--N", "16", "--K", "16",
                              "--beam", "1", "--max-candidates", "3", "--db", db, "--quiet"],
                             capture_output=True, text=True, timeout=300)
    assert cli_run.returncode == 0, cli_run.stderr
    python_run, cli_begun = sorted(beamlab.runs(db=db), key=lambda r: r["id"])  # newest first
    assert set(python_run["settings"]) == set(cli_begun["settings"])
    assert cli_begun["settings"]["door"] == "cli"
