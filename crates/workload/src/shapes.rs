//! Networks described by their layer shapes alone: a TOML file whose `layers` use the keys
//! of a bundle manifest's layers without the arrays (`kind`, `in_channels`, `kernel`,
//! `input_shape`, ..., `in_features`, `out_features`), parsed by the manifest's own layer
//! parser, so a layer's shape has one vocabulary and one set of checks. The synthetic
//! generators fill the weights and inputs, as for a built-in network (docs/workloads.md,
//! "Networks by shape").

use std::path::Path;

use crate::bundle::{fmt_bytes, optional_name, parse_layers, unknown_top_key, LayerKeys};
use crate::geometry::LayerSpec;
use crate::resolve::OpenOptions;
use crate::synth::{LayerRole, Role, ZooWorkload};
use anyhow::anyhow;

/// The extension of a shape file.
pub const EXTENSION: &str = "toml";
/// Keys of a shape file.
pub const TOP_KEYS: [&str; 3] = ["name", "source", "layers"];

/// A parsed shape file.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeFile {
    /// `name`, or the file's stem.
    pub name: String,
    /// `source`: where the shapes come from (free text), if given.
    pub source: Option<String>,
    pub layers: Vec<LayerSpec>,
    /// Per layer: its transformer role (`role`, `heads`), if annotated.
    pub roles: Vec<Option<LayerRole>>,
}

/// Whether `path` names a shape file: it ends in `.toml`.
pub fn is_shape_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Parses shape-file text; `stem` is the name when the file has none. Errors are
/// `field: problem` (the caller adds the file).
pub fn parse(text: &str, stem: &str) -> Result<ShapeFile, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        format!("invalid TOML: {}", e.message().replace('\n', " "))
    })?;
    let v = serde_json::to_value(&table).map_err(|e| format!("invalid TOML: {e}"))?;
    let o = v.as_object().ok_or("expected a TOML table")?;
    unknown_top_key(o, &TOP_KEYS, "a key of a shape file")?;
    let name = optional_name(o, "name")?.unwrap_or_else(|| stem.to_string());
    let source = optional_name(o, "source")?;
    let (stripped, roles) = take_roles(o.get("layers"))?;
    let layers: Vec<LayerSpec> = parse_layers(stripped.as_ref(), LayerKeys::Shapes)?
        .into_iter()
        .map(|l| l.spec)
        .collect();
    crate::synth::roles::blocks(&layers, &roles)?;
    Ok(ShapeFile {
        name,
        source,
        layers,
        roles,
    })
}

/// The shape-file keys a manifest's layer has not: `role` and `heads` (a transformer's
/// fc layers), taken out of each layer before the manifest's parser reads the rest.
pub const ROLE_KEYS: [&str; 2] = ["role", "heads"];

/// `layers` without the [`ROLE_KEYS`], and each layer's role.
fn take_roles(
    layers: Option<&serde_json::Value>,
) -> Result<(Option<serde_json::Value>, Vec<Option<LayerRole>>), String> {
    let Some(serde_json::Value::Array(list)) = layers else {
        return Ok((layers.cloned(), Vec::new()));
    };
    let mut list = list.clone();
    let mut roles = Vec::with_capacity(list.len());
    for (i, l) in list.iter_mut().enumerate() {
        let Some(obj) = l.as_object_mut() else {
            roles.push(None);
            continue;
        };
        let role = obj.remove("role");
        let heads = obj.remove("heads");
        let heads = match heads {
            None => None,
            Some(h) => match h.as_u64() {
                Some(v) if (1..=i32::MAX as u64).contains(&v) => Some(v as usize),
                _ => return Err(format!("layers[{i}].heads: expected a positive integer")),
            },
        };
        match role {
            None if heads.is_some() => {
                return Err(format!(
                    "layers[{i}].heads: needs a role (q, k, v, qkv or attn_out)"
                ))
            }
            None => roles.push(None),
            Some(r) => {
                let r = r
                    .as_str()
                    .ok_or_else(|| format!("layers[{i}].role: expected a string"))?
                    .parse::<Role>()
                    .map_err(|e| format!("layers[{i}].role: {e}"))?;
                roles.push(Some(LayerRole { role: r, heads }));
            }
        }
    }
    Ok((Some(serde_json::Value::Array(list)), roles))
}

/// Reads and checks the shape file at `path`: every layer's geometry, and the memory one
/// layer's generated weights and one sample of its inputs would take against
/// `opts.max_layer_bytes`, before anything is generated.
pub fn read(path: &Path, opts: &OpenOptions) -> anyhow::Result<ShapeFile> {
    let label = path.display().to_string();
    let text = crate::files::read_text(path, &label).map_err(anyhow::Error::msg)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("network");
    let file = parse(&text, stem).map_err(|e| anyhow!("{label}: {e}"))?;
    for (i, l) in file.layers.iter().enumerate() {
        let need = crate::bundle::array_bytes(&l.geom, 1);
        if need > opts.max_layer_bytes as u128 {
            return Err(anyhow!(
                "{label}: layers[{i}]: layer {} needs about {} to generate one sample, more than limits.max_layer_bytes = {} (raise it, e.g. --set limits.max_layer_bytes={})",
                l.name,
                fmt_bytes(need),
                fmt_bytes(opts.max_layer_bytes as u128),
                need.next_power_of_two()
            ));
        }
    }
    Ok(file)
}

/// The network of the shape file at `path` with synthetic weights and inputs.
pub fn open(path: &Path, opts: &OpenOptions) -> anyhow::Result<ZooWorkload> {
    let file = read(path, opts)?;
    let w =
        ZooWorkload::from_layers(&file.name, file.layers, opts.synth)?.with_roles(file.roles)?;
    Ok(w.with_samples(opts.samples))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::ConvGeometry;
    use crate::source::Workload;

    const TWO: &str = r#"
name = "two"
[[layers]]
name = "c1"
kind = "conv"
in_channels = 3
out_channels = 8
kernel = 3
padding = 1
input_shape = [3, 8, 8]
[[layers]]
name = "f"
kind = "fc"
in_features = 512
out_features = 10
"#;

    #[test]
    fn layers_take_the_manifests_keys_and_defaults() {
        let f = parse(TWO, "stem").unwrap();
        assert_eq!((f.name.as_str(), f.layers.len()), ("two", 2));
        let g = &f.layers[0].geom;
        assert_eq!(
            (g.kernel, g.stride, g.padding, g.groups, g.input_hw),
            ([3, 3], [1, 1], [1, 1], 1, [8, 8])
        );
        assert_eq!(f.layers[1].geom, ConvGeometry::fc(512, 10));
        let unnamed = parse(&TWO.replace("name = \"two\"\n", ""), "stem").unwrap();
        assert_eq!(unnamed.name, "stem");
    }

    #[test]
    fn errors_name_the_key() {
        let e = |t: &str| parse(t, "s").unwrap_err();
        assert_eq!(
            e(&TWO.replace("kernel = 3", "kernel = 0")),
            "layers[0].kernel: expected 2 positive integers"
        );
        // A bundle's array keys are not shape keys: the generators make the arrays.
        assert!(
            e(&TWO.replace("out_features = 10", "out_features = 10\nweight = \"w\""))
                .starts_with("layers[1].weight: unknown key (expected a key of an fc layer: name, kind, in_features, out_features, tokens)"),
        );
        assert!(e("nam = 1").starts_with("nam: unknown key (expected a key of a shape file"));
        assert_eq!(e("name = \"x\""), "layers: expected a non-empty array");
        assert_eq!(
            e(&TWO.replace("\"f\"", "\"c1\"")),
            "layers[1].name: \"c1\" repeats layers[0]"
        );
        assert_eq!(
            e(&TWO.replace("in_channels = 3", "in_channels = -3")),
            "layers[0].in_channels: expected a positive integer"
        );
        assert!(e("[[layers]\n").starts_with("invalid TOML: "));
        assert!(!e("[[layers]\n").contains('\n'));
        // Sizes beyond 2^31 - 1 are refused as a manifest refuses them.
        assert_eq!(
            e(&TWO.replace("in_features = 512", "in_features = 4294967296")),
            "layers[1].in_features: expected a positive integer"
        );
    }

    #[test]
    fn an_fc_layer_over_tokens_takes_the_manifests_tokens_key() {
        // A transformer's projection over 16 tokens, as a bundle manifest writes it.
        let seq = TWO.replace("out_features = 10", "out_features = 10\ntokens = 16");
        let f = parse(&seq, "s").unwrap();
        assert_eq!(f.layers[1].geom, ConvGeometry::fc_tokens(512, 10, 16));
        assert_eq!(f.layers[1].geom.vectors_per_sample(), 16);
        assert_eq!(
            parse(&seq.replace("tokens = 16", "tokens = 0"), "s").unwrap_err(),
            "layers[1].tokens: expected a positive integer"
        );
        // The generators fill all 16 token vectors of each sample.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seq.toml");
        std::fs::write(&path, &seq).unwrap();
        let w = open(&path, &OpenOptions::default()).unwrap();
        let s = crate::resolve::summary(&w, crate::quant::Precision::default()).unwrap();
        assert_eq!((s.layers, s.weights), (2, 5_336));
        assert_eq!(w.layers()[1].geom.input_elements(), 512 * 16);
    }

    #[test]
    fn a_layer_too_large_to_generate_is_refused_before_allocation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.toml");
        // 2^31 - 1 squared weights: far beyond any limit, refused at open.
        let big = TWO
            .replace("in_features = 512", "in_features = 2147483647")
            .replace("out_features = 10", "out_features = 2147483647");
        std::fs::write(&path, big).unwrap();
        let e = open(&path, &OpenOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "{}: layers[1]: layer f needs about",
                path.display()
            )) && e.contains("limits.max_layer_bytes = 4 GiB"),
            "{e}"
        );
    }

    #[test]
    fn the_generators_fill_the_layers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.toml");
        std::fs::write(&path, TWO).unwrap();
        let p = crate::quant::Precision::default();
        // 216 + 5,120 weights: the zero fraction is within 0.03 (about 5 sigma) of the
        // --weight-sparsity asked for.
        for sparsity in [0.2, 0.7] {
            let opts = OpenOptions {
                samples: 3,
                synth: crate::SynthParams {
                    weight_sparsity: sparsity,
                    ..Default::default()
                },
                ..Default::default()
            };
            let w = open(&path, &opts).unwrap();
            assert_eq!((w.name(), w.available_samples()), ("two", 3));
            let s = crate::resolve::summary(&w, p).unwrap();
            assert_eq!((s.layers, s.weights), (2, 5_336));
            assert!(
                (s.weight_zero_fraction - sparsity).abs() < 0.03,
                "{sparsity}: {s:?}"
            );
        }
    }
}
