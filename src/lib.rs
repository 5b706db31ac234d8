//! affon: a tensor runtime on wgpu (native) and WebGPU (browser) where every byte is accounted for.
//!
//! Where things live: the buffer pool in [`pool`], live/peak accounting in [`accounting`], metric
//! records in [`telemetry`], device acquisition in [`device`], kernels in `kernels` (WGSL in
//! `shaders/`), the public objects in [`session`] and [`tensor`], and the wasm-bindgen layer in
//! `js` (wasm32 only, no logic).
//!
//! ```
//! # #[cfg(target_arch = "wasm32")] fn main() {} // natively only: the browser is async
//! # #[cfg(not(target_arch = "wasm32"))]
//! # fn main() -> affon::Result<()> {
//! use affon::{telemetry, DType, Session, SessionOptions};
//! let session = Session::new(SessionOptions::default())?; // Vulkan/Metal/DX12 (lavapipe in CI)
//! let x = session.tensor(&[1.0f32, 2.0, 3.0], &[3])?;
//! let y = x.square()?;
//! assert_eq!(y.to_vec::<f32>()?, vec![1.0, 4.0, 9.0]);
//! assert_eq!(session.memory().num_bytes, 24); // two float32 [3] tensors, 12 bytes each
//! drop(y); // Drop releases storage, like dispose()
//! assert_eq!(session.memory().num_bytes, 12);
//! let live = telemetry::find(&telemetry::metrics(), "compute.storage", "live_bytes").unwrap();
//! assert!(live >= 12.0); // process-wide: every session
//! let z = session.zeros(&[2, 2], DType::Int32)?;
//! assert_eq!(z.to_vec::<i32>()?, vec![0; 4]);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod accounting;
mod commands;
mod composite;
pub mod device;
pub mod dtype;
mod eager;
pub mod error;
pub mod executable;
mod forgotten;
mod host;
mod kernels;
pub mod onnx;
pub mod ops;
mod platform;
pub mod pool;
pub mod program;
mod random;
mod runtime;
pub mod session;
pub mod shape;
mod staging;
pub mod telemetry;
pub mod tensor;
mod tensor_ops;
pub mod trace;

pub use executable::state;
pub use tensor::scope;

#[cfg(target_arch = "wasm32")]
pub mod js;

pub use device::AdapterIdentity;
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use executable::{Executable, MemoryPlan, MAX_SPECIALISATIONS};
pub use kernels::{MAX_PIPELINES, RING_BYTES};
pub use ops::Op;
pub use pool::{PoolConfig, PoolOptions, SizeClasses};
pub use program::Program;
pub use scope::{KernelProfile, ProfileInfo};
pub use session::{Kernels, MemoryInfo, Session, SessionOptions};
pub use state::ExecutionState;
pub use telemetry::{MetricKind, MetricRecord};
pub use tensor::Tensor;
