//! Does each layer's input fit what the layers before it produce?
//!
//! A bundle lists only the layers mapped on crossbars; pooling, additions, concatenations
//! and flattening between them are not listed, and a layer need not take the previous
//! layer's output (a residual block's downsample conv takes the block input). So the check
//! is on channels, the one thing those operations cannot invent:
//! - the *producible* channel counts are the network input's (the first layer's input
//!   channels) and every earlier layer's output channels, and any sum of distinct ones
//!   (concatenation, as in Inception or DenseNet);
//! - a conv layer's `in_channels` must be producible;
//! - an fc layer's `in_features` must be a multiple of a producible count (C x H x W of a
//!   flattened, possibly pooled, feature map; H = W = 1 after global pooling or another
//!   fc layer).
//!
//! Spatial sizes are not compared (pooling and padding folded into the input change them).
//! Counts above [`MAX_CHECKED`] are not checked. docs/errors.md states the rule.
//!
//! A bundle is a set of layer traces, each simulated on its own, so a layer that breaks
//! the rule (a selection of layers, layers of several networks, a channel split, a
//! space-to-depth or a slice) refuses nothing: the first one found becomes a `note:`.

use crate::geometry::{LayerKind, LayerSpec};

/// Channel counts up to this are checked exactly; larger ones are accepted.
pub const MAX_CHECKED: usize = 1 << 20;

/// The set of producible channel counts (subset sums), as a bitset up to a cap.
struct Reach {
    bits: Vec<u64>,
    cap: usize,
    /// Distinct producers in order, for messages.
    seen: Vec<usize>,
}

impl Reach {
    fn new(cap: usize) -> Self {
        Reach {
            bits: vec![0; cap / 64 + 1],
            cap,
            seen: Vec::new(),
        }
    }

    fn get(&self, v: usize) -> bool {
        v <= self.cap && self.bits[v / 64] >> (v % 64) & 1 == 1
    }

    fn set(&mut self, v: usize) {
        if v <= self.cap {
            self.bits[v / 64] |= 1 << (v % 64);
        }
    }

    /// Adds a producer of `c` channels: every sum so far, plus c, is producible.
    fn add(&mut self, c: usize) {
        if !self.seen.contains(&c) {
            self.seen.push(c);
        }
        if c > self.cap {
            return;
        }
        // bits |= bits << c, word by word from the top (reads are below the write).
        let (q, r) = (c / 64, (c % 64) as u32);
        for i in (q..self.bits.len()).rev() {
            let lo = self.bits[i - q] << r;
            let carry = match (r, i.checked_sub(q + 1)) {
                (1.., Some(j)) => self.bits[j] >> (64 - r),
                _ => 0,
            };
            self.bits[i] |= lo | carry;
        }
    }

    fn list(&self) -> String {
        let mut s: Vec<usize> = self.seen.clone();
        s.sort_unstable();
        let shown: Vec<String> = s.iter().take(12).map(|c| c.to_string()).collect();
        let more = if s.len() > 12 { ", ..." } else { "" };
        format!("{}{more}", shown.join(", "))
    }
}

/// In channels of a layer (conv in_channels, fc in_features).
fn input_count(l: &LayerSpec) -> usize {
    l.geom.in_channels
}

/// Checks every layer after the first against the rule above (the layers of a manifest,
/// in its order); the first that breaks it is described in the `Err` (a note for the
/// caller, never a refusal).
pub fn check(layers: &[&LayerSpec]) -> Result<(), String> {
    let Some(first) = layers.first() else {
        return Ok(());
    };
    let cap = layers
        .iter()
        .map(|l| input_count(l))
        .max()
        .unwrap_or(0)
        .min(MAX_CHECKED);
    let mut reach = Reach::new(cap);
    reach.set(0);
    reach.add(input_count(first));
    reach.add(first.geom.out_channels);
    for (i, l) in layers.iter().enumerate().skip(1) {
        let c = input_count(l);
        if c <= MAX_CHECKED {
            match l.kind {
                LayerKind::Conv if !reach.get(c) => {
                    return Err(format!(
                        "layers[{i}].in_channels: {c} channels are produced by no earlier layer (expected the network input's or an earlier layer's output channels, or a sum of them: {})",
                        reach.list()
                    ))
                }
                LayerKind::Fc if !divisors(c).any(|d| reach.get(d)) => {
                    return Err(format!(
                        "layers[{i}].in_features: {c} is not a multiple of any channel count earlier layers produce (expected C*H*W of an earlier output, C from: {})",
                        reach.list()
                    ))
                }
                _ => {}
            }
        }
        reach.add(l.geom.out_channels);
    }
    Ok(())
}

/// The divisors of n (n >= 1), in no particular order.
fn divisors(n: usize) -> impl Iterator<Item = usize> {
    (1..)
        .take_while(move |d: &usize| d.saturating_mul(*d) <= n)
        .filter(move |d| n.is_multiple_of(*d))
        .flat_map(move |d| [d, n / d])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::ConvGeometry;

    fn conv(name: &str, cin: usize, cout: usize) -> LayerSpec {
        LayerSpec {
            name: name.into(),
            kind: LayerKind::Conv,
            geom: ConvGeometry::conv(cin, cout, 1, 1, 0, 1, [4, 4]),
        }
    }

    fn fc(name: &str, fin: usize, fout: usize) -> LayerSpec {
        LayerSpec {
            name: name.into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(fin, fout),
        }
    }

    /// [`check`] of layers held by value.
    fn check_all(layers: &[LayerSpec]) -> Result<(), String> {
        check(&layers.iter().collect::<Vec<_>>())
    }

    #[test]
    fn chains_residuals_concats_and_flattens_pass() {
        // 3 -> 16 -> 24; a downsample conv on the block input (16); a concat of 16 + 24 = 40;
        // fc on a flattened 40 x 2 x 2 = 160 map; fc after fc.
        let l = [
            conv("a", 3, 16),
            conv("b", 16, 24),
            conv("down", 16, 24),
            conv("cat", 40, 8),
            fc("f1", 160, 10),
            fc("f2", 10, 2),
        ];
        assert_eq!(check_all(&l), Ok(()));
    }

    #[test]
    fn unproducible_channels_are_errors() {
        // Producible: 3, 16, 24 and sums 19, 27, 40, 43. 20 is none of them.
        let l = [conv("a", 3, 16), conv("b", 16, 24), conv("c", 20, 8)];
        assert_eq!(
            check_all(&l).unwrap_err(),
            "layers[2].in_channels: 20 channels are produced by no earlier layer (expected the network input's or an earlier layer's output channels, or a sum of them: 3, 16, 24)"
        );
        // 3 and 16 produced; 35 = 5 x 7 has no producible divisor (3 + 16 = 19 neither).
        let l = [conv("a", 3, 16), fc("f", 35, 2)];
        assert!(check_all(&l)
            .unwrap_err()
            .starts_with("layers[1].in_features: 35 is not a multiple"));
    }

    #[test]
    fn every_zoo_network_passes() {
        // The built-in networks have real geometry (residual, depthwise, flatten to fc).
        for name in crate::zoo::names() {
            let layers = crate::zoo::layers(name).unwrap();
            assert_eq!(check_all(&layers), Ok(()), "{name}");
        }
    }

    #[test]
    fn divisors_are_complete() {
        let mut d: Vec<usize> = divisors(36).collect();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d, [1, 2, 3, 4, 6, 9, 12, 18, 36]);
        assert_eq!(divisors(1).collect::<Vec<_>>(), [1, 1]);
    }
}
