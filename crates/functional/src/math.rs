//! The closed forms the device models and the samplers share, below both: the standard
//! normal's tails and a polynomial.

/// P(Z < t) for a standard normal Z, accurate in the lower tail.
pub(crate) fn phi(t: f64) -> f64 {
    0.5 * libm::erfc(-t / std::f64::consts::SQRT_2)
}

/// P(Z >= t), accurate in the upper tail.
pub(crate) fn phi_upper(t: f64) -> f64 {
    0.5 * libm::erfc(t / std::f64::consts::SQRT_2)
}

/// sum_i c_i x^i (Horner).
pub fn poly(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |a, &ci| a * x + ci)
}
