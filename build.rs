//! Records the git revision for memory reports (`telemetry.report()`): `AFFON_REVISION`; and gives
//! the two targets short cfg names (as wgpu does): `web` (wasm32: WebGPU in a browser) and `native`.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(web, native)");
    let web = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    println!("cargo:rustc-cfg={}", if web { "web" } else { "native" });
    let rev = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let dirty = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    println!(
        "cargo:rustc-env=AFFON_REVISION={rev}{}",
        if dirty { "-dirty" } else { "" }
    );
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}
