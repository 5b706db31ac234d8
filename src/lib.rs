//! affon: a tensor runtime on wgpu (native) and WebGPU (browser) where every byte is accounted for.
//!
//! Where things live: the buffer pool in [`pool`], live/peak accounting in [`accounting`], metric
//! records in [`telemetry`], device acquisition in [`device`], kernels in `kernels` (WGSL in
//! `shaders/`), the public objects in [`session`] and [`tensor`], and the wasm-bindgen layer in
//! `js` (wasm32 only, no logic).

pub mod accounting;
pub mod device;
pub mod dtype;
pub mod error;
pub mod executable;
mod kernels;
pub mod ops;
mod platform;
pub mod pool;
pub mod program;
mod random;
pub mod scope;
pub mod session;
pub mod shape;
pub mod state;
pub mod telemetry;
pub mod tensor;
mod tensor_ops;

#[cfg(target_arch = "wasm32")]
pub mod js;

pub use device::AdapterIdentity;
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use executable::{Executable, MemoryPlan};
pub use ops::Op;
pub use pool::{PoolConfig, PoolOptions, SizeClasses};
pub use program::Program;
pub use scope::{KernelProfile, ProfileInfo};
pub use session::{MemoryInfo, Session, SessionOptions};
pub use state::ExecutionState;
pub use telemetry::{MetricKind, MetricRecord};
pub use tensor::Tensor;
