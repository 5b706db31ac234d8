//! The CPU form of matmul (`shaders/matmul_cpu.wgsl`, for CPU adapters: no workgroup memory):
//! which form a product takes ([`CpuForm::pick`]: R×C blocks, vec4 or element-by-element operand
//! reads, subgroups sharing B's loads, operand textures on SwiftShader, the workgroup's shape) and
//! the kernel written out for it ([`CpuForm::source`]). `matmul.rs` records it.

use super::operand_tex::{self, LOAD_A4_TEX, LOAD_B4_TEX};
use super::Ctx;

const MATMUL_CPU: &str = include_str!("../../shaders/matmul_cpu.wgsl");

/// One product's CPU form.
#[derive(Clone, Copy)]
pub(super) struct CpuForm {
    /// A and B read as vec4s (plain, K resp. N a multiple of 4), else element by element.
    vec: (bool, bool),
    /// M and N in whole blocks, K in fours: edges that cannot occur are not tested for.
    full: (bool, bool, bool),
    /// The R×C block an invocation keeps ([`cpu_block`]).
    block: (usize, usize),
    /// Subgroup lanes sharing B's loads (the shared form), or 0.
    pub lanes: u32,
    /// Column blocks across a workgroup, and its invocations ([`cpu_workgroup`]).
    wg: (usize, usize),
    /// A and B read from operand textures (`operand_tex.rs`).
    pub tex: bool,
}

impl CpuForm {
    /// The form of an M×K·K×N product (`batch` matrices; `ta`, `tb`: operands read transposed),
    /// or `None` where the tiled forms take it: not a CPU adapter, or K past the loop bound (the CPU
    /// form loops over k in fours: near `MAX_LOOP` iterations the tiled forms take it — the fused
    /// epilogue's loops share the budget: at exactly 65,535 steps, K = 262,140, lavapipe gave
    /// 262,136 for a dot product of ones).
    pub(super) fn pick(
        ctx: &Ctx,
        (m, k, n): (usize, usize, usize),
        batch: usize,
        (ta, tb): (bool, bool),
    ) -> Option<CpuForm> {
        if !ctx.cpu_adapter || k.div_ceil(4) + super::LOOP_MARGIN >= super::MAX_LOOP {
            return None;
        }
        let vec = (!ta && k.is_multiple_of(4), !tb && n.is_multiple_of(4));
        let wide = vec.0 && vec.1;
        let block = cpu_block(wide);
        let full = (
            m.is_multiple_of(block.0),
            n.is_multiple_of(block.1),
            k.is_multiple_of(4),
        );
        // subgroups share the B loads of the 8×16 form (`SHARED_LANES`)
        let lanes = if wide && SHARED_LANES.contains(&ctx.subgroup_lanes) {
            ctx.subgroup_lanes
        } else {
            0
        };
        // large products read A and B from textures (`operand_tex.rs`)
        let tex = wide && operand_tex::takes(ctx, (m, k, n), batch);
        let blocks = (n.div_ceil(block.1), m.div_ceil(block.0), batch.max(1));
        let wg = cpu_workgroup(blocks, cpu_col_blocks(n, block.1), lanes, ctx.min_workgroups);
        Some(CpuForm {
            vec,
            full,
            block,
            lanes,
            wg,
            tex,
        })
    }

    /// Output columns and rows a workgroup covers.
    pub(super) fn tile(&self) -> (usize, usize) {
        let ((r, c), (cb, inv)) = (self.block, self.wg);
        (cb * c, inv / cb * r)
    }

    /// The form's part of the pipeline key.
    pub(super) fn key(&self) -> String {
        let ((r, c), (cb, inv)) = (self.block, self.wg);
        let (vec, full, lanes, tex) = (self.vec, self.full, self.lanes, self.tex);
        format!("{}{}{full:?}{r}x{c}s{lanes}c{cb}i{inv}t{tex}", vec.0, vec.1)
    }

    /// The kernel's WGSL after the epilogue's prelude and `MATMUL_BATCH` (`float`: `T` is a float
    /// type).
    pub(super) fn source(&self, float: bool) -> String {
        let (load_a, load_b) = match (self.tex, self.vec.0, self.vec.1) {
            (true, ..) => (LOAD_A4_TEX, LOAD_B4_TEX),
            (false, va, vb) => (
                if va { LOAD_A4_VEC } else { LOAD_A4_SCALAR },
                if vb { LOAD_B4_VEC } else { LOAD_B4_SCALAR },
            ),
        };
        let full = self.full;
        format!(
            "const FULL_M: bool = {};\nconst FULL_N: bool = {};\nconst FULL_K: bool = {};\n{load_a}{load_b}{}",
            full.0,
            full.1,
            full.2,
            cpu_body(self.block, self.vec.0 && self.vec.1, self.lanes, self.wg, full.1, float)
        )
    }
}

/// `fn load_a4` of `matmul_cpu.wgsl`: A plain row-major with K a multiple of 4 is read as vec4s.
const LOAD_A4_VEC: &str = "@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;
fn load_a4(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> vec4<T> {
    if (!FULL_M && row >= m) { return vec4<T>(); }
    return bitcast<vec4<T>>(a[(a_off + row * kk + k) / 4u]);
}
";
/// ... otherwise element by element (transposed: A stored K×M), zero outside the matrix.
const LOAD_A4_SCALAR: &str = "@group(0) @binding(2) var<storage, read> a: array<u32>;
fn load_a1(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> T {
    if ((!FULL_M && row >= m) || (!FULL_K && k >= kk)) { return T(0); }
    return bitcast<T>(a[a_off + select(row * kk + k, k * m + row, TRANS_A)]);
}
fn load_a4(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> vec4<T> {
    return vec4<T>(load_a1(a_off, row, k, m, kk), load_a1(a_off, row, k + 1u, m, kk), load_a1(a_off, row, k + 2u, m, kk), load_a1(a_off, row, k + 3u, m, kk));
}
";
/// `fn load_b4`: B plain row-major with N a multiple of 4 is read as vec4s.
const LOAD_B4_VEC: &str = "@group(0) @binding(3) var<storage, read> b: array<vec4<u32>>;
fn load_b4(b_off: u32, k: u32, col: u32, n: u32, kk: u32) -> vec4<T> {
    if ((!FULL_N && col >= n) || (!FULL_K && k >= kk)) { return vec4<T>(); }
    return bitcast<vec4<T>>(b[(b_off + k * n + col) / 4u]);
}
";
/// ... otherwise element by element (transposed: B stored N×K), zero outside the matrix.
const LOAD_B4_SCALAR: &str = "@group(0) @binding(3) var<storage, read> b: array<u32>;
fn load_b1(b_off: u32, k: u32, c: u32, n: u32, kk: u32) -> T {
    if ((!FULL_N && c >= n) || (!FULL_K && k >= kk)) { return T(0); }
    return bitcast<T>(b[b_off + select(k * n + c, c * kk + k, TRANS_B)]);
}
fn load_b4(b_off: u32, k: u32, col: u32, n: u32, kk: u32) -> vec4<T> {
    return vec4<T>(load_b1(b_off, k, col, n, kk), load_b1(b_off, k, col + 1u, n, kk), load_b1(b_off, k, col + 2u, n, kk), load_b1(b_off, k, col + 3u, n, kk));
}
";

/// The output block of one `matmul_cpu.wgsl` invocation, rows × columns: 8×16 when both operands
/// are read as vec4s, else 4×8 (SwiftShader's compiler crashed the GPU process on a larger body of
/// guarded element-by-element loads). On SwiftShader the 8×16 block made a 1024² product and the
/// MLP's 64×784·784×256 1.3–1.5× faster than 4×8 (fewer loads per multiply-add). Under a fused
/// epilogue the 8×16 block was once kept for K ≥ 128 only: with a workgroup spanning only the
/// blocks N needs and the chain's per-channel leaves read once per column quad, it made the
/// compiled MobileNet block's pointwise convolution (K = 32) faster than 4×8 (the block 0.75×).
fn cpu_block(vec: bool) -> (usize, usize) {
    if vec {
        (8, 16)
    } else {
        (4, 8)
    }
}

/// Subgroup sizes the shared form of `matmul_cpu.wgsl` is written for: a workgroup's 64
/// invocations are 64 / LANES subgroups, each LANES row blocks of the same 16 columns.
const SHARED_LANES: [u32; 2] = [4, 8];

/// Invocations in a `matmul_cpu.wgsl` workgroup, unless the product has too few blocks for
/// [`Ctx::min_workgroups`] of them ([`cpu_workgroup`]).
const CPU_INVOCATIONS: usize = 64;

/// Tasks SwiftShader splits a dispatch's workgroups into (its `ComputeProgram::run`: task `t` runs
/// workgroups `t`, `t + 16`, …), which its worker threads take as they come free. A dispatch of
/// fewer workgroups runs on fewer tasks: the MLP's 64×784·784×256 in 64-invocation workgroups is
/// two, one a core on a two-core machine, so a core that other work holds for a while holds the
/// whole product back.
const SWIFTSHADER_TASKS: usize = 16;

/// `Ctx::min_workgroups` of a session: [`SWIFTSHADER_TASKS`] on SwiftShader, else 0 (no minimum).
pub(crate) fn min_workgroups(swiftshader: bool) -> usize {
    if swiftshader {
        SWIFTSHADER_TASKS
    } else {
        0
    }
}

/// A `matmul_cpu.wgsl` workgroup for a product of `blocks` (columns, rows, matrices) of R×C
/// blocks: `(column blocks, invocations)`. [`CPU_INVOCATIONS`] over `col_blocks` columns of blocks
/// ([`cpu_col_blocks`]), halved — rows of blocks first, down to a subgroup's `lanes` (a subgroup of
/// the shared form spans that many rows of one column block; at least 4, SwiftShader's SIMD width),
/// then columns — while the grid has fewer than `min_groups` workgroups.
fn cpu_workgroup(
    (bx, by, batch): (usize, usize, usize),
    col_blocks: usize,
    lanes: u32,
    min_groups: usize,
) -> (usize, usize) {
    let groups = |cb: usize, rb: usize| bx.div_ceil(cb) * by.div_ceil(rb) * batch;
    let least_rows = (lanes as usize).max(4);
    let (mut cb, mut rb) = (col_blocks, CPU_INVOCATIONS / col_blocks);
    while groups(cb, rb) < min_groups {
        if rb > least_rows {
            rb /= 2;
        } else if cb > 1 {
            cb /= 2;
        } else {
            break;
        }
    }
    (cb, cb * rb)
}

/// How many R×C blocks side by side a `matmul_cpu.wgsl` workgroup covers (its 64 invocations are
/// that many columns of blocks by 64 / that many rows): 8, or fewer when the product has fewer
/// columns — the smallest power of two whose blocks span `n`. A fixed 8 left half of every
/// workgroup idle when `n` is 64 under the 8×16 block (a MobileNet pointwise convolution into 64
/// channels), and in the shared form an idle block still computes (its lanes must broadcast).
fn cpu_col_blocks(n: usize, block_cols: usize) -> usize {
    n.div_ceil(block_cols).next_power_of_two().min(8)
}

/// `matmul_cpu.wgsl` for an R×C block, `col_blocks` of them across a workgroup (see
/// [`cpu_col_blocks`]): its place, accumulators, A loads, four k-steps (unrolled when both operands
/// are read as vec4s, else a loop) and stores; with `lanes` (4 or 8, the 8×16 vec4 form only) the
/// shared form, whose subgroup lanes share their B loads. `full_n`: the block's columns are inside
/// the matrix (`FULL_N`), the only case whose stores take the epilogue's per-channel leaves.
/// `float`: `T` is a float type, whose multiply-adds are written as `fma` (see [`mad`]).
fn cpu_body(
    (rows, cols): (usize, usize),
    unrolled: bool,
    lanes: u32,
    (col_blocks, invocations): (usize, usize),
    full_n: bool,
    float: bool,
) -> String {
    let nv = cols / 4;
    debug_assert!(lanes == 0 || (unrolled && nv == 4 && SHARED_LANES.contains(&lanes)));
    let lanes = lanes as usize;
    // shared form: lane l reads B row k + l % 4, vec4s (l / 4)·per .. +per of the block's columns
    let per = (4 * nv).checked_div(lanes).unwrap_or(0);
    let block = Block {
        rows,
        nv,
        lanes,
        per,
        float,
    };
    let mut writes = block.writes(full_n);
    let (lane, place) = if lanes > 0 {
        writes = format!("    if (row < m && col < n) {{\n{writes}    }}\n");
        (
            ", @builtin(subgroup_invocation_id) lane: u32",
            format!("    let sg = lid / {lanes}u;\n    let row = wid.y * (ROW_BLOCKS * BLOCK_ROWS) + (sg / COL_BLOCKS) * ({lanes}u * BLOCK_ROWS) + lane * BLOCK_ROWS;\n    let col = wid.x * (COL_BLOCKS * BLOCK_COLS) + (sg % COL_BLOCKS) * BLOCK_COLS;\n"),
        )
    } else {
        (
            "",
            "    let row = wid.y * (ROW_BLOCKS * BLOCK_ROWS) + (lid / COL_BLOCKS) * BLOCK_ROWS;\n    let col = wid.x * (COL_BLOCKS * BLOCK_COLS) + (lid % COL_BLOCKS) * BLOCK_COLS;\n    if (row >= m || col >= n) {\n        return;\n    }\n".to_string(),
        )
    };
    let consts = format!(
        "const BLOCK_ROWS: u32 = {rows}u;\nconst BLOCK_COLS: u32 = {cols}u;\nconst COL_BLOCKS: u32 = {col_blocks}u;\nconst ROW_BLOCKS: u32 = {}u;\n",
        invocations / col_blocks
    );
    consts
        + &MATMUL_CPU
            .replace("@workgroup_size(64)", &format!("@workgroup_size({invocations})"))
            .replace("/*{{LANE}}*/", lane)
            .replace("//{{PLACE}}\n", &place)
            .replace("//{{DECLS}}\n", &block.decls())
            .replace("//{{LOADS}}\n", &block.loads())
            .replace("//{{STEPS}}\n", &block.steps(unrolled))
            .replace("//{{WRITES}}\n", &writes)
}

/// The block of one `matmul_cpu.wgsl` invocation, as [`cpu_body`] writes its lines.
struct Block {
    /// Rows of the block.
    rows: usize,
    /// vec4s across its columns.
    nv: usize,
    /// Subgroup lanes sharing B's loads (the shared form), or 0.
    lanes: usize,
    /// vec4s of B each lane of the shared form loads (0 without it).
    per: usize,
    /// `T` is a float type.
    float: bool,
}

impl Block {
    /// The accumulators: one vec4 per row and column quad.
    fn decls(&self) -> String {
        let mut decls = String::new();
        for r in 0..self.rows {
            for v in 0..self.nv {
                decls += &format!("    var c{r}_{v} = vec4<T>();\n");
            }
        }
        decls
    }

    /// The loads of a k-step: A's rows, then (the shared form) each lane's own part of B.
    fn loads(&self) -> String {
        let mut loads = String::new();
        for r in 0..self.rows {
            loads += &format!("        let a{r} = load_a4(a_off, row + {r}u, k, m, kk);\n");
        }
        let per = self.per;
        for u in 0..per {
            loads += &format!(
                "        let own{u} = load_b4(b_off, k + lane % 4u, col + 4u * ((lane / 4u) * {per}u + {u}u), n, kk);\n"
            );
        }
        loads
    }

    /// The stores: the epilogue's per-channel leaves per column quad, then a write per row and
    /// pair of quads (`full_n`: the block's columns are inside the matrix).
    fn writes(&self, full_n: bool) -> String {
        let mut writes = String::new();
        // an epilogue's per-channel leaves, read once per column quad for all the block's rows (a
        // partial block stores element by element and reads none)
        for v in 0..self.nv {
            writes += &if full_n {
                format!("    let q{v} = channels(col + {}u);\n", 4 * v)
            } else {
                format!("    let q{v} = Channels();\n")
            };
        }
        for r in 0..self.rows {
            for h in 0..self.nv / 2 {
                let (v0, v1) = (2 * h, 2 * h + 1);
                writes += &format!(
                    "    write(base, row + {r}u, col + {}u, m, n, c{r}_{v0}, c{r}_{v1}, q{v0}, q{v1});\n",
                    8 * h
                );
            }
        }
        writes
    }

    /// The four k-steps of a loaded k: unrolled, or a loop.
    fn steps(&self, unrolled: bool) -> String {
        if unrolled {
            ["x", "y", "z", "w"]
                .iter()
                .enumerate()
                .map(|(j, c)| {
                    format!(
                        "        {{\n{}        }}\n",
                        self.step(&format!("k + {j}u"), &format!(".{c}"), j)
                    )
                })
                .collect()
        } else {
            format!(
                "        for (var j = 0u; j < 4u; j = j + 1u) {{\n{}        }}\n",
                self.step("k + j", "[j]", 0)
            )
        }
    }

    /// One k-step (`k`: its row of B, `comp`: A's component, `j`: the shared form's source lane
    /// offset): B's quads, then a multiply-add per accumulator.
    fn step(&self, k: &str, comp: &str, j: usize) -> String {
        let (nv, per) = (self.nv, self.per);
        let mut s = String::new();
        for v in 0..nv {
            s += &if self.lanes > 0 {
                format!(
                    "            let b{v} = subgroupBroadcast(own{}, {}u);\n",
                    v % per,
                    j + 4 * (v / per)
                )
            } else {
                format!(
                    "            let b{v} = load_b4(b_off, {k}, col + {}u, n, kk);\n",
                    4 * v
                )
            };
        }
        for r in 0..self.rows {
            for v in 0..nv {
                s += &mad(
                    &format!("c{r}_{v}"),
                    &format!("a{r}{comp}"),
                    &format!("b{v}"),
                    self.float,
                );
            }
        }
        s
    }
}

/// One multiply-add of the CPU form, `c += a · b` (`a` a scalar, `b` and `c` vec4s), as a line of
/// its loop body: WGSL's `fma` for floats (the accumulator's rounding is the device's: a fused or a
/// separate multiply and add), `+` and `*` for integers, which have no `fma`. In the raw-WGSL study
/// (`node scripts/bench-kernel-study.mjs matmul`, variant `sharedFma`) the MLP's 64×784·784×256
/// took 0.90–1.03× the time of `c + a * b` on SwiftShader, less in five runs of six.
fn mad(c: &str, a: &str, b: &str, float: bool) -> String {
    if float {
        format!("            {c} = fma(vec4<T>({a}), {b}, {c});\n")
    } else {
        format!("            {c} = {c} + {a} * {b};\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 invocations over the column blocks N needs; on SwiftShader (16 workgroups at least) a
    /// product with fewer blocks gets smaller workgroups: rows of blocks halved first, down to a
    /// subgroup's lanes or 4, then columns.
    #[test]
    fn workgroups_shrink_to_give_swiftshader_its_tasks() {
        // the MLP's 64×784·784×256 in 8×16 blocks: 16 × 8 blocks
        assert_eq!(
            cpu_workgroup((16, 8, 1), 8, 4, 0),
            (8, 64),
            "no minimum: 2 workgroups"
        );
        assert_eq!(
            cpu_workgroup((16, 8, 1), 8, 4, 16),
            (2, 8),
            "16 workgroups of 2 × 4 blocks"
        );
        assert_eq!(
            cpu_workgroup((16, 8, 1), 8, 0, 16),
            (2, 8),
            "without subgroups alike"
        );
        assert_eq!(
            cpu_workgroup((16, 8, 1), 8, 8, 16),
            (1, 8),
            "8-lane subgroups: 8 rows of blocks"
        );
        // 1024² in 8×16 blocks: 64 × 128 blocks, 128 workgroups already
        assert_eq!(cpu_workgroup((64, 128, 1), 8, 4, 16), (8, 64));
        // a batch counts: 4 matrices of 64 × 8 blocks give 4 × 8 × 1 = 32
        assert_eq!(cpu_workgroup((64, 8, 4), 8, 4, 16), (8, 64));
        // one block: as small as allowed
        assert_eq!(cpu_workgroup((1, 1, 1), 1, 4, 16), (1, 4));
        assert_eq!(cpu_workgroup((1, 1, 1), 1, 0, 16), (1, 4));
    }
}
