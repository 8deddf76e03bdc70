//! `sresim plot --interval`: which interval is drawn around y, and the legend entry
//! naming it.
use super::*;
use crate::args::Interval;

/// Two design points of one series, the draws' interval narrower than the one over
/// samples and draws (hand-written: low and high ends differ between the two).
fn table() -> Table {
    let header = [
        "workload",
        "layer",
        "ou.rows",
        "cycles",
        "top1_mean",
        "top1_ci_low",
        "top1_ci_high",
        "top1_samples_ci_low",
        "top1_samples_ci_high",
        "agreement_mean",
        "agreement_ci_low",
        "agreement_ci_high",
        "agreement_samples_ci_low",
        "agreement_samples_ci_high",
    ];
    let rows = [
        [
            "w", "TOTAL", "8", "10", "0.9", "0.88", "0.92", "0.85", "0.94", "0.95", "0.94", "0.96",
            "0.92", "0.97",
        ],
        [
            "w", "TOTAL", "16", "5", "0.8", "0.79", "0.81", "0.76", "0.84", "0.85", "0.84", "0.86",
            "0.81", "0.89",
        ],
    ];
    Table {
        path: PathBuf::from("t.csv"),
        header: header.map(String::from).to_vec(),
        rows: rows.iter().map(|r| r.map(String::from).to_vec()).collect(),
    }
}

fn with(y: &str, interval: Option<Interval>) -> PlotArgs {
    PlotArgs {
        y: y.into(),
        interval,
        ..tests::args("ou.rows", "", &[])
    }
}

#[test]
fn the_default_draws_the_draws_interval_and_names_none() {
    let c = chart(&table(), &with("top1_mean", None)).unwrap();
    assert_eq!(
        c.intervals,
        vec![vec![(8.0, 0.88, 0.92), (16.0, 0.79, 0.81)]]
    );
    assert_eq!(c.interval_label, None);
}

#[test]
fn each_choice_draws_its_columns_and_names_them_in_the_legend() {
    let t = table();
    let draws = chart(&t, &with("top1_mean", Some(Interval::Draws))).unwrap();
    assert_eq!(
        draws.intervals,
        vec![vec![(8.0, 0.88, 0.92), (16.0, 0.79, 0.81)]]
    );
    let samples = chart(&t, &with("top1_mean", Some(Interval::Samples))).unwrap();
    assert_eq!(
        samples.intervals,
        vec![vec![(8.0, 0.85, 0.94), (16.0, 0.76, 0.84)]]
    );
    let agreement = chart(&t, &with("agreement_mean", Some(Interval::Samples))).unwrap();
    assert_eq!(
        agreement.intervals,
        vec![vec![(8.0, 0.92, 0.97), (16.0, 0.81, 0.89)]]
    );
    for (c, words) in [
        (&draws, "95% interval over device draws"),
        (&samples, "95% interval over samples and draws"),
    ] {
        assert_eq!(c.interval_label.as_deref(), Some(words));
        let svg = chart::svg(c, false, false).unwrap();
        assert!(svg.contains(words), "{svg}");
        assert!(chart::layout::problems(&svg).is_empty());
    }
    // Without the flag the legend has no such entry: the chart is the one drawn before
    // the flag existed.
    let plain = chart::svg(&chart(&t, &with("top1_mean", None)).unwrap(), false, false).unwrap();
    assert!(!plain.contains("95% interval"));
    // The Pareto view takes the same choice (whiskers).
    let pareto = PlotArgs {
        x: "cycles".into(),
        pareto: true,
        ..with("top1_mean", Some(Interval::Samples))
    };
    let p = crate::pareto::chart(&t, &pareto).unwrap();
    let mut ends: Vec<(f64, f64)> = p.intervals.iter().flatten().map(|b| (b.1, b.2)).collect();
    ends.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(ends, vec![(0.76, 0.84), (0.85, 0.94)]);
    assert_eq!(
        p.interval_label.as_deref(),
        Some("95% interval over samples and draws")
    );
}

#[test]
fn an_interval_the_table_lacks_is_refused_naming_its_columns() {
    let t = table();
    // No interval over samples for the output error, none at all for cycles.
    let mut no_samples = t.clone();
    for c in ["top1_samples_ci_low", "top1_samples_ci_high"] {
        let i = no_samples.header.iter().position(|h| h == c).unwrap();
        no_samples.header[i] = format!("x_{c}");
    }
    let e = chart(&no_samples, &with("top1_mean", Some(Interval::Samples)))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.csv: --interval samples: no columns top1_samples_ci_low and top1_samples_ci_high for --y top1_mean (a table of `accuracy --draws` or a sweep with draws has them for the _mean columns)"
    );
    let e = chart(&t, &with("cycles", Some(Interval::Draws)))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.csv: --interval draws: no columns cycles_ci_low and cycles_ci_high"),
        "{e}"
    );
    // The default draws nothing where there is nothing, as before.
    assert!(chart(&t, &with("cycles", None))
        .unwrap()
        .intervals
        .iter()
        .all(Vec::is_empty));
}

#[test]
fn a_stacked_chart_refuses_an_interval() {
    let a = PlotArgs {
        stack: true,
        out: Some(PathBuf::from("never-written.svg")),
        ..with("top1_*", Some(Interval::Samples))
    };
    let e = plot(&a).unwrap_err().to_string();
    assert!(
        e.starts_with("--interval: a stacked chart draws no interval"),
        "{e}"
    );
    assert!(!std::path::Path::new("never-written.svg").exists());
}

/// The paired drop's `top1_drop_ci_*` columns are an interval over the samples and the
/// draws (docs/accuracy.md): `--interval draws` used to draw them under "over device
/// draws". They are refused there, drawn under their own name with `--interval samples`
/// and by default.
#[test]
fn the_paired_drop_is_drawn_under_the_name_of_what_its_interval_covers() {
    let mut t = table();
    t.header
        .extend(["top1_drop_mean", "top1_drop_ci_low", "top1_drop_ci_high"].map(String::from));
    for (r, cells) in t
        .rows
        .iter_mut()
        .zip([["0.02", "0.01", "0.03"], ["0.1", "0.07", "0.13"]])
    {
        r.extend(cells.map(String::from));
    }
    let e = chart(&t, &with("top1_drop_mean", Some(Interval::Draws)))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.csv: --interval draws: top1_drop_ci_low and top1_drop_ci_high of --y top1_drop_mean are a 95% interval over the samples and the draws"),
        "{e}"
    );
    for interval in [Some(Interval::Samples), None] {
        let c = chart(&t, &with("top1_drop_mean", interval)).unwrap();
        assert_eq!(
            c.intervals,
            vec![vec![(8.0, 0.01, 0.03), (16.0, 0.07, 0.13)]]
        );
        assert_eq!(
            c.interval_label.as_deref(),
            Some("95% interval over samples and draws")
        );
    }
}
