//! Running a subset of a workload's layers: `--layers NAME,...` on `sresim run`, and a
//! grid's `layers` list.
//!
//! A [`LayerSelector`] is a list of patterns, each an exact layer name or a glob (`*`
//! matches any run of characters, `?` any one character; `conv*`, `features.1?.*`). A
//! layer is selected when any pattern matches its whole name; the selected layers keep
//! the workload's order, each once, whatever the order of the patterns. A pattern that
//! matches no layer is an error that lists the layer names, so that a typo never runs an
//! empty or a partial network silently.
//!
//! [`Selected`] is the workload restricted to those layers. Each layer is simulated on
//! its own, from its own weights and input trace, so a selected layer gives exactly the
//! rows it gives in a run of the whole workload (its synthetic data, if any, is generated
//! for its index in the whole workload).

use crate::geometry::LayerSpec;
use crate::layer::LayerWeights;
use crate::quant::Precision;
use crate::source::{SampleSink, Workload};

/// A parsed `--layers` value: non-empty patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerSelector {
    patterns: Vec<String>,
}

impl LayerSelector {
    /// Parses a comma-separated list (`conv1,fc*`); blanks around names are ignored.
    pub fn parse(list: &str) -> Result<LayerSelector, String> {
        Self::from_patterns(list.split(','))
    }

    /// A selector of the given patterns (a grid's `layers = [...]`).
    pub fn from_patterns<S: AsRef<str>>(
        patterns: impl IntoIterator<Item = S>,
    ) -> Result<LayerSelector, String> {
        let patterns: Vec<String> = patterns
            .into_iter()
            .map(|p| p.as_ref().trim().to_string())
            .collect();
        if patterns.is_empty() || patterns.iter().any(String::is_empty) {
            return Err("expected layer names or globs separated by commas, e.g. conv1,fc*".into());
        }
        Ok(LayerSelector { patterns })
    }

    /// The patterns, as given (trimmed).
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The indices of the selected layers of `layers`, in their order; an error names the
    /// first pattern that matches nothing.
    pub fn indices(&self, network: &str, layers: &[LayerSpec]) -> Result<Vec<usize>, String> {
        if let Some(p) = self
            .patterns
            .iter()
            .find(|p| !layers.iter().any(|l| glob_match(p, &l.name)))
        {
            let names: Vec<&str> = layers.iter().map(|l| l.name.as_str()).collect();
            let shown = if names.len() > 20 {
                format!("{}, ... ({} layers)", names[..20].join(", "), names.len())
            } else {
                names.join(", ")
            };
            return Err(format!(
                "'{p}' matches no layer of {network} (its layers: {shown})"
            ));
        }
        Ok((0..layers.len())
            .filter(|&i| self.patterns.iter().any(|p| glob_match(p, &layers[i].name)))
            .collect())
    }
}

/// Whether `pattern` (`*` any run, `?` any one character, anything else itself) matches
/// all of `name`. Greedy with one backtrack point: linear in practice, never exponential.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0, 0);
    // The last `*` seen and the name position it currently stands up to.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            // Let that `*` take one more character and retry.
            star = Some((si, sj + 1));
            i = si + 1;
            j = sj + 1;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// A workload restricted to some of its layers (see the module documentation).
pub struct Selected {
    inner: Box<dyn Workload>,
    /// Indices into the inner workload's layers.
    picked: Vec<usize>,
    layers: Vec<LayerSpec>,
}

impl Selected {
    /// `inner` restricted to the layers `selector` picks.
    pub fn new(inner: Box<dyn Workload>, selector: &LayerSelector) -> Result<Selected, String> {
        let picked = selector.indices(inner.name(), inner.layers())?;
        let layers = picked.iter().map(|&i| inner.layers()[i].clone()).collect();
        Ok(Selected {
            inner,
            picked,
            layers,
        })
    }

    /// How many layers the whole workload has.
    pub fn total_layers(&self) -> usize {
        self.inner.layers().len()
    }
}

impl Workload for Selected {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn source(&self) -> &str {
        self.inner.source()
    }
    fn layers(&self) -> &[LayerSpec] {
        &self.layers
    }
    fn available_samples(&self) -> usize {
        self.inner.available_samples()
    }
    fn notes(&self) -> Vec<String> {
        self.inner.notes()
    }
    fn off_crossbar(&self) -> Vec<(String, u64)> {
        self.inner.off_crossbar()
    }
    fn load_weights(&self, index: usize, precision: Precision) -> anyhow::Result<LayerWeights> {
        self.inner.load_weights(self.inner_index(index)?, precision)
    }
    fn loads_columns(&self) -> bool {
        self.inner.loads_columns()
    }
    fn weight_columns(
        &self,
        index: usize,
        precision: Precision,
    ) -> anyhow::Result<Option<Box<dyn crate::source::ColumnWeights + '_>>> {
        self.inner
            .weight_columns(self.inner_index(index)?, precision)
    }
    fn stream_inputs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        sink: &mut SampleSink<'_>,
    ) -> anyhow::Result<()> {
        self.inner
            .stream_inputs(self.inner_index(index)?, precision, samples, chunk, sink)
    }
}

impl Selected {
    fn inner_index(&self, index: usize) -> anyhow::Result<usize> {
        self.picked.get(index).copied().ok_or_else(|| {
            anyhow::anyhow!(
                "{}: layer index {index} out of range ({} selected)",
                self.name(),
                self.picked.len()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthParams, ZooWorkload};
    use proptest::prelude::*;

    #[test]
    fn globs_match_whole_names() {
        for (p, n, want) in [
            ("conv1", "conv1", true),
            ("conv1", "conv10", false),
            ("conv*", "conv10", true),
            ("conv*", "fc1", false),
            ("*", "", true),
            ("", "", true),
            ("?", "", false),
            ("features.1?.*", "features.12.conv.0", true),
            ("features.1?.*", "features.1.conv.0", false),
            ("*.depthwise", "block_1_depthwise", false),
            ("*_depthwise", "block_1_depthwise", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("**x", "yx", true),
        ] {
            assert_eq!(glob_match(p, n), want, "{p} on {n}");
        }
    }

    /// A pattern without wildcards matches only itself; `*` plus a name's prefix and
    /// suffix matches it.
    fn literal() -> impl Strategy<Value = String> {
        "[a-z0-9._]{0,8}"
    }

    proptest! {
        #[test]
        fn literals_and_stars_agree_with_str(a in literal(), b in literal(), n in literal()) {
            prop_assert_eq!(glob_match(&a, &n), a == n);
            let p = format!("{a}*{b}");
            let want = n.len() >= a.len() + b.len() && n.starts_with(&a) && n.ends_with(&b);
            prop_assert_eq!(glob_match(&p, &n), want);
            let q: String = n.chars().map(|_| '?').collect();
            prop_assert!(glob_match(&q, &n));
        }
    }

    fn lenet() -> Box<dyn Workload> {
        Box::new(ZooWorkload::new("lenet5", SynthParams::default()).unwrap())
    }

    #[test]
    fn selection_keeps_network_order_once() {
        let all: Vec<String> = lenet().layers().iter().map(|l| l.name.clone()).collect();
        // Patterns out of order and overlapping: each layer once, in network order.
        let s = Selected::new(lenet(), &LayerSelector::parse("ip*, conv2,ip1").unwrap()).unwrap();
        let names: Vec<&str> = s.layers().iter().map(|l| l.name.as_str()).collect();
        let want: Vec<&str> = all
            .iter()
            .map(String::as_str)
            .filter(|n| n.starts_with("ip") || *n == "conv2")
            .collect();
        assert_eq!(names, want);
        assert_eq!(s.total_layers(), all.len());
        // Weights of a selected layer are the inner workload's weights of that layer.
        let p = Precision {
            weight_bits: 8,
            input_bits: 8,
        };
        let i = all.iter().position(|n| n == "conv2").unwrap();
        assert_eq!(
            s.load_layer(0, p, 1).unwrap().weights,
            lenet().load_layer(i, p, 1).unwrap().weights
        );
        assert_eq!(
            s.load_layer(0, p, 1).unwrap().input,
            lenet().load_layer(i, p, 1).unwrap().input
        );
    }

    #[test]
    fn unmatched_patterns_and_empty_items_are_errors() {
        let e = Selected::new(lenet(), &LayerSelector::parse("conv1,conv9").unwrap())
            .err()
            .unwrap();
        assert!(
            e.starts_with("'conv9' matches no layer of lenet5 (its layers: conv1, conv2, "),
            "{e}"
        );
        assert!(LayerSelector::parse("conv1,,fc1").is_err());
        assert!(LayerSelector::parse(" ").is_err());
        assert!(LayerSelector::from_patterns(Vec::<String>::new()).is_err());
    }
}
