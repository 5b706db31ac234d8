// Batched matrix product for small outputs: one output per thread, 16×16 tiles in workgroup memory.
// More workgroups than `matmul.wgsl` for the same output, so small products keep the device busy.
// The host prepends `alias T = f32|i32|u32;` and `fn store(i: u32, v: T)` (a plain write, or a fused
// epilogue: `kernels/fused.rs`).
// params: [M, K, N, batch_rank, group offsets x, y, z, out_batch_dims[r], a_batch_strides[r], b_batch_strides[r],
// k0, k1] (as `matmul.wgsl`). Workgroups: (ceil(N/16), ceil(M/16), batch).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;
@group(0) @binding(3) var<storage, read> b: array<u32>;

const TILE: u32 = 16u;
var<workgroup> ta: array<array<T, 16>, 16>;
var<workgroup> tb: array<array<T, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid0: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let m = params[0];
    let kk = params[1];
    let n = params[2];
    // a grid larger than 65535 workgroups per dimension is recorded as several dispatches
    let wid = wid0 + vec3<u32>(params[4], params[5], params[6]);
    let offs = batch_offsets(wid.z);
    let a_off = offs.x;
    let b_off = offs.y;
    let row = wid.y * TILE + lid.y;
    let col = wid.x * TILE + lid.x;
    var acc = T(0);
    let kr = k_range();
    let tiles = (kr.y + TILE - 1u) / TILE;
    for (var t = kr.x / TILE; t < tiles; t = t + 1u) {
        let ak = t * TILE + lid.x;
        let bk = t * TILE + lid.y;
        if (row < m && ak < kk) {
            ta[lid.y][lid.x] = bitcast<T>(a[a_off + select(row * kk + ak, ak * m + row, TRANS_A)]);
        } else {
            ta[lid.y][lid.x] = T(0);
        }
        if (bk < kk && col < n) {
            tb[lid.y][lid.x] = bitcast<T>(b[b_off + select(bk * n + col, col * kk + bk, TRANS_B)]);
        } else {
            tb[lid.y][lid.x] = T(0);
        }
        workgroupBarrier();
        for (var k = 0u; k < TILE; k = k + 1u) {
            acc = acc + ta[lid.y][k] * tb[k][lid.x];
        }
        workgroupBarrier();
    }
    if (row < m && col < n) {
        put(wid.z * m * n + row * n + col, acc);
    }
}
