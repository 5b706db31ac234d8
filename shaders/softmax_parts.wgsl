// Softmax along one axis for long rows (`ops::line_parts`): each row runs as `parts` workgroups of
// 64 threads, part `p` covering the row's elements [p·per, min(len, (p + 1)·per)), in two passes
// (`const PASS`, prepended with `fn row_stats`):
// - PASS 1: the part's maximum m and sum of exp(x − m), each thread keeping both as it reads (a
//   larger element rescales the sum), the 64 combined in workgroup memory; written to
//   `out[2·(r·parts + p)]` and the word after (scratch).
// - PASS 2: one thread combines the row's `parts` summaries for the workgroup (`row_stats`, from
//   the scratch at binding 3: the same order in every workgroup, so every part divides by the same
//   sum), then every thread writes exp(x − M) / S for its elements of the part.
// A thread's loops take per/64 (+ parts) iterations, far below lavapipe's 65,535 per invocation.
// params: [rows, len, inner, parts, per] — element j of row r is at
// (r / inner)·len·inner + (r % inner) + j·inner. Workgroups: rows·parts (`grid`).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

var<workgroup> part_max: array<f32, 64>;
var<workgroup> part_sum: array<f32, 64>;

// the row's maximum and sum of exponentials, combined once for the workgroup in pass 2
var<workgroup> row: vec2<f32>;

// exp(x − m) for x ≤ m, 1 when x equals a negative m: exactly exp(0) for finite values, and for
// x = m = −inf (a masked element before any finite one) the count the sum keeps relative to −inf,
// which a finite maximum later scales to 0 — exp(−inf − (−inf)) would be NaN. +inf stays NaN, as in
// the whole-row forms.
fn rel_exp(x: f32, m: f32) -> f32 {
    return select(exp(x - m), 1.0, x == m && m < 0.0);
}

// (m, s) and (m2, s2) as one maximum and the sum of exponentials relative to it
fn merge(m: f32, s: f32, m2: f32, s2: f32) -> vec2<f32> {
    let mx = max(m, m2);
    return vec2<f32>(mx, s * rel_exp(m, mx) + s2 * rel_exp(m2, mx));
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let g = affon_group(wid, groups);
    let rows = params[0];
    let len = params[1];
    let inner = params[2];
    let parts = params[3];
    let per = params[4];
    let r = g / parts;
    let p = g % parts;
    // no early return before the barriers
    let valid = r < rows;
    let base = (r / inner) * len * inner + (r % inner);
    let lo = min(p * per, len);
    let hi = min(lo + per, len);
    if (PASS == 1u) {
        // from the part's first element, not -inf (a constant infinity is an error in Tint)
        var m = 0.0;
        var s = 0.0;
        if (valid) {
            m = bitcast<f32>(a[base + min(lo, len - 1u) * inner]);
            for (var j = lo + lid; j < hi; j = j + 64u) {
                let x = bitcast<f32>(a[base + j * inner]);
                if (x > m) {
                    s = s * exp(m - x) + 1.0;
                    m = x;
                } else {
                    s = s + rel_exp(x, m);
                }
            }
        }
        part_max[lid] = m;
        part_sum[lid] = s;
        workgroupBarrier();
        for (var k = 32u; k > 0u; k = k >> 1u) {
            if (lid < k) {
                let v = merge(part_max[lid], part_sum[lid], part_max[lid + k], part_sum[lid + k]);
                part_max[lid] = v.x;
                part_sum[lid] = v.y;
            }
            workgroupBarrier();
        }
        if (valid && lid == 0u) {
            out[2u * g] = bitcast<u32>(part_max[0]);
            out[2u * g + 1u] = bitcast<u32>(part_sum[0]);
        }
    } else {
        if (valid && lid == 0u) {
            row = row_stats(r, parts);
        }
        workgroupBarrier();
        let st = row;
        for (var j = select(hi, lo + lid, valid); j < hi; j = j + 64u) {
            let idx = base + j * inner;
            out[idx] = bitcast<u32>(exp(bitcast<f32>(a[idx]) - st.x) / st.y);
        }
    }
}
