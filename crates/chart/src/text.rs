//! The texts of a chart: axis descriptions with their unit ([`axis_label`]), a title
//! wrapped to the canvas, a legend entry cut to its room; widths as crate::ticks measures
//! them.

use crate::ticks;

/// An axis description: the quantity and, when it has one, its unit in parentheses.
pub fn axis_label(quantity: &str, unit: &str) -> String {
    if unit.is_empty() {
        quantity.to_string()
    } else {
        format!("{quantity} ({unit})")
    }
}

/// `text` broken at spaces into lines of at most `width` pixels at font `size` (a word
/// longer than a line is cut).
pub(crate) fn wrap(text: &str, width: f64, size: u32) -> Vec<String> {
    let fits = |s: &str| ticks::text_width(s, size) <= width;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let joined = match line.is_empty() {
            true => word.to_string(),
            false => format!("{line} {word}"),
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut w = word.to_string();
        while !fits(&w) {
            let keep = ((width / (ticks::CHAR_EM * ticks::rendered(size))) as usize).max(1);
            let rest: String = w.chars().skip(keep).collect();
            lines.push(w.chars().take(keep).collect());
            w = rest;
        }
        line = w;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` cut to at most `width` pixels at font `size`, ending in "..." when cut.
pub(crate) fn fit_text(text: &str, width: f64, size: u32) -> String {
    if ticks::text_width(text, size) <= width {
        return text.to_string();
    }
    let keep = ((width / (ticks::CHAR_EM * ticks::rendered(size))) as usize).saturating_sub(3);
    format!("{}...", text.chars().take(keep).collect::<String>())
}
