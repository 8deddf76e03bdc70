//! manifest.json of a workload bundle (docs/interfaces.md), parsed field by field so
//! that every error names the field: `layers[2].kernel: expected 2 positive integers`.
//!
//! Keys are checked against the lists below: a misspelt key (`strides`, `in_channel`) is
//! an error rather than a silently used default. The optional keys that exporters write
//! for people (`provenance`, `onnx_pads`, ...) are known and accepted. docs/errors.md lists
//! every check.

use serde_json::{Map, Value};

use network::BundleGraph;

use crate::geometry::{ConvGeometry, LayerKind, LayerSpec};

/// One manifest layer: geometry and the names of its arrays in tensors.npz.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestLayer {
    pub spec: LayerSpec,
    pub weight: String,
    /// None when the manifest has no `input` (or `input: null`).
    pub input: Option<String>,
    /// `input_max`: the input scale calibrated on the float network over the graph
    /// input's samples (the accuracy path quantizes with it; `run` does not).
    pub input_max: Option<f64>,
    /// `input_signed`: whether that calibrated input takes negative values.
    pub input_signed: Option<bool>,
}

/// Keys of the manifest object.
pub const TOP_KEYS: [&str; 9] = [
    "name",
    "source",
    "samples",
    "layers",
    "provenance",
    "graph",
    "graph_input",
    "graph_output",
    "labels",
];
/// Top-level keys that only mean something beside `graph`.
pub const GRAPH_KEYS: [&str; 3] = ["graph_input", "graph_output", "labels"];
/// Keys of a conv layer (the last two are written by the ONNX exporter when it folds
/// asymmetric padding into the captured input; informational).
pub const CONV_KEYS: [&str; 16] = [
    "name",
    "kind",
    "in_channels",
    "out_channels",
    "kernel",
    "stride",
    "padding",
    "dilation",
    "groups",
    "input_shape",
    "weight",
    "input",
    "onnx_pads",
    "padding_folded_into_input",
    "input_max",
    "input_signed",
];
/// Keys of an fc layer (`tokens`: the vectors of one sample, a projection over a
/// sequence; 1 when absent).
pub const FC_KEYS: [&str; 9] = [
    "name",
    "kind",
    "in_features",
    "out_features",
    "tokens",
    "weight",
    "input",
    "input_max",
    "input_signed",
];
/// Largest size the manifest accepts for any single count (channels, kernel, padding,
/// ...): 2^31 - 1. Sums and products of such values fit a u64 where the model adds them.
pub const MAX_SIZE: u64 = i32::MAX as u64;

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub source: String,
    /// Optional `samples` key: must agree with the inputs' N when present.
    pub samples: Option<usize>,
    pub layers: Vec<ManifestLayer>,
    /// The network around the layers (`graph` and the keys beside it); None: the layers
    /// are a set of crossbar layers with no implied connections.
    pub graph: Option<BundleGraph>,
    /// Observations that refuse nothing (printed as `note: ...`): a layer whose input
    /// channels no earlier layer produces ([`super::chain`]).
    pub notes: Vec<String>,
}

type Obj = Map<String, Value>;

/// The one reader of a name (or any string) a manifest or a shape file gives: non-empty,
/// and free of control characters (a NUL, a newline or an escape sequence would break the
/// CSV files it is written to and the terminal it is printed on).
fn non_empty_str(o: &Obj, key: &str, at: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => match s.chars().find(|c| c.is_control()) {
            Some(c) => Err(format!(
                "{at}{key}: holds the control character U+{:04X} (a name is printed and written to CSV files)",
                c as u32
            )),
            None => Ok(Some(s.clone())),
        },
        Some(_) => Err(format!("{at}{key}: expected a non-empty string")),
    }
}

fn required_str(o: &Obj, key: &str, at: &str) -> Result<String, String> {
    non_empty_str(o, key, at)?.ok_or_else(|| format!("{at}{key}: absent"))
}

fn as_count(v: &Value, min: u64) -> Option<usize> {
    v.as_u64()
        .filter(|&n| n >= min && n <= MAX_SIZE)
        .and_then(|n| usize::try_from(n).ok())
}

/// The first key of `o` that is not in `known`, as an error naming it.
fn unknown_key(o: &Obj, known: &[&str], at: &str, what: &str) -> Result<(), String> {
    match o.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "{at}{}: unknown key (expected {what}: {})",
            crate::text::clip(k),
            known.join(", ")
        )),
        None => Ok(()),
    }
}

/// An optional list of exactly `n` non-negative integers (informational keys).
fn optional_list(o: &Obj, key: &str, at: &str, n: usize) -> Result<(), String> {
    match o.get(key) {
        None => Ok(()),
        Some(Value::Array(a)) if a.len() == n && a.iter().all(|v| as_count(v, 0).is_some()) => {
            Ok(())
        }
        Some(_) => Err(format!("{at}{key}: expected {n} non-negative integers")),
    }
}

/// Every size the model derives from a geometry (rows K, elements, output positions,
/// multiply-accumulates) as a u64 product, so no later computation on it can overflow.
fn check_sizes(g: &ConvGeometry, at: &str) -> Result<(), String> {
    let mul = |xs: &[usize]| xs.iter().try_fold(1u64, |a, &x| a.checked_mul(x as u64));
    let [ho, wo] = g.output_hw();
    let k = mul(&[g.in_channels / g.groups, g.kernel[0], g.kernel[1]]);
    let checks = [
        (
            "input elements per sample",
            mul(&[g.in_channels, g.input_hw[0], g.input_hw[1]]),
        ),
        ("output positions", mul(&[ho, wo])),
        ("output elements per sample", mul(&[g.out_channels, ho, wo])),
        (
            "weight elements",
            k.and_then(|k| k.checked_mul(g.out_channels as u64)),
        ),
        (
            "multiply-accumulates per sample",
            k.and_then(|k| mul(&[g.out_channels, ho, wo])?.checked_mul(k)),
        ),
    ];
    for (what, v) in checks {
        if v.is_none() {
            return Err(format!(
                "{at}: geometry too large: {what} overflow 64 bits (counts would overflow u64)"
            ));
        }
    }
    Ok(())
}

fn what(min: u64) -> &'static str {
    if min == 0 {
        "non-negative"
    } else {
        "positive"
    }
}

fn int(o: &Obj, key: &str, at: &str, default: Option<usize>) -> Result<usize, String> {
    match (o.get(key), default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("{at}{key}: absent")),
        (Some(v), _) => {
            as_count(v, 1).ok_or_else(|| format!("{at}{key}: expected a positive integer"))
        }
    }
}

/// `[a, b]` (or a single integer meaning both) with each value >= `min`.
fn pair(
    o: &Obj,
    key: &str,
    at: &str,
    min: u64,
    default: Option<[usize; 2]>,
) -> Result<[usize; 2], String> {
    let err = || format!("{at}{key}: expected 2 {} integers", what(min));
    match (o.get(key), default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("{at}{key}: absent")),
        (Some(Value::Array(a)), _) if a.len() == 2 => {
            let x = as_count(&a[0], min).ok_or_else(err)?;
            let y = as_count(&a[1], min).ok_or_else(err)?;
            Ok([x, y])
        }
        (Some(v), _) => as_count(v, min).map(|x| [x, x]).ok_or_else(err),
    }
}

fn triple(o: &Obj, key: &str, at: &str) -> Result<[usize; 3], String> {
    let err = || format!("{at}{key}: expected 3 positive integers [C, H, W]");
    let a = o.get(key).ok_or_else(|| format!("{at}{key}: absent"))?;
    let a = a.as_array().filter(|a| a.len() == 3).ok_or_else(err)?;
    let mut out = [0; 3];
    for (o, v) in out.iter_mut().zip(a) {
        *o = as_count(v, 1).ok_or_else(err)?;
    }
    Ok(out)
}

/// Keys of a conv layer in a network described by shapes alone: a conv layer's keys
/// without its arrays and the exporter's notes.
pub const SHAPE_CONV_KEYS: &[&str] = CONV_KEYS.split_at(10).0;
/// Keys of an fc layer in a network described by shapes alone.
pub const SHAPE_FC_KEYS: &[&str] = FC_KEYS.split_at(5).0;

/// Whether a layer names its arrays (a bundle manifest) or is its shape alone (a shape
/// file, [`crate::shapes`]): the keys each accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LayerKeys {
    Bundle,
    Shapes,
}

fn parse_layer(v: &Value, i: usize, keys: LayerKeys) -> Result<ManifestLayer, String> {
    let at = format!("layers[{i}].");
    let o = v
        .as_object()
        .ok_or_else(|| format!("layers[{i}]: expected an object"))?;
    let name = required_str(o, "name", &at)?;
    if name == "TOTAL" {
        return Err(format!(
            "{at}name: \"TOTAL\" is reserved for the per-mode total rows of layers.csv (expected another name)"
        ));
    }
    let kind = match o.get("kind").and_then(Value::as_str) {
        Some("conv") => LayerKind::Conv,
        Some("fc") => LayerKind::Fc,
        Some(k) => {
            return Err(format!(
                "{at}kind: expected \"conv\" or \"fc\", got \"{}\"",
                crate::text::clip(k)
            ))
        }
        None => return Err(format!("{at}kind: expected \"conv\" or \"fc\"")),
    };
    let (conv_keys, fc_keys): (&[&str], &[&str]) = match keys {
        LayerKeys::Bundle => (&CONV_KEYS, &FC_KEYS),
        LayerKeys::Shapes => (SHAPE_CONV_KEYS, SHAPE_FC_KEYS),
    };
    match kind {
        LayerKind::Conv => unknown_key(o, conv_keys, &at, "a key of a conv layer")?,
        LayerKind::Fc => unknown_key(o, fc_keys, &at, "a key of an fc layer")?,
    }
    optional_list(o, "onnx_pads", &at, 4)?;
    optional_list(o, "padding_folded_into_input", &at, 4)?;
    let geom = match kind {
        LayerKind::Fc => ConvGeometry::fc_tokens(
            int(o, "in_features", &at, None)?,
            int(o, "out_features", &at, None)?,
            int(o, "tokens", &at, Some(1))?,
        ),
        LayerKind::Conv => {
            let in_channels = int(o, "in_channels", &at, None)?;
            let [c, h, w] = triple(o, "input_shape", &at)?;
            if c != in_channels {
                return Err(format!(
                    "{at}input_shape: C = {c} does not match in_channels {in_channels}"
                ));
            }
            ConvGeometry {
                in_channels,
                out_channels: int(o, "out_channels", &at, None)?,
                kernel: pair(o, "kernel", &at, 1, None)?,
                stride: pair(o, "stride", &at, 1, Some([1, 1]))?,
                padding: pair(o, "padding", &at, 0, Some([0, 0]))?,
                dilation: pair(o, "dilation", &at, 1, Some([1, 1]))?,
                groups: int(o, "groups", &at, Some(1))?,
                input_hw: [h, w],
            }
        }
    };
    geom.validate().map_err(|e| format!("{at}{e}"))?;
    check_sizes(&geom, &format!("layers[{i}]"))?;
    let input_max = match o.get("input_max") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| format!("{at}input_max: expected a positive finite number"))?,
        ),
    };
    let input_signed = match o.get("input_signed") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(format!("{at}input_signed: expected true or false")),
    };
    let weight = match keys {
        LayerKeys::Bundle => required_str(o, "weight", &at)?,
        LayerKeys::Shapes => String::new(),
    };
    Ok(ManifestLayer {
        spec: LayerSpec { name, kind, geom },
        weight,
        input: non_empty_str(o, "input", &at)?,
        input_max,
        input_signed,
    })
}

/// The `layers` array: a non-empty list of layers with distinct names.
pub(crate) fn parse_layers(
    list: Option<&Value>,
    keys: LayerKeys,
) -> Result<Vec<ManifestLayer>, String> {
    let list = list
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or("layers: expected a non-empty array")?;
    let mut layers: Vec<ManifestLayer> = Vec::with_capacity(list.len());
    // Each name's first index: one lookup a layer, so a file of many layers opens in
    // linear time.
    let mut first: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let l = parse_layer(v, i, keys)?;
        if let Some(j) = first.get(&l.spec.name) {
            return Err(format!(
                "layers[{i}].name: \"{}\" repeats layers[{j}]",
                crate::text::clip(&l.spec.name)
            ));
        }
        first.insert(l.spec.name.clone(), i);
        layers.push(l);
    }
    Ok(layers)
}

/// The first key of `o` that is not in `known`, as an error naming it (top-level keys).
pub(crate) fn unknown_top_key(o: &Obj, known: &[&str], what: &str) -> Result<(), String> {
    unknown_key(o, known, "", what)
}

/// An optional non-empty string at the top level.
pub(crate) fn optional_name(o: &Obj, key: &str) -> Result<Option<String>, String> {
    non_empty_str(o, key, "")
}

impl Manifest {
    /// Parses manifest text; errors are `field: problem` (the caller adds the file).
    pub fn parse(text: &str) -> Result<Manifest, String> {
        // Repeated keys refused (serde_json keeps the last one).
        let v: Value = crate::json::parse(text)?;
        let o = v.as_object().ok_or("expected a JSON object")?;
        unknown_key(o, &TOP_KEYS, "", "a manifest key")?;
        let name = required_str(o, "name", "")?;
        let source = non_empty_str(o, "source", "")?.unwrap_or_else(|| "unspecified".into());
        let samples = match o.get("samples") {
            None | Some(Value::Null) => None,
            Some(v) => Some(as_count(v, 1).ok_or("samples: expected a positive integer")?),
        };
        if let Some(p) = o.get("provenance") {
            if !p.is_object() {
                return Err("provenance: expected a JSON object (free-form details)".into());
            }
        }
        let layers = parse_layers(o.get("layers"), LayerKeys::Bundle)?;
        let graph = match o.get("graph") {
            None | Some(Value::Null) => {
                if let Some(k) = GRAPH_KEYS.iter().find(|k| o.contains_key(**k)) {
                    return Err(format!(
                        "{k}: given without graph (it names part of the graph)"
                    ));
                }
                None
            }
            Some(g) => Some(
                BundleGraph::parse(
                    g,
                    o.get("graph_input"),
                    o.get("graph_output"),
                    o.get("labels"),
                )
                .map_err(|e| e.to_string())?,
            ),
        };
        // Each layer is simulated on its own: a bundle of layers that do not chain (a
        // selection, several networks, channel splits) is valid, so this is only a note.
        let specs: Vec<&LayerSpec> = layers.iter().map(|l| &l.spec).collect();
        let notes = super::chain::check(&specs)
            .err()
            .map(|e| format!("{e}; each layer is simulated on its own"))
            .into_iter()
            .collect();
        Ok(Manifest {
            name,
            source,
            samples,
            layers,
            graph,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Manifest::parse(text).unwrap_err()
    }

    #[test]
    fn defaults_and_scalar_pairs() {
        let m = Manifest::parse(
            r#"{"name": "n", "layers": [
              {"name": "c", "kind": "conv", "in_channels": 2, "out_channels": 4, "kernel": 3,
               "input_shape": [2, 5, 6], "weight": "c.w", "onnx_pads": [0, 0, 1, 1]},
              {"name": "f", "kind": "fc", "in_features": 16, "out_features": 3, "weight": "f.w",
               "input": "f.x"}]}"#,
        )
        .unwrap();
        assert_eq!((m.source.as_str(), m.samples), ("unspecified", None));
        let g = &m.layers[0].spec.geom;
        assert_eq!(
            (g.kernel, g.stride, g.padding, g.dilation, g.groups),
            ([3, 3], [1, 1], [0, 0], [1, 1], 1)
        );
        assert_eq!(g.input_hw, [5, 6]);
        assert_eq!(m.layers[0].input, None);
        assert_eq!(m.layers[1].spec.geom, ConvGeometry::fc(16, 3));
        assert_eq!(m.layers[1].input.as_deref(), Some("f.x"));
    }

    #[test]
    fn errors_name_the_field() {
        let conv = |extra: &str| {
            format!(
                r#"{{"name": "n", "layers": [{{"name": "c", "kind": "conv", "in_channels": 2,
                "out_channels": 4, "input_shape": [2, 5, 5], "weight": "w", {extra}}}]}}"#
            )
        };
        assert_eq!(
            err(&conv(r#""kernel": [3, 0]"#)),
            "layers[0].kernel: expected 2 positive integers"
        );
        assert_eq!(
            err(&conv(r#""kernel": [3, 3, 3]"#)),
            "layers[0].kernel: expected 2 positive integers"
        );
        assert_eq!(
            err(&conv(r#""kernel": 3, "padding": [-1, 0]"#)),
            "layers[0].padding: expected 2 non-negative integers"
        );
        assert_eq!(
            err(&conv(r#""kernel": 7"#)),
            "layers[0].kernel: dilated kernel 7 exceeds padded input 5"
        );
        assert_eq!(
            err(&conv(r#""kernel": 3, "groups": 3"#)),
            "layers[0].groups: 3 does not divide in_channels 2"
        );
        assert_eq!(err(&conv(r#""stride": 1"#)), "layers[0].kernel: absent");
        assert!(err("[1]").starts_with("expected a JSON object"));
        assert!(err("{\"name\": 1}").starts_with("name: expected a non-empty string"));
        assert!(
            err(r#"{"name": "n", "layers": []}"#).starts_with("layers: expected a non-empty array")
        );
        assert!(err("{").starts_with("invalid JSON: EOF while parsing"));
    }
}
