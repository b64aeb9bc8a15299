"""Models from Python: the graph IR, stats, and the golden executor on numpy arrays."""

import numpy as np
import pytest

import tessel


def conv2d_nchw(x, w, b, pad):
    """A direct NCHW convolution in numpy (stride 1): the outside reference."""
    n, c, h, width = x.shape
    k, _, kh, kw = w.shape
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, k, h + 2 * pad - kh + 1, width + 2 * pad - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            window = padded[:, :, i:i + kh, j:j + kw]
            out[:, :, i, j] = np.einsum("nchw,kchw->nk", window, w.astype(np.float64))
    return out + b.reshape(1, k, 1, 1)


def test_tiny_conv_graph_shapes_and_ops():
    g = tessel.load_model("tiny_conv")
    assert g.name == "tiny_conv"
    assert [op.kind for op in g.ops] == ["Input", "Conv", "Relu"]
    assert g.inputs == ["input"] and len(g.outputs) == 1
    assert g.shape("input") == (1, 3, 8, 8)
    conv = g.ops[1]
    assert conv.attrs["kernel"] == [3, 3] and conv.attrs["stride"] == [1, 1]
    assert g.shape(conv.outputs[0]) == (1, 4, 8, 8)
    weights = g.tensors[conv.inputs[1]]
    assert weights.constant and weights.shape == (4, 3, 3, 3) and weights.dtype == "f32"
    assert g.parameter_count == 4 * 3 * 3 * 3 + 4


def test_stats_count_macs_by_hand():
    stats = tessel.load_model("tiny_conv").stats()
    # 4 output channels x 8 x 8 pixels x 3 input channels x 3 x 3 taps.
    assert stats["totals"]["macs"] == 4 * 8 * 8 * 3 * 9
    assert stats["totals"]["params"] == 112
    # int8 bytes: the conv reads 3x8x8 and its 112 weights, writes 4x8x8; the ReLU reads and
    # writes 4x8x8.
    conv, relu = stats["layers"]
    assert (conv["input_bytes"], conv["weight_bytes"], conv["output_bytes"]) == (192, 112, 256)
    assert stats["totals"]["memory_bytes"] == 192 + 112 + 256 + 256 + 256


def test_unknown_model_is_an_input_error_with_a_suggestion():
    with pytest.raises(tessel.InputError, match="tiny_conv"):
        tessel.load_model("tiny_conf")


def test_float_infer_equals_a_numpy_convolution():
    g = tessel.load_model("tiny_conv")
    conv = g.ops[1]
    w = g.tensors[conv.inputs[1]].values()
    b = g.tensors[conv.inputs[2]].values()
    x = tessel.default_input((1, 3, 8, 8), seed=3)
    assert x.dtype == np.float32 and x.shape == (1, 3, 8, 8)
    y = tessel.infer(g, x)
    assert y.dtype == np.float32 and y.shape == (1, 4, 8, 8)
    expected = np.maximum(conv2d_nchw(x, w, b, pad=1), 0)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_infer_equals_the_cli(cli, tmp_path):
    out = tmp_path / "y.npy"
    cli("infer", "--model", "tiny_residual", "--output", out)
    g = tessel.load_model("tiny_residual")
    y = tessel.infer(g, tessel.default_input(g.shape("input")))
    np.testing.assert_array_equal(y, np.load(out))


def test_infer_accepts_non_contiguous_arrays_and_dicts():
    g = tessel.load_model("tiny_conv")
    x = tessel.default_input((1, 3, 8, 8), seed=1)
    fortran = np.asfortranarray(x)
    np.testing.assert_array_equal(tessel.infer(g, fortran), tessel.infer(g, x))
    np.testing.assert_array_equal(tessel.infer(g, {"input": x}), tessel.infer(g, x))


def test_wrong_arrays_raise_clear_errors():
    g = tessel.load_model("tiny_conv")
    x = tessel.default_input((1, 3, 8, 8))
    with pytest.raises(tessel.InputError, match="float32.*float64"):
        tessel.infer(g, x.astype(np.float64))
    with pytest.raises(tessel.InputError, match="float32.*int32"):
        tessel.infer(g, x.astype(np.int32))
    with pytest.raises(tessel.InputError, match=r"shape \[1,3,8,9\].*\[1,3,8,8\]"):
        tessel.infer(g, np.zeros((1, 3, 8, 9), np.float32))
    with pytest.raises(tessel.InputError, match="shape"):
        tessel.infer(g, np.zeros((3, 8, 8), np.float32))
    with pytest.raises(tessel.InputError, match="numpy.ndarray.*list"):
        tessel.infer(g, x.tolist())
    with pytest.raises(tessel.InputError, match="missing input 'input'"):
        tessel.infer(g, {"x": x})
    with pytest.raises(tessel.InputError, match="with_weights=True"):
        tessel.infer(tessel.load_model("tiny_conv", with_weights=False), x)


def test_quantized_infer_round_trips_through_the_simulator():
    """The integer executor from numpy equals the simulated program's outputs, bit for bit."""
    hw = tessel.HwConfig.load("edge-small")
    q = tessel.quantize("tiny_residual", hw, policy="fusion+reuse", input_seed=5)
    assert q.bits == 8 and q.policy == "fusion+reuse"
    y = tessel.infer(q, tessel.default_input((1, 4, 8, 8), seed=5))
    report = tessel.simulate(tessel.compile(q, hw, policy="fusion+reuse"))
    assert report.bit_exact is True
    (simulated,) = report.outputs.values()
    np.testing.assert_array_equal(simulated, y)
    # Quantization changes the values a little, not a lot.
    f = tessel.infer(tessel.load_model("tiny_residual"), tessel.default_input((1, 4, 8, 8), 5))
    assert np.abs(f - y).max() < 0.05 * np.abs(f).max()


def test_token_ids_run_from_integer_arrays(tmp_path):
    # An Embedding of i32 token ids (an ONNX Gather from a constant table by INT64 ids): numpy's
    # int64 ids are taken (each must fit int32); a negative id counts from the end, as in ONNX.
    path = tmp_path / "embed.tir"
    path.write_text("""graph embed {
  input %ids : i32[1,3]
  const %table : f32[4,2] = [0.5, -1, 2, 1.5, -3, 0.25, 1, 2.5]
  %e = Embedding(%ids, %table) : f32[?]
  output %e
}
""")
    g = tessel.load_model(str(path))
    y = tessel.infer(g, np.array([[3, 0, -2]], dtype=np.int64))
    assert y.tolist() == [[[1.0, 2.5], [0.5, -1.0], [-3.0, 0.25]]]
    with pytest.raises(Exception, match="token ids need an integer array"):
        tessel.infer(g, np.zeros((1, 3), np.float32))
    with pytest.raises(Exception, match="token id 4 at position 1 .* outside \\[-4, 4\\)"):
        tessel.infer(g, np.array([[0, 4, 1]], dtype=np.int32))
