//! How series tell apart: the project's palette ([`PALETTE`]), a marker shape and a dash
//! pattern per series ([`SeriesStyle`], [`series_style`]) and each marker's outline
//! ([`marker_path`]). Data only: what draws them is crate::draw.

use plotters::style::RGBColor;

/// The project's palette, in the order series take it: Petroff's ten-colour accessible
/// sequence (matplotlib's `petroff10` style; M. A. Petroff, "Accessible Color Sequences
/// for Data Visualization", 2021), extended by a violet and a navy chosen so that every
/// two of the twelve, and each of them and the black of [`style::REFERENCE`], differ by
/// at least 17 (CIE L*a*b* distance) in normal vision and under simulated protanopia,
/// deuteranopia and tritanopia (Machado, Oliveira and Fernandes 2009, full severity).
/// The tests check this. Series past the twelfth reuse the colours with dashed lines
/// ([`SeriesStyle`]).
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0x3f, 0x90, 0xda),
    RGBColor(0xff, 0xa9, 0x0e),
    RGBColor(0xbd, 0x1f, 0x01),
    RGBColor(0x94, 0xa4, 0xa2),
    RGBColor(0x83, 0x2d, 0xb6),
    RGBColor(0xa9, 0x6b, 0x59),
    RGBColor(0xe7, 0x63, 0x00),
    RGBColor(0xb9, 0xac, 0x70),
    RGBColor(0x71, 0x75, 0x81),
    RGBColor(0x92, 0xda, 0xdd),
    RGBColor(0x69, 0x00, 0xff),
    RGBColor(0x2d, 0x4b, 0x78),
];

/// The colour of series `k`.
pub fn color(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
}

/// The marker shapes, in the order series take them: a circle, square, triangle,
/// diamond, downward triangle, plus and cross. Their count, 7, shares no factor with the
/// palette's 12, so colour and shape together tell apart the first 84 series, and two
/// series at the same points show both shapes.
pub const MARKERS: usize = 7;

/// How series `k` is drawn: its colour, marker shape (an index below [`MARKERS`]) and
/// dash pattern (pixels on and off; solid for the first twelve series, then dashed,
/// dotted and dash-dotted for each further round of the palette).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesStyle {
    pub color: RGBColor,
    pub marker: usize,
    pub dash: Option<&'static [u32]>,
}

/// The style of series `k`.
pub fn series_style(k: usize) -> SeriesStyle {
    const DASHES: [Option<&[u32]>; 4] = [None, Some(&[9, 5]), Some(&[2, 4]), Some(&[9, 4, 2, 4])];
    SeriesStyle {
        color: color(k),
        marker: k % MARKERS,
        dash: DASHES[(k / PALETTE.len()) % DASHES.len()],
    }
}

/// The outline of series `k`'s marker ([`series_style`]) as one polyline around (0, 0),
/// in pixels: a circle of radius 3 (the smallest shape, so that it shows inside the
/// square of the series after it), a square, a triangle, a diamond, a downward triangle,
/// a plus and a cross (the last two retrace their centre).
pub fn marker_path(k: usize) -> Vec<(i32, i32)> {
    match series_style(k).marker {
        0 => (0..=16)
            .map(|i| {
                let a = i as f64 * std::f64::consts::TAU / 16.0;
                (
                    (3.0 * a.cos()).round() as i32,
                    (3.0 * a.sin()).round() as i32,
                )
            })
            .collect(),
        1 => vec![(-5, -5), (5, -5), (5, 5), (-5, 5), (-5, -5)],
        2 => vec![(0, -5), (5, 4), (-5, 4), (0, -5)],
        3 => vec![(0, -5), (5, 0), (0, 5), (-5, 0), (0, -5)],
        4 => vec![(0, 5), (5, -4), (-5, -4), (0, 5)],
        5 => vec![(-5, 0), (5, 0), (0, 0), (0, -5), (0, 5)],
        _ => vec![(-4, -4), (4, 4), (0, 0), (-4, 4), (4, -4)],
    }
}
