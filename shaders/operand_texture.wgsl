// Fills an operand texture of the CPU matmul's texture form (kernels/operand_tex.rs): texel (x, y)
// of a W × H `rgba32uint` texture is vec4 y·W + x of a row-major matrix whose rows are W vec4s (A:
// M rows of K/4, B: K rows of N/4), its words copied bit for bit (any element type).
// params: [W, H, invocations per grid row]. Workgroups: `grid` of ceil(W·H / 64).
@group(0) @binding(0) var dst: texture_storage_2d<rgba32uint, write>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<vec4<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = params[0];
    let i = gid.y * params[2] + gid.x;
    if (i >= w * params[1]) {
        return;
    }
    textureStore(dst, vec2<u32>(i % w, i / w), src[i]);
}
