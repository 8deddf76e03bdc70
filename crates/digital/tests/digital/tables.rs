//! The shipped tables hold the derivations written beside them; bad tables and units are
//! refused naming the key.

use digital::{CellWrite, DigitalTable, DigitalUnit, TableError, UnitError};

#[test]
fn shipped_table_holds_its_derivations() {
    let t = DigitalTable::horowitz_45nm();
    assert_eq!(t.node_nm, 45);
    // Horowitz ISSCC 2014, Figure 1.1.9 rows: 8-bit add 0.03, 32-bit add 0.1, 8-bit
    // multiply 0.2, 32-bit multiply 3.1; 32 KB and 1 MB caches, 20 and 100 pJ / 64 bits.
    assert!((t.add16_pj - (0.03 + 0.07 * 8.0 / 24.0)).abs() < 1e-5);
    assert_eq!(t.add32_pj, 0.1);
    assert_eq!(t.mul16_pj, 0.2 * 4.0);
    assert!((t.mac16_pj - (t.mul16_pj + t.add32_pj)).abs() < 1e-12);
    assert_eq!(t.compare16_pj, t.add16_pj);
    assert!((t.exp_pj - (4.0 * t.mul16_pj + 3.0 * t.add16_pj + t.add32_pj)).abs() < 1e-4);
    assert!((t.reciprocal_pj - 2.0 * (2.0 * 3.1 + 0.1)).abs() < 1e-12);
    assert!((t.rsqrt_pj - 2.0 * (3.0 * 3.1 + 0.1)).abs() < 1e-12);
    assert_eq!(t.buffer_read_per_byte_pj, 20.0 / 8.0);
    assert_eq!(t.kv_read_per_byte_pj, 100.0 / 8.0);
    let w = CellWrite::pipelayer();
    assert_eq!(w.write_pj_per_cell, 3910.0 / 128.0);
    assert_eq!(w.write_ns_per_row, 50.88);
}

#[test]
fn bad_tables_name_the_key() {
    let bad = digital::table::DEFAULT_TABLE_TOML.replace("exp_pj = 3.46", "exp_pj = -1.0");
    assert_eq!(
        DigitalTable::from_toml(&bad).unwrap_err().to_string(),
        "exp_pj: -1 is not a finite non-negative value"
    );
    let bad = digital::table::DEFAULT_TABLE_TOML.replace("node_nm = 45", "node_nm = 28");
    assert!(DigitalTable::from_toml(&bad)
        .unwrap_err()
        .to_string()
        .starts_with("node_nm: 28 is not a supported node"));
    let missing = digital::table::DEFAULT_TABLE_TOML.replace("rsqrt_pj = 18.8", "");
    assert!(matches!(
        DigitalTable::from_toml(&missing),
        Err(TableError::Parse(m)) if m.contains("rsqrt_pj")
    ));
    let unknown = format!("{}\nlog_pj = 1.0\n", digital::table::DEFAULT_TABLE_TOML);
    assert!(matches!(
        DigitalTable::from_toml(&unknown),
        Err(TableError::Parse(m)) if m.contains("log_pj")
    ));
    let bad = digital::table::DEFAULT_WRITE_TOML
        .replace("write_ns_per_row = 50.88", "write_ns_per_row = nan");
    assert!(CellWrite::from_toml(&bad)
        .unwrap_err()
        .to_string()
        .starts_with("write_ns_per_row: NaN"));
}

/// A finite but huge write figure is refused at load naming the table's key, rather than
/// surfacing as a saturated cycle count blamed on `digital.clock_ghz`.
#[test]
fn cell_write_figures_are_bounded_at_load() {
    for (key, huge) in [
        ("write_ns_per_row = 50.88", "write_ns_per_row = 1e300"),
        ("write_ns_per_row = 50.88", "write_ns_per_row = 1e20"),
        ("write_pj_per_cell = 30.546875", "write_pj_per_cell = 1e7"),
    ] {
        let bad = digital::table::DEFAULT_WRITE_TOML.replace(key, huge);
        let e = CellWrite::from_toml(&bad).unwrap_err().to_string();
        let name = huge.split(' ').next().unwrap();
        assert!(
            e.starts_with(&format!("{name}: ")) && e.contains("is above 1e6"),
            "{e}"
        );
    }
    let edge = digital::table::DEFAULT_WRITE_TOML
        .replace("write_ns_per_row = 50.88", "write_ns_per_row = 1e6");
    assert_eq!(CellWrite::from_toml(&edge).unwrap().write_ns_per_row, 1e6);
}

#[test]
fn bad_units_name_the_key() {
    assert_eq!(DigitalUnit::default().validate(), Ok(()));
    let u = DigitalUnit {
        lanes: 0,
        ..DigitalUnit::default()
    };
    assert_eq!(
        u.validate().unwrap_err().to_string(),
        "digital.lanes: 0 is not a positive number"
    );
    let u = DigitalUnit {
        clock_ghz: f64::NAN,
        ..DigitalUnit::default()
    };
    assert!(matches!(
        u.validate(),
        Err(UnitError::NotPositive {
            key: "clock_ghz",
            ..
        })
    ));
    let mut u = DigitalUnit::default();
    u.occupancy.exp = 0;
    assert!(matches!(
        u.validate(),
        Err(UnitError::NotPositive {
            key: "occupancy.exp",
            ..
        })
    ));
}

/// A unit as a config section would give it: the occupancies may be left out; an unknown
/// key is refused by name.
#[test]
fn a_unit_reads_from_toml() {
    let u: DigitalUnit = toml::from_str(
        "lanes = 8\nclock_ghz = 1.0\nbuffer_bytes_per_cycle = 16\nkv_bytes_per_cycle = 8\n",
    )
    .unwrap();
    assert_eq!(u.lanes, 8);
    assert_eq!(u.occupancy, digital::Occupancy::default());
    let u: DigitalUnit = toml::from_str(
        "lanes = 8\nclock_ghz = 1.0\nbuffer_bytes_per_cycle = 16\nkv_bytes_per_cycle = 8\n[occupancy]\nadd16 = 1\nadd32 = 1\nmul16 = 2\nmac16 = 2\ncompare16 = 1\nexp = 8\nreciprocal = 8\nrsqrt = 12\n",
    )
    .unwrap();
    assert_eq!((u.occupancy.mul16, u.occupancy.rsqrt), (2, 12));
    let e = toml::from_str::<DigitalUnit>(
        "lanes = 8\nclock_ghz = 1.0\nbuffer_bytes_per_cycle = 16\nkv_bytes_per_cycle = 8\nwidth = 3\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("width"), "{e}");
    #[derive(serde::Deserialize)]
    struct Attention {
        placement: digital::Placement,
    }
    let a: Attention = toml::from_str("placement = \"crossbar\"").unwrap();
    assert_eq!(a.placement, digital::Placement::Crossbar);
    assert!(toml::from_str::<Attention>("placement = \"sram\"").is_err());
    assert_eq!(
        digital::Placement::parse("digital"),
        Some(digital::Placement::Digital)
    );
}

/// An entry written as a table (`[exp_pj]`) is blamed on its key, as `exp_pj = "x"` is.
#[test]
fn an_entry_written_as_a_table_names_its_key() {
    let text = format!(
        "{}\n[exp_pj]\nv = 1.0\n",
        digital::table::DEFAULT_TABLE_TOML.replace("exp_pj = 3.46", "")
    );
    let e = DigitalTable::from_toml(&text).unwrap_err().to_string();
    assert!(
        e.starts_with("exp_pj: invalid type: map, expected f64"),
        "{e}"
    );
}
