// A fused elementwise chain: the host generates the leaf bindings, the per-op functions and the
// body (one `let` per step), and prepends `alias T = ...;`. Leaves broadcast into the output shape
// through per-leaf strides (0 on broadcast dims); a leaf whose shape is the output's reads index i.
// Several outputs (sibling chains computed together): out0 here, out1.. after the leaves.
// params: [len, rank, out_dims[rank], leaf0_strides[rank], leaf1_strides[rank], ...]
@group(0) @binding(0) var<storage, read_write> out0: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
//{{LEAF_BINDINGS}}

//{{FUNCTIONS}}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = affon_lane(wid, groups, lid);
    if (i >= params[0]) {
        return;
    }
    let rank = params[1];
    //{{INDEX}}
    //{{BODY}}
}
