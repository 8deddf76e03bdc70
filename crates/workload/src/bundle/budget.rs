//! How much memory loading one layer takes, estimated from its geometry alone, so that a
//! layer too large for the configured cap (`limits.max_layer_bytes`) is refused before
//! any of its data is read.

use crate::geometry::ConvGeometry;

/// Default of `limits.max_layer_bytes`: 4 GiB.
pub const DEFAULT_MAX_LAYER_BYTES: u64 = 4 << 30;

/// Bytes per weight or input element while a layer is loaded: the array as read (at most
/// 8 bytes per element, float64 or int64) plus its quantized i32 copy.
const BYTES_PER_ELEMENT: u128 = 8 + 4;

/// Estimated peak bytes of loading a layer's weights and `samples` samples of its input.
/// Computed in saturating u128 from the geometry: never overflows, whatever the numbers.
pub fn array_bytes(geom: &ConvGeometry, samples: u128) -> u128 {
    let product = |xs: &[usize]| xs.iter().fold(1u128, |a, &x| a.saturating_mul(x as u128));
    let weights = product(&[
        geom.out_channels,
        geom.in_channels / geom.groups.max(1),
        geom.kernel[0],
        geom.kernel[1],
    ]);
    let inputs = samples.saturating_mul(product(&[
        geom.in_channels,
        geom.input_hw[0],
        geom.input_hw[1],
    ]));
    weights
        .saturating_add(inputs)
        .saturating_mul(BYTES_PER_ELEMENT)
}

/// `4 GiB`, `1.5 MiB`, `512 B`: a byte count for messages.
pub fn fmt_bytes(b: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    if v.fract() == 0.0 {
        format!("{v} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_of_a_layer() {
        // conv 3 -> 8, 3x3, groups 1, input 3x32x32, 2 samples:
        // weights 8*3*3*3 = 216, inputs 2*3*32*32 = 6144; (216 + 6144) * 12 = 76320.
        let g = ConvGeometry::conv(3, 8, 3, 1, 1, 1, [32, 32]);
        assert_eq!(array_bytes(&g, 2), 76_320);
        // Saturates instead of overflowing.
        let big = usize::MAX;
        let huge = ConvGeometry {
            in_channels: big,
            out_channels: big,
            kernel: [big, big],
            stride: [1, 1],
            padding: [0, 0],
            dilation: [1, 1],
            groups: 1,
            input_hw: [big, big],
        };
        assert_eq!(array_bytes(&huge, u128::MAX), u128::MAX);
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(4 << 30), "4 GiB");
        assert_eq!(fmt_bytes(1536 << 10), "1.5 MiB");
    }
}
