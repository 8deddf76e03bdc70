//! The data of a chart ([`Chart`]): what `sresim plot` and the memory plot hand the
//! crate, before any value is scaled or drawn.

/// The data of a chart.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The series columns (legend heading).
    pub legend: String,
    /// Category names when x is not numeric.
    pub categories: Option<Vec<String>>,
    /// (label, points sorted by x).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// Whether a series' points are joined by a line (else markers only: a scatter).
    pub lines: bool,
    /// A Pareto front drawn over the series as a step line (the corners, in order), with
    /// its own legend entry; empty for none.
    pub front: Vec<(f64, f64)>,
    /// The points of the Pareto front, each ringed in [`style::REFERENCE`] (a front of
    /// one point has no line to draw); empty for none.
    pub front_points: Vec<(f64, f64)>,
    /// Per series, in the order of `series`, the intervals (x, low, high) of its points
    /// that have one, sorted by x; empty (or shorter than `series`) for none.
    pub intervals: Vec<Vec<(f64, f64, f64)>>,
    /// A legend entry saying which interval `intervals` holds (e.g. "95% interval over
    /// device draws"), drawn after the other entries with a band's swatch (a whisker's on
    /// a scatter or bars); None for no entry.
    pub interval_label: Option<String>,
    /// With `categories`: the series' bars stacked on one another at each category (the
    /// parts of a whole, such as energy by component) rather than side by side.
    pub stacked: bool,
    /// Horizontal reference lines (y, legend entry), drawn dashed in
    /// [`style::REFERENCE`] across the plot: an accuracy budget, say.
    pub y_lines: Vec<(f64, String)>,
    /// The values the y quantity can take (a fraction: 0 to 1; a count or an error: 0
    /// and up): intervals are cut to it. Unbounded by default.
    pub y_domain: (f64, f64),
    /// The ends of the x axis, where given (else fitted to the data).
    pub x_limits: (Option<f64>, Option<f64>),
    /// The ends of the y axis, where given (else fitted to the data).
    pub y_limits: (Option<f64>, Option<f64>),
}

impl Default for Chart {
    fn default() -> Chart {
        Chart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            legend: String::new(),
            categories: None,
            series: Vec::new(),
            lines: true,
            front: Vec::new(),
            front_points: Vec::new(),
            intervals: Vec::new(),
            interval_label: None,
            stacked: false,
            y_lines: Vec::new(),
            y_domain: (f64::NEG_INFINITY, f64::INFINITY),
            x_limits: (None, None),
            y_limits: (None, None),
        }
    }
}

/// The legend entry of [`Chart::front`].
pub const FRONT_LABEL: &str = "Pareto front";

impl Chart {
    /// The chart with every text (title, axis labels, legend heading, categories, series
    /// and reference-line names) passed through `bounds::text::printable`: a series
    /// named by a CSV cell holding an escape or a NUL draws as `\u{1b}`, and the SVG
    /// stays well-formed XML.
    pub fn printable(&self) -> Chart {
        let p = |s: &str| bounds::text::printable(s).into_owned();
        Chart {
            title: p(&self.title),
            x_label: p(&self.x_label),
            y_label: p(&self.y_label),
            legend: p(&self.legend),
            categories: self
                .categories
                .as_ref()
                .map(|cs| cs.iter().map(|c| p(c)).collect()),
            series: self
                .series
                .iter()
                .map(|(n, pts)| (p(n), pts.clone()))
                .collect(),
            y_lines: self.y_lines.iter().map(|(y, n)| (*y, p(n))).collect(),
            ..self.clone()
        }
    }
}
