//! The one table of what every column means, for the labels, titles and legends of
//! figures: a human name, a unit and the values the quantity can take (its domain, within
//! which an interval is drawn). Every column run, sweep, accuracy, search and memory
//! write has an entry ([`column`]); the config keys a grid sweeps have one too, or are
//! named by their words ([`words`]: `device.read_noise` reads "device read noise"). No
//! figure shows a raw column name: the tests check every column of every table.

/// The values a quantity can take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Domain {
    /// Any number.
    Any,
    /// 0 and up (counts, times, energies, errors).
    NonNegative,
    /// From 0 to 1 (a fraction, a proportion).
    Fraction,
    /// From -1 to 1 (a difference of two fractions: a top-1 drop).
    SignedFraction,
    /// Up to 1 (a saving: 1 - a ratio).
    AtMostOne,
}

impl Domain {
    /// The ends of the domain.
    pub fn range(self) -> (f64, f64) {
        match self {
            Domain::Any => (f64::NEG_INFINITY, f64::INFINITY),
            Domain::NonNegative => (0.0, f64::INFINITY),
            Domain::Fraction => (0.0, 1.0),
            Domain::SignedFraction => (-1.0, 1.0),
            Domain::AtMostOne => (f64::NEG_INFINITY, 1.0),
        }
    }
}

/// What a column holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// A name for a reader ("OU height", "top-1 accuracy").
    pub name: String,
    /// Its unit ("wordlines", "pJ"; empty for a pure number).
    pub unit: &'static str,
    pub domain: Domain,
}

use Domain::{Any, AtMostOne, Fraction, NonNegative, SignedFraction};

fn c(name: &str, unit: &'static str, domain: Domain) -> Option<Column> {
    Some(Column {
        name: name.to_string(),
        unit,
        domain,
    })
}

/// The stages of the pipeline, as the busy_ and stall_ columns name them.
fn stage(s: &str) -> Option<&'static str> {
    Some(match s {
        "input_register" => "input register",
        "index_decode" => "index decoder",
        "ou_formation" => "OU formation",
        "crossbar_read" => "crossbar read",
        "adc" => "ADC",
        "shift_add" => "shift-and-add",
        "output_register" => "output register",
        _ => return None,
    })
}

/// The components of the energy breakdown, as its e_*_pj columns name them.
fn component(s: &str) -> Option<&'static str> {
    Some(match s {
        "dac" => "DAC",
        "xbar" | "crossbar" => "crossbar",
        "adc" => "ADC",
        "sh" => "sample-and-hold",
        "sa" => "shift-and-add",
        "ir" => "input register",
        "or" => "output register",
        "edram" => "eDRAM",
        "index" => "index decoder",
        "ouf" => "OU formation",
        "static" => "static",
        _ => return None,
    })
}

/// The entry of `col` in the table, when it has one.
pub fn known(col: &str) -> Option<Column> {
    // Means, spreads and intervals over device draws (docs/accuracy.md).
    for (suffix, what) in [
        (
            "_samples_ci_low",
            "95% interval over samples and draws, low end",
        ),
        (
            "_samples_ci_high",
            "95% interval over samples and draws, high end",
        ),
        ("_mean", "mean over draws"),
        ("_std", "std over draws"),
        ("_ci_low", "95% interval, low end"),
        ("_ci_high", "95% interval, high end"),
    ] {
        if let Some(f) = col.strip_suffix(suffix) {
            if let Some(base) = known(f) {
                let domain = match suffix {
                    "_std" => NonNegative,
                    _ => base.domain,
                };
                return c(&format!("{}, {what}", base.name), base.unit, domain);
            }
        }
    }
    if let Some(s) = col.strip_prefix("busy_").and_then(stage) {
        return c(&format!("{s} busy"), "cycles", NonNegative);
    }
    if let Some(s) = col.strip_prefix("stall_").and_then(stage) {
        return c(&format!("{s} stalled"), "cycles", NonNegative);
    }
    if let Some(p) = col
        .strip_prefix("e_")
        .and_then(|c| c.strip_suffix("_pj"))
        .and_then(component)
    {
        return c(&format!("{p} energy"), "pJ", NonNegative);
    }
    match col {
        // Keys of a row: what a point is.
        "point" => c("design point", "", Any),
        "workload" => c("workload", "", Any),
        "network" => c("network", "", Any),
        "layer" => c("layer", "", Any),
        "kind" => c("layer kind", "", Any),
        "mode" => c("mode", "", Any),
        "phase" => c("phase", "", Any),
        "bound" => c("bound by", "", Any),
        "step" => c("step", "", Any),
        // Config keys a grid sweeps most.
        "ou.rows" => c("OU height", "wordlines", NonNegative),
        "ou.cols" => c("OU width", "bitlines", NonNegative),
        "crossbar.rows" => c("crossbar height", "wordlines", NonNegative),
        "crossbar.cols" => c("crossbar width", "bitlines", NonNegative),
        "crossbar.cell_bits" => c("bits per cell", "", NonNegative),
        "adc.per_crossbar" => c("ADC conversions per cycle per crossbar", "", NonNegative),
        "adc.bits" => c("ADC resolution", "bits", NonNegative),
        "adc.range" => c("ADC range", "", Any),
        "dac.bits" => c("DAC resolution", "input bits per cycle", NonNegative),
        "precision.weight_bits" => c("weight precision", "bits", NonNegative),
        "precision.input_bits" => c("input precision", "bits", NonNegative),
        "index_decoder.rows_per_cycle" => c("index decoder rate", "indices per cycle", NonNegative),
        "timing.cycle_ns" => c("cycle time", "ns", NonNegative),
        "tech.node" => c("technology node", "nm", NonNegative),
        "device.preset" => c("device", "", Any),
        "device.read_noise" => c("read noise", "relative std", NonNegative),
        "device.ir_drop" => c("IR drop", "", NonNegative),
        "device.time_s" => c("time since programming", "s", NonNegative),
        "device.drift_compensation" => c("drift compensation", "", Any),
        "chip.preset" => c("chip", "", Any),
        "chip.replication" => c("replication", "", Any),
        "chip.schedule" => c("schedule", "", Any),
        "synth.weight_sparsity" => c("weight sparsity", "fraction zero", Fraction),
        "synth.act_sparsity" => c("activation sparsity", "fraction zero", Fraction),
        "synth.structure" => c("sparsity structure", "", Any),
        "synth.head_sparsity" => c("pruned heads", "fraction", Fraction),
        "synth.seed" => c("generator seed", "", Any),
        "synth.synthetic_inputs" => c("synthetic inputs", "", Any),
        // layers.csv and points.csv (docs/interfaces.md).
        "vectors" => c("input vectors", "", NonNegative),
        "crossbars" => c("crossbars", "", NonNegative),
        "ou_ops" => c("OU operations", "", NonNegative),
        "rows_driven" => c("wordlines driven", "", NonNegative),
        "cells_read" => c("cells read", "", NonNegative),
        "adc_conversions" => c("ADC conversions", "", NonNegative),
        "index_reads" => c("index reads", "", NonNegative),
        "ous_formed" => c("OUs formed", "", NonNegative),
        "cycles" => c("time", "cycles", NonNegative),
        "time_ns" => c("time", "ns", NonNegative),
        "energy_pj" => c("energy", "pJ", NonNegative),
        // The digital unit's columns (a transformer's points, docs/digital.md).
        "digital_ops" => c("digital-unit ops", "", NonNegative),
        "digital_cycles" => c("digital-unit cycles", "unit cycles", NonNegative),
        "digital_time_ns" => c("digital-unit time", "ns", NonNegative),
        "digital_energy_pj" => c("digital-unit energy", "pJ", NonNegative),
        "digital_compute_pj" => c("digital-unit arithmetic energy", "pJ", NonNegative),
        "digital_buffer_pj" => c("digital-unit buffer energy", "pJ", NonNegative),
        "digital_kv_pj" => c("K/V-store energy", "pJ", NonNegative),
        "attention_write_cells" => c("attention cells written", "", NonNegative),
        "attention_write_pj" => c("attention write energy", "pJ", NonNegative),
        "attention_write_ns" => c("attention write latency", "ns", NonNegative),
        "combined_cycles" => c("combined cycles", "", NonNegative),
        "combined_time_ns" => c("combined time", "ns", NonNegative),
        "combined_energy_pj" => c("combined energy", "pJ", NonNegative),
        "speedup_vs_dense" => c("speedup over dense", "", NonNegative),
        "energy_saving_vs_dense" => c("energy saved against dense", "fraction", AtMostOne),
        "busy_cycles" => c("busy time", "cycles", NonNegative),
        "passes" => c("passes", "", NonNegative),
        "input_cycles" => c("input cycles", "", NonNegative),
        "adc_bits" => c("ADC resolution", "bits", NonNegative),
        "signed" => c("signed inputs", "", Any),
        "ir_bits" => c("input register traffic", "bits", NonNegative),
        "or_bits" => c("output register traffic", "bits", NonNegative),
        "edram_bits" => c("eDRAM traffic", "bits", NonNegative),
        "index_bits_read" => c("index traffic", "bits", NonNegative),
        "weight_storage_bits" => c("weight storage", "bits", NonNegative),
        "index_storage_bits" => c("index storage", "bits", NonNegative),
        "samples" => c("samples", "", NonNegative),
        "queue_depth" => c("queue depth", "", Any),
        "stall_cycles" => c("stalled", "cycles", NonNegative),
        "wait_cycles" => c("waiting", "cycles", NonNegative),
        "psum_peak" => c("partial sums held at most", "", NonNegative),
        // The functional columns (docs/functional.md).
        "func_exact_frac" => c("outputs exact", "fraction", Fraction),
        "func_rel_rmse" => c("layer output error", "relative RMS", NonNegative),
        "func_max_abs_err" => c("largest output error", "integer output units", NonNegative),
        "float_rel_rmse" => c("error against float", "relative RMS", NonNegative),
        "adc_clip_frac" => c("conversions clipped", "fraction", Fraction),
        // The accuracy figures (docs/accuracy.md).
        "top1" => c("top-1 accuracy", "fraction", Fraction),
        "top1_float" => c("float top-1 accuracy", "fraction", Fraction),
        "top1_quantized" => c("quantized top-1 accuracy", "fraction", Fraction),
        // Paired per sample against the quantized network (docs/accuracy.md).
        "top1_drop" => c("top-1 drop from quantized", "fraction", SignedFraction),
        "agreement" => c("agreement with the float network", "fraction", Fraction),
        "agreement_quantized" => c("quantized agreement with float", "fraction", Fraction),
        "output_rel_rmse" => c("output error", "relative RMS", NonNegative),
        "accuracy_samples" => c("accuracy samples", "", NonNegative),
        "accuracy_draws" => c("device draws", "", NonNegative),
        // sresim search's points.csv (docs/search.md).
        "draws" => c("device draws", "", NonNegative),
        "drop" => c("top-1 drop", "fraction", SignedFraction),
        "verdict" => c("verdict", "", Any),
        "decided_at" => c("decided after", "samples", NonNegative),
        "budget" => c("budget", "fraction", SignedFraction),
        "fewest_cycles" => c("fewest cycles", "", Any),
        "least_energy" => c("least energy", "", Any),
        // The chip columns (docs/chip.md).
        "chip_replicas" => c("replicas", "", NonNegative),
        "chip_crossbars" => c("chip crossbars", "", NonNegative),
        "chip_units" => c("units", "", NonNegative),
        "chip_tiles" => c("tiles", "", NonNegative),
        "chip_utilization" => c("crossbars busy", "fraction", Fraction),
        "chip_segment" => c("segment", "", NonNegative),
        "chip_busy_cycles" => c("chip busy", "cycles", NonNegative),
        "chip_stall_cycles" => c("chip stalled", "cycles", NonNegative),
        "chip_start_cycle" => c("start", "cycle", NonNegative),
        "chip_end_cycle" => c("end", "cycle", NonNegative),
        "chip_network_bytes" => c("on-chip network traffic", "bytes", NonNegative),
        "chip_hops" => c("network hops", "", NonNegative),
        "chip_spill_bytes" => c("spilled off chip", "bytes", NonNegative),
        "chip_fits" => c("fits on chip", "", Any),
        "chip_note" => c("chip note", "", Any),
        "chip_chips" => c("chips", "", NonNegative),
        "chip_segments" => c("segments", "", NonNegative),
        "chip_run_cycles" => c("chip run time", "cycles", NonNegative),
        "chip_latency_cycles" => c("latency", "cycles", NonNegative),
        "chip_latency_ns" => c("latency", "ns", NonNegative),
        "chip_cycles_per_image" => c("cycles per image", "", NonNegative),
        "chip_images_per_s" => c("throughput", "images/s", NonNegative),
        "chip_network_pj" => c("on-chip network energy", "pJ", NonNegative),
        "chip_offchip_pj" => c("off-chip energy", "pJ", NonNegative),
        "chip_write_cycles" => c("reprogramming time", "cycles", NonNegative),
        "chip_write_pj" => c("reprogramming energy", "pJ", NonNegative),
        "chip_static_pj" => c("static energy", "pJ", NonNegative),
        "chip_energy_pj" => c("chip energy", "pJ", NonNegative),
        "chip_area_occupied_mm2" => c("occupied area", "mm²", NonNegative),
        "chip_area_chips_mm2" => c("chip area", "mm²", NonNegative),
        "chip_images_per_s_per_mm2" => c("throughput per area", "images/s/mm²", NonNegative),
        "chip_power_w" => c("power", "W", NonNegative),
        "chip_images_per_s_per_w" => c("throughput per watt", "images/s/W", NonNegative),
        // memory_layers.csv (docs/memory.md).
        "capacity_bytes" => c("on-chip capacity", "bytes", NonNegative),
        "bandwidth_bytes_per_s" => c("bandwidth", "bytes/s", NonNegative),
        "macs" => c("MACs", "", NonNegative),
        "elementwise_ops" => c("element-wise operations", "", NonNegative),
        "accessed_bytes" => c("bytes accessed", "bytes", NonNegative),
        "read_bytes" => c("off-chip reads", "bytes", NonNegative),
        "write_bytes" => c("off-chip writes", "bytes", NonNegative),
        "prefetched_bytes" => c("prefetched", "bytes", NonNegative),
        "compute_s" => c("compute time", "s", NonNegative),
        "memory_s" => c("memory time", "s", NonNegative),
        "time_s" => c("step time", "s", NonNegative),
        "op_intensity" => c("operational intensity", "flop/B", NonNegative),
        "saved_intra_layer" => c("saved within a layer", "bytes", NonNegative),
        "saved_adjacent_layer" => c("saved between adjacent layers", "bytes", NonNegative),
        "saved_block" => c("saved within a block", "bytes", NonNegative),
        "saved_recurrent_weight" => c("saved on recurrent weights", "bytes", NonNegative),
        "saved_forward_backward" => c("saved between forward and backward", "bytes", NonNegative),
        "saved_long_range" => c("saved over long range", "bytes", NonNegative),
        // The accuracy study tables of docs/ (scripts/accuracy-study).
        "preset" => c("device", "", Any),
        _ => None,
    }
}

/// Abbreviations written as a reader expects them.
const WORDS: [(&str, &str); 12] = [
    ("adc", "ADC"),
    ("dac", "DAC"),
    ("ou", "OU"),
    ("ir", "IR"),
    ("edram", "eDRAM"),
    ("ns", "(ns)"),
    ("pj", "(pJ)"),
    ("mm2", "(mm²)"),
    ("mw", "(mW)"),
    ("nm", "(nm)"),
    ("dram", "DRAM"),
    ("lrs", "LRS"),
];

/// A name for a column or key outside the table: its words, with the abbreviations and
/// units spelled as a reader expects (`device.read_noise`: "device read noise";
/// `energy.adc_pj`: "energy ADC (pJ)").
pub fn words(col: &str) -> String {
    let parts: Vec<String> = col
        .split(['.', '_'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            WORDS
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(w))
                .map_or_else(|| w.to_string(), |(_, v)| v.to_string())
        })
        .collect();
    parts.join(" ")
}

/// What `col` holds: its entry, or its words with no unit and any value.
pub fn column(col: &str) -> Column {
    known(col).unwrap_or_else(|| Column {
        name: words(col),
        unit: "",
        domain: Domain::Any,
    })
}

/// A value of `col` as a figure shows it: a workload given as a path by its last part
/// (the file or directory name), everything else as written.
pub fn value(col: &str, v: &str) -> String {
    match col {
        "workload" | "network" if v.contains(['/', '\\']) => {
            let last = v
                .trim_end_matches(['/', '\\'])
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or(v);
            last.strip_suffix(".toml").unwrap_or(last).to_string()
        }
        _ => v.to_string(),
    }
}

/// `col = v` as a title or a legend says it: the value alone for a name (a workload, a
/// mode, a device), else the column's name and the value with its unit when that is one
/// word ("OU width 8 bitlines", "ADC resolution 4 bits", "activation sparsity 0.5").
pub fn setting(col: &str, v: &str) -> String {
    let named = matches!(
        col,
        "workload"
            | "network"
            | "mode"
            | "layer"
            | "kind"
            | "device.preset"
            | "preset"
            | "chip.preset"
            | "verdict"
    );
    let v = value(col, v);
    if named {
        return v;
    }
    // A unit of one word (bits, wordlines, ns) reads after the value; a description
    // ("fraction zero", "relative std") does not.
    let c = column(col);
    let unit = match c.unit {
        "" | "fraction" => String::new(),
        u if u.contains(' ') || v.parse::<f64>().is_err() => String::new(),
        u => format!(" {u}"),
    };
    format!("{} {v}{unit}", c.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column of every table sresim writes: layers.csv (with the functional
    /// columns), a sweep's extra columns, accuracy.csv, search's points.csv and
    /// memory_layers.csv.
    fn every_column() -> Vec<String> {
        let mut cols: Vec<String> = sim::report::header()
            .iter()
            .map(|c| c.to_string())
            .collect();
        let extras = crate::extra::Extras {
            functional: true,
            chip: true,
            accuracy: true,
            draws: true,
            adc_clip: true,
            digital: true,
        };
        cols.extend(extras.columns());
        // accuracy.csv (sim::accuracy_report::COLUMNS), search's points.csv
        // (search::answer) and memory_layers.csv (memory::report::LayerRow).
        cols.extend(sim::accuracy_report::COLUMNS.iter().map(|c| c.to_string()));
        for c in [
            "draws",
            "drop",
            "drop_ci_low",
            "drop_ci_high",
            "verdict",
            "decided_at",
            "budget",
            "fewest_cycles",
            "least_energy",
            "capacity_bytes",
            "bandwidth_bytes_per_s",
            "step",
            "kind",
            "phase",
            "macs",
            "elementwise_ops",
            "accessed_bytes",
            "read_bytes",
            "write_bytes",
            "prefetched_bytes",
            "compute_s",
            "memory_s",
            "time_s",
            "bound",
            "op_intensity",
            "saved_intra_layer",
            "saved_adjacent_layer",
            "saved_block",
            "saved_recurrent_weight",
            "saved_forward_backward",
            "saved_long_range",
            "point",
            "workload",
        ] {
            cols.push(c.to_string());
        }
        cols
    }

    #[test]
    fn every_column_of_every_table_has_a_name_of_its_own() {
        for col in every_column() {
            let c = known(&col).unwrap_or_else(|| panic!("{col} has no entry"));
            // A plain word (mode, samples) may be its own name; nothing else is.
            assert!(
                !c.name.contains('_') && !c.name.contains('.'),
                "{col}: {c:?}"
            );
        }
    }

    #[test]
    fn every_key_a_grid_may_sweep_reads_as_words() {
        let mut keys = sim::config::known_keys();
        keys.extend(crate::value::SYNTH_KEYS.iter().map(|k| k.to_string()));
        for key in keys {
            let c = column(&key);
            assert!(
                !c.name.contains('_') && !c.name.contains('.'),
                "{key}: {c:?}"
            );
            assert!(!c.name.is_empty(), "{key}");
        }
        assert_eq!(words("device.read_noise"), "device read noise");
        assert_eq!(words("energy.adc_pj"), "energy ADC (pJ)");
    }

    #[test]
    fn draws_and_domains() {
        let m = column("top1_mean");
        assert_eq!(m.name, "top-1 accuracy, mean over draws");
        assert_eq!((m.unit, m.domain), ("fraction", Fraction));
        assert_eq!(column("output_rel_rmse_ci_low").domain, NonNegative);
        assert_eq!(column("drop_ci_high").domain.range(), (-1.0, 1.0));
        assert_eq!(column("e_adc_pj").name, "ADC energy");
        assert_eq!(column("busy_adc").name, "ADC busy");
    }

    #[test]
    fn settings_and_paths_read_as_a_reader_says_them() {
        assert_eq!(setting("ou.cols", "8"), "OU width 8 bitlines");
        assert_eq!(setting("adc.bits", "4"), "ADC resolution 4 bits");
        assert_eq!(setting("adc.bits", "auto"), "ADC resolution auto");
        assert_eq!(setting("mode", "sre"), "sre");
        assert_eq!(
            setting("synth.act_sparsity", "0.5"),
            "activation sparsity 0.5"
        );
        assert_eq!(setting("workload", "/home/me/bundles/net-a/"), "net-a");
        assert_eq!(value("workload", "my/nets/resnet18.toml"), "resnet18");
        assert_eq!(value("workload", "lenet5-mnist"), "lenet5-mnist");
    }
}
