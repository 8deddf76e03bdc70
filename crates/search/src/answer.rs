//! The search over every point of a plan, and its answer: points.csv, search.json, the
//! printed table and a Pareto plot per group (cycles and energy against the top-1 drop,
//! each point with its bounds as a whisker and the budget as a dashed line, drawn by
//! `sresim plot`'s Pareto code: the same bytes as `sresim plot` of points.csv with the
//! flags docs/search.md gives).

use super::point::{self, ModeOutcome};
use super::rule::{self, Verdict};
use super::spec::Spec;
use anyhow::{anyhow, bail, Result};
use serde_json::json;
use std::path::PathBuf;
use sweep::plan::Plan;
use sweep::value::AxisValue;

/// The settings of a search.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub budget: f64,
    /// 1 - confidence: the error rate of each verdict.
    pub alpha: f64,
    pub first_samples: usize,
    /// Per-point lines on stderr.
    pub progress: bool,
}

/// One mode of one point, with its bounds.
#[derive(Debug, Clone)]
pub struct Row {
    /// Index of the point in the plan.
    pub point: usize,
    pub outcome: ModeOutcome,
    pub low: f64,
    pub high: f64,
}

impl Row {
    fn samples(&self) -> u64 {
        self.outcome.diffs.len() as u64
    }
    fn drop(&self) -> f64 {
        let n = self.samples().max(1) as f64;
        (self.outcome.quantized_right as f64 - self.outcome.right as f64) / n
    }
}

/// Checks, before anything runs, that every workload's graph input has labels.
pub fn check_labels(plan: &Plan) -> Result<()> {
    let g = &plan.grid;
    let p = g.path.display().to_string();
    for i in 0..plan.points.len() {
        // One check per workload: the first point of each.
        if plan.points[..i]
            .iter()
            .any(|q| q.workload == plan.points[i].workload)
        {
            continue;
        }
        let (cfg, _) = plan.config(i)?;
        let what = format!("{p}: workloads: workload");
        let w = sim::accuracy::open_bundle(Some(plan.open_name(i)?), &cfg, &what)?;
        let net = sim::accuracy::load_network(&w, &cfg).map_err(|e| anyhow!("{p}: {e:#}"))?;
        if net.labels.is_none() {
            bail!(
                "{p}: workloads: {}: its graph input has no labels; a search judges top-1",
                plan.points[i].workload
            );
        }
    }
    Ok(())
}

/// Runs the search at every point of `plan`, in grid order.
pub fn run(plan: &Plan, spec: &Spec, o: Options) -> Result<Vec<Row>> {
    let g = &plan.grid;
    let p = g.path.display().to_string();
    let mut rows = Vec::new();
    // Without a terminal (a batch job's log), a line every so often besides the line per
    // point: a point can take minutes.
    let n = plan.points.len() as u64;
    let lines =
        (o.progress && sim::progress::show(false) == sim::progress::Show::Lines).then(|| {
            sim::progress::Lines::start("sresim search", sim::progress::Count::Own("points"), n)
        });
    for i in 0..plan.points.len() {
        if let Some(l) = &lines {
            l.set_done(i as u64, n);
            l.note(format!("point {} ({})", i + 1, g.describe(&plan.points[i])));
        }
        let (cfg, synth) = plan.config(i)?;
        let name = plan.open_name(i)?;
        let ctx = || plan.context(i);
        let res = plan
            .run_cycles(name, &cfg, &synth, &sim::run::NoProgress)
            .map_err(|e| anyhow!("{}: {e:#}", ctx()))?;
        let cost: Vec<(u64, f64)> = g
            .modes
            .iter()
            .map(|m| {
                let t = res.totals.iter().find(|t| t.mode == *m);
                t.map_or((0, 0.0), |t| (t.events.cycles, t.energy.total()))
            })
            .collect();
        let w = sim::accuracy::open_bundle(Some(name), &cfg, &format!("{p}: accuracy: workload"))?;
        let net = sim::accuracy::load_network(&w, &cfg).map_err(|e| anyhow!("{p}: {e:#}"))?;
        let cap = match g.accuracy_samples {
            Some(n) => n.min(net.samples),
            None => net.samples,
        };
        let crossbar =
            sim::accuracy::crossbar_layers(&net, g.layers.as_ref(), &format!("{p}: layers"))?;
        let settings = point::Settings {
            budget: o.budget,
            alpha: o.alpha,
            first_samples: spec.first_samples,
            cap,
        };
        let found = point::search(&net, &cfg, &g.modes, &crossbar, &cost, settings)
            .map_err(|e| anyhow!("{}: {e:#}", ctx()))?;
        let mut line = format!(
            "search: point {}/{} ({})",
            i + 1,
            plan.points.len(),
            g.describe(&plan.points[i])
        );
        for f in found {
            let (low, high) = rule::bounds(&f.diffs, o.alpha);
            line += &format!(
                ", {} {} after {} samples",
                f.mode,
                f.verdict.name(),
                f.diffs.len()
            );
            rows.push(Row {
                point: i,
                outcome: f,
                low,
                high,
            });
        }
        if o.progress {
            eprintln!("{line}");
        }
        if let Some(l) = &lines {
            l.inc(1);
            l.set_done(i as u64 + 1, n);
        }
    }
    Ok(rows)
}

/// A group: the workload and the values of the `by` axes.
fn group_of(plan: &Plan, spec: &Spec, point: usize) -> Vec<String> {
    let pt = &plan.points[point];
    std::iter::once(pt.workload.clone())
        .chain(spec.by.iter().map(|&k| pt.values[k].csv()))
        .collect()
}

/// The groups in grid order, each with the indices of its rows.
fn groups(plan: &Plan, spec: &Spec, rows: &[Row]) -> Vec<(Vec<String>, Vec<usize>)> {
    let mut out: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let key = group_of(plan, spec, row.point);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => out.push((key, vec![r])),
        }
    }
    out
}

/// The rows of a group that are within and take the least of `by` (all that tie).
fn best(rows: &[Row], members: &[usize], by: impl Fn(&Row) -> f64) -> Vec<usize> {
    let within: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&r| rows[r].outcome.verdict == Verdict::Within)
        .collect();
    let least = within
        .iter()
        .map(|&r| by(&rows[r]))
        .fold(f64::INFINITY, f64::min);
    within
        .into_iter()
        .filter(|&r| by(&rows[r]) == least)
        .collect()
}

const COLUMNS: [&str; 15] = [
    "mode",
    "cycles",
    "energy_pj",
    "samples",
    "draws",
    "top1_quantized",
    "top1",
    "drop",
    "drop_ci_low",
    "drop_ci_high",
    "verdict",
    "decided_at",
    "budget",
    "fewest_cycles",
    "least_energy",
];

/// The header of points.csv: point, workload, the axes, then [`COLUMNS`].
pub fn header(plan: &Plan) -> Vec<String> {
    let mut h = vec!["point".to_string(), "workload".to_string()];
    h.extend(plan.grid.axis_keys());
    h.extend(COLUMNS.iter().map(|c| c.to_string()));
    h
}

/// The cells of points.csv, one row per point and mode, in grid order.
pub fn cells(plan: &Plan, spec: &Spec, rows: &[Row], o: Options) -> Vec<Vec<String>> {
    let mut fewest = vec![false; rows.len()];
    let mut least = vec![false; rows.len()];
    for (_, members) in groups(plan, spec, rows) {
        for r in best(rows, &members, |r| r.outcome.cycles as f64) {
            fewest[r] = true;
        }
        for r in best(rows, &members, |r| r.outcome.energy_pj) {
            least[r] = true;
        }
    }
    rows.iter()
        .enumerate()
        .map(|(k, r)| {
            let pt = &plan.points[r.point];
            let o_ = &r.outcome;
            let n = r.samples().max(1) as f64;
            let mut c = vec![pt.id.clone(), pt.workload.clone()];
            c.extend(pt.values.iter().map(AxisValue::csv));
            c.extend([
                o_.mode.to_string(),
                o_.cycles.to_string(),
                format!("{}", o_.energy_pj),
                r.samples().to_string(),
                o_.draws.to_string(),
                format!("{}", o_.quantized_right as f64 / n),
                format!("{}", o_.right as f64 / n),
                format!("{}", r.drop()),
                format!("{}", r.low),
                format!("{}", r.high),
                o_.verdict.name().to_string(),
                o_.decided_at.map_or(String::new(), |d| d.to_string()),
                format!("{}", o.budget),
                fewest[k].to_string(),
                least[k].to_string(),
            ]);
            c
        })
        .collect()
}

/// A file name from a group's values.
fn slug(key: &[String]) -> String {
    let s = key
        .iter()
        .map(|v| {
            v.chars()
                .map(|c| match c {
                    'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
                    _ => '_',
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("-");
    // The values are data (a long energy.table path): a name longer than SLUG_MAX keeps
    // its first part and the hash of the whole key, so every file name of the answer fits
    // a file system's 255 bytes and is known before the search runs.
    bounds::text::bounded_name(&s, SLUG_MAX, &key.join("\u{1f}"))
}

/// Longest group name in a plot's file name (`pareto-energy-` and `.svg` around it).
const SLUG_MAX: usize = 120;

/// Every file of the answer: points.csv, search.json and two Pareto plots per group.
pub fn files(plan: &Plan, spec: &Spec, rows: &[Row], o: Options) -> Result<Vec<(String, Vec<u8>)>> {
    let header = header(plan);
    let cells = cells(plan, spec, rows, o);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header)?;
    for c in &cells {
        if let Some(v) = c
            .iter()
            .find(|v| v.parse::<f64>().is_ok_and(|x| !x.is_finite()))
        {
            bail!("points.csv: a figure is not finite: {v}");
        }
        w.write_record(c)?;
    }
    let csv = w.into_inner().map_err(|e| anyhow!("points.csv: {e}"))?;
    let mut files = vec![("points.csv".to_string(), csv)];
    let table = sweep::table::Table {
        path: PathBuf::from("points.csv"),
        header: header.clone(),
        rows: cells.clone(),
    };
    let keys = plan.grid.axis_keys();
    let mut summary = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (key, members) in groups(plan, spec, rows) {
        let mut filters = vec![format!("workload={}", key[0])];
        for (v, &k) in key[1..].iter().zip(&spec.by) {
            filters.push(format!("{}={v}", keys[k]));
        }
        let mut name = slug(&key);
        if names.contains(&name) {
            name = format!("{name}-{}", names.len());
        }
        names.push(name.clone());
        let mut plots = Vec::new();
        for (x, what) in [("cycles", "cycles"), ("energy_pj", "energy")] {
            // What `sresim plot points.csv --pareto` draws with the same flags (docs/search.md
            // gives the command): the budget a dashed line, the group in the title.
            let args = sweep::PlotArgs {
                input: PathBuf::from("points.csv"),
                x: x.into(),
                y: "drop".into(),
                series: "mode,verdict".into(),
                filters: filters.clone(),
                out: None,
                title: None,
                log_x: true,
                log_y: false,
                pareto: true,
                x_better: None,
                y_better: Some(sweep::pareto::Better::Lower),
                interval: None,
                stack: false,
                x_min: None,
                x_max: None,
                y_min: None,
                y_max: None,
                y_lines: vec![format!("{}=budget {}", o.budget, o.budget)],
                quiet: true,
            };
            let chart = sweep::pareto::chart(&table, &args)?;
            let file = format!("pareto-{what}-{name}.svg");
            files.push((file.clone(), chart::svg(&chart, true, false)?.into_bytes()));
            plots.push(file);
        }
        let count = |v: Verdict| {
            members
                .iter()
                .filter(|&&r| rows[r].outcome.verdict == v)
                .count()
        };
        let pick = |list: Vec<usize>| -> Vec<serde_json::Value> {
            list.iter()
                .map(|&r| {
                    let pt = &plan.points[rows[r].point];
                    json!({
                        "point": pt.id,
                        "axes": keys.iter().zip(&pt.values).map(|(k, v)| (k.clone(), json!(v.csv()))).collect::<serde_json::Map<_, _>>(),
                        "mode": rows[r].outcome.mode.to_string(),
                        "cycles": rows[r].outcome.cycles,
                        "energy_pj": rows[r].outcome.energy_pj,
                    })
                })
                .collect()
        };
        summary.push(json!({
            "workload": key[0],
            "by": spec.by.iter().zip(&key[1..]).map(|(&k, v)| (keys[k].clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "design_points": members.len(),
            "within": count(Verdict::Within),
            "outside": count(Verdict::Outside),
            "undecided": count(Verdict::Undecided),
            "fewest_cycles": pick(best(rows, &members, |r| r.outcome.cycles as f64)),
            "least_energy": pick(best(rows, &members, |r| r.outcome.energy_pj)),
            "plots": plots,
        }));
    }
    let json = json!({
        "format": "sresim-search-1",
        "grid": plan.grid.path.display().to_string(),
        "budget": o.budget,
        "confidence": 1.0 - o.alpha,
        "first_samples": spec.first_samples,
        "cap_fraction": rule::CAP,
        "bound_step": rule::BOUND_STEP,
        "groups": summary,
    });
    files.push(("search.json".to_string(), serde_json::to_vec_pretty(&json)?));
    Ok(files)
}

/// The printed answer: per group, its counts, the best within points and a row per
/// design point.
pub fn table(plan: &Plan, spec: &Spec, rows: &[Row], o: Options) -> String {
    let keys = plan.grid.axis_keys();
    let design: Vec<usize> = (0..keys.len()).filter(|k| !spec.by.contains(k)).collect();
    let mut s = String::new();
    let name = |r: &Row| {
        let pt = &plan.points[r.point];
        let mut v: Vec<String> = design
            .iter()
            .map(|&k| format!("{}={}", keys[k], pt.values[k].csv()))
            .collect();
        v.push(r.outcome.mode.to_string());
        v.join(" ")
    };
    for (key, members) in groups(plan, spec, rows) {
        let mut head = key[0].clone();
        for (v, &k) in key[1..].iter().zip(&spec.by) {
            head += &format!(" {}={v}", keys[k]);
        }
        let count = |v: Verdict| {
            members
                .iter()
                .filter(|&&r| rows[r].outcome.verdict == v)
                .count()
        };
        s += &format!(
            "{head}: {} within a top-1 drop of {} at {}% confidence, {} outside, {} undecided (of {})\n",
            count(Verdict::Within),
            o.budget,
            format_pct(1.0 - o.alpha),
            count(Verdict::Outside),
            count(Verdict::Undecided),
            members.len()
        );
        let show = |what: &str, list: Vec<usize>, fig: &dyn Fn(&Row) -> String| match list.first() {
            None => format!("  {what}: none within\n"),
            Some(_) => {
                let v: Vec<String> = list
                    .iter()
                    .map(|&r| format!("{} ({})", name(&rows[r]), fig(&rows[r])))
                    .collect();
                format!("  {what}: {}\n", v.join(", "))
            }
        };
        s += &show(
            "fewest cycles",
            best(rows, &members, |r| r.outcome.cycles as f64),
            &|r| format!("{} cycles", r.outcome.cycles),
        );
        s += &show(
            "least energy",
            best(rows, &members, |r| r.outcome.energy_pj),
            &|r| format!("{:.1} uJ", r.outcome.energy_pj / 1e6),
        );
        let mut lines = vec![[
            "design point".to_string(),
            "verdict".into(),
            "drop".into(),
            "bounds".into(),
            "samples".into(),
            "draws".into(),
            "cycles".into(),
            "energy uJ".into(),
        ]];
        for &r in &members {
            let row = &rows[r];
            lines.push([
                name(row),
                row.outcome.verdict.name().into(),
                format!("{:.4}", row.drop()),
                format!("[{:.3}, {:.3}]", row.low, row.high),
                row.samples().to_string(),
                row.outcome.draws.to_string(),
                row.outcome.cycles.to_string(),
                format!("{:.1}", row.outcome.energy_pj / 1e6),
            ]);
        }
        let widths: Vec<usize> = (0..8)
            .map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0))
            .collect();
        for l in &lines {
            let cells: Vec<String> = l
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (v, &w))| {
                    if c == 0 || c == 1 {
                        format!("{v:<w$}")
                    } else {
                        format!("{v:>w$}")
                    }
                })
                .collect();
            s += &format!("  {}\n", cells.join("  ").trim_end());
        }
    }
    s
}

fn format_pct(x: f64) -> String {
    format!("{}", (x * 1000.0).round() / 10.0)
}

#[cfg(test)]
mod slug_tests {
    use super::*;

    /// A group named by a 250-character energy.table path made a file name the file system
    /// refused after the whole search had run; every name now fits, and stays distinct.
    #[test]
    fn a_long_group_keeps_a_short_distinct_name() {
        let long = |c: char| {
            vec![
                "lenet5".to_string(),
                format!("/tmp/{}.toml", c.to_string().repeat(250)),
            ]
        };
        let (a, b) = (slug(&long('a')), slug(&long('b')));
        assert!(a.len() <= SLUG_MAX && b.len() <= SLUG_MAX, "{a}");
        assert_ne!(a, b);
        assert!(format!("pareto-energy-{a}.svg").len() < 255);
        assert_eq!(slug(&["lenet5".into(), "4".into()]), "lenet5-4");
    }
}
