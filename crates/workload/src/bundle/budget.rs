//! How much memory loading one layer takes, estimated from its geometry alone, so that a
//! layer too large for the configured cap (`limits.max_layer_bytes`) is refused before
//! any of its data is read.

use super::header::ArrayHeader;
use super::npy::BLOCK_BYTES;
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

/// Bytes a streamed read of an array of `data_bytes` holds: one raw block and its decoded
/// copy (a decoded element is as wide as its bytes).
pub fn read_buffer_bytes(data_bytes: u128) -> u128 {
    2 * data_bytes.min(BLOCK_BYTES as u128)
}

/// Estimated peak bytes of opening a bundle layer or streaming its inputs, from its
/// geometry and its input array's header (None: synthetic inputs). Weights are held
/// whole; inputs a chunk at a time, counted here as one sample (the smallest chunk: the
/// run's own chunk is the driver's to count) as read and quantized, plus the read
/// buffers. A Fortran-ordered input cannot be streamed by sample and is counted whole.
pub fn bundle_layer_bytes(geom: &ConvGeometry, input: Option<&ArrayHeader>) -> u128 {
    match input {
        None => array_bytes(geom, 1),
        Some(h) => {
            let held = if h.fortran_order {
                h.shape.first().map_or(0, |&n| n as u128)
            } else {
                1
            };
            array_bytes(geom, held).saturating_add(read_buffer_bytes(h.data_bytes()))
        }
    }
}

/// The largest limits.max_layer_bytes a config or `--set` can hold: TOML integers stop
/// at 2^63 - 1.
pub const MAX_SETTABLE_LAYER_BYTES: u64 = i64::MAX as u64;

/// What a refusal of `need` bytes over limits.max_layer_bytes advises: a value of the
/// key that holds it (the next power of two, or the largest settable value), or, when
/// no settable value does, to reduce the layer. Every such refusal prints this, so a
/// suggested `--set` is always one `--set` accepts (docs/errors.md, "Limits").
pub fn raise_layer_bytes_hint(need: u128) -> String {
    let max = MAX_SETTABLE_LAYER_BYTES as u128;
    if need > max {
        return format!(
            "no limits.max_layer_bytes holds it, the largest is {max} = {}: reduce the layer's size",
            fmt_bytes(max)
        );
    }
    format!(
        "raise it, e.g. --set limits.max_layer_bytes={}",
        need.next_power_of_two().min(max)
    )
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

    /// The suggested limit is always one `--set` accepts (at most 2^63 - 1); a need
    /// above that suggests none.
    #[test]
    fn the_raise_hint_names_only_settable_values() {
        assert_eq!(
            raise_layer_bytes_hint(248_552),
            "raise it, e.g. --set limits.max_layer_bytes=262144"
        );
        // The next power of two of 2^62 + 1 is 2^63, one above the largest settable value.
        assert_eq!(
            raise_layer_bytes_hint((1 << 62) + 1),
            "raise it, e.g. --set limits.max_layer_bytes=9223372036854775807"
        );
        let max = MAX_SETTABLE_LAYER_BYTES as u128;
        assert!(raise_layer_bytes_hint(max).ends_with("=9223372036854775807"));
        for need in [max + 1, 1 << 66, u128::MAX] {
            let h = raise_layer_bytes_hint(need);
            assert!(
                !h.contains("--set") && h.contains("reduce the layer's size"),
                "{h}"
            );
        }
    }

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
    fn bytes_of_a_streamed_bundle_layer() {
        use super::super::header::Dtype;
        // conv 3 -> 8, 3x3 on 3x32x32: weights 216, one sample 3,072 elements;
        // (216 + 3072) * 12 = 39,456.
        let g = ConvGeometry::conv(3, 8, 3, 1, 1, 1, [32, 32]);
        assert_eq!(bundle_layer_bytes(&g, None), 39_456);
        let mut h = ArrayHeader {
            dtype: Dtype::F32,
            shape: vec![100, 3, 32, 32],
            big_endian: false,
            fortran_order: false,
        };
        // 100 samples of f32 = 1.2 MB of data: two 64 KiB buffers, whatever N.
        assert_eq!(bundle_layer_bytes(&g, Some(&h)), 39_456 + 131_072);
        h.shape[0] = 1_000_000;
        assert_eq!(bundle_layer_bytes(&g, Some(&h)), 39_456 + 131_072);
        // 1 sample of u8 = 3,072 bytes: buffers of its size.
        h.shape[0] = 1;
        h.dtype = Dtype::U8;
        assert_eq!(bundle_layer_bytes(&g, Some(&h)), 39_456 + 6_144);
        // Fortran order, 2 samples: (216 + 6144) * 12 = 76,320, plus 2 x 6,144 bytes.
        h.shape[0] = 2;
        h.fortran_order = true;
        assert_eq!(bundle_layer_bytes(&g, Some(&h)), 76_320 + 12_288);
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(4 << 30), "4 GiB");
        assert_eq!(fmt_bytes(1536 << 10), "1.5 MiB");
    }
}
