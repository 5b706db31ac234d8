//! Grouping: a chain fuses into one group, outputs stop it, wide groups split at the binding limit.

use super::*;

#[test]
fn a_chain_fuses_into_one_group_and_outputs_stop_it() {
    let mut p = Program::new("chain");
    let x = p.input("x", DType::Float32, &[8]).unwrap();
    let y = p.input("y", DType::Float32, &[8]).unwrap();
    let a = p.mul(x, y).unwrap();
    let b = p.relu(a).unwrap();
    let c = p.add(b, x).unwrap();
    let d = p.exp(c).unwrap();
    let s = p.sum(d, &[], false).unwrap();
    p.output("s", s).unwrap();
    p.output("c", c).unwrap();
    let shapes: Vec<Vec<usize>> = vec![vec![8]; 6].into_iter().chain([vec![]]).collect();
    let dtypes = vec![DType::Float32; 7];
    let f = fuse(&p, &shapes, &dtypes);
    // c is an output, so it is a root: {a, b, c}; d alone (its consumer, sum, is not elementwise)
    assert_eq!(f.fused_into[a], Some(c));
    assert_eq!(f.fused_into[b], Some(c));
    assert_eq!(f.fused_into[c], None);
    assert_eq!(f.groups[&c].leaves, vec![x, y]);
    assert_eq!(f.groups[&c].steps.len(), 3);
    assert!(!f.groups.contains_key(&d));
}

#[test]
fn wide_groups_are_split_to_the_storage_buffer_limit() {
    let mut p = Program::new("wide");
    let ins: Vec<NodeId> = (0..9)
        .map(|i| p.input(&format!("x{i}"), DType::Float32, &[4]).unwrap())
        .collect();
    let mut acc = p.add(ins[0], ins[1]).unwrap();
    for &x in &ins[2..] {
        acc = p.add(acc, x).unwrap();
    }
    p.output("y", acc).unwrap();
    let n = p.nodes().len();
    let f = fuse(&p, &vec![vec![4]; n], &vec![DType::Float32; n]);
    assert!(f.groups.values().all(|g| g.leaves.len() <= MAX_LEAVES));
    assert!(!f.groups.is_empty());
}
