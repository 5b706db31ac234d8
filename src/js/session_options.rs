//! What `Session` methods take as options, parsed and checked: `Session.create`'s (the pool's
//! limits, size classes, idle trim; label, stacks, release on collect) and the random ops'
//! (`{mean, stddev, seed}`, `{min, max, seed}`). Unknown keys are refused by name.

use wasm_bindgen::prelude::*;

use super::args::{self, describe};
use super::{to_js, JsResult};
use crate::error::invalid_arg;
use crate::pool::{PoolOptions, SizeClasses};
use crate::session::SessionOptions;

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OptionsArg {
    pool: Option<PoolArg>,
    label: Option<String>,
    capture_stacks: Option<bool>,
    release_on_collect: Option<bool>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PoolArg {
    max_total_bytes: Option<f64>,
    cache_limit_bytes: Option<f64>,
    oversize_threshold_bytes: Option<f64>,
    size_classes: Option<ClassesArg>,
    idle_trim_ms: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ClassesArg {
    Steps(f64),
    List(Vec<f64>),
}

fn byte_option(name: &str, v: Option<f64>) -> crate::Result<Option<u64>> {
    v.map(|b| crate::host::count_from_f64(&format!("pool.{name} (a number of bytes)"), b))
        .transpose()
}

pub(super) fn parse_options(options: JsValue) -> crate::Result<SessionOptions> {
    // unknown keys first (Object.keys runs no getter); then each known option read once, by name, in
    // one catching pass (a getter or Proxy trap runs there and nowhere after) into plain data that
    // serde-wasm-bindgen parses
    const TOP: [&str; 4] = ["pool", "label", "captureStacks", "releaseOnCollect"];
    const POOL: [&str; 5] = [
        "maxTotalBytes",
        "cacheLimitBytes",
        "oversizeThresholdBytes",
        "sizeClasses",
        "idleTrimMs",
    ];
    if !crate::js::safe::options_given("Session.create options", &options, &TOP)? {
        return Ok(SessionOptions::default());
    }
    let (options, pool_keys) =
        crate::js::safe::pick("Session.create options", &options, &TOP, "pool", &POOL)?;
    if let Some(k) = pool_keys.iter().find(|k| !POOL.contains(&k.as_str())) {
        return Err(invalid_arg!(
            "options.pool: unknown option '{k}' (expected one of {POOL:?})"
        ));
    }
    let o: OptionsArg =
        serde_wasm_bindgen::from_value(options).map_err(|e| invalid_arg!("Session.create options: {e}"))?;
    let p = o.pool.unwrap_or_default();
    let size_classes = match p.size_classes {
        None => None,
        // a whole number converts; which ones are steps is the core's (`SizeClasses::ladder`)
        Some(ClassesArg::Steps(s)) => {
            let s = crate::host::count_from_f64("pool.sizeClasses (a number of steps)", s)?;
            Some(SizeClasses::ladder(u32::try_from(s).unwrap_or(u32::MAX))?)
        }
        Some(ClassesArg::List(l)) => Some(SizeClasses::explicit(
            l.into_iter()
                .map(|b| byte_option("sizeClasses[]", Some(b)).map(|b| b.unwrap_or(0)))
                .collect::<crate::Result<_>>()?,
        )?),
    };
    Ok(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: byte_option("maxTotalBytes", p.max_total_bytes)?,
            cache_limit_bytes: byte_option("cacheLimitBytes", p.cache_limit_bytes)?,
            oversize_threshold_bytes: byte_option("oversizeThresholdBytes", p.oversize_threshold_bytes)?,
            size_classes,
            idle_trim_ms: p
                .idle_trim_ms
                .map(|ms| crate::host::count_from_f64("pool.idleTrimMs (milliseconds)", ms))
                .transpose()?,
        },
        label: o.label,
        capture_stacks: o.capture_stacks.unwrap_or(false),
        release_on_collect: o.release_on_collect.unwrap_or(false),
        kernels: crate::Kernels::ForAdapter,
        workgroup_limit: None,
    })
}

pub(super) struct RandomArg(Vec<(String, JsValue)>);

impl RandomArg {
    pub(super) fn parse(options: &JsValue, allowed: &[&str]) -> JsResult<RandomArg> {
        let e = args::entries("random options", options)?;
        if let Some((k, _)) = e.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return Err(to_js(invalid_arg!("unknown option '{k}' (expected {allowed:?})")));
        }
        Ok(RandomArg(e))
    }

    /// The number option `k`, `None` when absent (its default is the core's).
    pub(super) fn get(&self, k: &str) -> JsResult<Option<f64>> {
        match self.0.iter().find(|(n, _)| n == k) {
            None => Ok(None),
            Some((_, v)) => args::number(&format!("option '{k}'"), v).map(Some),
        }
    }

    /// The seed, `None` when absent (the core picks one).
    pub(super) fn seed(&self) -> JsResult<Option<u64>> {
        match self.0.iter().find(|(n, _)| n == "seed") {
            None => Ok(None),
            Some((_, v)) => {
                let x = v.as_f64().ok_or_else(|| {
                    to_js(invalid_arg!(
                        "seed must be a non-negative integer, got {}",
                        describe(v)
                    ))
                })?;
                crate::host::count_from_f64("seed", x).map(Some).map_err(to_js)
            }
        }
    }
}
