use super::*;

fn table() -> Table {
    let rows = [
        ["a", "4", "8", "TOTAL", "dense", "100"],
        ["a", "4", "8", "TOTAL", "sre", "40"],
        ["a", "16", "8", "TOTAL", "dense", "30"],
        ["a", "16", "8", "TOTAL", "sre", "20"],
        ["a", "8", "8", "TOTAL", "sre", "25"],
        ["a", "8", "8", "conv1", "sre", "5"],
    ];
    Table {
        path: PathBuf::from("t.csv"),
        header: ["workload", "ou.rows", "ou.cols", "layer", "mode", "cycles"]
            .map(String::from)
            .to_vec(),
        rows: rows.iter().map(|r| r.map(String::from).to_vec()).collect(),
    }
}

pub(crate) fn args(x: &str, series: &str, filters: &[&str]) -> PlotArgs {
    PlotArgs {
        input: PathBuf::from("t.csv"),
        x: x.into(),
        y: "cycles".into(),
        series: series.into(),
        filters: filters.iter().map(|f| f.to_string()).collect(),
        out: None,
        title: None,
        log_x: false,
        log_y: false,
        pareto: false,
        stack: false,
        x_min: None,
        x_max: None,
        y_min: None,
        y_max: None,
        y_lines: Vec::new(),
        x_better: None,
        y_better: None,
        interval: None,
        quiet: false,
    }
}

#[test]
fn rows_become_sorted_series() {
    let c = chart(&table(), &args("ou.rows", "mode", &[])).unwrap();
    // The conv1 row is left out (TOTAL only); points sorted by x.
    assert_eq!(
        c.series[0],
        ("dense".into(), vec![(4.0, 100.0), (16.0, 30.0)])
    );
    assert_eq!(
        c.series[1],
        ("sre".into(), vec![(4.0, 40.0), (8.0, 25.0), (16.0, 20.0)])
    );
    assert_eq!(c.x_label, "OU height (wordlines)");
    assert_eq!(c.y_label, "time (cycles)");
    assert_eq!(c.title, "time vs OU height (a)");
    assert_eq!(c.legend, "mode");
    assert!(c.categories.is_none());
    // No axis is forced to 0: the chart leaves its range to the data.
    assert_eq!((c.x_limits, c.y_limits), ((None, None), (None, None)));
    // A non-numeric x is categorical, in order of first appearance.
    let c = chart(&table(), &args("mode", "", &["ou.rows=4"])).unwrap();
    assert_eq!(c.categories, Some(vec!["dense".into(), "sre".into()]));
    assert_eq!(c.series.len(), 1);
    assert_eq!(c.title, "time vs mode (a, OU height 4 wordlines)");
    let e = chart(&table(), &args("mode", "", &[]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("they differ in ou.rows"), "{e}");
    let e = chart(&table(), &args("ou.rows", "mode", &["mode=ideal"])).unwrap_err();
    assert!(e.to_string().contains("no row"), "{e}");
}

#[test]
fn where_values_are_globs() {
    // `mode=s*` keeps sre only; `layer=conv?` the conv1 row; a plain value matches
    // itself only.
    let c = chart(&table(), &args("ou.rows", "mode", &["mode=s*"])).unwrap();
    assert_eq!(c.series.len(), 1);
    assert_eq!(c.series[0].0, "sre");
    let c = chart(&table(), &args("ou.rows", "mode", &["layer=conv?"])).unwrap();
    assert_eq!(c.series[0].1, [(8.0, 5.0)]);
    let e = chart(&table(), &args("ou.rows", "mode", &["mode=s"])).unwrap_err();
    assert!(
        e.to_string()
            .contains("no row with a value of cycles matches"),
        "{e}"
    );
}

#[test]
fn time_and_energy_take_the_unit_that_fits() {
    assert_eq!(fitted_unit("time_ns", 999.0), Some(("ns", 1.0)));
    assert_eq!(fitted_unit("time_ns", 9.0e7), Some(("ms", 1e6)));
    assert_eq!(fitted_unit("chip_latency_ns", 1.5e3), Some(("µs", 1e3)));
    assert_eq!(fitted_unit("time_s", 0.004), Some(("ms", 1e-3)));
    assert_eq!(fitted_unit("energy_pj", 2.5e13), Some(("J", 1e12)));
    assert_eq!(fitted_unit("e_adc_pj", 0.5), Some(("pJ", 1.0)));
    assert_eq!(fitted_unit("cycles", 1e9), None);
    let mut t = table();
    t.header[5] = "time_ns".into();
    let a = PlotArgs {
        y: "time_ns".into(),
        y_min: Some(2e6),
        y_lines: vec!["5e6=a line".into()],
        ..args("ou.rows", "mode", &["mode=dense"])
    };
    let c = chart(&t, &a).unwrap();
    assert_eq!(c.y_label, "time (ns)");
    for r in &mut t.rows {
        r[5] = format!("{}000000", r[5]);
    }
    let c = chart(&t, &a).unwrap();
    assert_eq!(c.y_label, "time (ms)");
    assert_eq!(c.series[0].1, [(4.0, 100.0), (16.0, 30.0)]);
    // Limits and lines given in the column's unit move with it.
    assert_eq!(c.y_limits, (Some(2.0), None));
    assert_eq!(c.y_lines, [(5.0, "a line".to_string())]);
}

#[test]
fn every_numeric_column_of_the_reports_has_a_unit() {
    for c in [
        "chip_area_chips_mm2",
        "chip_images_per_s_per_w",
        "chip_latency_cycles",
        "chip_power_w",
        "chip_spill_bytes",
        "func_rel_rmse",
        "func_exact_frac",
        "func_max_abs_err",
        "top1_mean",
        "agreement",
        "output_rel_rmse_ci_high",
        "capacity_bytes",
        "time_s",
        "op_intensity",
        "saved_block",
        "e_crossbar_pj",
    ] {
        assert!(unit(c).is_some(), "{c}");
    }
}

#[test]
fn a_per_layer_plot_keeps_the_layers_and_leaves_out_the_total() {
    let c = chart(&table(), &args("layer", "mode", &["ou.rows=8"])).unwrap();
    assert_eq!(c.categories, Some(vec!["conv1".to_string()]));
    assert_eq!(c.series, [("sre".to_string(), vec![(0.0, 5.0)])]);
}

#[test]
fn stacked_columns_are_one_series_each_in_the_unit_of_the_whole() {
    let t = Table {
        path: PathBuf::from("layers.csv"),
        header: ["layer", "mode", "e_adc_pj", "e_xbar_pj", "energy_pj"]
            .map(String::from)
            .to_vec(),
        rows: [
            ["TOTAL", "sre", "600", "900", "1500"],
            ["TOTAL", "dense", "2000", "700", "2700"],
        ]
        .iter()
        .map(|r| r.map(String::from).to_vec())
        .collect(),
    };
    let a = PlotArgs {
        y: "e_*_pj".into(),
        stack: true,
        ..args("mode", "", &[])
    };
    let c = stacked(&t, &a).unwrap();
    assert!(c.stacked);
    assert_eq!(c.categories, Some(vec!["sre".into(), "dense".into()]));
    // energy_pj is no component: the glob leaves it out. The tallest stack, 2,700 pJ,
    // reads 2.7 nJ. The parts are named, not spelled as columns.
    assert_eq!(
        c.series,
        [
            ("ADC".to_string(), vec![(0.0, 0.6), (1.0, 2.0)]),
            ("crossbar".to_string(), vec![(0.0, 0.9), (1.0, 0.7)]),
        ]
    );
    assert_eq!(c.y_label, "energy (nJ)");
    assert_eq!(c.legend, "component");
    let none = PlotArgs {
        y: "f_*".into(),
        ..a.clone()
    };
    assert!(stacked(&t, &none)
        .unwrap_err()
        .to_string()
        .contains("no column matches"));
}

/// The table of [`table`] with cell (row, col) replaced.
fn with(row: usize, col: usize, v: &str) -> Table {
    let mut t = table();
    t.rows[row][col] = v.to_string();
    t
}

#[test]
fn non_finite_cells_are_refused_naming_the_row_and_column() {
    for bad in ["NaN", "inf", "-inf", "infinity"] {
        let e = chart(&with(1, 5, bad), &args("ou.rows", "mode", &[]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "t.csv: row 2: --y: column cycles holds '{bad}', not a finite number"
            )),
            "{e}"
        );
        let e = chart(&with(2, 1, bad), &args("ou.rows", "mode", &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 3: --x: column ou.rows holds"), "{e}");
        let e = super::super::pareto::chart(&with(0, 5, bad), &args("ou.rows", "mode", &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 1: --y: column cycles"), "{e}");
    }
    // A row the filters leave out is not read.
    chart(&with(5, 5, "NaN"), &args("ou.rows", "mode", &[])).unwrap();
}

#[test]
fn a_log_axis_names_the_column_and_row_of_a_value_it_cannot_draw() {
    let a = PlotArgs {
        log_y: true,
        ..args("ou.rows", "mode", &[])
    };
    let e = chart(&with(3, 5, "0"), &a).unwrap_err().to_string();
    assert!(
        e.contains(
            "--log-y: column cycles holds 0 at row 4; a logarithmic axis needs positive values"
        ),
        "{e}"
    );
    let e = super::super::pareto::chart(&with(3, 5, "-2"), &a)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--log-y: column cycles holds -2 at row 4"),
        "{e}"
    );
    // A value far from 1 is told in a few characters, not 309 digits.
    let e = chart(&with(3, 5, "-1e308"), &a).unwrap_err().to_string();
    assert!(e.contains("column cycles holds -1e308 at row 4"), "{e}");
}

#[test]
fn limits_and_lines_are_checked() {
    for (a, want) in [
        (
            PlotArgs {
                y_min: Some(5.0),
                y_max: Some(1.0),
                ..args("ou.rows", "mode", &[])
            },
            "--y-min 5 is not below --y-max 1",
        ),
        (
            PlotArgs {
                x_min: Some(f64::NAN),
                ..args("ou.rows", "mode", &[])
            },
            "--x-min: NaN is not a finite number",
        ),
        (
            PlotArgs {
                y_lines: vec!["x".into()],
                ..args("ou.rows", "mode", &[])
            },
            "--y-line x: expected VALUE or VALUE=LABEL",
        ),
        (
            PlotArgs {
                log_y: true,
                y_min: Some(0.0),
                ..args("ou.rows", "mode", &[])
            },
            "must be positive",
        ),
    ] {
        let e = chart(&table(), &a).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn a_bundle_path_is_named_by_its_last_part() {
    let mut t = table();
    for r in &mut t.rows {
        r[0] = "/home/someone/bundles/my-net/".to_string();
    }
    let c = chart(&t, &args("ou.rows", "mode", &[])).unwrap();
    assert_eq!(c.title, "time vs OU height (my-net)");
    let c = chart(&t, &args("ou.rows", "workload", &["mode=sre"])).unwrap();
    assert_eq!(c.series[0].0, "my-net");
}

#[test]
fn a_csv_file_is_read_one_row_at_a_time_and_rows_are_placed_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.csv");
    let mut text = String::from("workload,ou.rows,layer,mode,cycles\n");
    for i in 0..1000 {
        text += &format!("w,{i},TOTAL,sre,{}\n", 1000 - i);
    }
    text += "w,1000,TOTAL,sre,nan\n";
    std::fs::write(&path, &text).unwrap();
    let src = Source::open(dir.path()).unwrap();
    assert_eq!(src.path(), path);
    let e = chart_of(&src, &args("ou.rows", "mode", &[]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("points.csv: line 1002: --y: column cycles holds 'nan'"),
        "{e}"
    );
    std::fs::write(&path, text.replace("nan", "1")).unwrap();
    let c = chart_of(&src, &args("ou.rows", "mode", &[])).unwrap();
    assert_eq!(c.series[0].1.len(), 1001);
    assert_eq!(c.series[0].1[0], (0.0, 1000.0));
}

/// The default figure name is made of column names, which are data: a long one is cut
/// to a bounded name with a hash (the one bound search's plot names use), a short one is
/// as it was.
#[test]
fn a_default_figure_name_is_bounded() {
    assert_eq!(one_name("cycles-vs-mode.svg".into()), "cycles-vs-mode.svg");
    assert_eq!(one_name("../a/b\u{1b}-vs-x.svg".into()), "_._a_b_-vs-x.svg");
    let long = format!("{}-vs-x.svg", "é".repeat(300));
    let n = one_name(long.clone());
    assert!(n.len() <= 255 && n.ends_with(".svg"), "{n}");
    let other = one_name(format!("{}-vs-y.svg", "é".repeat(300)));
    assert_ne!(n, other);
}
