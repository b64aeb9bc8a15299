"""Ctrl-C inside tessel.load_model: the ONNX importer polls between nodes (support/cancel.hpp),
so a long import stops early and Python raises KeyboardInterrupt; the module works afterwards.

The child writes an ONNX chain of 300,000 Relu nodes (seconds to import on the 2-core machine)
with Debian's python3-onnx, says when it calls, and the test sends SIGINT 0.3 s later. No
timing is asserted; whether the call stopped early is read from the exception's note."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

onnx = pytest.importorskip("onnx")

CHILD = r"""
import json, sys, tempfile, os
import onnx
from onnx import helper, TensorProto
import tessel
n = 300000
nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"]) for i in range(n)]
graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1, 4])])
path = os.path.join(tempfile.mkdtemp(), "chain.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
print("calling", flush=True)
try:
    tessel.load_model(path)
    print(json.dumps({"finished": True}), flush=True)
except KeyboardInterrupt as e:
    print(json.dumps({"notes": getattr(e, "__notes__", [])}), flush=True)
print(json.dumps({"after": repr(tessel.load_model("tiny_conv"))}), flush=True)
"""


def test_ctrl_c_stops_a_long_import():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert child.stdout.readline().strip() == "calling", child.stderr.read()
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=300)  # a guard against a hang, not a speed check
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert "finished" not in lines[0], "the import ran to its end: the signal was not seen"
    assert lines[0]["notes"] == [
        "tessel.load_model: stopped early by the interrupt; nothing was returned or written"]
    assert lines[1]["after"].startswith("<tessel.Graph tiny_conv")
