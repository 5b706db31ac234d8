//! Size classes: how a request is rounded to a reusable device buffer size.
//!
//! The default is a geometric ladder with `steps` equal steps per power of two (jemalloc-style):
//! between 2^p and 2^(p+1) the classes are 2^p + k·2^p/steps. A request of `r` bytes above the
//! smallest class is rounded up by less than one step, and one step is 2^p/steps < r/steps, so
//!
//! > **worst-case rounding waste < r / steps** (under 25 % of the request with the default 4 steps;
//! > under 20 % of the buffer).
//!
//! Requests at or below the smallest class (256 bytes) take the smallest class. An explicit list
//! of classes is also accepted; a request above its largest class is served exact-size and is not
//! cached (like an oversize request).

use crate::error::{invalid_arg, Result};

/// The smallest buffer the ladder hands out.
pub const MIN_CLASS_BYTES: u64 = 256;
/// Default steps per power of two.
pub const DEFAULT_STEPS: u32 = 4;

/// The rounding policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeClasses {
    /// `steps` classes per power of two, at least [`MIN_CLASS_BYTES`]. `steps` is a power of two
    /// in 1..=64.
    Ladder {
        /// Classes per power of two.
        steps: u32,
    },
    /// Exactly these classes (ascending, multiples of 4 bytes).
    Explicit(Vec<u64>),
}

impl Default for SizeClasses {
    fn default() -> Self {
        SizeClasses::Ladder { steps: DEFAULT_STEPS }
    }
}

impl SizeClasses {
    /// A ladder with `steps` per power of two; `steps` must be a power of two in 1..=64.
    pub fn ladder(steps: u32) -> Result<SizeClasses> {
        if !(1..=64).contains(&steps) || !steps.is_power_of_two() {
            return Err(invalid_arg!(
                "sizeClasses: steps per power of two must be 1, 2, 4, 8, 16, 32 or 64, got {steps}"
            ));
        }
        Ok(SizeClasses::Ladder { steps })
    }

    /// An explicit list; must be non-empty, strictly ascending, and each a positive multiple of 4.
    pub fn explicit(classes: Vec<u64>) -> Result<SizeClasses> {
        if classes.is_empty() {
            return Err(invalid_arg!("sizeClasses: an explicit list must not be empty"));
        }
        for w in classes.windows(2) {
            if w[0] >= w[1] {
                return Err(invalid_arg!(
                    "sizeClasses must be strictly ascending, got {} then {}",
                    w[0],
                    w[1]
                ));
            }
        }
        if let Some(bad) = classes.iter().find(|&&c| c == 0 || c % 4 != 0) {
            return Err(invalid_arg!(
                "sizeClasses: every class must be a positive multiple of 4 bytes, got {bad}"
            ));
        }
        Ok(SizeClasses::Explicit(classes))
    }

    /// Parses the environment form: a number (steps per power of two) or a comma-separated list
    /// of byte sizes.
    pub fn parse(text: &str) -> Result<SizeClasses> {
        let text = text.trim();
        if text.contains(',') {
            let sizes = text
                .split(',')
                .map(|s| parse_bytes(s.trim()))
                .collect::<Result<Vec<_>>>()?;
            SizeClasses::explicit(sizes)
        } else {
            let steps = text.parse::<u32>().map_err(|_| {
                invalid_arg!(
                    "sizeClasses '{text}': expected steps per power of two (e.g. 4) or a comma-separated list of byte sizes"
                )
            })?;
            SizeClasses::ladder(steps)
        }
    }

    /// The buffer size a request of `bytes` (> 0) is served from, or `None` if it is served
    /// exact-size (above the largest explicit class).
    pub fn class_for(&self, bytes: u64) -> Option<u64> {
        match self {
            SizeClasses::Ladder { steps } => {
                if bytes <= MIN_CLASS_BYTES {
                    return Some(MIN_CLASS_BYTES);
                }
                // 2^p < bytes <= 2^(p+1)
                let p = 63 - (bytes - 1).leading_zeros();
                let step = (1u64 << p) / *steps as u64;
                Some(bytes.div_ceil(step) * step)
            }
            SizeClasses::Explicit(list) => list.iter().copied().find(|&c| c >= bytes),
        }
    }
}

/// Parses a byte count: a non-negative integer with an optional suffix `K`, `M`, `G` (or `KiB`,
/// `MiB`, `GiB`; all binary).
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let shift = match suffix.trim() {
        "" => 0,
        "K" | "KiB" | "k" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        _ => {
            return Err(invalid_arg!(
                "'{text}' is not a byte count (e.g. 536870912, 512MiB)"
            ))
        }
    };
    let n: u64 = num
        .parse()
        .map_err(|_| invalid_arg!("'{text}' is not a byte count (e.g. 536870912, 512MiB)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| invalid_arg!("byte count '{text}' overflows"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_rounding_stays_under_the_documented_bound() {
        for steps in [1u32, 2, 4, 8, 16] {
            let c = SizeClasses::ladder(steps).unwrap();
            // every size from 1 byte to 64 KiB, then a sparse sweep up to 4 GiB
            let sizes = (1..=65_536u64).chain((16..32).flat_map(|p| {
                let b = 1u64 << p;
                [b - 4, b, b + 4, b + b / 3, b + b / 2 + 4]
            }));
            for r in sizes {
                let class = c.class_for(r).unwrap();
                assert!(class >= r, "class {class} < request {r}");
                assert_eq!(class % 4, 0);
                if r > MIN_CLASS_BYTES {
                    // waste < r / steps
                    assert!(
                        (class - r) * (steps as u64) < r,
                        "steps {steps}: request {r} -> {class} wastes too much"
                    );
                } else {
                    assert_eq!(class, MIN_CLASS_BYTES);
                }
            }
        }
    }

    #[test]
    fn default_ladder_has_four_classes_per_octave() {
        let c = SizeClasses::default();
        let classes: Vec<u64> = [1024, 1025, 1280, 1281, 1536, 1792, 1793, 2048]
            .iter()
            .map(|&r| c.class_for(r).unwrap())
            .collect();
        assert_eq!(classes, vec![1024, 1280, 1280, 1536, 1536, 1792, 2048, 2048]);
    }

    #[test]
    fn explicit_classes_and_parse() {
        let c = SizeClasses::parse("1024, 4096,16KiB").unwrap();
        assert_eq!(c.class_for(1), Some(1024));
        assert_eq!(c.class_for(4097), Some(16384));
        assert_eq!(c.class_for(16385), None);
        assert_eq!(SizeClasses::parse("8").unwrap(), SizeClasses::Ladder { steps: 8 });
        for bad in ["3", "0", "128", "x", "4096,1024", "1024,1024", "6,1024", ""] {
            assert_eq!(
                SizeClasses::parse(bad).unwrap_err().code(),
                "INVALID_ARGUMENT",
                "{bad}"
            );
        }
    }
}
