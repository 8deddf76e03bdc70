//! A layer too wide to hold at once, simulated a window of column blocks at a time.
//!
//! The driver cuts the layer's blocks into [`Window`]s ([`windows`]): in each conv group,
//! a range of column blocks of its polarity arrays, both polarities together (they read
//! the same logical columns). Each window is mapped ([`crossbar::LayerMap::window`]),
//! loaded, compressed and fed every input vector on its own ([`crate::ModeRun::part`]);
//! [`Parts`] adds up the windows of one mode. Every count of section 8 but `vectors` and
//! `edram_bits` is a sum over column groups or crossbars, so it is the sum of the
//! windows' counts; `vectors` and `edram_bits` belong to the layer and are the same in
//! every window; W is combined from the windows' barriers ([`pipeline::Busy`]): the
//! slowest crossbar of each barrier interval is the slowest of the windows' slowest.
//! The totals are therefore exactly those of the whole layer.

use crossbar::{LayerMap, Mode};
use energy::Events;
use pipeline::Busy;
use std::ops::Range;

/// Column blocks `blocks` (indices within a polarity array) of conv group `group`, in
/// both polarities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub group: u32,
    pub blocks: Range<usize>,
}

/// The windows of at most `per_window` (>= 1) blocks that cover `map`, a whole layer's
/// map, in its block order.
pub fn windows(map: &LayerMap, per_window: usize) -> Vec<Window> {
    let per = map.blocks_per_array();
    let step = per_window.max(1);
    (0..map.groups)
        .flat_map(|group| {
            (0..per).step_by(step).map(move |start| Window {
                group,
                blocks: start..(start + step).min(per),
            })
        })
        .collect()
}

/// The events of one mode of a layer, added up over its windows.
#[derive(Debug, Clone)]
pub struct Parts {
    mode: Mode,
    events: Option<Events>,
    max: u64,
    slowest: Vec<u64>,
}

impl Parts {
    pub fn new(mode: Mode) -> Self {
        Parts {
            mode,
            events: None,
            max: 0,
            slowest: Vec::new(),
        }
    }

    /// Adds a window's events and barrier ([`crate::ModeRun::finish_part`]).
    pub fn add(&mut self, ev: &Events, busy: Busy) {
        match &mut self.events {
            None => self.events = Some(*ev),
            Some(t) => {
                // The layer's own figures, the same in every window.
                let (vectors, edram_bits) = (t.vectors, t.edram_bits);
                t.add(ev);
                t.vectors = vectors;
                t.edram_bits = edram_bits;
            }
        }
        match busy {
            Busy::Max(w) => self.max = self.max.max(w),
            Busy::Trace(t) => {
                if self.slowest.len() < t.len() {
                    self.slowest.resize(t.len(), 0);
                }
                for (a, b) in self.slowest.iter_mut().zip(t) {
                    *a = (*a).max(b);
                }
            }
        }
    }

    /// The layer's events: the windows' sums, W and the cycles.
    pub fn finish(self) -> Events {
        let mut ev = self.events.unwrap_or_default();
        ev.busy_cycles = self.max.max(self.slowest.iter().sum());
        ev.cycles = pipeline::layer_cycles(ev.busy_cycles, self.mode);
        ev
    }
}
