use super::*;
use pipeline::cycle::{PipelineOptions, QueueDepth};
use pipeline::{SlowStage, Sync};

/// A shard's config_values pass the very checks of a config file (they were only
/// type-checked: `ou.rows` 0 merged), and a key naming a file is refused, never
/// opened.
#[test]
fn config_values_are_checked_as_a_config_file_and_open_no_file() {
    let base = serde_json::to_value(&load(None, &[]).unwrap().config).unwrap();
    check_values(&base).unwrap();
    let edit = |section: &str, key: &str, v: serde_json::Value| {
        let mut b = base.clone();
        b[section][key] = v;
        check_values(&b).unwrap_err()
    };
    let e = edit("ou", "rows", serde_json::json!(0));
    assert!(e.starts_with("config_values: ou.rows: "), "{e}");
    let e = edit("precision", "input_bits", serde_json::json!(64));
    assert!(e.starts_with("config_values: precision.input_bits"), "{e}");
    let e = edit("ou", "rows", serde_json::json!(300));
    assert!(
        e.contains("ou.rows: OU height 300 exceeds crossbar.rows 128"),
        "{e}"
    );
    // A file that exists and is not a table: a read would refuse it, so a pass says
    // nothing read it. The shards ran with their tables; the merge keeps the names.
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("e.toml");
    std::fs::write(&f, "not toml [").unwrap();
    let f = f.display().to_string();
    for (section, key) in [
        ("energy", "table"),
        ("digital", "table"),
        ("attention", "write_table"),
        ("device", "error_table"),
    ] {
        let mut b = base.clone();
        b[section][key] = serde_json::json!(f);
        check_values(&b).unwrap_or_else(|e| panic!("{section}.{key}: {e}"));
    }
    let mut b = base.clone();
    b["chip"] = serde_json::json!({"preset": f});
    check_values(&b).unwrap();
    // The other keys are still checked beside a table that is not read.
    b["ou"]["rows"] = serde_json::json!(0);
    let e = check_values(&b).unwrap_err();
    assert!(e.starts_with("config_values: ou.rows: "), "{e}");
    b = base.clone();
    b["chip"] = serde_json::json!({"preset": f, "mesh_x": 0});
    let e = check_values(&b).unwrap_err();
    assert!(e.contains("mesh_x"), "{e}");
    b["chip"] = serde_json::json!({"preset": "isaac"});
    check_values(&b).unwrap();
}

/// A shard's `device.preset` is a preset name as a config's is (no path, no control
/// character); a valid name that is not shipped is kept as written (never opened).
#[test]
fn config_values_device_preset_is_a_preset_name() {
    let base = serde_json::to_value(&load(None, &[]).unwrap().config).unwrap();
    let with = |v: &str| {
        let mut b = base.clone();
        b["device"]["preset"] = serde_json::json!(v);
        check_values(&b)
    };
    for bad in [
        "../../../etc/passwd",
        "/tmp/some/fifo",
        "\u{1b}[2J",
        "p.toml",
        "a b",
    ] {
        let e = with(bad).unwrap_err();
        assert!(
            e.starts_with("config_values: device.preset: ") && e.contains("is not a preset name"),
            "{bad:?}: {e}"
        );
    }
    for good in ["", "milo-rram", "auto", "my_chip-2"] {
        with(good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
    }
}

/// A device preset file beside the config: its bad values are its own (named by its
/// path and key, numbers in their short form), an integer too large names its line and
/// key, and a table other than `[device]` is refused, not passed over.
/// A local device/ beside the config that is no directory (a link to a drive not
/// mounted, a FIFO, a file) is refused naming it: the shipped preset of the name was
/// applied without a word.
#[cfg(unix)]
#[test]
fn a_local_device_folder_that_is_no_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "[device]\npreset = \"noisy-rram\"\n").unwrap();
    let device = dir.path().join("device");
    for make in [
        |p: &std::path::Path| std::os::unix::fs::symlink("/mnt/not-mounted/device", p).unwrap(),
        |p: &std::path::Path| std::fs::write(p, "x").unwrap(),
    ] {
        make(&device);
        let e = format!("{:#}", load(Some(&cfg), &[]).unwrap_err());
        assert!(
            e.starts_with(&format!("{}: not a directory", bounds::text::path(&device)))
                && e.contains("device/noisy-rram.toml"),
            "{e}"
        );
        std::fs::remove_file(&device).unwrap();
    }
    // Without a local device/ the shipped preset applies.
    assert!(load(Some(&cfg), &[]).is_ok());
}

#[test]
fn a_local_device_preset_is_blamed_for_its_own_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("device")).unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "[device]\npreset = \"p\"\n").unwrap();
    let preset = dir.path().join("device").join("p.toml");
    let shown = bounds::text::path(&preset);
    let with = |text: &str| {
        std::fs::write(&preset, text).unwrap();
        format!("{:#}", load(Some(&cfg), &[]).unwrap_err())
    };
    assert_eq!(
        with("[device]\nsigma = nan\n"),
        format!("{shown}: device.sigma: NaN is not a finite number >= 0")
    );
    assert_eq!(
        with("[device]\non_off_ratio = 1e-320\n"),
        format!("{shown}: device.on_off_ratio: 1e-320 is not a ratio > 1 (0 leaves it unset)")
    );
    let e = with("[device]\nseed = 18446744073709551615\n");
    assert!(
        e.starts_with(&format!(
            "{shown}: line 2: device.seed: 18446744073709551615 is above"
        )),
        "{e}"
    );
    assert_eq!(
        with("[device]\nsigma = 0.1\n[other]\nx = 1\n"),
        format!("{shown}: other: unknown key in the preset (a device preset holds [device] only)")
    );
    let e = with("[device]\nsigma = \"x\"\n");
    assert!(e.starts_with(&format!("{shown}: device.sigma: ")), "{e}");
    // A TOML date is refused by its key, as in the config: a string key took its text
    // (a file named 1979-05-27 was read as the error table), a number key told it as a
    // string.
    assert_eq!(
        with("[device]\nerror_table = 1979-05-27\n"),
        format!("{shown}: device.error_table: a date (1979-05-27), expected a string")
    );
    assert_eq!(
        with("[device]\nsigma = 1979-05-27\n"),
        format!("{shown}: device.sigma: a date (1979-05-27), expected a number")
    );
    // A value the config gives over the preset's stays the config's.
    std::fs::write(&cfg, "[device]\npreset = \"p\"\nsigma = -1.0\n").unwrap();
    let e = with("[device]\nsigma = 0.1\n");
    assert!(
        e.starts_with(&format!("{}: device.sigma: -1 ", cfg.display())),
        "{e}"
    );
}

#[test]
fn default_config_is_section_1() {
    let r = load(None, &[]).unwrap();
    assert_eq!(r.hw, Hardware::default());
    assert_eq!(r.opts, SimOptions::default());
    assert_eq!(r.cycle_ns, 7.68);
    assert_eq!(r.energy, EnergyTable::isaac_32nm());
}

#[test]
fn sets_override_and_are_checked() {
    let r = load(
        None,
        &[
            "ou.rows=16".into(),
            "timing.sync=none".into(),
            "adc.bits=6".into(),
            "energy.dac_per_row_pj=1".into(),
        ],
    )
    .unwrap();
    assert_eq!(r.hw.ou_rows, 16);
    assert_eq!(r.opts.sync, Sync::None);
    assert_eq!(r.hw.adc_bits, AdcBits::Fixed(6));
    assert_eq!(r.energy.dac_per_row_pj, 1.0);
    let err = |s: &str| load_cli(None, &[s.to_string()]).unwrap_err().to_string();
    assert!(err("ou.height=3").contains("ou.height: unknown key"));
    // A value that parses but fails a check names the --set, not the config file.
    assert_eq!(
        err("ou.rows=300"),
        "--set ou.rows=300: ou.rows: OU height 300 exceeds crossbar.rows 128"
    );
    assert!(err("pipeline.queue_depth=0").starts_with(
        "--set pipeline.queue_depth=0: pipeline.queue_depth: '0' is not a queue depth"
    ));
    assert!(err("timing.cycle_ns=0").starts_with("--set timing.cycle_ns=0: timing.cycle_ns:"));
    // One --set sets one key: a line break in its value is refused, never read as a
    // value followed by more keys that were then dropped.
    for v in ["ou.rows=4\nou.cols=2", "ou.rows=4\r\nou.cols=2"] {
        assert!(
            err(v).starts_with("--set ou.rows: the value holds a line break"),
            "{}",
            err(v)
        );
    }
    // A set that clashes with a default it does not name: both are named.
    assert_eq!(
        err("crossbar.rows=8"),
        "default config with --set crossbar.rows=8: ou.rows: OU height 9 exceeds crossbar.rows 8"
    );
    // Without sets, the file is the source.
    let e = load_str("[ou]\nrows = 300\n", "c.toml", None, &[]).unwrap_err();
    assert!(
        e.to_string().starts_with("c.toml: ou.rows: OU height 300"),
        "{e}"
    );
    assert!(err("ou.rows=200").contains("ou.rows: OU height 200 exceeds"));
    assert!(err("crossbar.cell_bits=0").contains("crossbar.cell_bits"));
    assert!(err("timing.sync=sometimes").contains("sometimes"));
    assert!(err("ou.rows").contains("expected KEY=VALUE"));
    // An integer above TOML's 2^63 - 1 was called a string: it is named as too large.
    assert_eq!(
            err("limits.max_layer_bytes=18446744073709551615"),
            "--set limits.max_layer_bytes=18446744073709551615: limits.max_layer_bytes: 18446744073709551615 is above the largest accepted value, 9223372036854775807 (TOML integers stop at 2^63 - 1)"
        );
    let e = load_str(
        "[ou]\nrows = 8\n[limits]\nmax_layer_bytes = 18446744073709551615 # all\n",
        "c.toml",
        None,
        &[],
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "c.toml: line 4: limits.max_layer_bytes: 18446744073709551615 is above the largest accepted value, 9223372036854775807 (TOML integers stop at 2^63 - 1)");
    assert!(err("energy.dac_per_row_pj=-1").contains("dac_per_row_pj"));
    assert!(err("timing.cycle_ns=0").contains("timing.cycle_ns"));
    assert!(err("pipeline.queue_depth=0").contains("pipeline.queue_depth: '0'"));
    assert!(err("pipeline.queue_depth=deep").contains("pipeline.queue_depth"));
    assert!(err("pipeline.queue_depth=2.5").contains("pipeline.queue_depth: 2.5"));
    assert!(err("pipeline.slow_stage=dac").contains("pipeline.slow_stage: unknown stage"));
    assert!(err("pipeline.slow_stage_cycles=3").contains("pipeline.slow_stage_cycles"));
    let p = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        load(None, &sets).unwrap().opts.pipeline
    };
    assert_eq!(p(&[]), PipelineOptions::default());
    assert_eq!(
        p(&["pipeline.queue_depth=4"]).queue_depth,
        QueueDepth::Finite(4)
    );
    assert_eq!(
        p(&["pipeline.queue_depth=unbounded"]).queue_depth,
        QueueDepth::Unbounded
    );
    assert_eq!(
        p(&["pipeline.slow_stage=adc", "pipeline.slow_stage_cycles=3"]).slow_stage,
        Some(SlowStage {
            stage: pipeline::Stage::Adc,
            cycles: 3
        })
    );
}

/// A TOML date is no value of any key: `device.preset = 1979-05-27` was taken as its
/// text, named no preset file and was passed over (the run then ran without a preset).
/// Refused by its key, in a config, by `--set`, and by a `[chip]` key.
#[test]
fn a_toml_date_is_refused_by_its_key() {
    let e = format!(
        "{:#}",
        load_str("[device]\npreset = 1979-05-27\n", "c.toml", None, &[]).unwrap_err()
    );
    assert_eq!(
        e,
        "c.toml: device.preset: a date (1979-05-27), expected a preset name (a string)"
    );
    let sets = ["device.preset=1979-05-27".to_string()];
    let e = format!("{:#}", load_cli(None, &sets).unwrap_err());
    assert_eq!(
        e,
        "--set device.preset=1979-05-27: device.preset: a date (1979-05-27), expected a preset name (a string)"
    );
    let e = format!(
        "{:#}",
        load_str("[ou]\nrows = 07:32:00\n", "c.toml", None, &[]).unwrap_err()
    );
    assert_eq!(e, "c.toml: ou.rows: a time (07:32:00), expected an integer");
    let e = format!(
        "{:#}",
        load_str(
            "[chip]\npreset = \"isaac\"\ncount = 1979-05-27\n",
            "c.toml",
            None,
            &[]
        )
        .unwrap_err()
    );
    assert_eq!(
        e,
        "c.toml: chip.count: a date (1979-05-27), expected a number of chips or \"auto\""
    );
    let e = format!(
        "{:#}",
        load_cli(None, &["mapping.layout=1979-05-27T00:00:00Z".into()]).unwrap_err()
    );
    assert!(
        e.starts_with(
            "--set mapping.layout=1979-05-27T00:00:00Z: mapping.layout: a date and time ("
        ),
        "{e}"
    );
    // The quoted name is a name, as before.
    let e = format!(
        "{:#}",
        load_str("[device]\npreset = \"1979-05-27\"\n", "c.toml", None, &[]).unwrap_err()
    );
    assert!(e.contains("no preset '1979-05-27'"), "{e}");
}
