// Batched matrix product for large outputs on GPUs, both operands plain row-major with K and N
// multiples of 4 (A and B read as vec4s). Each workgroup of 16×16 threads computes a 128×128 output
// tile; each thread an 8×8 block held in sixteen vec4 registers: rows 4·ty .. +4 and 64 + 4·ty .. +4,
// columns 4·tx .. +4 and 64 + 4·tx .. +4 (the two halves 64 apart, so a 32-lane warp's workgroup-memory
// reads are 16 consecutive vec4s of B, or two vec4s of A each broadcast to 16 lanes). Per k-step a
// thread reads four vec4s for 64 multiply-adds.
// K is taken in tiles of 16; the next tile's operands are loaded into registers (two vec4s of A, two
// of B a thread) while the current one is multiplied, then written to workgroup memory.
// The host prepends `alias T = f32|i32|u32;`, `const TRANS_A/TRANS_B` (both false here), `fn
// batch_offsets` and `fn store(i: u32, v: T)` / `fn store4(i: u32, v: vec4<T>)` (a plain write, or a
// fused epilogue: `kernels/epilogue.rs`).
// params: [M, K, N, batch_rank, group offsets x, y, z, out_batch_dims[r], a_batch_strides[r], b_batch_strides[r]]
// (strides in elements; 0 where a side broadcasts). Workgroups: (ceil(N/128), ceil(M/128), batch).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> b: array<vec4<u32>>;

const BT: u32 = 128u;
const BK: u32 = 16u;
var<workgroup> sa: array<array<vec4<T>, 32>, 16>; // [k][row / 4]
var<workgroup> sb: array<array<vec4<T>, 32>, 16>; // [k][col / 4]

// A's elements k .. k+4 of `row`, zero outside the matrix (K is a multiple of 4: a quad is all in or out)
fn load_a(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> vec4<T> {
    if (row >= m || k >= kk) {
        return vec4<T>();
    }
    return bitcast<vec4<T>>(a[(a_off + row * kk + k) / 4u]);
}

// B's elements col .. col+4 of row k, zero outside the matrix (N is a multiple of 4)
fn load_b(b_off: u32, k: u32, col: u32, n: u32, kk: u32) -> vec4<T> {
    if (k >= kk || col >= n) {
        return vec4<T>();
    }
    return bitcast<vec4<T>>(b[(b_off + k * n + col) / 4u]);
}

fn store_quad(i: u32, row: u32, col: u32, m: u32, n: u32, v: vec4<T>) {
    if (row < m && col < n) {
        store4(i, v);
    }
}

@compute @workgroup_size(16, 16)
fn main(
    @builtin(workgroup_id) wid0: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let m = params[0];
    let kk = params[1];
    let n = params[2];
    // a grid larger than 65535 workgroups per dimension is recorded as several dispatches
    let wid = wid0 + vec3<u32>(params[4], params[5], params[6]);
    let offs = batch_offsets(wid.z);
    let row_base = wid.y * BT;
    let col_base = wid.x * BT;
    // loading roles: A rows ar and ar + 64, k quad aq (four threads read a row's 16 k);
    // B k-rows bk and bk + 8, column quad bq (32 threads read a row's 128 columns)
    let ar = tid / 4u;
    let aq = tid % 4u;
    let bk = tid / 32u;
    let bq = tid % 32u;
    var pa0 = load_a(offs.x, row_base + ar, 4u * aq, m, kk);
    var pa1 = load_a(offs.x, row_base + ar + 64u, 4u * aq, m, kk);
    var pb0 = load_b(offs.y, bk, col_base + 4u * bq, n, kk);
    var pb1 = load_b(offs.y, bk + 8u, col_base + 4u * bq, n, kk);
    var c00 = vec4<T>(); var c01 = vec4<T>();
    var c10 = vec4<T>(); var c11 = vec4<T>();
    var c20 = vec4<T>(); var c21 = vec4<T>();
    var c30 = vec4<T>(); var c31 = vec4<T>();
    var c40 = vec4<T>(); var c41 = vec4<T>();
    var c50 = vec4<T>(); var c51 = vec4<T>();
    var c60 = vec4<T>(); var c61 = vec4<T>();
    var c70 = vec4<T>(); var c71 = vec4<T>();
    let ty = lid.y;
    let tx = lid.x;
    for (var t = 0u; t < kk; t = t + BK) {
        // the registers' tile into workgroup memory, A transposed to [k][row]
        for (var j = 0u; j < 4u; j = j + 1u) {
            sa[4u * aq + j][ar / 4u][ar % 4u] = pa0[j];
            sa[4u * aq + j][ar / 4u + 16u][ar % 4u] = pa1[j];
        }
        sb[bk][bq] = pb0;
        sb[bk + 8u][bq] = pb1;
        workgroupBarrier();
        // the next tile's operands while this one is multiplied
        let next = t + BK;
        pa0 = load_a(offs.x, row_base + ar, next + 4u * aq, m, kk);
        pa1 = load_a(offs.x, row_base + ar + 64u, next + 4u * aq, m, kk);
        pb0 = load_b(offs.y, next + bk, col_base + 4u * bq, n, kk);
        pb1 = load_b(offs.y, next + bk + 8u, col_base + 4u * bq, n, kk);
        for (var k = 0u; k < BK; k = k + 1u) {
            let a0 = sa[k][ty];
            let a1 = sa[k][ty + 16u];
            let b0 = sb[k][tx];
            let b1 = sb[k][tx + 16u];
            c00 = c00 + a0.x * b0; c01 = c01 + a0.x * b1;
            c10 = c10 + a0.y * b0; c11 = c11 + a0.y * b1;
            c20 = c20 + a0.z * b0; c21 = c21 + a0.z * b1;
            c30 = c30 + a0.w * b0; c31 = c31 + a0.w * b1;
            c40 = c40 + a1.x * b0; c41 = c41 + a1.x * b1;
            c50 = c50 + a1.y * b0; c51 = c51 + a1.y * b1;
            c60 = c60 + a1.z * b0; c61 = c61 + a1.z * b1;
            c70 = c70 + a1.w * b0; c71 = c71 + a1.w * b1;
        }
        workgroupBarrier();
    }
    let out_off = wid.z * m * n;
    let r0 = row_base + 4u * ty;
    let r4 = r0 + 64u;
    let col0 = col_base + 4u * tx;
    let col1 = col0 + 64u;
    store_quad(out_off + r0 * n + col0, r0, col0, m, n, c00);
    store_quad(out_off + r0 * n + col1, r0, col1, m, n, c01);
    store_quad(out_off + (r0 + 1u) * n + col0, r0 + 1u, col0, m, n, c10);
    store_quad(out_off + (r0 + 1u) * n + col1, r0 + 1u, col1, m, n, c11);
    store_quad(out_off + (r0 + 2u) * n + col0, r0 + 2u, col0, m, n, c20);
    store_quad(out_off + (r0 + 2u) * n + col1, r0 + 2u, col1, m, n, c21);
    store_quad(out_off + (r0 + 3u) * n + col0, r0 + 3u, col0, m, n, c30);
    store_quad(out_off + (r0 + 3u) * n + col1, r0 + 3u, col1, m, n, c31);
    store_quad(out_off + r4 * n + col0, r4, col0, m, n, c40);
    store_quad(out_off + r4 * n + col1, r4, col1, m, n, c41);
    store_quad(out_off + (r4 + 1u) * n + col0, r4 + 1u, col0, m, n, c50);
    store_quad(out_off + (r4 + 1u) * n + col1, r4 + 1u, col1, m, n, c51);
    store_quad(out_off + (r4 + 2u) * n + col0, r4 + 2u, col0, m, n, c60);
    store_quad(out_off + (r4 + 2u) * n + col1, r4 + 2u, col1, m, n, c61);
    store_quad(out_off + (r4 + 3u) * n + col0, r4 + 3u, col0, m, n, c70);
    store_quad(out_off + (r4 + 3u) * n + col1, r4 + 3u, col1, m, n, c71);
}
