"""tools/ort_per_sample.py, the float side of docs/perf.md's per-sample ratio: the ONNX
model it builds from a bundle's graph computes the bundle's stored onnxruntime outputs
(graph.reference), and it prints one time per sample."""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import ort_per_sample  # noqa: E402


def test_the_model_of_lenet5_mnist_computes_its_reference():
    import onnxruntime as ort

    bundle = os.path.join(ROOT, "workloads", "lenet5-mnist")
    m = json.load(open(os.path.join(bundle, "manifest.json")))
    t = np.load(os.path.join(bundle, "tensors.npz"))
    sess = ort.InferenceSession(ort_per_sample.model_of(m, t), providers=["CPUExecutionProvider"])
    x = t[m["graph_input"]][:20].astype(np.float32)
    y = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    ref = t["graph.reference"][:20]
    assert y.shape == ref.shape
    assert np.abs(y - ref).max() <= 1e-4 * np.abs(ref).max()


def test_it_prints_a_positive_time_per_sample():
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "ort_per_sample.py"),
         os.path.join(ROOT, "workloads", "lenet5-mnist"), "--samples", "3", "--passes", "2"],
        capture_output=True, text=True, check=True).stdout
    word, value = out.split()[:2]
    assert word == "ort_per_sample_s"
    assert 0 < float(value) < 1
