//! Fonts and grid of every chart.

use plotters::style::RGBColor;

/// Font family of all text.
pub const FONT: &str = "sans-serif";
/// Size of a chart's title.
pub const TITLE: u32 = 18;
/// Size of an axis's description.
pub const AXIS: u32 = 16;
/// Size of tick labels.
pub const TICK: u32 = 13;
/// Size of legend entries.
pub const LEGEND: u32 = 15;
/// Grid lines at the ticks, and the light ones between.
pub const GRID: RGBColor = RGBColor(210, 210, 210);
pub const GRID_LIGHT: RGBColor = RGBColor(240, 240, 240);
/// Reference lines that are not a series (a Pareto front, a budget): black, which no
/// colour of the palette comes near.
pub const REFERENCE: RGBColor = RGBColor(0, 0, 0);
