//! The CPU matmul's texture form: on a CPU adapter a large product of plain operands (both read as
//! vec4s) reads A and B from `rgba32uint` textures with `textureLoad` instead of from storage
//! buffers, and the same call first fills the textures from the operands' buffers
//! (`shaders/operand_texture.wgsl`, one dispatch each, words copied bit for bit). On SwiftShader a
//! storage-buffer vec4 load is four per-lane gathers behind robustness checks, a texel load one
//! 16-byte fetch a lane (docs/performance.md, "Operand textures" gives the measurements).
//!
//! The textures are a session's cache (inside `KernelCache`, counted through `cache.rs`'s `Settled`): one per operand
//! slot and size, the last [`MAX_TEXTURES`] kept, rewritten by each product that uses them (the
//! commands of one batch run in order, so a later product's fill waits for the earlier product's
//! reads). They are device memory outside the pool: counted in `compute.memory/texture_bytes` and
//! `textures` when the call that made them succeeds (as parameter buffers are), released by
//! `clear_cache()`, `dispose()` or a device loss, and not held to the pool's bound.

use crate::commands::{Commands, Effect};

use super::{grid, Ctx, Operand};

const FILL: &str = include_str!("../../shaders/operand_texture.wgsl");
/// Invocations in a fill's workgroup (`operand_texture.wgsl`).
const FILL_INVOCATIONS: u64 = 64;

/// `fn load_a4` of `matmul_cpu.wgsl` in the texture form: texel (k / 4, row) of A's texture.
pub(crate) const LOAD_A4_TEX: &str = "@group(0) @binding(2) var a: texture_2d<u32>;
fn load_a4(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> vec4<T> {
    if (!FULL_M && row >= m) { return vec4<T>(); }
    return bitcast<vec4<T>>(textureLoad(a, vec2<u32>(k / 4u, row), 0));
}
";
/// `fn load_b4` in the texture form: texel (col / 4, k) of B's texture.
pub(crate) const LOAD_B4_TEX: &str = "@group(0) @binding(3) var b: texture_2d<u32>;
fn load_b4(b_off: u32, k: u32, col: u32, n: u32, kk: u32) -> vec4<T> {
    if ((!FULL_N && col >= n) || (!FULL_K && k >= kk)) { return vec4<T>(); }
    return bitcast<vec4<T>>(textureLoad(b, vec2<u32>(col / 4u, k), 0));
}
";

/// Multiply-adds from which a product takes the texture form: below it the two fills (a
/// dispatch each, ~0.05–0.25 ms on SwiftShader) cost about what the texel loads save.
pub(crate) const MIN_MACS: u64 = 1 << 20;

/// Operand textures a session keeps: the A and B of two product shapes.
pub(crate) const MAX_TEXTURES: usize = 4;

/// The most bytes one operand texture holds: the form doubles an operand's memory outside the
/// pool, so a larger operand (past a 2048² float32 matrix) reads its buffer.
pub(crate) const MAX_TEXTURE_BYTES: u64 = 16 << 20;

/// `Ctx::texture_cap` of a session: with the form on, [`MAX_TEXTURE_BYTES`] or an eighth of the
/// pool's bound if less (the [`MAX_TEXTURES`] kept then hold at most half of it); 0 with it off.
pub(crate) fn texture_cap(on: bool, pool_bound: u64) -> u64 {
    if on {
        MAX_TEXTURE_BYTES.min(pool_bound / 8)
    } else {
        0
    }
}

/// Bytes of an `rgba32uint` texel.
const TEXEL: u64 = 16;

/// Whether an M×K·K×N product (`batch` matrices; both operands plain and read as vec4s, on a CPU
/// adapter) takes the texture form: on SwiftShader, one matrix, at least [`MIN_MACS`]
/// multiply-adds, both textures (A: K/4 × M texels, B: N/4 × K; an operand's own bytes) within
/// `Ctx::texture_cap` and the device's 2D texture size.
pub(crate) fn takes(ctx: &Ctx, (m, k, n): (usize, usize, usize), batch: usize) -> bool {
    let (m64, k64, n64) = (m as u64, k as u64, n as u64);
    if batch > 1 || m64 * k64 * n64 < MIN_MACS || 4 * m64.max(n64) * k64 > ctx.texture_cap {
        return false;
    }
    let max = ctx.device.limits().max_texture_dimension_2d as usize;
    m.max(k) <= max && (k / 4).max(n / 4) <= max
}

/// Records the fills of A's and B's textures from their buffers, but for a texture that already
/// holds its operand's words (filled from the same buffer by a committed call or earlier in this
/// one, the buffer not written since: [`holds_after`]); returns the two views, for bindings 2 and
/// 3 of the product.
pub(crate) fn fill(
    ctx: &Ctx,
    enc: &mut Commands,
    (a, b): (Operand, Operand),
    (m, k, n): (usize, usize, usize),
) -> [wgpu::TextureView; 2] {
    let p = ctx
        .cache
        .pipeline(ctx.device, "operand_texture", "", || FILL.to_string());
    [(0u8, a, (k / 4, m)), (1, b, (n / 4, k))].map(|(slot, x, (w, h))| {
        let key = (slot, w as u32, h as u32);
        let (view, held) = ctx.cache.operand_texture(ctx.device, key);
        if holds_after(held, &view, enc.effects()).as_ref() == Some(x.buffer) {
            return view;
        }
        let groups = grid(((w * h) as u64).div_ceil(FILL_INVOCATIONS));
        let params = [w as u32, h as u32, groups.0 * FILL_INVOCATIONS as u32];
        let ring = ctx.cache.ring(ctx.device);
        let buffers = [
            (&ring, super::params_bytes(&params)),
            (x.buffer, x.len().max(1) * 4),
        ];
        let bind = ctx.cache.bind_group(ctx.device, &p, &[(0, &view)], &buffers);
        enc.dispatch(&p, bind, (&ring, &params), groups);
        enc.filled(&view, x.buffer);
        view
    })
}

/// The buffer whose words `texture` holds after `effects`, given that it held `held`'s before
/// them: its last fill's, unless a command after that fill may have written the buffer (a buffer
/// is touched when anything may write it: the pool handing it to a new tensor is followed by its
/// producer's write). Fills are of texture objects, not keys: a texture evicted and made again
/// under the same key within a call starts empty.
pub(crate) fn holds_after<B: PartialEq + Clone, T: PartialEq>(
    held: Option<B>,
    texture: &T,
    effects: &[Effect<B, T>],
) -> Option<B> {
    effects.iter().fold(held, |held, e| match e {
        Effect::Fill(t, b) if t == texture => Some(b.clone()),
        Effect::Touch(b) if held.as_ref() == Some(b) => None,
        _ => held,
    })
}

/// Key of an operand texture in the kernel cache: slot (0: A, 1: B), width, height.
pub(crate) type Key = (u8, u32, u32);

/// A new `rgba32uint` texture of `width` × `height` texels (its view, which holds it), and its
/// bytes.
pub(crate) fn texture(device: &wgpu::Device, (w, h): (u32, u32)) -> (wgpu::TextureView, u64) {
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("affon operand"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba32Uint,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::STORAGE_BINDING,
        view_formats: &[],
    });
    (
        texture.create_view(&Default::default()),
        w as u64 * h as u64 * TEXEL,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 MiB a texture, or an eighth of the pool's bound if less; nothing with the form off.
    #[test]
    fn texture_cap_follows_the_pool_bound() {
        assert_eq!(texture_cap(true, 1 << 30), 16 << 20);
        assert_eq!(texture_cap(true, 1 << 20), 128 << 10);
        assert_eq!(texture_cap(false, 1 << 30), 0);
    }

    /// A texture holds the buffer it was last filled from, until anything may write that buffer;
    /// fills of other textures and writes of other buffers leave it.
    #[test]
    fn a_texture_holds_its_last_fill_until_the_buffer_is_touched() {
        use Effect::{Fill, Touch};
        // textures 1 and 2; 3 is texture 1's key made again after an eviction (another object)
        let (a, b, again) = (1u8, 2u8, 3u8);
        assert_eq!(holds_after::<u8, u8>(None, &a, &[]), None, "nothing known");
        assert_eq!(holds_after(Some(7), &a, &[]), Some(7), "no command: unchanged");
        assert_eq!(holds_after(None, &a, &[Fill(a, 7)]), Some(7), "filled");
        assert_eq!(holds_after(Some(7), &a, &[Touch(7)]), None, "its buffer written");
        assert_eq!(
            holds_after(Some(7), &a, &[Touch(8), Fill(b, 9), Touch(9)]),
            Some(7),
            "other buffers written, another texture filled"
        );
        assert_eq!(
            holds_after(None, &a, &[Fill(a, 7), Touch(7)]),
            None,
            "written after its fill"
        );
        assert_eq!(
            holds_after(Some(7), &a, &[Touch(7), Fill(a, 7)]),
            Some(7),
            "refilled after the write"
        );
        assert_eq!(
            holds_after(Some(7), &a, &[Fill(a, 8)]),
            Some(8),
            "refilled from another buffer"
        );
        assert_eq!(
            holds_after(Some(7), &a, &[Fill(a, 8), Touch(7)]),
            Some(8),
            "the buffer it held before is written: not its words any more"
        );
        assert_eq!(
            holds_after(None, &again, &[Fill(a, 7)]),
            None,
            "made again under the key after the fill: empty"
        );
    }
}
