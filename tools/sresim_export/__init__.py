"""sresim_export: build sresim workload bundles from real networks.

- bundle: the bundle writer/reader shared by every builder in tools/;
- graph: finding Conv/Gemm/MatMul layers in an ONNX graph, BatchNorm folding;
- prune: magnitude and SSL-like structured pruning;
- inputs: images / .npy files -> model input batch;
- export: ONNX model + inputs -> bundle layers, with activations captured in onnxruntime.
"""

from .bundle import conv_layer, fc_layer, read_bundle, write_bundle  # noqa: F401
from .export import describe, export  # noqa: F401
