//! One point of a search grid (a config): its cycles and energy from the cycle run, and
//! the sequential test of every mode, fed look by look with paired differences.

use super::rule::{Test, Verdict};
use accuracy::{Network, SampleRecord};
use anyhow::{anyhow, Result};
use crossbar::Mode;
use sim::config::Resolved;

/// What the search found for one mode of one point.
#[derive(Debug, Clone)]
pub struct ModeOutcome {
    pub mode: Mode,
    pub cycles: u64,
    pub energy_pj: f64,
    /// The paired differences fed to its test, in sample order.
    pub diffs: Vec<f64>,
    /// Samples the quantized network and the mode classified right.
    pub quantized_right: u64,
    pub right: u64,
    pub verdict: Verdict,
    pub decided_at: Option<u64>,
    /// Device draws behind the samples: one per sample for a device that draws, else 1.
    pub draws: u64,
}

/// The test settings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub budget: f64,
    pub alpha: f64,
    pub first_samples: usize,
    /// The most samples of a point.
    pub cap: usize,
}

/// The records of samples `range`: with a device that draws, sample i on draw i
/// ([`sim::draws::seed`] of `device.seed` and i, [`sim::accuracy::drawn_records`]); else
/// all of them on the one device at once.
fn records(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    range: std::ops::Range<usize>,
    cal: &sim::accuracy::Calibration,
) -> Result<Vec<SampleRecord>> {
    if !sim::draws::random(&cfg.device) {
        let batch = accuracy::default_batch(net, range.len());
        return sim::accuracy::seeded_records(
            net,
            cfg,
            modes,
            crossbar,
            (range, batch),
            (cfg.device.seed, cal),
            &|_| {},
        );
    }
    sim::accuracy::drawn_records(net, cfg, modes, crossbar, range, cal)
}

/// Runs the sequential test of every mode of `modes` on `net` with `cfg`: looks of
/// `first_samples`, then twice as many each time, up to `cap`; a mode leaves the looks
/// when its test has reached a verdict. `cost` is each mode's (cycles, energy).
pub fn search(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    cost: &[(u64, f64)],
    s: Settings,
) -> Result<Vec<ModeOutcome>> {
    let labels = net
        .labels
        .as_ref()
        .ok_or_else(|| anyhow!("{}: graph: no labels; a search needs top-1", net.name))?;
    let cal = sim::accuracy::calibration(net, cfg, modes, crossbar, &|_| {})?;
    let random = sim::draws::random(&cfg.device);
    let mut tests: Vec<Test> = modes.iter().map(|_| Test::new(s.budget, s.alpha)).collect();
    let mut out: Vec<ModeOutcome> = modes
        .iter()
        .zip(cost)
        .map(|(&mode, &(cycles, energy_pj))| ModeOutcome {
            mode,
            cycles,
            energy_pj,
            diffs: Vec::new(),
            quantized_right: 0,
            right: 0,
            verdict: Verdict::Undecided,
            decided_at: None,
            draws: 0,
        })
        .collect();
    let mut n = 0;
    let mut look = s.first_samples.min(s.cap);
    loop {
        let open: Vec<usize> = (0..modes.len())
            .filter(|&m| tests[m].verdict() == Verdict::Undecided)
            .collect();
        if open.is_empty() || n >= s.cap {
            break;
        }
        let these: Vec<Mode> = open.iter().map(|&m| modes[m]).collect();
        let recs = records(net, cfg, &these, crossbar, n..look, &cal)?;
        for (i, r) in recs.iter().enumerate() {
            let label = *labels
                .get(n + i)
                .ok_or_else(|| anyhow!("{}: sample {}: no label", net.name, n + i))?;
            let right = |p: usize| (p as i64 == label) as u64;
            let q = right(r.paths[0].prediction);
            for (k, &m) in open.iter().enumerate() {
                let p = right(r.paths[k + 1].prediction);
                let x = q as f64 - p as f64;
                tests[m].push(x);
                let o = &mut out[m];
                o.diffs.push(x);
                o.quantized_right += q;
                o.right += p;
            }
        }
        n = look;
        look = (2 * look).min(s.cap);
    }
    for (o, t) in out.iter_mut().zip(&tests) {
        o.verdict = t.verdict();
        o.decided_at = t.decided_at();
        let samples = o.diffs.len() as u64;
        o.draws = if random { samples } else { samples.min(1) };
    }
    Ok(out)
}
