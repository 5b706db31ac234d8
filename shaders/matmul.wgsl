// Batched, tiled matrix product: out[b] = a[b] (M×K) · b[b] (K×N). Each workgroup of 16×8 threads
// computes a 64×64 output tile; each thread an 8×4 block held in registers (eight vec4 rows), so
// each k-step costs 12 workgroup-memory loads for 32 multiply-adds.
// The host prepends `alias T = f32|i32|u32;`, `const TRANS_A: bool` and `TRANS_B` (an operand stored
// with its last two axes swapped: A as K×M, B as N×K, read in place) and `fn store(i: u32, v: T)` (a plain write, or a fused
// epilogue: `kernels/fused.rs`).
// params: [M, K, N, batch_rank, group offsets x, y, z, out_batch_dims[r], a_batch_strides[r], b_batch_strides[r],
// k0, k1] (strides in elements; 0 where a side broadcasts; K from k0 to k1 in this pass, k0 a multiple of
// 16: `k_range`, `put`). Workgroups: (ceil(N/64), ceil(M/64), batch).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;
@group(0) @binding(3) var<storage, read> b: array<u32>;

const TILE: u32 = 64u;
const TK: u32 = 16u;
var<workgroup> ta: array<array<vec4<T>, 16>, 16>; // [k][row / 4]: two vec4 loads per k-step
var<workgroup> tb: array<array<vec4<T>, 16>, 16>; // [k][col / 4]: one vec4 load per k-step

@compute @workgroup_size(16, 8)
fn main(@builtin(workgroup_id) wid0: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let m = params[0];
    let kk = params[1];
    let n = params[2];
    // a grid larger than 65535 workgroups per dimension is recorded as several dispatches
    let wid = wid0 + vec3<u32>(params[4], params[5], params[6]);
    let offs = batch_offsets(wid.z);
    let a_off = offs.x;
    let b_off = offs.y;
    let tid = lid.y * 16u + lid.x; // 0..128
    let row_base = wid.y * TILE;
    let col_base = wid.x * TILE;
    // eight rows of four outputs in vector registers (no dynamically indexed private arrays:
    // GPU compilers may spill those to memory)
    var acc0 = vec4<T>();
    var acc1 = vec4<T>();
    var acc2 = vec4<T>();
    var acc3 = vec4<T>();
    var acc4 = vec4<T>();
    var acc5 = vec4<T>();
    var acc6 = vec4<T>();
    var acc7 = vec4<T>();
    let r0 = lid.y * 8u;
    let c0 = lid.x * 4u;
    let kr = k_range();
    for (var t = kr.x; t < kr.y; t = t + TK) {
        for (var j = 0u; j < 8u; j = j + 1u) {
            let e = tid + 128u * j;
            // A tile: 64 rows × 16 k
            let r = e / TK;
            let c = e % TK;
            let gr = row_base + r;
            let gk = t + c;
            if (gr < m && gk < kk) {
                ta[c][r / 4u][r % 4u] = bitcast<T>(a[a_off + select(gr * kk + gk, gk * m + gr, TRANS_A)]);
            } else {
                ta[c][r / 4u][r % 4u] = T(0);
            }
            // B tile: 16 k × 64 cols
            let kr = e / TILE;
            let cc = e % TILE;
            let bk = t + kr;
            let gc = col_base + cc;
            if (bk < kk && gc < n) {
                tb[kr][cc / 4u][cc % 4u] = bitcast<T>(b[b_off + select(bk * n + gc, gc * kk + bk, TRANS_B)]);
            } else {
                tb[kr][cc / 4u][cc % 4u] = T(0);
            }
        }
        workgroupBarrier();
        for (var k = 0u; k < TK; k = k + 1u) {
            let bv = tb[k][lid.x];
            let a0 = ta[k][2u * lid.y];
            let a1 = ta[k][2u * lid.y + 1u];
            acc0 = acc0 + a0.x * bv;
            acc1 = acc1 + a0.y * bv;
            acc2 = acc2 + a0.z * bv;
            acc3 = acc3 + a0.w * bv;
            acc4 = acc4 + a1.x * bv;
            acc5 = acc5 + a1.y * bv;
            acc6 = acc6 + a1.z * bv;
            acc7 = acc7 + a1.w * bv;
        }
        workgroupBarrier();
    }
    let out_off = wid.z * m * n;
    let row = row_base + r0;
    let col = col_base + c0;
    write_row(out_off, row, col, m, n, acc0);
    write_row(out_off, row + 1u, col, m, n, acc1);
    write_row(out_off, row + 2u, col, m, n, acc2);
    write_row(out_off, row + 3u, col, m, n, acc3);
    write_row(out_off, row + 4u, col, m, n, acc4);
    write_row(out_off, row + 5u, col, m, n, acc5);
    write_row(out_off, row + 6u, col, m, n, acc6);
    write_row(out_off, row + 7u, col, m, n, acc7);
}

fn write_row(out_base: u32, r: u32, c: u32, m: u32, n: u32, v: vec4<T>) {
    if (r >= m) {
        return;
    }
    let base = out_base + r * n + c;
    if (c < n) { put(base, v.x); }
    if (c + 1u < n) { put(base + 1u, v.y); }
    if (c + 2u < n) { put(base + 2u, v.z); }
    if (c + 3u < n) { put(base + 3u, v.w); }
}
