// Batched matrix product without workgroup memory, for CPU adapters (SwiftShader, lavapipe), where
// a barrier suspends and resumes every invocation and costs more than the loads it shares. Each
// invocation keeps an R×C output block (R = BLOCK_ROWS, C = BLOCK_COLS, a multiple of 8) in vec4
// registers `c{r}_{v}` and reads its operands directly, four k-steps at a time: R rows of A as
// vec4s over k (`a{r}`) and C elements of B per k-step, for 4·R·C multiply-adds. On these adapters
// every load is a per-lane gather, so a larger block does fewer loads per multiply-add (R·C/(R+C)
// of them; the spilled accumulators are plain vector moves). The 64 invocations are COL_BLOCKS
// columns of blocks (8, or fewer for a product with fewer columns) by ROW_BLOCKS = 64 / COL_BLOCKS
// rows: invocation `t` covers rows R·(t / COL_BLOCKS), columns C·(t % COL_BLOCKS), so neighbouring
// SIMD lanes share A. The host picks R×C (8×16 when both operands are read as vec4s, else 4×8: the
// guarded element-by-element loads of a larger block crashed SwiftShader's compiler), prepends
// `alias T`, `const TRANS_A: bool`, the block constants, `fn load_a4(a_off, row, k, m, kk) -> vec4<T>`
// (A's elements `k .. k+4` of `row`), `fn load_b4(b_off, k, col, n, kk) -> vec4<T>` (B's elements
// `col .. col+4` of row `k`), both zero outside the matrix (see `kernels/matmul.rs`), and
// `fn store(i: u32, v: T)` / `fn store4` / `channels` and `store4c` (a plain write, or a fused
// epilogue: `kernels/epilogue.rs`),
// and writes the block's place (`PLACE`), the accumulators (`DECLS`), the A loads (`LOADS`), the
// loop body's four k-steps (`STEPS`) and the stores (`WRITES`).
// With subgroups of LANES (4 or 8) invocations, the host writes the shared form instead: the lanes of
// a subgroup take the same C columns and R rows each (`lane · R` apart), every lane reads a share of
// the subgroup's B elements for the four k-steps and takes the rest from the other lanes
// (`subgroupBroadcast`, a register move on these adapters): 16/LANES B loads a lane per four k-steps
// instead of 16. No invocation returns early (a broadcast needs every lane): a block outside the
// matrix reads clamped values and writes nothing; subgroup `g` takes column block g % COL_BLOCKS.
// In the browser `enable subgroups;` comes first.
// params: [M, K, N, batch_rank, group offsets x, y, z, out_batch_dims[r], a_batch_strides[r], b_batch_strides[r]]
// (strides in elements; 0 where a side broadcasts). Workgroups: (ceil(N/(COL_BLOCKS·C)), ceil(M/(ROW_BLOCKS·R)), batch).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid0: vec3<u32>, @builtin(local_invocation_index) lid: u32/*{{LANE}}*/) {
    let m = params[0];
    let kk = params[1];
    let n = params[2];
    // a grid larger than 65535 workgroups per dimension is recorded as several dispatches
    let wid = wid0 + vec3<u32>(params[4], params[5], params[6]);
    let offs = batch_offsets(wid.z);
    let a_off = offs.x;
    let b_off = offs.y;
//{{PLACE}}
//{{DECLS}}
    for (var k = 0u; k < kk; k = k + 4u) {
//{{LOADS}}
//{{STEPS}}
    }
    let base = wid.z * m * n;
//{{WRITES}}
}

// Eight columns of row `r` from column `c`: `v0` then `v1`; `q0`, `q1` are the epilogue's
// per-channel leaves of those columns (`channels(c)`, `channels(c + 4)`), read once for the block's rows.
fn write(base: u32, r: u32, c: u32, m: u32, n: u32, v0: vec4<T>, v1: vec4<T>, q0: Channels, q1: Channels) {
    if (!FULL_M && r >= m) {
        return;
    }
    let at = base + r * n + c;
    if (FULL_N) {
        // the block's columns are inside the matrix (and `at` a multiple of 4): no test per
        // element, four elements a store
        store4c(at, v0, q0);
        store4c(at + 4u, v1, q1);
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
