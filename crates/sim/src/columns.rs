//! The type of every column of layers.csv and of the layers.csv columns of a sweep's
//! points.csv, for their Parquet form ([`crate::format`]): above the reports whose column
//! lists it reads (the run's, the functional, chip and accuracy figures, the draws'
//! intervals), below the writers that convert a table with it.

use columnar::Kind;

/// The type of a column of layers.csv (and of the layers.csv columns of points.csv):
/// names are text; energies, times, ratios and the functional and accuracy figures are
/// floats; the chip columns as [`crate::chip::kind`] says; every other column is a count.
pub fn layers_kind(col: &str) -> Kind {
    match col {
        "network" | "layer" | "kind" | "mode" | "point" | "workload" => Kind::Text,
        // A number, `auto` or `unbounded`.
        "queue_depth" => Kind::Text,
        "time_ns" | "energy_pj" | "speedup_vs_dense" | "energy_saving_vs_dense" => Kind::Float,
        c if c.starts_with("e_") && c.ends_with("_pj") => Kind::Float,
        // The digital unit's times and energies (transformer runs).
        c if crate::digital::is_float(c) => Kind::Float,
        c if crate::functional::COLUMNS.contains(&c) => Kind::Float,
        crate::functional::CLIP_COLUMN => Kind::Float,
        c if c.starts_with("chip_") => crate::chip::kind(c),
        // The accuracy figures of a sweep's TOTAL rows (sim::accuracy).
        c if crate::accuracy::FIGURES.contains(&c) => Kind::Float,
        // Their means, standard deviations and intervals over device draws.
        c if crate::draws::columns().iter().any(|d| d == c) => Kind::Float,
        _ => Kind::Count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layers_column_has_a_kind_that_its_cells_parse_as() {
        let h: Vec<String> = crate::report::header()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let k = |c: &str| layers_kind(c);
        assert_eq!(k("network"), Kind::Text);
        assert_eq!(k("cycles"), Kind::Count);
        assert_eq!(k("e_adc_pj"), Kind::Float);
        assert_eq!(k("queue_depth"), Kind::Text);
        assert_eq!(k("busy_adc"), Kind::Count);
        assert_eq!(k("func_rel_rmse"), Kind::Float);
        assert!(h.iter().filter(|c| k(c) == Kind::Float).count() >= 15);
    }
}
