//! Lines and shapes cut to the plot area in pixels, and a line thinned to what each
//! pixel column shows.

/// A polyline cut to the rectangle (left, top, right, bottom): the runs of it inside.
pub(crate) fn clip_polyline(pts: &[(i32, i32)], r: (i32, i32, i32, i32)) -> Vec<Vec<(i32, i32)>> {
    let mut runs: Vec<Vec<(i32, i32)>> = Vec::new();
    let mut run: Vec<(i32, i32)> = Vec::new();
    for w in pts.windows(2) {
        match clip_segment(w[0], w[1], r) {
            Some((a, b)) => {
                if run.last() != Some(&a) {
                    if !run.is_empty() {
                        runs.push(std::mem::take(&mut run));
                    }
                    run.push(a);
                }
                run.push(b);
                if b != w[1] {
                    runs.push(std::mem::take(&mut run));
                }
            }
            None => {
                if !run.is_empty() {
                    runs.push(std::mem::take(&mut run));
                }
            }
        }
    }
    if pts.len() == 1 && inside(pts[0], r) {
        run.push(pts[0]);
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

pub(crate) fn inside(p: (i32, i32), r: (i32, i32, i32, i32)) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// The part of segment a-b inside the rectangle (Liang-Barsky).
pub(crate) fn clip_segment(
    a: (i32, i32),
    b: (i32, i32),
    r: (i32, i32, i32, i32),
) -> Option<((i32, i32), (i32, i32))> {
    let (x0, y0) = (a.0 as f64, a.1 as f64);
    let (dx, dy) = (b.0 as f64 - x0, b.1 as f64 - y0);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, x0 - r.0 as f64),
        (dx, r.2 as f64 - x0),
        (-dy, y0 - r.1 as f64),
        (dy, r.3 as f64 - y0),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| ((x0 + t * dx).round() as i32, (y0 + t * dy).round() as i32);
    Some((
        if t0 == 0.0 { a } else { at(t0) },
        if t1 == 1.0 { b } else { at(t1) },
    ))
}

/// A polygon cut to the rectangle (Sutherland-Hodgman).
pub(crate) fn clip_polygon(pts: &[(i32, i32)], r: (i32, i32, i32, i32)) -> Vec<(i32, i32)> {
    let mut poly: Vec<(f64, f64)> = pts.iter().map(|p| (p.0 as f64, p.1 as f64)).collect();
    let edges: [(usize, f64, bool); 4] = [
        (0, r.0 as f64, true),
        (0, r.2 as f64, false),
        (1, r.1 as f64, true),
        (1, r.3 as f64, false),
    ];
    for (axis, bound, keep_above) in edges {
        let get = |p: &(f64, f64)| if axis == 0 { p.0 } else { p.1 };
        let is_in = |p: &(f64, f64)| match keep_above {
            true => get(p) >= bound,
            false => get(p) <= bound,
        };
        let mut next = Vec::with_capacity(poly.len() + 4);
        for i in 0..poly.len() {
            let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
            let cross = |a: (f64, f64), b: (f64, f64)| {
                let t = (bound - get(&a)) / (get(&b) - get(&a));
                (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1))
            };
            match (is_in(&a), is_in(&b)) {
                (true, true) => next.push(b),
                (true, false) => next.push(cross(a, b)),
                (false, true) => {
                    next.push(cross(a, b));
                    next.push(b);
                }
                (false, false) => {}
            }
        }
        poly = next;
        if poly.is_empty() {
            break;
        }
    }
    poly.iter()
        .map(|p| (p.0.round() as i32, p.1.round() as i32))
        .collect()
}

/// The points of a line that a plot `area` wide in pixels can show: per pixel column its
/// first, lowest, highest and last point, in order (all of them when the line has few).
pub(crate) fn per_column(pts: &[(i32, i32)]) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pts.len() {
        let col = pts[i].0;
        let start = i;
        let (mut lo, mut hi) = (i, i);
        while i < pts.len() && pts[i].0 == col {
            if pts[i].1 < pts[lo].1 {
                lo = i;
            }
            if pts[i].1 > pts[hi].1 {
                hi = i;
            }
            i += 1;
        }
        let mut keep = [start, lo, hi, i - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(pts[k]);
                last = k;
            }
        }
    }
    out
}
