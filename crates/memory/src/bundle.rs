//! Graphs of workload bundles, or of `LayerSpec`s.
//!
//! A bundle with a `graph` is that graph (`network::BundleGraph`, shapes inferred from the
//! graph input array's header in tensors.npz). A bundle without one lists only its conv
//! and fc layers, so its graph is a chain of them. Where one layer's output does not have
//! the next layer's input shape, a `glue` copy node stands for the unlisted layers between
//! them (pooling, flatten); unlisted activations and norms are not modelled.

use crate::builder::GraphBuilder;
use crate::graph::{Graph, TensorId};
use anyhow::bail;
use std::path::Path;
use workload::{LayerKind, LayerSpec};

/// The graph of the bundle at `dir` for `batch` samples. The bundle is opened for its
/// geometry alone (`workload::BundleWorkload::open_headers`): the manifest and every
/// array it names are checked as every command checks them, by header and stored data
/// length, no array data read.
pub fn load(dir: &Path, batch: usize) -> anyhow::Result<Graph> {
    let w = workload::bundle::BundleWorkload::open_headers(dir)?;
    match w.graph(batch)? {
        Some(g) => Ok(g),
        None => from_layer_specs(&w.manifest().name, batch, workload::Workload::layers(&w)),
    }
}

/// A chain graph of crossbar layers (the `Workload::layers()` of any workload).
pub fn from_layer_specs(name: &str, batch: usize, specs: &[LayerSpec]) -> anyhow::Result<Graph> {
    if specs.is_empty() {
        bail!("{name}: no layers");
    }
    let mut b = GraphBuilder::new(name, batch);
    let mut prev: Option<TensorId> = None;
    for s in specs {
        s.geom
            .validate()
            .map_err(|e| anyhow::anyhow!("layer {}: {e}", s.name))?;
        let g = &s.geom;
        let need = match s.kind {
            LayerKind::Conv => vec![batch, g.in_channels, g.input_hw[0], g.input_hw[1]],
            LayerKind::Fc => vec![batch, g.in_channels],
        };
        let x = match prev {
            None => b.input("input", need),
            Some(p) => {
                let same_count =
                    b.shape(p).iter().product::<usize>() == need.iter().product::<usize>();
                let fits = match s.kind {
                    LayerKind::Conv => b.shape(p) == &need[..],
                    LayerKind::Fc => same_count,
                };
                if fits {
                    p
                } else {
                    b.glue(&format!("{}.glue", s.name), p, need)
                }
            }
        };
        let y = match s.kind {
            LayerKind::Conv => b.conv_geom(&s.name, x, g.clone()),
            LayerKind::Fc => b.fc(&s.name, x, g.out_channels, false),
        };
        prev = Some(y);
    }
    let Some(last) = prev else {
        bail!("{name}: no layers");
    };
    b.output(last);
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::ConvGeometry;

    #[test]
    fn chain_inserts_glue_where_shapes_differ() {
        let specs = vec![
            LayerSpec {
                name: "conv1".into(),
                kind: LayerKind::Conv,
                geom: ConvGeometry::conv(1, 6, 5, 1, 0, 1, [28, 28]),
            },
            // 6x24x24 -> pooled to 6x12x12 = 864 inputs: a glue node stands for the pool.
            LayerSpec {
                name: "fc1".into(),
                kind: LayerKind::Fc,
                geom: ConvGeometry::fc(864, 10),
            },
        ];
        let g = from_layer_specs("tiny", 2, &specs).unwrap();
        let kinds: Vec<&str> = g.nodes.iter().map(|n| n.op.kind()).collect();
        assert_eq!(kinds, ["conv", "glue", "fc"]);
        assert_eq!(g.tensors[g.outputs[0]].shape, vec![2, 10]);
    }

    #[test]
    fn a_bundle_with_a_graph_is_that_graph() {
        use ndarray::Array4;
        let dir = tempfile::tempdir().unwrap();
        let m = r#"{"name": "g", "layers": [
            {"name": "c", "kind": "conv", "in_channels": 1, "out_channels": 2, "kernel": 3,
             "input_shape": [1, 4, 4], "weight": "c.w"},
            {"name": "f", "kind": "fc", "in_features": 2, "out_features": 3, "weight": "f.w"}],
          "graph": [
            {"op": "layer", "layer": "c", "inputs": ["x"], "output": "y1"},
            {"op": "Relu", "inputs": ["y1"], "output": "y2"},
            {"op": "MaxPool", "inputs": ["y2"], "output": "y3", "kernel_shape": [2, 2]},
            {"op": "Flatten", "inputs": ["y3"], "output": "y4"},
            {"op": "layer", "layer": "f", "inputs": ["y4"], "output": "y"}],
          "graph_input": "x", "graph_output": "y"}"#;
        std::fs::write(dir.path().join("manifest.json"), m).unwrap();
        let file = std::fs::File::create(dir.path().join("tensors.npz")).unwrap();
        let mut npz = ndarray_npy::NpzWriter::new(file);
        npz.add_array("x", &Array4::<f32>::zeros((5, 1, 4, 4)))
            .unwrap();
        // The layers' weights: every array the manifest names is checked (by header).
        npz.add_array("c.w", &Array4::<f32>::zeros((2, 1, 3, 3)))
            .unwrap();
        npz.add_array("f.w", &ndarray::Array2::<f32>::zeros((3, 2)))
            .unwrap();
        npz.finish().unwrap();
        let g = load(dir.path(), 2).unwrap();
        let kinds: Vec<&str> = g.nodes.iter().map(|n| n.op.kind()).collect();
        assert_eq!(kinds, ["conv", "relu", "maxpool", "flatten", "fc"]);
        assert_eq!(g.tensors[g.outputs[0]].shape, vec![2, 3]);
        assert!(g.validate().is_ok());
        // Without its arrays: one line naming the file and the first array missing.
        let file = std::fs::File::create(dir.path().join("tensors.npz")).unwrap();
        ndarray_npy::NpzWriter::new(file).finish().unwrap();
        let e = load(dir.path(), 2).unwrap_err().to_string();
        assert!(e.contains("tensors.npz: c.w: no such array"), "{e}");
    }

    #[test]
    fn bad_manifest_fields_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let m = r#"{"name": "x", "layers": [{"name": "c", "kind": "conv", "in_channels": 3}]}"#;
        std::fs::write(dir.path().join("manifest.json"), m).unwrap();
        let e = load(dir.path(), 1).unwrap_err().to_string();
        assert!(
            e.ends_with("manifest.json: layers[0].input_shape: absent"),
            "{e}"
        );
    }
}
