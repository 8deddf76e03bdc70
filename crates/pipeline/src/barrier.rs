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
}

impl Barrier {
    pub fn new(sync: Sync, crossbars: usize) -> Self {
        let n = |used: bool| if used { crossbars } else { 0 };
        Barrier {
            sync,
            vector: vec![0; n(sync == Sync::Vector)],
            total: vec![0; n(sync == Sync::None)],
            w: 0,
        }
    }

    /// One input cycle's issue per crossbar, repeated `repeat` times (identical cycles).
    #[inline]
    pub fn interval(&mut self, issue: &[u64], repeat: u64) {
        match self.sync {
            Sync::Bit => self.w += repeat * issue.iter().copied().max().unwrap_or(0),
            Sync::Vector => add_scaled(&mut self.vector, issue, repeat),
            Sync::None => add_scaled(&mut self.total, issue, repeat),
        }
    }

    /// Closes the current input vector.
    #[inline]
    pub fn end_vector(&mut self) {
        if self.sync == Sync::Vector {
            self.w += self.vector.iter().copied().max().unwrap_or(0);
            self.vector.iter_mut().for_each(|v| *v = 0);
        }
    }

    /// Adds a barrier that saw other (whole) vectors of the same layer.
    pub fn merge(&mut self, other: &Barrier) {
        self.w += other.w;
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
