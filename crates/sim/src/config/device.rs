//! `[device]` of the configuration (docs/functional.md): its keys, the presets a file
//! may start from, and their resolution into the functional datapath's device.

use anyhow::Result;

/// `[device]` of the configuration (configs/default.toml documents each key).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceCfg {
    pub preset: String,
    pub on_off_ratio: f64,
    pub sigma: f64,
    pub stuck_at_0: f64,
    pub stuck_at_1: f64,
    pub read_noise: f64,
    pub ir_drop: f64,
    pub error_table: String,
    pub seed: u64,
    /// Left out of summary.json while it is the default ("skip"); "per-read" is echoed.
    #[serde(skip_serializing_if = "is_default_sampler")]
    pub sampler: String,
    // The keys below are left out of summary.json at their defaults, as `sampler` is.
    /// Programming noise by target conductance: polynomial coefficients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prog_noise: Vec<f64>,
    /// Seconds since programming.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub time_s: f64,
    /// Drift exponent table: rows [x, nu_mean, nu_sd].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift_nu: Vec<Vec<f64>>,
    #[serde(default = "drift_t0_s", skip_serializing_if = "is_drift_t0_s")]
    pub drift_t0_s: f64,
    /// Accumulated 1/f noise: [q, exponent, q_max, t_read_s].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift_noise: Vec<f64>,
    /// Relaxation: rows [t_s, c_0, c_1, ...].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relax: Vec<Vec<f64>>,
    /// "off" or "on".
    #[serde(default = "off", skip_serializing_if = "is_off")]
    pub drift_compensation: String,
    /// Each level's conductance law: rows [mean, sd] (or [mean] with `level_sigma`), in
    /// `level_space`'s terms and the source's unit, lowest state first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<Vec<f64>>,
    /// "conductance", "log10_resistance" or "ln_conductance".
    #[serde(default = "conductance", skip_serializing_if = "is_conductance")]
    pub level_space: String,
    /// The sd of a level as a polynomial of its mean conductance (the table's unit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub level_sigma: Vec<f64>,
    /// "device" (the reference column drifts with the device) or "nominal".
    #[serde(
        default = "device_reference",
        skip_serializing_if = "is_device_reference"
    )]
    pub reference: String,
    /// Hold the last row of `relax` past its time instead of refusing such a time.
    #[serde(default, skip_serializing_if = "is_false")]
    pub relax_hold: bool,
}

fn conductance() -> String {
    "conductance".into()
}

fn is_conductance(s: &str) -> bool {
    s == "conductance"
}

fn device_reference() -> String {
    "device".into()
}

fn is_device_reference(s: &str) -> bool {
    s == "device"
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default_sampler(s: &str) -> bool {
    s == "skip"
}

pub(crate) fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn drift_t0_s() -> f64 {
    functional::DRIFT_T0_S
}

fn is_drift_t0_s(x: &f64) -> bool {
    *x == functional::DRIFT_T0_S
}

fn off() -> String {
    "off".into()
}

fn is_off(s: &str) -> bool {
    s == "off"
}

impl Default for DeviceCfg {
    fn default() -> Self {
        DeviceCfg {
            preset: String::new(),
            on_off_ratio: 0.0,
            sigma: 0.0,
            stuck_at_0: 0.0,
            stuck_at_1: 0.0,
            read_noise: 0.0,
            ir_drop: 0.0,
            error_table: String::new(),
            seed: 1,
            sampler: "skip".into(),
            prog_noise: Vec::new(),
            time_s: 0.0,
            drift_nu: Vec::new(),
            drift_t0_s: functional::DRIFT_T0_S,
            drift_noise: Vec::new(),
            relax: Vec::new(),
            drift_compensation: off(),
            levels: Vec::new(),
            level_space: conductance(),
            level_sigma: Vec::new(),
            reference: device_reference(),
            relax_hold: false,
        }
    }
}

/// Presets shipped inside the binary (also in configs/device/).
const PRESETS: [(&str, &str); 7] = [
    (
        "ideal",
        include_str!("../../../../configs/device/ideal.toml"),
    ),
    (
        "noisy-rram",
        include_str!("../../../../configs/device/noisy-rram.toml"),
    ),
    (
        "neurosim-rram",
        include_str!("../../../../configs/device/neurosim-rram.toml"),
    ),
    (
        "dlrsim-rram",
        include_str!("../../../../configs/device/dlrsim-rram.toml"),
    ),
    (
        "milo-rram",
        include_str!("../../../../configs/device/milo-rram.toml"),
    ),
    (
        "nandakumar-pcm",
        include_str!("../../../../configs/device/nandakumar-pcm.toml"),
    ),
    (
        "wan-rram",
        include_str!("../../../../configs/device/wan-rram.toml"),
    ),
];

/// A preset's name is a file name of configs/device/ without its `.toml`: letters,
/// digits, `-` and `_` (no path, no control character). The one check of the name, for a
/// config file, `--set` and a shard's `config_values` alike (an empty name is no preset).
pub fn check_preset_name(name: &str, origin: &str) -> Result<()> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        anyhow::bail!(
            "{origin}: device.preset: '{name}' is not a preset name (letters, digits, - and _)"
        );
    }
    Ok(())
}

/// The keys a preset file beside the config gave (those the config left at their
/// defaults), and the file: a value of one of them that fails a check is that file's
/// mistake, named by its path and its own key ([`PresetFile::blame`]).
#[derive(Debug, Clone)]
pub struct PresetFile {
    pub label: String,
    pub keys: Vec<String>,
}

impl PresetFile {
    /// `e` (`{origin}: device.KEY: ...`) told of the preset file when KEY is one it gave.
    pub fn blame(&self, e: anyhow::Error, origin: &str) -> anyhow::Error {
        let msg = e.to_string();
        let Some(rest) = msg.strip_prefix(&format!("{origin}: device.")) else {
            return e;
        };
        let key: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        match self.keys.contains(&key) {
            true => anyhow::anyhow!("{}: device.{rest}", self.label),
            false => e,
        }
    }
}

/// `device.preset = "NAME"`: the `[device]` keys of configs/device/<name>.toml (next to
/// the config file, else shipped) replace every device key `table` leaves at its default.
/// A preset file holds `[device]` and nothing else; the keys taken from a file beside the
/// config are returned, so that a bad value is blamed on that file.
pub fn apply_preset(
    table: &mut toml::Table,
    defaults: &toml::Table,
    origin: &str,
    base_dir: Option<&std::path::Path>,
) -> Result<Option<PresetFile>> {
    use anyhow::{anyhow, bail};
    let name = match table
        .get("device")
        .and_then(|d| d.get("preset"))
        .and_then(|p| p.as_str())
    {
        Some("") | None => return Ok(None),
        Some(n) => n.to_string(),
    };
    check_preset_name(&name, origin)?;
    // A local device/ that exists in any form but is no directory (a dangling link, a
    // FIFO, a file) is the user's folder unreadable, never passed over for the shipped
    // presets.
    if let Some(dir) = base_dir.map(|d| d.join("device")) {
        if std::fs::symlink_metadata(&dir).is_ok() && !dir.is_dir() {
            bail!(
                "{}: not a directory (a dangling link, a FIFO or a file), where device.preset '{name}' of {origin} is looked for first as device/{name}.toml",
                bounds::text::path(&dir)
            );
        }
    }
    let local = base_dir.map(|d| d.join("device").join(format!("{name}.toml")));
    // A local file that exists in any form is read (and refused if it is not a regular
    // file), never silently passed over for the shipped preset.
    let (label, text, is_local) = match local.filter(|p| std::fs::symlink_metadata(p).is_ok()) {
        Some(p) => (
            bounds::text::path(&p),
            workload::files::read_text(&p, &p.display().to_string()).map_err(anyhow::Error::msg)?,
            true,
        ),
        None => match PRESETS.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => (format!("configs/device/{name}.toml"), t.to_string(), false),
            None => bail!(
                "{origin}: device.preset: no preset '{name}' (shipped: {}){}",
                PRESETS.map(|p| p.0).join(", "),
                workload::text::did_you_mean(&name, PRESETS.map(|p| p.0))
            ),
        },
    };
    let preset = super::toml_text::parse_toml(&text, &label)?;
    // Only `[device]`: another table (`[other]`, `[ou]`) would be passed over unread.
    if let Some(k) = preset.keys().find(|k| *k != "device") {
        bail!("{label}: {k}: unknown key in the preset (a device preset holds [device] only)");
    }
    let keys = preset
        .get("device")
        .and_then(|d| d.as_table())
        .ok_or_else(|| anyhow!("{label}: expected a [device] table"))?;
    let default_table = defaults;
    let defaults = defaults.get("device").and_then(|d| d.as_table());
    let Some(device) = table.get_mut("device").and_then(|d| d.as_table_mut()) else {
        return Ok(None);
    };
    for k in keys.keys() {
        if k == "preset" || defaults.is_some_and(|d| !d.contains_key(k)) {
            bail!("{label}: device.{k}: not a key a preset may set");
        }
    }
    // No key takes a TOML date, in a preset file as in the config: the typed reading took
    // `error_table = 1979-05-27` as the text "1979-05-27" (a file of that name was read).
    let wrapped =
        toml::Table::from_iter([("device".to_string(), toml::Value::Table(keys.clone()))]);
    super::toml_text::refuse_dates(&wrapped, default_table, &[], &label)?;
    let mut taken = Vec::new();
    for (k, v) in keys {
        if device.get(k) == defaults.and_then(|d| d.get(k)) {
            device.insert(k.clone(), v.clone());
            taken.push(k.clone());
        }
    }
    Ok(is_local.then_some(PresetFile { label, keys: taken }))
}

/// The validated device of `[device]`; the error table is read relative to the config
/// file (or the working directory).
pub fn resolve_device(
    cfg: &DeviceCfg,
    origin: &str,
    files: super::files::Files,
) -> Result<functional::Device> {
    // The preset's keys were laid in by [`apply_preset`] (a config file, `--set`); read as
    // data ([`super::files::Files::Never`]) its name is still checked, and a valid name
    // that is not shipped is kept as written (it may name a preset file beside the
    // config the shard ran with, never opened here), as a table key is.
    check_preset_name(&cfg.preset, origin)?;
    let table = match files {
        _ if cfg.error_table.is_empty() => None,
        // Read as data (a shard's `config_values`): the table is the one the shards ran
        // with (their fingerprint binds it), never opened here; the other keys are
        // checked without it (docs/errors.md, "accuracy-merge").
        super::files::Files::Never => None,
        super::files::Files::Beside(base_dir) => {
            let p = std::path::Path::new(&cfg.error_table);
            let p = match base_dir {
                Some(d) if p.is_relative() => d.join(p),
                _ => p.to_path_buf(),
            };
            let label = p.display().to_string();
            let text =
                workload::files::read_string(&p, workload::files::MAX_TEXT_BYTES).map_err(|e| {
                    anyhow::anyhow!("{origin}: device.error_table: {label}: cannot read: {e}")
                })?;
            Some(functional::ErrorTable::parse(&text, &label).map_err(anyhow::Error::msg)?)
        }
    };
    let sampler = functional::Sampler::parse(&cfg.sampler).ok_or_else(|| {
        anyhow::anyhow!(
            "{origin}: device.sampler: '{}' is not a sampler ({})",
            cfg.sampler,
            functional::Sampler::NAMES.join(", ")
        )
    })?;
    let drift_nu = cfg
        .drift_nu
        .iter()
        .enumerate()
        .map(|(i, r)| {
            <[f64; 3]>::try_from(r.as_slice()).map_err(|_| {
                anyhow::anyhow!(
                    "{origin}: device.drift_nu: row {}: {} values, expected [x, nu_mean, nu_sd]",
                    i + 1,
                    r.len()
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let drift_compensation = match cfg.drift_compensation.as_str() {
        "on" => true,
        "off" => false,
        other => anyhow::bail!("{origin}: device.drift_compensation: '{other}' is not on or off"),
    };
    let space = functional::LevelSpace::parse(&cfg.level_space).ok_or_else(|| {
        anyhow::anyhow!(
            "{origin}: device.level_space: '{}' is not a level space ({})",
            cfg.level_space,
            functional::LevelSpace::NAMES.join(", ")
        )
    })?;
    let levels = functional::Levels::new(space, cfg.levels.clone(), cfg.level_sigma.clone())
        .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    let reference = functional::Reference::parse(&cfg.reference).ok_or_else(|| {
        anyhow::anyhow!(
            "{origin}: device.reference: '{}' is not a reference ({})",
            cfg.reference,
            functional::Reference::NAMES.join(", ")
        )
    })?;
    let device = functional::Device {
        on_off_ratio: (cfg.on_off_ratio != 0.0).then_some(cfg.on_off_ratio),
        sigma: cfg.sigma,
        stuck_at_0: cfg.stuck_at_0,
        stuck_at_1: cfg.stuck_at_1,
        read_noise: cfg.read_noise,
        ir_drop: cfg.ir_drop,
        error_table: table,
        seed: cfg.seed,
        sampler,
        aging: functional::Aging {
            prog_noise: cfg.prog_noise.clone(),
            time_s: cfg.time_s,
            drift_nu,
            drift_t0_s: cfg.drift_t0_s,
            drift_noise: cfg.drift_noise.clone(),
            relax: cfg.relax.clone(),
            relax_hold: cfg.relax_hold,
        },
        drift_compensation,
        converter: Default::default(),
        levels,
        reference,
    };
    device
        .validate()
        .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    Ok(device)
}
