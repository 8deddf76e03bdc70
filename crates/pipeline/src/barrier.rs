//! Barrier policies: how per-crossbar issue times add up to a layer's busy time W.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// `timing.sync`: when the crossbars of a layer wait for each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sync {
    /// After every input cycle (each pass's cycles are separate intervals).
    Bit,
    /// After every input vector.
    Vector,
    /// Never: unbounded input buffering.
    None,
}

impl Sync {
    pub fn as_str(self) -> &'static str {
        match self {
            Sync::Bit => "bit",
            Sync::Vector => "vector",
            Sync::None => "none",
        }
    }
}

impl fmt::Display for Sync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Sync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bit" => Ok(Sync::Bit),
            "vector" => Ok(Sync::Vector),
            "none" => Ok(Sync::None),
            _ => Err(format!("unknown sync '{s}' (expected bit, vector or none)")),
        }
    }
}

/// Accumulates W = sum over barrier intervals of max over crossbars of issue(x).
///
/// Feed it the per-crossbar issue of each input cycle with [`Barrier::interval`] and
/// close each vector with [`Barrier::end_vector`]. Partial barriers over disjoint sets
/// of vectors [`Barrier::merge`] exactly, so the result does not depend on how vectors
/// were split across threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Barrier {
    sync: Sync,
    vector: Vec<u64>,
    total: Vec<u64>,
    w: u64,
    /// [`Barrier::traced`]: the slowest crossbar's issue of each barrier interval (sync
    /// bit) or vector (sync vector), in order.
    trace: Option<Vec<u64>>,
}

/// What a barrier over some of a layer's crossbars says of W, for [`Busy::combine`]
/// with the barriers of the layer's other crossbars (disjoint sets, the same vectors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Busy {
    /// W of these crossbars; the layer's is the largest of its parts' (no barrier, or
    /// intervals that are all alike).
    Max(u64),
    /// The slowest crossbar of each barrier interval, in order; the layer's W is the sum
    /// over intervals of the largest of its parts'.
    Trace(Vec<u64>),
}

impl Busy {
    /// W of a layer whose crossbars are the disjoint union of those of `parts`.
    pub fn combine(parts: &[Busy]) -> u64 {
        let mut max = 0u64;
        let mut slowest: Vec<u64> = Vec::new();
        for p in parts {
            match p {
                Busy::Max(w) => max = max.max(*w),
                Busy::Trace(t) => {
                    if slowest.len() < t.len() {
                        slowest.resize(t.len(), 0);
                    }
                    for (a, &b) in slowest.iter_mut().zip(t) {
                        *a = (*a).max(b);
                    }
                }
            }
        }
        max.max(slowest.iter().sum())
    }
}

impl Barrier {
    pub fn new(sync: Sync, crossbars: usize) -> Self {
        let n = |used: bool| if used { crossbars } else { 0 };
        Barrier {
            sync,
            vector: vec![0; n(sync == Sync::Vector)],
            total: vec![0; n(sync == Sync::None)],
            w: 0,
            trace: None,
        }
    }

    /// A barrier that also keeps the slowest crossbar of every interval, so that its
    /// crossbars' W can be combined with other crossbars' of the same layer
    /// ([`Barrier::part`], [`Busy::combine`]). Its memory grows with the intervals.
    pub fn traced(sync: Sync, crossbars: usize) -> Self {
        Barrier {
            trace: (sync != Sync::None).then(Vec::new),
            ..Barrier::new(sync, crossbars)
        }
    }

    /// W of these crossbars in the form [`Busy::combine`] takes: the trace of a
    /// [`Barrier::traced`] barrier, or W.
    pub fn part(self) -> Busy {
        match self.trace {
            Some(t) => Busy::Trace(t),
            None => Busy::Max(self.finish()),
        }
    }

    /// One input cycle's issue per crossbar, repeated `repeat` times (identical cycles).
    #[inline]
    pub fn interval(&mut self, issue: &[u64], repeat: u64) {
        match self.sync {
            Sync::Bit => {
                let slowest = repeat * issue.iter().copied().max().unwrap_or(0);
                self.w += slowest;
                if let Some(t) = &mut self.trace {
                    t.push(slowest);
                }
            }
            Sync::Vector => add_scaled(&mut self.vector, issue, repeat),
            Sync::None => add_scaled(&mut self.total, issue, repeat),
        }
    }

    /// Closes the current input vector.
    #[inline]
    pub fn end_vector(&mut self) {
        if self.sync == Sync::Vector {
            let slowest = self.vector.iter().copied().max().unwrap_or(0);
            self.w += slowest;
            if let Some(t) = &mut self.trace {
                t.push(slowest);
            }
            self.vector.iter_mut().for_each(|v| *v = 0);
        }
    }

    /// Adds a barrier that saw other (whole) vectors of the same layer, the vectors that
    /// follow those this one saw.
    pub fn merge(&mut self, other: &Barrier) {
        self.w += other.w;
        if let (Some(t), Some(o)) = (&mut self.trace, &other.trace) {
            t.extend_from_slice(o);
        }
        add_scaled(&mut self.total, &other.total, 1);
    }

    /// W of the layer.
    pub fn finish(&self) -> u64 {
        match self.sync {
            Sync::None => self.total.iter().copied().max().unwrap_or(0),
            _ => self.w,
        }
    }
}

#[inline]
fn add_scaled(acc: &mut [u64], x: &[u64], k: u64) {
    for (a, &b) in acc.iter_mut().zip(x) {
        *a += k * b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sync: Sync) -> u64 {
        // Two vectors, two cycles each, two crossbars:
        //   v0: [3,1] then [1,4];  v1: [2,2] then [0,5]
        let mut b = Barrier::new(sync, 2);
        for v in [[[3, 1], [1, 4]], [[2, 2], [0, 5]]] {
            for c in v {
                b.interval(&c, 1);
            }
            b.end_vector();
        }
        b.finish()
    }

    #[test]
    fn three_policies_by_hand() {
        // bit: 3 + 4 + 2 + 5 = 14; vector: max(4,5) + max(2,7) = 12; none: max(6,12) = 12
        assert_eq!(run(Sync::Bit), 14);
        assert_eq!(run(Sync::Vector), 12);
        assert_eq!(run(Sync::None), 12);
    }

    /// Two crossbars' barriers, each traced over the same vectors, combine to the W of
    /// one barrier over both, under every policy.
    #[test]
    fn traced_parts_combine_to_the_whole() {
        let cycles = [[[3, 1], [1, 4]], [[2, 2], [0, 5]]];
        for sync in [Sync::Bit, Sync::Vector, Sync::None] {
            let mut parts = [Barrier::traced(sync, 1), Barrier::traced(sync, 1)];
            for v in cycles {
                for c in v {
                    for (x, p) in parts.iter_mut().enumerate() {
                        p.interval(&[c[x]], 1);
                    }
                }
                parts.iter_mut().for_each(Barrier::end_vector);
            }
            let [a, b] = parts;
            assert_eq!(Busy::combine(&[a.part(), b.part()]), run(sync), "{sync}");
        }
    }

    #[test]
    fn merge_is_exact() {
        let mut a = Barrier::new(Sync::None, 2);
        a.interval(&[5, 1], 2);
        let mut b = Barrier::new(Sync::None, 2);
        b.interval(&[0, 7], 1);
        a.merge(&b);
        // totals: [10, 2+7] -> max 10
        assert_eq!(a.finish(), 10);
    }
}
