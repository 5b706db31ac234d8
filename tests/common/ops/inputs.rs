//! Test inputs: a seedable PRNG and the random host tensors every op is checked on.

use super::Host;

/// SplitMix64: deterministic, seedable, no dependencies; plenty for test inputs.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f64 / (1u64 << 24) as f64;
        (lo as f64 + (hi as f64 - lo as f64) * u) as f32
    }

    /// Uniform in `[lo, hi]`.
    pub fn i32_in(&mut self, lo: i32, hi: i32) -> i32 {
        let span = (hi as i64 - lo as i64 + 1) as u64;
        (lo as i64 + (self.next_u64() % span) as i64) as i32
    }

    /// Uniform in `[lo, hi]`.
    pub fn u32_in(&mut self, lo: u32, hi: u32) -> u32 {
        let span = hi as u64 - lo as u64 + 1;
        (lo as u64 + self.next_u64() % span) as u32
    }

    /// `true` with probability `1 / n`.
    pub fn one_in(&mut self, n: u32) -> bool {
        self.next_u32().is_multiple_of(n)
    }
}

/// The odd sizes every elementwise op is checked at.
// 256: a multiple of 4 (the vec4 kernels); the others take the one-element-per-thread kernels
pub const SIZES: [usize; 5] = [1, 3, 17, 255, 256];

/// float32 inputs in `[lo, hi)`, the first entries replaced by `specials` when there is room.
pub fn floats(rng: &mut Rng, shape: &[usize], lo: f32, hi: f32, specials: &[f32]) -> Host<f32> {
    let n: usize = shape.iter().product();
    let mut h = Host::from_fn(shape, |_| rng.f32_in(lo, hi));
    if n >= 2 * specials.len() {
        h.data[..specials.len()].copy_from_slice(specials);
    }
    h
}

/// Positive float32 inputs, log-uniform over `[e⁻⁷, e⁷)`.
pub fn positives(rng: &mut Rng, shape: &[usize]) -> Host<f32> {
    let specials = [1.0, 4.0, 1e-6, 1e6, std::f32::consts::E];
    let mut h = Host::from_fn(shape, |_| (rng.f32_in(-7.0, 7.0) as f64).exp() as f32);
    if h.data.len() >= 2 * specials.len() {
        h.data[..specials.len()].copy_from_slice(&specials);
    }
    h
}

pub fn ints(rng: &mut Rng, shape: &[usize], lo: i32, hi: i32) -> Host<i32> {
    Host::from_fn(shape, |_| rng.i32_in(lo, hi))
}

pub fn uints(rng: &mut Rng, shape: &[usize], lo: u32, hi: u32) -> Host<u32> {
    Host::from_fn(shape, |_| rng.u32_in(lo, hi))
}
