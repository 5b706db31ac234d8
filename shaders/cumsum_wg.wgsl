// Running sums along one axis for long lines: one workgroup of WORKGROUP threads (256, or the device's
// limit where lower: `Ctx::workgroup`) per (outer, inner) line,
// or per part of one (`parts` > 1: scan positions [p·per, min(len, (p + 1)·per)), lines past
// `ops::LONG_LINE`). Thread `lid` takes a contiguous run of ceil(part / WORKGROUP) elements in scan order
// (reversed with `reverse`): it sums its run, the workgroup scans the run sums (Hillis–Steele,
// in workgroup memory), then each thread walks its run again from the sum of the runs before it
// and of the parts before (`part_offset`, prepended, called by one thread: the sums the `SUMS`
// pass wrote, or 0 for a whole line), each output leaving its own element out with `exclusive`.
// A thread's loops take 2·per/WORKGROUP + p iterations, far below lavapipe's 65,535 per invocation (`cumsum.wgsl`'s one thread
// per line would stop short past it), and long lines on GPUs are walked by WORKGROUP threads a part
// instead of one. With `SUMS` (a line's first pass in parts) the workgroup stops after the scan and
// writes its part's sum to `out[g]` (scratch). The host prepends `alias T = ...;`,
// `const SUMS: bool` and `fn part_offset(line, p, parts) -> T`.
// params: [lines, len, inner, exclusive, reverse, parts, per]. Workgroups: lines·parts (`grid`).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

var<workgroup> part: array<T, WORKGROUP>;
// the sum of the parts before this one, read once for the workgroup
var<workgroup> offset: T;

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let g = affon_group(wid, groups);
    let parts = params[5];
    let line = g / parts;
    // no early return: every invocation reaches the barriers
    let valid = line < params[0];
    let len = params[1];
    let inner = params[2];
    let exclusive = params[3] != 0u;
    let reverse = params[4] != 0u;
    let base = (line / inner) * len * inner + line % inner;
    let lo = min((g % parts) * params[6], len);
    let hi = min(lo + params[6], len);
    let span = (hi - lo + WORKGROUP - 1u) / WORKGROUP;
    let start = min(lo + lid * span, hi);
    let end = min(start + span, hi);
    var s = T(0);
    if (valid) {
        for (var k = start; k < end; k = k + 1u) {
            s = s + bitcast<T>(a[base + select(k, len - 1u - k, reverse) * inner]);
        }
    }
    part[lid] = s;
    if (valid && lid == 0u) {
        offset = part_offset(line, g % parts, parts);
    }
    workgroupBarrier();
    // inclusive scan of the run sums
    for (var d = 1u; d < WORKGROUP; d = d << 1u) {
        var v = T(0);
        if (lid >= d) {
            v = part[lid - d];
        }
        workgroupBarrier();
        part[lid] = part[lid] + v;
        workgroupBarrier();
    }
    if (SUMS) {
        // the first pass of a line in parts: the part's sum, for the parts after it
        if (valid && lid == 0u) {
            out[g] = bitcast<u32>(part[WORKGROUP - 1u]);
        }
        return;
    }
    var acc = offset;
    if (lid > 0u) {
        acc = acc + part[lid - 1u];
    }
    if (valid) {
        for (var k = start; k < end; k = k + 1u) {
            let at = base + select(k, len - 1u - k, reverse) * inner;
            let x = bitcast<T>(a[at]);
            if (exclusive) {
                out[at] = bitcast<u32>(acc);
                acc = acc + x;
            } else {
                acc = acc + x;
                out[at] = bitcast<u32>(acc);
            }
        }
    }
}
