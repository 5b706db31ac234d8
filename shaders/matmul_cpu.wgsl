// Batched matrix product without workgroup memory, for CPU adapters (SwiftShader, lavapipe), where
// a barrier suspends and resumes every invocation and costs more than the loads it shares. Each
// invocation keeps a 4×8 output block in eight vec4 registers and reads its operands directly,
// four k-steps at a time: four rows of A as vec4s over k and eight elements of B per k-step (two
// vec4 loads when B is plain row-major with N a multiple of 4) for 128 multiply-adds. 64
// invocations cover a 32-row × 64-column tile (invocation `t`: rows 4·(t / 8), columns 8·(t % 8),
// so neighbouring SIMD lanes share A). The host prepends `alias T`, `const TRANS_A: bool`,
// `fn load_a4(a_off, row, k, m, kk) -> vec4<T>` (A's elements `k .. k+4` of `row`),
// `fn load_b4(b_off, k, col, n, kk) -> vec4<T>` (B's elements `col .. col+4` of row `k`), both zero
// outside the matrix (see `kernels/matmul.rs`), and `fn store(i: u32, v: T)` (a plain write, or a
// fused epilogue: `kernels/fused.rs`); the host writes the loop body's four k-steps (`STEPS` below).
// params: [M, K, N, batch_rank, group offsets x, y, z, out_batch_dims[r], a_batch_strides[r], b_batch_strides[r]]
// (strides in elements; 0 where a side broadcasts). Workgroups: (ceil(N/64), ceil(M/32), batch).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid0: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let m = params[0];
    let kk = params[1];
    let n = params[2];
    // a grid larger than 65535 workgroups per dimension is recorded as several dispatches
    let wid = wid0 + vec3<u32>(params[4], params[5], params[6]);
    let offs = batch_offsets(wid.z);
    let a_off = offs.x;
    let b_off = offs.y;
    let row = wid.y * 32u + (lid / 8u) * 4u;
    let col = wid.x * 64u + (lid % 8u) * 8u;
    if (row >= m || col >= n) {
        return;
    }
    var c00 = vec4<T>();
    var c01 = vec4<T>();
    var c10 = vec4<T>();
    var c11 = vec4<T>();
    var c20 = vec4<T>();
    var c21 = vec4<T>();
    var c30 = vec4<T>();
    var c31 = vec4<T>();
    for (var k = 0u; k < kk; k = k + 4u) {
        let a0 = load_a4(a_off, row, k, m, kk);
        let a1 = load_a4(a_off, row + 1u, k, m, kk);
        let a2 = load_a4(a_off, row + 2u, k, m, kk);
        let a3 = load_a4(a_off, row + 3u, k, m, kk);
//{{STEPS}}
    }
    let base = wid.z * m * n;
    write(base, row, col, m, n, c00, c01);
    write(base, row + 1u, col, m, n, c10, c11);
    write(base, row + 2u, col, m, n, c20, c21);
    write(base, row + 3u, col, m, n, c30, c31);
}

fn write(base: u32, r: u32, c: u32, m: u32, n: u32, v0: vec4<T>, v1: vec4<T>) {
    if (!FULL_M && r >= m) {
        return;
    }
    let at = base + r * n + c;
    if (FULL_N) {
        // the block's eight columns are inside the matrix (and `at` a multiple of 4): no test per
        // element, four elements a store
        store4(at, v0);
        store4(at + 4u, v1);
        return;
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        if (c + j < n) {
            store(at + j, v0[j]);
        }
        if (c + 4u + j < n) {
            store(at + 4u + j, v1[j]);
        }
    }
}
