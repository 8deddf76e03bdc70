"""sresim_export: build sresim workload bundles from real networks.

- bundle: the bundle writer/reader shared by every builder in tools/;
- graph: ONNX graph helpers, BatchNorm folding, conv padding;
- layers: finding the crossbar-mapped layers (Conv, ConvTranspose, Gemm, MatMul and their
  quantized forms) and the weight-bearing nodes that are not mapped;
- tconv: a ConvTranspose as a conv over its zero-inserted input;
- quant: dequantizing constant weights of quantized graphs;
- capture: running the model in onnxruntime and capturing inner tensors;
- prune: magnitude and SSL-like structured pruning;
- inputs: images / .npy files -> model input batch;
- export: ONNX model + inputs -> bundle layers, with activations captured in onnxruntime;
- schema: the rules sresim's reader applies (its Python mirror, and `sresim check`);
- ssl_train: training small chain CNNs in PyTorch, dense and with structured sparsity
  learning (imported only by the builders that train; nothing else needs torch);
- trained: exporting such a trained network with uint8 pixels as its graph input, and its
  README tables, with the top-1 figures measured by `sresim accuracy`.
- pipeline: a loaded model and its inputs -> a checked bundle on disk (the command line's
  path, shared by every entry point);
- torch_api: `from_torch`, a PyTorch module and example inputs -> a bundle in one call,
  through torch.onnx in memory (torch imported only when called).
"""

from .bundle import conv_layer, fc_layer, read_bundle, write_bundle  # noqa: F401
from .export import describe, export  # noqa: F401
from .torch_api import from_torch  # noqa: F401
