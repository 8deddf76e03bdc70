//! The check that a drawn SVG reads cleanly, from the SVG text alone: no two texts
//! overlap, every text lies inside the canvas, and no axis labels one value twice. A
//! text's box comes from its anchor point, alignment (`text-anchor`, `dy`), rotation and
//! font size, [`ticks::CHAR_EM`] of the font per character (wider than the digits of
//! common sans-serif fonts). It reads what plotters writes (one `<text>` element per
//! label) and the project's own SVGs alike; the tests run it on every committed plot
//! and on charts drawn from random data.

use crate::ticks;

/// One text of an SVG: its string, box [x0, y0, x1, y1] in pixels, font size, anchor
/// and position, and whether it is rotated.
#[derive(Debug, Clone)]
pub struct Label {
    pub text: String,
    pub bbox: [f64; 4],
    pub size: f64,
    pub anchor: String,
    pub at: (f64, f64),
    pub rotated: bool,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(tag[i..].split('"').next()?.to_string())
}

/// The text of an element with the five XML entities decoded.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The width and height of the canvas (`<svg width=".." height="..">`).
pub fn canvas(svg: &str) -> Option<(f64, f64)> {
    let start = svg.find("<svg")?;
    let tag = svg[start..].split('>').next()?;
    let num = |n: &str| attr(tag, n)?.trim_end_matches("px").parse::<f64>().ok();
    Some((num("width")?, num("height")?))
}

/// The texts of an SVG (one `<text ...>` element each), with their boxes.
pub fn labels(svg: &str) -> Vec<Label> {
    let mut out = Vec::new();
    for part in svg.split("<text").skip(1) {
        let Some((tag, rest)) = part.split_once('>') else {
            continue;
        };
        let text = unescape(rest.split("</text>").next().unwrap_or("").trim());
        let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
        let (Some(x), Some(y), Some(size)) = (num("x"), num("y"), num("font-size")) else {
            continue;
        };
        let anchor = attr(tag, "text-anchor").unwrap_or_else(|| "start".into());
        let w = text.chars().count() as f64 * ticks::CHAR_EM * size;
        // Along the text's own direction, from its anchor.
        let (a0, a1) = match anchor.as_str() {
            "middle" => (-w / 2.0, w / 2.0),
            "end" => (-w, 0.0),
            _ => (0.0, w),
        };
        // Across it (down the page for unrotated text), from its baseline point.
        let (b0, b1) = match attr(tag, "dy").as_deref() {
            Some("0.76em") => (0.0, size),
            Some("0.5ex") => (-size / 2.0, size / 2.0),
            Some("-0.5ex") => (-size, 0.0),
            _ => (-size, 0.0),
        };
        let rotated = tag.contains("rotate(");
        let bbox = if rotated {
            // rotate(270): the text runs up the page, and "down" is to the right.
            [x + b0, y - a1, x + b1, y - a0]
        } else {
            [x + a0, y + b0, x + a1, y + b1]
        };
        out.push(Label {
            text,
            bbox,
            size,
            anchor,
            at: (x, y),
            rotated,
        });
    }
    out
}

/// The problems of one SVG: texts whose boxes overlap, texts outside the canvas, a label
/// repeated on one axis. Empty when it reads cleanly.
pub fn problems(svg: &str) -> Vec<String> {
    let all: Vec<Label> = labels(svg)
        .into_iter()
        .filter(|l| !l.text.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            let [ax0, ay0, ax1, ay1] = a.bbox;
            let [bx0, by0, bx1, by1] = b.bbox;
            if ax0 < bx1 && bx0 < ax1 && ay0 < by1 && by0 < ay1 {
                out.push(format!("{:?} overlaps {:?}", a.text, b.text));
            }
        }
    }
    if let Some((w, h)) = canvas(svg) {
        for l in &all {
            let [x0, y0, x1, y1] = l.bbox;
            if x0 < 0.0 || y0 < 0.0 || x1 > w || y1 > h {
                out.push(format!("{:?} leaves the {w}x{h} canvas", l.text));
            }
        }
    }
    // Tick labels of one axis share a font size and a column (y axis: right-aligned at
    // one x) or a row (x axis: centred at one y); in order along the axis, no label
    // follows itself (two panels may each have their own 0).
    let flat: Vec<&Label> = all.iter().filter(|l| !l.rotated).collect();
    let mut axes: Vec<Vec<&Label>> = Vec::new();
    for l in &flat {
        let same = |a: &Label| {
            a.size == l.size
                && a.anchor == l.anchor
                && ((l.anchor == "end" && a.at.0 == l.at.0)
                    || (l.anchor == "middle" && a.at.1 == l.at.1))
        };
        match axes.iter_mut().find(|g| same(g[0])) {
            Some(g) => g.push(l),
            None => axes.push(vec![l]),
        }
    }
    for mut g in axes {
        g.sort_by(|a, b| (a.at.0 + a.at.1).total_cmp(&(b.at.0 + b.at.1)));
        for w in g.windows(2) {
            if w[0].text == w[1].text {
                out.push(format!("{:?} twice on one axis", w[0].text));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(x: f64, y: f64, anchor: &str, extra: &str, t: &str) -> String {
        format!("<text x=\"{x}\" y=\"{y}\" dy=\"0.76em\" text-anchor=\"{anchor}\" font-family=\"sans-serif\" font-size=\"10.48\"{extra}>\n{t}\n</text>")
    }

    const CANVAS: &str = "<svg width=\"900\" height=\"560\" viewBox=\"0 0 900 560\">";

    #[test]
    fn overprinted_repeated_and_clipped_labels_are_found() {
        // A tick at every cycle count: 1.671e6 and 1.68e6 a pixel apart.
        let crowded = [
            CANVAS.to_string(),
            text(176.0, 502.0, "middle", "", "1.671e6"),
            text(177.0, 502.0, "middle", "", "1.68e6"),
        ]
        .concat();
        assert_eq!(problems(&crowded), ["\"1.671e6\" overlaps \"1.68e6\""]);
        let twice = [
            CANVAS.to_string(),
            text(90.0, 205.0, "end", "", "10"),
            text(90.0, 100.0, "end", "", "10"),
        ]
        .concat();
        assert_eq!(problems(&twice), ["\"10\" twice on one axis"]);
        let apart = [
            CANVAS.to_string(),
            text(100.0, 502.0, "middle", "", "2e6"),
            text(200.0, 502.0, "middle", "", "5e6"),
        ]
        .concat();
        assert!(problems(&apart).is_empty());
        // A long title centred near the edge leaves the canvas.
        let wide = [
            CANVAS.to_string(),
            text(30.0, 5.0, "middle", "", "a long title"),
        ]
        .concat();
        assert_eq!(
            problems(&wide),
            ["\"a long title\" leaves the 900x560 canvas"]
        );
    }

    #[test]
    fn a_rotated_axis_description_runs_up_the_page() {
        // 20 characters at 10.48: 136 pixels tall, centred on y = 266, 10.48 wide.
        let desc = text(
            16.0,
            266.0,
            "middle",
            " transform=\"rotate(270, 16, 266)\"",
            "speedup (x, over it)",
        );
        let l = &labels(&desc)[0];
        assert!(l.rotated);
        let h = 20.0 * ticks::CHAR_EM * 10.48;
        assert_eq!(
            l.bbox,
            [16.0, 266.0 - h / 2.0, 16.0 + 10.48, 266.0 + h / 2.0]
        );
        // A tick label beside it at x = 20 overlaps it; one at x = 80 does not.
        for (x, n) in [(60.0, 1), (120.0, 0)] {
            let svg = [
                CANVAS.to_string(),
                desc.clone(),
                text(x, 260.0, "end", "", "0.0001"),
            ]
            .concat();
            assert_eq!(problems(&svg).len(), n, "{x}: {:?}", problems(&svg));
        }
    }
}
