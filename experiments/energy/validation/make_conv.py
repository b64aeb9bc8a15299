#!/usr/bin/env python3
"""Writes conv.onnx: the layer of the Timeloop/Accelergy exercises' simple_weight_stationary
reference output (Accelergy-Project/timeloop-accelergy-exercises, workspace/example_designs/
example_designs/simple_weight_stationary/ref_outputs/default_problem/timeloop-mapper.stats.txt):
C = 3 input channels, M = 32 output channels, R = S = 3, stride 2, P = Q = 112 (weights 864,
outputs 401,408 words, 10,838,016 MACs), no bias. Timeloop's layer is 224 x 224 with one pixel
of padding, whose outputs read 225 x 225 input positions, and it counts those (151,875 words,
padding included) as DRAM reads; this input is 225 x 225 without padding so that both move the
same words.

  make_conv.py OUT.onnx        (needs the onnx and numpy modules: Debian's python3 has them)"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "conv.onnx"
    rng = np.random.default_rng(37)
    w = rng.standard_normal((32, 3, 3, 3)).astype(np.float32) * 0.2
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[3, 3],
                            strides=[2, 2], pads=[0, 0, 0, 0])
    graph = helper.make_graph(
        [conv], "timeloop_sws_layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 225, 225])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 112, 112])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
