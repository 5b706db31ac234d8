"""Writes the ONNX backend node test cases of the pinned `onnx` package to a directory, as files the
Rust runner (tests/onnx_node.rs) reads: per case `model.onnx`, `input_<i>.pb` and `output_<i>.pb`
(serialized TensorProtos, the first data set), and `ops.txt` (the model's op types). onnx 1.23 no
longer ships the cases as files: `collect_testcases()` builds them, deterministically. Cases whose
inputs or outputs are not plain tensors (sequences, optionals, maps) get `kind.txt` instead.

Usage: python node_cases.py OUT_DIR   (run by scripts/onnx-cases.sh in the venv it creates)
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases


def write_case(root, case):
    d = os.path.join(root, case.name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    ops = sorted({n.op_type for n in case.model.graph.node})
    with open(os.path.join(d, "ops.txt"), "w") as f:
        f.write("\n".join(ops) + "\n")
    if not case.data_sets:
        return
    inputs, outputs = case.data_sets[0]
    if not all(isinstance(x, np.ndarray) for x in list(inputs) + list(outputs)):
        with open(os.path.join(d, "kind.txt"), "w") as f:
            f.write("non-tensor inputs or outputs (sequences, optionals, maps)\n")
        return
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, v in enumerate(values):
            try:
                t = numpy_helper.from_array(v)
            except Exception as e:  # strings, object arrays
                with open(os.path.join(d, "kind.txt"), "w") as f:
                    f.write(f"{kind} {i} is not a numeric tensor: {e}\n")
                return
            with open(os.path.join(d, f"{kind}_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())


def main():
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    cases = collect_testcases(None)
    for case in cases:
        write_case(root, case)
    with open(os.path.join(root, "VERSION"), "w") as f:
        f.write(f"onnx {onnx.__version__}: {len(cases)} cases\n")
    print(f"{len(cases)} ONNX node cases (onnx {onnx.__version__}) in {root}", file=sys.stderr)


if __name__ == "__main__":
    main()
