//! The run configuration: configs/default.toml, a user file over it, and `--set` overrides.
//!
//! Every key has a default (the embedded configs/default.toml). A user file may give any
//! subset; unknown keys, wrong types and impossible values are errors that name the file
//! and the key.

use anyhow::{anyhow, bail, Result};
use crossbar::{AdcBits, Hardware};
use energy::{AdcLaw, EnergyTable};
use engine::SimOptions;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// The embedded default configuration.
pub const DEFAULT_CONFIG_TOML: &str = include_str!("../../../../configs/default.toml");

pub mod chip;
mod files;
pub use files::Files;
pub mod device;
pub mod digital;
mod schema;
mod toml_text;
pub use schema::*;
use toml_text::{above_toml, beyond_toml, one_line, parse_toml, refuse_dates, source_of_key};

/// A validated configuration, split into what each crate needs.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: Config,
    /// Where the config came from (for messages and summary.json).
    pub origin: String,
    pub hw: Hardware,
    pub opts: SimOptions,
    /// The energy table at `tech.node`, with the `[energy]` overrides.
    pub energy: EnergyTable,
    /// `adc.energy_law`, parsed.
    pub adc_law: AdcLaw,
    pub cycle_ns: f64,
    pub static_mw_per_crossbar: f64,
    /// The `[chip]` table, resolved (None without one).
    pub chip: Option<chip::ResolvedChip>,
    /// `[device]`, validated (the ideal device by default).
    pub device: functional::Device,
    /// `[digital]` and `[attention]`, validated, with their tables.
    pub digital: digital::ResolvedDigital,
    /// The `--set KEY=VALUE` applied over the file, in order (for [`Resolved::source_of`]).
    pub sets: Vec<String>,
}

impl Resolved {
    /// Where `key`'s value came from, for the one error line that blames a key: `--set
    /// KEY=VALUE` when the command line set it (the last such), else the config's origin.
    pub fn source_of(&self, key: &str) -> String {
        self.sets
            .iter()
            .rev()
            .find(|s| s.split_once('=').is_some_and(|(k, _)| k.trim() == key))
            .map_or_else(|| self.origin.clone(), |s| format!("--set {s}"))
    }

    /// Which of `keys` most likely gave a figure that does not fit: the last one the
    /// command line set, else the first whose value differs from the default config's,
    /// else the first.
    pub fn likely_key<'a>(&self, keys: &[&'a str]) -> &'a str {
        let set = |k: &str| {
            self.sets
                .iter()
                .any(|s| s.split_once('=').is_some_and(|(sk, _)| sk.trim() == k))
        };
        let defaults = defaults();
        let mine = toml::Value::try_from(&self.config).ok();
        let at = |t: Option<&toml::Value>, k: &str| {
            k.split('.')
                .try_fold(t?, |v, part| v.get(part))
                .map(|v| v.to_string())
        };
        let changed = |k: &str| {
            let d = toml::Value::Table(defaults.clone());
            at(Some(&d), k) != at(mine.as_ref(), k)
        };
        keys.iter()
            .rev()
            .find(|k| set(k))
            .or_else(|| keys.iter().find(|k| changed(k)))
            .or(keys.first())
            .copied()
            .unwrap_or("")
    }

    /// `adc.range`, parsed (checked when the config was resolved).
    pub fn adc_range(&self) -> functional::AdcRange {
        functional::AdcRange::parse(&self.config.adc.range).unwrap_or_default()
    }

    pub fn precision(&self) -> workload::Precision {
        workload::Precision {
            weight_bits: self.hw.weight_bits,
            input_bits: self.hw.input_bits,
        }
    }
}

/// The embedded defaults as a table, parsed once per process (a sweep loads a config per
/// point; parsing the text each time made planning slow).
fn defaults() -> Table {
    static DEFAULTS: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    DEFAULTS
        .get_or_init(|| {
            // An invariant of the build: tests load the embedded default config.
            #[allow(clippy::expect_used)]
            DEFAULT_CONFIG_TOML
                .parse()
                .expect("the embedded default config parses")
        })
        .clone()
}

/// Loads `path` (or the embedded default) and applies `sets` ("key=value").
pub fn load(path: Option<&Path>, sets: &[String]) -> Result<Resolved> {
    match path {
        None => load_table(defaults(), "default config".to_string(), None, sets),
        Some(p) => {
            let origin = p.display().to_string();
            let text = workload::files::read_string(p, workload::files::MAX_TEXT_BYTES)
                .map_err(|e| anyhow!("{origin}: cannot read config: {e}"))?;
            load_str(&text, &origin, p.parent(), sets)
        }
    }
}

/// Loads config text (the contents of a file named `origin`, whose energy table is
/// relative to `base_dir`) over the defaults and applies `sets`.
pub fn load_str(
    text: &str,
    origin: &str,
    base_dir: Option<&Path>,
    sets: &[String],
) -> Result<Resolved> {
    let user = parse_toml(text, origin)?;
    let mut merged = defaults();
    merge(&mut merged, user, "", origin)?;
    load_table(
        merged,
        origin.to_string(),
        base_dir.map(Path::to_path_buf),
        sets,
    )
}

fn load_table(
    mut table: Table,
    origin: String,
    base_dir: Option<PathBuf>,
    sets: &[String],
) -> Result<Resolved> {
    let defaults = defaults();
    for set in sets {
        apply_set(&mut table, &defaults, set)?;
    }
    refuse_dates(&table, &defaults, sets, &origin)?;
    let preset = device::apply_preset(&mut table, &defaults, &origin, base_dir.as_deref())?;
    // A value a preset file beside the config gave is that file's mistake (docs/errors.md).
    let blame = |e: anyhow::Error| match &preset {
        Some(p) => p.blame(e, &origin),
        None => e,
    };
    // The one typed reading of the main config. A value of the wrong type is named by
    // its key: the leaf that fails on the defaults ([`culprit`]), else the path serde
    // was at (a key written as a table, `[timing.cycle_ns]` or `ou = {rows = {a = 1}}`,
    // has no failing leaf of its own).
    let config: Config =
        serde_path_to_error::deserialize(Value::Table(table.clone())).map_err(|e| {
            let (source, key) = culprit(&table, &defaults, sets, &origin);
            let path = e.path().to_string();
            let (source, key) = match key.is_empty() && !matches!(path.as_str(), "" | ".") {
                true => (source_of_key(&path, sets, &origin), format!("{path}: ")),
                false => (source, key),
            };
            blame(anyhow!("{source}: {key}{}", one_line(e.inner())))
        })?;
    let mut r =
        resolve(config, origin.clone(), Files::Beside(base_dir.as_deref())).map_err(blame)?;
    r.sets = sets.to_vec();
    Ok(r)
}

/// [`load`] for a command line: a value that fails a check names the `--set` that gave it
/// ([`blame_sets`]). Grids call [`load`], whose messages name the grid's key instead.
pub fn load_cli(path: Option<&Path>, sets: &[String]) -> Result<Resolved> {
    load(path, sets).map_err(|e| {
        let origin = path.map_or_else(|| "default config".to_string(), |p| p.display().to_string());
        blame_sets(e, &origin, sets)
    })
}

/// Names `--set` as the source of a value that fails a check: `--set K=V: K: ...` when
/// the key the message names was set on the command line, `<origin> with --set ...: `
/// when it was not but some key was (a set can clash with a key it does not name, e.g.
/// crossbar.rows under the default ou.rows).
pub fn blame_sets(e: anyhow::Error, origin: &str, sets: &[String]) -> anyhow::Error {
    let msg = e.to_string();
    let Some(rest) = msg.strip_prefix(&format!("{origin}: ")) else {
        return e;
    };
    if sets.is_empty() {
        return e;
    }
    let key = rest.split(':').next().unwrap_or("").trim();
    let names_key = |s: &&String| s.split_once('=').is_some_and(|(k, _)| k.trim() == key);
    match sets.iter().rev().find(names_key) {
        Some(s) => anyhow!("--set {s}: {rest}"),
        None => {
            let all: Vec<String> = sets.iter().map(|s| format!("--set {s}")).collect();
            anyhow!("{origin} with {}: {rest}", all.join(" "))
        }
    }
}

/// Which key makes `table` fail to deserialize (serde's message does not say): the first
/// leaf key (at any depth: `digital.occupancy.exp`, not its table) that fails when put
/// alone over the defaults. Returns where it came from (the file or `--set KEY=VALUE`)
/// and `key: ` (empty if no single key is to blame).
fn culprit(table: &Table, defaults: &Table, sets: &[String], origin: &str) -> (String, String) {
    fn leaves(t: &Table, prefix: &[String], out: &mut Vec<(Vec<String>, Value)>) {
        for (k, v) in t {
            let mut path = prefix.to_vec();
            path.push(k.clone());
            match v {
                Value::Table(sub) => leaves(sub, &path, out),
                _ => out.push((path, v.clone())),
            }
        }
    }
    fn put(t: &mut Table, path: &[String], v: Value) {
        match path {
            [] => {}
            [last] => {
                t.insert(last.clone(), v);
            }
            [head, rest @ ..] => {
                let sub = t
                    .entry(head.clone())
                    .or_insert_with(|| Value::Table(Table::new()));
                if let Value::Table(sub) = sub {
                    put(sub, rest, v);
                }
            }
        }
    }
    let mut all = Vec::new();
    leaves(table, &[], &mut all);
    for (path, v) in all {
        if path.len() < 2 {
            continue;
        }
        let mut probe = defaults.clone();
        put(&mut probe, &path, v);
        if Value::Table(probe).try_into::<Config>().is_err() {
            let key = path.join(".");
            return (source_of_key(&key, sets, origin), format!("{key}: "));
        }
    }
    (origin.to_string(), String::new())
}

/// Whether `v` (a config as summary.json's `config_values` writes it) is a config: laid
/// over the defaults as a config file is, every key known and of its type, then every
/// check of a config file ([`resolve`]: ranges, keys that depend on each other). The
/// problem starts with `config_values: ` and names the key by its path (`config_values:
/// ou.rows: invalid value: integer \`-1\`, expected u32`, `config_values: ou.rows: OU
/// height 0 ...`). No file is read: what a shard says is checked as data, with the
/// shipped tables standing for every table file a key names ([`Files::Never`]).
pub fn check_values(v: &serde_json::Value) -> std::result::Result<(), String> {
    const AT: &str = "config_values";
    let user = match Value::try_from(v) {
        Ok(Value::Table(t)) => t,
        Ok(_) => return Err(format!("{AT}: not a table of config keys")),
        Err(e) => return Err(format!("{AT}: {}", e.to_string().replace('\n', " "))),
    };
    let mut merged = defaults();
    merge(&mut merged, user, "", AT).map_err(|e| e.to_string())?;
    let config =
        serde_path_to_error::deserialize::<_, Config>(Value::Table(merged)).map_err(|e| match e
            .path()
            .to_string()
            .as_str()
        {
            "" | "." => format!("{AT}: {}", one_line(e.inner())),
            path => format!("{AT}: {path}: {}", one_line(e.inner())),
        })?;
    // The very checks a config file passes, opening no file: a table key naming
    // stands as the shipped table (the merge never reads it).
    resolve(config, AT.to_string(), Files::Never)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Merges `user` over `base`; a key absent from the defaults is an error.
fn merge(base: &mut Table, user: Table, prefix: &str, origin: &str) -> Result<()> {
    for (k, v) in user {
        let key = format!("{prefix}{k}");
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(u)) => merge(b, u, &format!("{key}."), origin)?,
            (Some(Value::Table(_)), _) => bail!("{origin}: {key}: expected a table"),
            (Some(slot), v) => *slot = v,
            (None, v) if prefix == "energy." && energy_key(&k) => {
                base.insert(k, v);
            }
            // [chip] has no default: absent, a run keeps the unbounded model.
            (None, Value::Table(u)) if prefix.is_empty() && k == "chip" => {
                let mut t = Table::new();
                merge_chip(&mut t, u, origin)?;
                base.insert(k, Value::Table(t));
            }
            (None, _) => bail!("{origin}: {key}: unknown key{}", suggest_key(&key)),
        }
    }
    Ok(())
}

fn merge_chip(base: &mut Table, user: Table, origin: &str) -> Result<()> {
    for (k, v) in user {
        if !chip::is_key(&k) {
            bail!(
                "{origin}: chip.{k}: unknown key (see configs/chip/isaac.toml){}",
                suggest_key(&format!("chip.{k}"))
            );
        }
        base.insert(k, v);
    }
    Ok(())
}

/// ` (did you mean "K"?)` for the config key (dotted, or a section) closest to `key`.
fn suggest_key(key: &str) -> String {
    workload::text::did_you_mean(key, known_keys().iter().map(String::as_str))
}

/// Every key a config may set, dotted (`ou.rows`), and every section (`ou`).
pub fn known_keys() -> Vec<String> {
    fn walk(t: &Table, prefix: &str, out: &mut Vec<String>) {
        for (k, v) in t {
            let key = format!("{prefix}{k}");
            if let Value::Table(sub) = v {
                walk(sub, &format!("{key}."), out);
            }
            out.push(key);
        }
    }
    let mut known = Vec::new();
    walk(&defaults(), "", &mut known);
    let energy = toml::Table::try_from(EnergyTable::isaac_32nm()).unwrap_or_default();
    known.extend(
        energy
            .keys()
            .filter(|k| *k != "name")
            .map(|k| format!("energy.{k}")),
    );
    known.push("chip".into());
    known.push("chip.preset".into());
    known.extend(::chip::ChipSpec::keys().iter().map(|k| format!("chip.{k}")));
    known
}

fn energy_key(k: &str) -> bool {
    toml::Table::try_from(EnergyTable::isaac_32nm()).is_ok_and(|t| t.contains_key(k) && k != "name")
}

/// Applies one `--set key=value`: the key must exist; the value is TOML (a bare word is
/// taken as a string).
/// Whether `key` is a value of the default config that `--set` and a grid axis may set:
/// a key of a table or of a table inside one (`ou.rows`, `digital.occupancy.exp`), not a
/// table itself. The one test of a dotted key (`[energy]` and `[chip]` keys aside).
pub fn is_default_leaf(defaults: &Table, key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    let [section, rest @ ..] = parts.as_slice() else {
        return false;
    };
    !rest.is_empty()
        && rest
            .iter()
            .try_fold(defaults.get(*section), |v, k| {
                v.and_then(Value::as_table).map(|t| t.get(*k))
            })
            .flatten()
            .is_some_and(|v| !v.is_table())
}

fn apply_set(table: &mut Table, defaults: &Table, set: &str) -> Result<()> {
    let (key, raw) = set
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {set}: expected KEY=VALUE"))?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').collect();
    let known = match parts.as_slice() {
        ["energy", k] => energy_key(k) || *k == "table",
        ["chip", k] => chip::is_key(k),
        _ => is_default_leaf(defaults, key),
    };
    if !known {
        bail!(
            "--set {key}: unknown key (see configs/default.toml){}",
            suggest_key(key)
        );
    }
    // One --set sets one key: text after a line break was read as more TOML and dropped.
    if raw.trim().contains(['\n', '\r']) {
        bail!(
            "--set {key}: the value holds a line break (one --set sets one key; give each its own --set)"
        );
    }
    if beyond_toml(raw.trim()) {
        bail!(
            "--set {key}={}: {key}: {}",
            raw.trim(),
            above_toml(raw.trim())
        );
    }
    let value = parse_value(raw.trim());
    if parts[0] == "chip" && !table.contains_key("chip") {
        table.insert("chip".into(), Value::Table(Table::new()));
    }
    let (leaf, path) = parts
        .split_last()
        .ok_or_else(|| anyhow!("--set {key}: expected KEY=VALUE"))?;
    let mut t = &mut *table;
    for (i, part) in path.iter().enumerate() {
        t = t
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()))
            .as_table_mut()
            .ok_or_else(|| anyhow!("--set {key}: [{}] is not a table", path[..=i].join(".")))?;
    }
    t.insert(leaf.to_string(), value);
    Ok(())
}

/// The TOML value of a `--set` (a string when it is not one): the whole text is that
/// one value, never a value and more keys after a line break.
fn parse_value(raw: &str) -> Value {
    format!("v = {raw}")
        .parse::<Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_string()))
}

/// The checks every config passes after its types (ranges, keys that depend on each
/// other, the tables it names), and what they resolve to: the one validation of a config
/// file, `--set`, a grid point and a shard's `config_values` ([`check_values`]).
fn resolve(config: Config, origin: String, files: Files) -> Result<Resolved> {
    let adc_bits = match &config.adc.bits {
        AdcBitsCfg::Fixed(b) => AdcBits::Fixed(*b),
        AdcBitsCfg::Named(s) if s == "auto" => AdcBits::Auto,
        AdcBitsCfg::Named(s) => {
            bail!("{origin}: adc.bits: '{s}' is neither \"auto\" nor a number of bits")
        }
    };
    let hw = Hardware {
        xbar_rows: config.crossbar.rows,
        xbar_cols: config.crossbar.cols,
        cell_bits: config.crossbar.cell_bits,
        ou_rows: config.ou.rows,
        ou_cols: config.ou.cols,
        weight_bits: config.precision.weight_bits,
        input_bits: config.precision.input_bits,
        dac_bits: config.dac.bits,
        adc_bits,
        adc_per_crossbar: config.adc.per_crossbar,
        index_rows_per_cycle: config.index_decoder.rows_per_cycle,
        layout: config.mapping.layout,
    };
    hw.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    if config.adc.step == 0 {
        bail!("{origin}: adc.step: 0 is not a positive number of cell levels per ADC count");
    }
    let range = functional::AdcRange::parse(&config.adc.range)
        .map_err(|e| anyhow!("{origin}: adc.range: {e}"))?;
    if range != functional::AdcRange::Step && config.adc.step != 1 {
        bail!(
            "{origin}: adc.range: '{}' sets the ADC step itself; adc.step must stay 1 (it is {})",
            config.adc.range,
            config.adc.step
        );
    }
    if config.adc.calibration_samples == 0 {
        bail!("{origin}: adc.calibration_samples: 0 (expected at least 1 sample)");
    }
    let cycle_ns = config.timing.cycle_ns;
    if !(cycle_ns.is_finite() && cycle_ns > 0.0) {
        bail!("{origin}: timing.cycle_ns: {cycle_ns} is not a positive number of ns");
    }
    if config.limits.max_layer_bytes == 0 {
        bail!("{origin}: limits.max_layer_bytes: 0 refuses every layer (expected a positive number of bytes)");
    }
    let static_mw = config.power.static_mw_per_crossbar;
    if !(static_mw.is_finite() && static_mw >= 0.0) {
        bail!("{origin}: power.static_mw_per_crossbar: {static_mw} is not a non-negative power");
    }
    let node_nm =
        energy::tech::check(config.tech.node).map_err(|e| anyhow!("{origin}: tech.node: {e}"))?;
    let adc_law = AdcLaw::parse(&config.adc.energy_law).ok_or_else(|| {
        anyhow!(
            "{origin}: adc.energy_law: '{}' is not a law (expected one of {}){}",
            config.adc.energy_law,
            AdcLaw::NAMES.join(", "),
            workload::text::did_you_mean(&config.adc.energy_law, AdcLaw::NAMES)
        )
    })?;
    let energy = load_energy(&config.energy, node_nm, &origin, files)?;
    let chip = config
        .chip
        .as_ref()
        .map(|c| chip::resolve(c, node_nm, &origin, files))
        .transpose()?;
    let mut device = device::resolve_device(&config.device, &origin, files)?;
    device.converter = functional::Converter {
        offset: config.adc.offset,
        gain_error: config.adc.gain_error,
        inl: config.adc.inl.clone(),
        dac_noise: config.dac.noise,
    };
    device
        .converter
        .validate()
        .map_err(|e| anyhow!("{origin}: {e}"))?;
    let digital = digital::resolve(&config.digital, &config.attention, node_nm, &origin, files)?;
    Ok(Resolved {
        chip,
        device,
        digital,
        opts: SimOptions {
            sync: config.timing.sync,
            granularity: config.activation.granularity,
            encoding: config.input.signed_encoding,
            pipeline: config.pipeline.resolve(&origin)?,
        },
        config,
        origin,
        hw,
        energy,
        adc_law,
        cycle_ns,
        static_mw_per_crossbar: static_mw,
        sets: Vec::new(),
    })
}

/// The table file (relative to the config file, or to ./configs for the default config;
/// the default table is embedded), carried to `node_nm`, then the `[energy]` overrides
/// (an override is the figure used at that node).
fn load_energy(cfg: &EnergyCfg, node_nm: u32, origin: &str, files: Files) -> Result<EnergyTable> {
    let rel = Path::new(&cfg.table);
    let shipped = rel.file_name().is_some_and(|f| f == "isaac-32nm.toml");
    let base_dir = match files {
        Files::Beside(d) => d,
        // Read as data: the shipped table stands for any file named (never opened).
        Files::Never => return with_overrides(EnergyTable::isaac_32nm(), cfg, node_nm, origin),
    };
    let path = match base_dir {
        Some(d) => d.join(rel),
        None => Path::new("configs").join(rel),
    };
    let table = match workload::files::read_string(&path, workload::files::MAX_TEXT_BYTES) {
        Ok(text) => {
            EnergyTable::from_toml(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?
        }
        Err(_) if !path.exists() && shipped => EnergyTable::isaac_32nm(),
        Err(why) => bail!("{origin}: energy.table: {} {why}", path.display()),
    };
    with_overrides(table, cfg, node_nm, origin)
}

/// `table` carried to `node_nm`, then the `[energy]` overrides.
fn with_overrides(
    mut table: EnergyTable,
    cfg: &EnergyCfg,
    node_nm: u32,
    origin: &str,
) -> Result<EnergyTable> {
    table = table
        .at_node(node_nm)
        .map_err(|e| anyhow!("{origin}: tech.node: {e}"))?;
    if !cfg.overrides.is_empty() {
        let mut t = Table::try_from(&table)
            .map_err(|e| anyhow!("{origin}: energy: {}", e.to_string().replace('\n', " ")))?;
        for (k, v) in &cfg.overrides {
            let v = match v {
                Value::Integer(i) => Value::Float(*i as f64),
                v => v.clone(),
            };
            t.insert(k.clone(), v);
        }
        table = Value::Table(t)
            .try_into::<EnergyTable>()
            .map_err(|e| anyhow!("{origin}: energy: {}", one_line(&e)))?;
        table
            .validate()
            .map_err(|e| anyhow!("{origin}: energy.{e}"))?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests;
