//! The machine stepped literally: every cycle, every crossbar, every stage. Slow and
//! obviously right; tests hold [`super::Machine`] to it.
//!
//! Each cycle: units whose issue is over leave their queues and the broadcaster fills
//! the queues (repeated until nothing changes); each crossbar whose II window is over
//! issues the next OU of its head unit into the first stage; every stage works one
//! cycle on its OU; from the last stage back, a finished OU moves on when the next
//! stage is free (else it sits there, blocked, and counts a blocked cycle).

use super::QueueDepth;
use crate::{stages, Stage};
use crossbar::Mode;
use std::collections::VecDeque;

/// One OU as the pipeline sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ou {
    pub ii: u64,
    /// The stage it occupies for `ii` cycles (None when `ii` is 1).
    pub slowest: Option<Stage>,
}

/// One barrier interval: each crossbar's OUs in issue order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub ous: Vec<Vec<Ou>>,
    /// Whether this is the last unit of an input vector.
    pub ends_vector: bool,
}

/// What a literal run observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The cycle the last OU left the output register (0 when there was none).
    pub cycles: u64,
    pub ous: u64,
    /// Cycles each stage worked on an OU.
    pub busy: [u64; 7],
    /// Cycles a crossbar's issue was held inside an OU's II window, by its slowest stage.
    pub stall: [u64; 7],
    /// Cycles a finished OU sat in a stage because the next one was occupied.
    pub blocked: [u64; 7],
    /// Cycles a crossbar issued nothing while some crossbar was issuing or had OUs left.
    pub wait: u64,
    pub psum_peak: u64,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    ou: Ou,
    left: u64,
}

#[derive(Debug, Clone)]
struct Xbar {
    queue: VecDeque<usize>,
    next: usize,
    issue_free: u64,
    window: (u64, Option<Stage>),
    slots: Vec<Option<Slot>>,
    vectors_done: usize,
}

fn occupancy(ou: Ou, s: Stage) -> u64 {
    if ou.slowest == Some(s) {
        ou.ii
    } else {
        1
    }
}

/// Steps `units` through `crossbars` crossbars of `mode` with queues of `depth` (resolved).
pub fn run(mode: Mode, depth: QueueDepth, crossbars: usize, units: &[Unit]) -> Outcome {
    let pipe = stages(mode);
    let cap = match depth {
        QueueDepth::Finite(d) => d as usize,
        QueueDepth::Unbounded => usize::MAX,
        QueueDepth::Auto => panic!("resolve the queue depth first"),
    };
    let total: usize = units.iter().flat_map(|u| &u.ous).map(Vec::len).sum();
    let vector_of: Vec<usize> = units
        .iter()
        .scan(0, |v, u| {
            let mine = *v;
            *v += u.ends_vector as usize;
            Some(mine)
        })
        .collect();
    let mut done_by = vec![0usize; vector_of.last().map_or(0, |v| v + 1)];
    let mut merged = 0;
    let mut xs = vec![
        Xbar {
            queue: VecDeque::new(),
            next: 0,
            issue_free: 0,
            window: (0, None),
            slots: vec![None; pipe.len()],
            vectors_done: 0,
        };
        crossbars
    ];
    let mut out = Outcome::default();
    let (mut pushed, mut issued) = (0, 0);
    let mut t = 0u64;
    loop {
        // Retire finished units and broadcast new ones until nothing changes.
        loop {
            let mut changed = false;
            for (xi, x) in xs.iter_mut().enumerate() {
                if let Some(&u) = x.queue.front() {
                    if x.next == units[u].ous[xi].len() && t >= x.issue_free {
                        x.queue.pop_front();
                        x.next = 0;
                        changed = true;
                        if units[u].ends_vector {
                            x.vectors_done += 1;
                            done_by[vector_of[u]] += 1;
                        }
                    }
                }
            }
            if pushed < units.len() && xs.iter().all(|x| x.queue.len() < cap) {
                xs.iter_mut().for_each(|x| x.queue.push_back(pushed));
                pushed += 1;
                changed = true;
            }
            if !changed {
                break;
            }
        }
        while merged < done_by.len() && done_by[merged] == crossbars {
            merged += 1;
        }
        for x in &xs {
            out.psum_peak = out.psum_peak.max((x.vectors_done - merged) as u64);
        }
        // Issue.
        for (xi, x) in xs.iter_mut().enumerate() {
            let Some(&u) = x.queue.front() else { continue };
            if x.next < units[u].ous[xi].len() && t >= x.issue_free {
                let ou = units[u].ous[xi][x.next];
                assert!(
                    x.slots[0].is_none(),
                    "cycle {t}: first stage still occupied"
                );
                x.slots[0] = Some(Slot {
                    ou,
                    left: occupancy(ou, pipe[0]),
                });
                x.next += 1;
                x.issue_free = t + ou.ii;
                x.window = (t, ou.slowest);
                issued += 1;
                out.ous += 1;
            }
        }
        let in_window: Vec<bool> = xs.iter().map(|x| t < x.issue_free).collect();
        let phase = issued < total || in_window.iter().any(|&w| w);
        // A window is open past its first cycle only when the OU took longer than one
        // cycle, and then it names its slowest stage: an invariant of the loop above.
        #[allow(clippy::expect_used)]
        for (x, &w) in xs.iter().zip(&in_window) {
            if w && t != x.window.0 {
                out.stall[x
                    .window
                    .1
                    .expect("a window longer than 1 has a slowest stage")
                    .index()] += 1;
            }
            if !w && phase {
                out.wait += 1;
            }
        }
        // Every stage works a cycle; then finished OUs move on, from the last stage back.
        for x in xs.iter_mut() {
            for (s, slot) in x.slots.iter_mut().enumerate() {
                if let Some(sl) = slot {
                    if sl.left > 0 {
                        sl.left -= 1;
                        out.busy[pipe[s].index()] += 1;
                    } else {
                        out.blocked[pipe[s].index()] += 1;
                    }
                }
            }
            for s in (0..pipe.len()).rev() {
                let Some(sl) = x.slots[s] else { continue };
                if sl.left > 0 {
                    continue;
                }
                if s + 1 == pipe.len() {
                    x.slots[s] = None;
                    out.cycles = out.cycles.max(t + 1);
                } else if x.slots[s + 1].is_none() {
                    x.slots[s] = None;
                    x.slots[s + 1] = Some(Slot {
                        ou: sl.ou,
                        left: occupancy(sl.ou, pipe[s + 1]),
                    });
                }
            }
        }
        let idle = xs
            .iter()
            .all(|x| x.queue.is_empty() && x.slots.iter().all(Option::is_none));
        if pushed == units.len() && idle {
            return out;
        }
        t += 1;
    }
}
