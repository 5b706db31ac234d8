//! Pool configuration: defaults, explicit options and the native environment variables.
//! Explicit options win over the environment; a malformed value is an error, never ignored.

pub use super::size_class::parse_bytes;
use super::size_class::SizeClasses;
use crate::error::{invalid_arg, Result};

/// Default bound on the bytes one session's pool holds (in use + cached): 2 GiB.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 2 << 30;
/// Default size above which requests are exact-size and not cached: 64 MiB.
pub const DEFAULT_OVERSIZE_THRESHOLD_BYTES: u64 = 64 << 20;

/// Default idle time after which a session's cached buffers go back to the device: 10 s.
pub const DEFAULT_IDLE_TRIM_MS: u64 = 10_000;
/// The longest idle time accepted (`setTimeout`'s limit, 2^31 − 1 ms, about 24.8 days).
pub const MAX_IDLE_TRIM_MS: u64 = (1 << 31) - 1;

/// The variables read at session creation, each with the seed's Metal spelling as an alias.
pub const ENV_MAX_TOTAL: [&str; 2] = ["AFFON_POOL_MAX_TOTAL_BYTES", "AFFON_METAL_POOL_MAX_TOTAL_BYTES"];
/// See [`ENV_MAX_TOTAL`].
pub const ENV_OVERSIZE: [&str; 2] = [
    "AFFON_POOL_OVERSIZE_THRESHOLD_BYTES",
    "AFFON_METAL_POOL_OVERSIZE_THRESHOLD_BYTES",
];
/// See [`ENV_MAX_TOTAL`].
pub const ENV_CACHE_LIMIT: [&str; 2] = [
    "AFFON_POOL_CACHE_LIMIT_BYTES",
    "AFFON_METAL_POOL_CACHE_LIMIT_BYTES",
];
/// See [`ENV_MAX_TOTAL`] (milliseconds, a plain integer).
pub const ENV_IDLE_TRIM: [&str; 2] = ["AFFON_POOL_IDLE_TRIM_MS", "AFFON_METAL_POOL_IDLE_TRIM_MS"];
/// See [`ENV_MAX_TOTAL`].
pub const ENV_SIZE_CLASSES: [&str; 2] = ["AFFON_POOL_SIZE_CLASSES", "AFFON_METAL_POOL_SIZE_CLASSES"];

/// Pool options as a user gives them: every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolOptions {
    /// Bound on bytes held (in use + cached).
    pub max_total_bytes: Option<u64>,
    /// Bound on the cached (free) bytes: releasing above it destroys the least recently released
    /// buffers (MLX's cache limit). Unset: only `max_total_bytes` bounds the cache.
    pub cache_limit_bytes: Option<u64>,
    /// Requests strictly above this many bytes are exact-size and released on dispose.
    pub oversize_threshold_bytes: Option<u64>,
    /// Rounding policy.
    pub size_classes: Option<SizeClasses>,
    /// After this many milliseconds without activity the cached buffers go back to the device
    /// (`0`: never; default [`DEFAULT_IDLE_TRIM_MS`]).
    pub idle_trim_ms: Option<u64>,
}

/// The resolved configuration of one pool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolConfig {
    /// Bound on bytes held (in use + cached).
    pub max_total_bytes: u64,
    /// Bound on cached bytes (`None`: the cache is bounded by `max_total_bytes` alone).
    pub cache_limit_bytes: Option<u64>,
    /// Requests strictly above this are exact-size and never cached.
    pub oversize_threshold_bytes: u64,
    /// Rounding policy.
    #[serde(serialize_with = "ser_classes")]
    pub size_classes: SizeClasses,
    /// Idle milliseconds after which the cache is trimmed (`0`: never).
    pub idle_trim_ms: u64,
}

fn ser_classes<S: serde::Serializer>(c: &SizeClasses, s: S) -> Result<S::Ok, S::Error> {
    match c {
        SizeClasses::Ladder { steps } => s.serialize_str(&format!("ladder:{steps}")),
        SizeClasses::Explicit(v) => s.collect_seq(v),
    }
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            cache_limit_bytes: None,
            oversize_threshold_bytes: DEFAULT_OVERSIZE_THRESHOLD_BYTES,
            size_classes: SizeClasses::default(),
            idle_trim_ms: DEFAULT_IDLE_TRIM_MS,
        }
    }
}

fn lookup(env: &dyn Fn(&str) -> Option<String>, names: [&str; 2]) -> Result<Option<(String, String)>> {
    let a = env(names[0]).map(|v| (names[0].to_string(), v));
    let b = env(names[1]).map(|v| (names[1].to_string(), v));
    match (a, b) {
        (Some(a), Some(b)) if a.1.trim() != b.1.trim() => {
            Err(invalid_arg!("{}={} conflicts with {}={}", a.0, a.1, b.0, b.1))
        }
        (Some(a), _) => Ok(Some(a)),
        (None, b) => Ok(b),
    }
}

impl PoolConfig {
    /// Resolves options over environment over defaults, and validates the result.
    /// `env` looks a variable up (`std::env::var` natively; nothing on the web).
    pub fn resolve(opts: &PoolOptions, env: &dyn Fn(&str) -> Option<String>) -> Result<PoolConfig> {
        let mut c = PoolConfig::default();
        let named = |name: String, e: crate::Error| invalid_arg!("{name}: {e}");
        if let Some((n, v)) = lookup(env, ENV_MAX_TOTAL)? {
            c.max_total_bytes = parse_bytes(&v).map_err(|e| named(n, e))?;
        }
        if let Some((n, v)) = lookup(env, ENV_CACHE_LIMIT)? {
            c.cache_limit_bytes = Some(parse_bytes(&v).map_err(|e| named(n, e))?);
        }
        if let Some((n, v)) = lookup(env, ENV_OVERSIZE)? {
            c.oversize_threshold_bytes = parse_bytes(&v).map_err(|e| named(n, e))?;
        }
        if let Some((n, v)) = lookup(env, ENV_SIZE_CLASSES)? {
            c.size_classes = SizeClasses::parse(&v).map_err(|e| named(n, e))?;
        }
        if let Some((n, v)) = lookup(env, ENV_IDLE_TRIM)? {
            c.idle_trim_ms = v
                .trim()
                .parse()
                .ok()
                .filter(|&ms| ms <= MAX_IDLE_TRIM_MS)
                .ok_or_else(|| {
                    invalid_arg!("{n}: '{v}' is not a whole number of milliseconds ≤ {MAX_IDLE_TRIM_MS}")
                })?;
        }
        if let Some(v) = opts.max_total_bytes {
            c.max_total_bytes = v;
        }
        if let Some(v) = opts.cache_limit_bytes {
            c.cache_limit_bytes = Some(v);
        }
        if let Some(v) = opts.oversize_threshold_bytes {
            c.oversize_threshold_bytes = v;
        }
        if let Some(v) = &opts.size_classes {
            c.size_classes = v.clone();
        }
        if let Some(v) = opts.idle_trim_ms {
            c.idle_trim_ms = v;
        }
        if c.idle_trim_ms > MAX_IDLE_TRIM_MS {
            return Err(invalid_arg!(
                "pool.idleTrimMs must be at most {MAX_IDLE_TRIM_MS} (0 never trims), got {}",
                c.idle_trim_ms
            ));
        }
        if c.max_total_bytes < super::size_class::MIN_CLASS_BYTES {
            return Err(invalid_arg!(
                "pool.maxTotalBytes must be at least {} bytes, got {}",
                super::size_class::MIN_CLASS_BYTES,
                c.max_total_bytes
            ));
        }
        if c.oversize_threshold_bytes == 0 {
            return Err(invalid_arg!("pool.oversizeThresholdBytes must be positive"));
        }
        Ok(c)
    }

    /// Resolves against the process environment (native) or no environment (web).
    pub fn from_options(opts: &PoolOptions) -> Result<PoolConfig> {
        #[cfg(native)]
        // a value that is not UTF-8 is read lossily, so it fails to parse (naming the variable)
        // instead of reading as unset
        let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
        #[cfg(web)]
        let env = |_: &str| None;
        PoolConfig::resolve(opts, &env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_cache_limit_comes_from_options_or_the_environment() {
        let env = env_of(&[("AFFON_POOL_CACHE_LIMIT_BYTES", "8MiB")]);
        let c = PoolConfig::resolve(&PoolOptions::default(), &env).unwrap();
        assert_eq!(c.cache_limit_bytes, Some(8 << 20));
        let o = PoolOptions {
            cache_limit_bytes: Some(4096),
            ..Default::default()
        };
        assert_eq!(
            PoolConfig::resolve(&o, &env).unwrap().cache_limit_bytes,
            Some(4096)
        );
        assert_eq!(PoolConfig::default().cache_limit_bytes, None);
        let bad = env_of(&[("AFFON_POOL_CACHE_LIMIT_BYTES", "lots")]);
        let e = PoolConfig::resolve(&PoolOptions::default(), &bad).unwrap_err();
        assert!(e.to_string().contains("AFFON_POOL_CACHE_LIMIT_BYTES"), "{e}");
        let both = env_of(&[
            ("AFFON_POOL_CACHE_LIMIT_BYTES", "1M"),
            ("AFFON_METAL_POOL_CACHE_LIMIT_BYTES", "2M"),
        ]);
        assert_eq!(
            PoolConfig::resolve(&PoolOptions::default(), &both)
                .unwrap_err()
                .code(),
            "INVALID_ARGUMENT"
        );
    }

    #[test]
    fn options_win_over_environment_over_defaults() {
        let env = env_of(&[
            ("AFFON_POOL_MAX_TOTAL_BYTES", "64MiB"),
            ("AFFON_METAL_POOL_SIZE_CLASSES", "8"),
        ]);
        let c = PoolConfig::resolve(&PoolOptions::default(), &env).unwrap();
        assert_eq!(c.max_total_bytes, 64 << 20);
        assert_eq!(c.size_classes, SizeClasses::Ladder { steps: 8 });
        assert_eq!(c.oversize_threshold_bytes, DEFAULT_OVERSIZE_THRESHOLD_BYTES);
        let o = PoolOptions {
            max_total_bytes: Some(4096),
            ..Default::default()
        };
        assert_eq!(PoolConfig::resolve(&o, &env).unwrap().max_total_bytes, 4096);
    }

    #[test]
    fn the_idle_trim_comes_from_options_or_the_environment() {
        assert_eq!(PoolConfig::default().idle_trim_ms, 10_000);
        let env = env_of(&[("AFFON_METAL_POOL_IDLE_TRIM_MS", "0")]);
        assert_eq!(
            PoolConfig::resolve(&PoolOptions::default(), &env)
                .unwrap()
                .idle_trim_ms,
            0
        );
        let o = PoolOptions {
            idle_trim_ms: Some(250),
            ..Default::default()
        };
        assert_eq!(PoolConfig::resolve(&o, &env).unwrap().idle_trim_ms, 250);
    }

    #[test]
    fn malformed_values_are_errors() {
        for env in [
            env_of(&[("AFFON_POOL_MAX_TOTAL_BYTES", "lots")]),
            env_of(&[("AFFON_POOL_MAX_TOTAL_BYTES", "-5")]),
            env_of(&[("AFFON_POOL_OVERSIZE_THRESHOLD_BYTES", "0")]),
            env_of(&[("AFFON_METAL_POOL_SIZE_CLASSES", "3")]),
            env_of(&[
                ("AFFON_POOL_MAX_TOTAL_BYTES", "1M"),
                ("AFFON_METAL_POOL_MAX_TOTAL_BYTES", "2M"),
            ]),
            env_of(&[("AFFON_POOL_MAX_TOTAL_BYTES", "99999999999999999999")]),
        ] {
            let e = PoolConfig::resolve(&PoolOptions::default(), &env).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT");
        }
        for env in [
            env_of(&[("AFFON_POOL_IDLE_TRIM_MS", "soon")]),
            env_of(&[("AFFON_POOL_IDLE_TRIM_MS", "2147483648")]),
        ] {
            let e = PoolConfig::resolve(&PoolOptions::default(), &env).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT");
            assert!(e.to_string().contains("AFFON_POOL_IDLE_TRIM_MS"), "{e}");
        }
        assert_eq!(parse_bytes("2G").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("12").unwrap(), 12);
    }
}
