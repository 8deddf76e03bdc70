//! Networks described by their layer shapes alone: a TOML file whose `layers` use the keys
//! of a bundle manifest's layers without the arrays (`kind`, `in_channels`, `kernel`,
//! `input_shape`, ..., `in_features`, `out_features`), parsed by the manifest's own layer
//! parser, so a layer's shape has one vocabulary and one set of checks. The synthetic
//! generators fill the weights and inputs, as for a built-in network (docs/workloads.md,
//! "Networks by shape").

use std::path::Path;

use crate::bundle::{fmt_bytes, optional_name, parse_layers, unknown_top_key, LayerKeys};
use crate::geometry::LayerSpec;
use crate::options::OpenOptions;
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
    /// The attention products of its attention blocks (Q.K^T and P.V of each block, by
    /// the attn_out layer's `tokens`, `heads`, `kv_len` and `window`), as (name,
    /// multiply-accumulates a sample): what no crossbar computes.
    pub off_crossbar: Vec<(String, u64)>,
}

/// Whether `path` names a shape file: it ends in `.toml`.
pub fn is_shape_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Parses shape-file text; `stem` is the name when the file has none. Errors are
/// `field: problem` (the caller adds the file).
pub fn parse(text: &str, stem: &str) -> Result<ShapeFile, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e
            .span()
            .map_or(String::new(), |s| toml_place(text, s.start));
        format!("{at}invalid TOML: {}", e.message().replace('\n', " "))
    })?;
    non_finite(&toml::Value::Table(table.clone()), "")?;
    let v = serde_json::to_value(&table).map_err(|e| format!("invalid TOML: {e}"))?;
    let o = v.as_object().ok_or("expected a TOML table")?;
    unknown_top_key(o, &TOP_KEYS, "a key of a shape file")?;
    let name = optional_name(o, "name")?.unwrap_or_else(|| stem.to_string());
    let source = optional_name(o, "source")?;
    let (stripped, roles, spans) = take_roles(o.get("layers"))?;
    let layers: Vec<LayerSpec> = parse_layers(stripped.as_ref(), LayerKeys::Shapes)?
        .into_iter()
        .map(|l| l.spec)
        .collect();
    let blocks = crate::synth::roles::blocks(&layers, &roles)?;
    let off_crossbar = attention_products(&layers, &roles, &spans, &blocks)?;
    Ok(ShapeFile {
        name,
        source,
        layers,
        roles,
        off_crossbar,
    })
}

/// Refuses a TOML `nan`, `inf` or date anywhere in a shape file. JSON has no such number:
/// converted, it became `null`, which reads as an absent key, so `name = nan` passed the
/// string check (the network named after the file) where `name = 1.5` is refused. A
/// name's is refused as any other non-string; any other key's as not finite.
fn non_finite(v: &toml::Value, at: &str) -> Result<(), String> {
    match v {
        toml::Value::Float(f) if !f.is_finite() => {
            let key = at.rsplit('.').next().unwrap_or(at);
            Err(match key == "name" || key == "source" {
                true => format!("{at}: expected a non-empty string"),
                false => format!("{at}: {f} is not a finite number"),
            })
        }
        // A date (`name = 1979-05-27`) would become a table of the TOML reader's
        // private key in JSON: told as a date, by its key.
        toml::Value::Datetime(d) => {
            let key = at.rsplit('.').next().unwrap_or(at);
            let expected = match key {
                "name" | "source" | "kind" | "role" => "a string",
                _ => "a number",
            };
            Err(format!(
                "{at}: {}, expected {expected}",
                bounds::text::toml_date(&d.to_string())
            ))
        }
        toml::Value::Table(t) => t.iter().try_for_each(|(k, v)| {
            let dot = if at.is_empty() { "" } else { "." };
            non_finite(v, &format!("{at}{dot}{k}"))
        }),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| non_finite(v, &format!("{at}[{i}]"))),
        _ => Ok(()),
    }
}

/// Where byte `at` of shape file `text` lies, for a TOML error: `line 18: ` and, when it
/// lies in a value, its key as the file's other errors name it (`layers[1].kv_len: `);
/// the parser's own message ("number too large to fit in target type") names neither.
fn toml_place(text: &str, at: usize) -> String {
    let Some(before) = text.get(..at) else {
        return String::new();
    };
    let line_no = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let key = before[start..].split_once('=').map(|(k, _)| {
        let k: String = k
            .trim()
            .trim_matches(['"', '\''])
            .chars()
            .take(60)
            .collect();
        k.chars().filter(|c| !c.is_control()).collect::<String>()
    });
    let Some(key) = key.filter(|k| !k.is_empty()) else {
        return format!("line {line_no}: ");
    };
    // The table the line lies in: the nth `[[layers]]` is layers[n - 1].
    let headers: Vec<&str> = before[..start]
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('['))
        .collect();
    match headers.last() {
        Some(h) if h.starts_with("[[") => {
            let name = h.trim_matches(['[', ']', ' ']);
            let n = headers.iter().filter(|x| **x == *h).count();
            format!("line {line_no}: {name}[{}].{key}: ", n - 1)
        }
        Some(h) => format!(
            "line {line_no}: {}.{key}: ",
            h.trim_matches(['[', ']', ' '])
        ),
        None => format!("line {line_no}: {key}: "),
    }
}

/// What the queries of an attention block attend to, as its attn_out layer says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    /// `kv_len`: keys (and values) each query attends to, a K/V cache's included.
    kv_len: Option<usize>,
    /// `window`: tokens per attention window (Swin's 7 x 7 = 49).
    window: Option<usize>,
}

/// Q.K^T and P.V of every block, named after the attn_out layer's module (`a.b.proj`
/// gives `a.b.scores` and `a.b.context`): T queries (the attn_out layer's `tokens`) of
/// width d (its `in_features`) each against `kv_len` keys (default: the `window`, else
/// T), T x d x keys multiply-accumulates each, whatever the heads.
fn attention_products(
    layers: &[LayerSpec],
    roles: &[Option<LayerRole>],
    spans: &[Span],
    blocks: &[crate::synth::roles::Block],
) -> Result<Vec<(String, u64)>, String> {
    for (i, s) in spans.iter().enumerate() {
        let key = if s.kv_len.is_some() {
            "kv_len"
        } else {
            "window"
        };
        if *s != Span::default() && roles[i].map(|r| r.role) != Some(Role::AttnOut) {
            return Err(format!(
                "layers[{i}].{key}: only an attn_out layer says what its block attends to"
            ));
        }
        if s.kv_len.is_some() && s.window.is_some() {
            return Err(format!(
                "layers[{i}].kv_len: a windowed block's queries attend to their window (give kv_len or window, not both)"
            ));
        }
    }
    let mut out = Vec::new();
    for b in blocks {
        let Some(&o) = b.layers.last() else { continue };
        let g = &layers[o].geom;
        let tokens = g.vectors_per_sample();
        let span = spans[o];
        if let Some(w) = span.window {
            if !tokens.is_multiple_of(w) {
                return Err(format!(
                    "layers[{o}].window: {w} does not divide the layer's tokens {tokens}"
                ));
            }
        }
        let keys = span.kv_len.or(span.window).unwrap_or(tokens);
        let overflow = || {
            format!(
                "layers[{o}]: the attention products' multiply-accumulates a sample (tokens x in_features x kv_len, summed over the file's blocks) overflow 64 bits"
            )
        };
        let macs = [tokens, g.in_channels, keys]
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
            .ok_or_else(overflow)?;
        let name = &layers[o].name;
        let module = name.rsplit_once('.').map_or(name.as_str(), |(m, _)| m);
        out.push((format!("{module}.scores"), macs));
        out.push((format!("{module}.context"), macs));
        crate::source::off_crossbar_total(&out).map_err(|_| overflow())?;
    }
    Ok(out)
}

/// The shape-file keys a manifest's layer has not: `role` and `heads` (a transformer's
/// fc layers), `kv_len` and `window` (what an attn_out layer's block attends to), taken
/// out of each layer before the manifest's parser reads the rest.
pub const ROLE_KEYS: [&str; 4] = ["role", "heads", "kv_len", "window"];

type Taken = (Option<serde_json::Value>, Vec<Option<LayerRole>>, Vec<Span>);

/// `layers` without the [`ROLE_KEYS`], each layer's role and what it attends to.
fn take_roles(layers: Option<&serde_json::Value>) -> Result<Taken, String> {
    let Some(serde_json::Value::Array(list)) = layers else {
        return Ok((layers.cloned(), Vec::new(), Vec::new()));
    };
    let mut list = list.clone();
    let mut roles = Vec::with_capacity(list.len());
    let mut spans = Vec::with_capacity(list.len());
    for (i, l) in list.iter_mut().enumerate() {
        let Some(obj) = l.as_object_mut() else {
            roles.push(None);
            spans.push(Span::default());
            continue;
        };
        let mut positive = |key: &str| match obj.remove(key) {
            None => Ok(None),
            Some(h) => match h.as_u64() {
                Some(v) if (1..=i32::MAX as u64).contains(&v) => Ok(Some(v as usize)),
                _ => Err(format!("layers[{i}].{key}: expected a positive integer")),
            },
        };
        let heads = positive("heads")?;
        spans.push(Span {
            kv_len: positive("kv_len")?,
            window: positive("window")?,
        });
        let role = obj.remove("role");
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
    Ok((Some(serde_json::Value::Array(list)), roles, spans))
}

/// Reads and checks the shape file at `path`: every layer's geometry, and the memory one
/// output channel of a layer's generated weights (in each group) and one sample of its
/// inputs would take against `opts.max_layer_bytes`, before anything is generated.
pub fn read(path: &Path, opts: &OpenOptions) -> anyhow::Result<ShapeFile> {
    let label = path.display().to_string();
    let text = crate::files::read_text(path, &label).map_err(anyhow::Error::msg)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("network");
    let file = parse(&text, stem).map_err(|e| anyhow!("{label}: {e}"))?;
    for (i, l) in file.layers.iter().enumerate() {
        // A generated layer too wide to hold whole runs a window of columns at a time:
        // at least one output channel of each group and one sample of inputs are held
        // (the run checks its windows against the hardware's blocks, docs/errors.md).
        let one_column = crate::geometry::ConvGeometry {
            out_channels: l.geom.groups,
            ..l.geom.clone()
        };
        let need = crate::bundle::array_bytes(&one_column, 1);
        if need > opts.max_layer_bytes as u128 {
            return Err(anyhow!(
                "{label}: layers[{i}]: layer {} needs about {} to generate one sample, more than limits.max_layer_bytes = {} ({})",
                l.name,
                fmt_bytes(need),
                fmt_bytes(opts.max_layer_bytes as u128),
                crate::bundle::raise_layer_bytes_hint(need)
            ));
        }
    }
    Ok(file)
}

/// The network of the shape file at `path` with synthetic weights and inputs.
pub fn open(path: &Path, opts: &OpenOptions) -> anyhow::Result<ZooWorkload> {
    let file = read(path, opts)?;
    let w = ZooWorkload::from_layers(&file.name, file.layers, opts.synth)?
        .with_roles(file.roles)?
        .with_off_crossbar(file.off_crossbar);
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
        assert!(e("[[layers]\n").starts_with("line 1: invalid TOML: "));
        // An integer TOML cannot hold is named by its key and line, as other errors are.
        let huge = TWO.replace("out_features = 10", "out_features = 18446744073709551615");
        assert_eq!(
            e(&huge),
            "line 15: layers[1].out_features: invalid TOML: number too large to fit in target type"
        );
        assert_eq!(
            e("name = 99999999999999999999\n"),
            "line 1: name: invalid TOML: number too large to fit in target type"
        );
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
    fn nan_and_inf_are_refused_where_a_string_or_number_is_expected() {
        let file = "name = \"n\"\nsource = \"s\"\n[[layers]]\nname = \"f\"\nkind = \"fc\"\nin_features = 16\nout_features = 16\n";
        assert!(parse(file, "t").is_ok());
        for bad in ["nan", "inf", "-inf", "+nan"] {
            for key in ["name", "source"] {
                let text = file.replace(
                    &format!("{key} = \"{}\"", &key[..1]),
                    &format!("{key} = {bad}"),
                );
                assert_eq!(
                    parse(&text, "t").unwrap_err(),
                    format!("{key}: expected a non-empty string")
                );
            }
            let text = file.replace("name = \"f\"", &format!("name = {bad}"));
            assert_eq!(
                parse(&text, "t").unwrap_err(),
                "layers[0].name: expected a non-empty string"
            );
            let text = file.replace("in_features = 16", &format!("in_features = {bad}"));
            assert!(parse(&text, "t")
                .unwrap_err()
                .starts_with("layers[0].in_features: "));
        }
        // As 1.5 is.
        assert_eq!(
            parse(&file.replace("name = \"n\"", "name = 1.5"), "t").unwrap_err(),
            "name: expected a non-empty string"
        );
    }

    /// A date was converted to JSON as a table of the TOML reader's private key and told
    /// so (`{"$__toml_private_datetime": ...}`): it is told as a date, by its key.
    #[test]
    fn a_toml_date_is_told_as_a_date_by_its_key() {
        let file = "name = \"n\"\n[[layers]]\nname = \"f\"\nkind = \"fc\"\nin_features = 16\nout_features = 16\n";
        let e = parse(&file.replace("name = \"n\"", "name = 1979-05-27"), "t").unwrap_err();
        assert_eq!(e, "name: a date (1979-05-27), expected a string");
        let e = parse(
            &file.replace("in_features = 16", "in_features = 07:32:00"),
            "t",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "layers[0].in_features: a time (07:32:00), expected a number"
        );
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
            )) && e.contains(
                "limits.max_layer_bytes = 4 GiB (raise it, e.g. --set limits.max_layer_bytes="
            ),
            "{e}"
        );
        // A need no settable limit holds (48 EiB, above 2^63 - 1 bytes) suggests no value.
        let huge = "[[layers]]\nname = \"a\"\nkind = \"conv\"\nin_channels = 1\nout_channels = 1\n\
                    kernel = 1\ninput_shape = [1, 2147483647, 2147483647]\n";
        std::fs::write(&path, huge).unwrap();
        let e = open(&path, &OpenOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("(no limits.max_layer_bytes holds it, the largest is 9223372036854775807 = 8 EiB: reduce the layer's size)")
                && !e.contains("--set"),
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

    /// One attention block over 8 tokens of width 16 (4 heads), its attn_out layer
    /// carrying `extra`.
    fn block(extra: &str) -> String {
        let fc = |name: &str, role: &str, more: &str| {
            format!("[[layers]]\nname = \"a.{name}\"\nkind = \"fc\"\nin_features = 16\nout_features = 16\ntokens = 8\nrole = \"{role}\"\nheads = 4\n{more}")
        };
        [
            fc("q", "q", ""),
            fc("k", "k", ""),
            fc("v", "v", ""),
            fc("o", "attn_out", extra),
        ]
        .concat()
    }

    #[test]
    fn attention_blocks_give_their_products_by_hand() {
        let ops = |extra: &str| parse(&block(extra), "s").unwrap().off_crossbar;
        // 8 queries of width 16 against 8 keys: 8 x 16 x 8 = 1,024 each.
        assert_eq!(
            ops(""),
            vec![("a.scores".into(), 1024), ("a.context".into(), 1024)]
        );
        // A decode-like block: the 8 queries against 40 keys (32 cached): 8 x 16 x 40.
        assert_eq!(ops("kv_len = 40\n")[0].1, 5120);
        // Windows of 4 tokens: 8 x 16 x 4.
        assert_eq!(ops("window = 4\n")[1].1, 512);
        // Layers without roles have no products.
        assert!(parse(TWO, "s").unwrap().off_crossbar.is_empty());
        let e = |extra: &str| parse(&block(extra), "s").unwrap_err();
        assert_eq!(
            e("window = 3\n"),
            "layers[3].window: 3 does not divide the layer's tokens 8"
        );
        assert_eq!(
            e("kv_len = 0\n"),
            "layers[3].kv_len: expected a positive integer"
        );
        assert!(e("window = 4\nkv_len = 8\n").starts_with("layers[3].kv_len: a windowed block"));
        let on_q = block("").replacen("heads = 4\n", "heads = 4\nkv_len = 9\n", 1);
        assert_eq!(
            parse(&on_q, "s").unwrap_err(),
            "layers[0].kv_len: only an attn_out layer says what its block attends to"
        );
    }
}
