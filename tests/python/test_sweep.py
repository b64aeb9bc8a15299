"""Sweeps from Python: a spec (dict or file) into a pandas DataFrame, resumable, interruptible."""

import os
import signal

import pandas as pd
import pytest

import tessel
from conftest import CONFIG_DIR


def buffer_bandwidth_spec(**extra):
    spec = {
        "name": "py-buffer-bandwidth",
        "mode": "analytic",
        "hw": tessel.HwConfig.load("edge-small"),
        "models": ["tiny_residual"],
        "policies": ["optimal"],
        "axes": {"scratchpads[0].size": ["4KiB", "16KiB"], "dram.bandwidth": ["1GB/s", "4GB/s"]},
    }
    spec.update(extra)
    return spec


def test_sweep_into_a_dataframe_equals_schedules(tmp_path):
    out = tmp_path / "r.jsonl"
    df = tessel.sweep(buffer_bandwidth_spec(), out=out, jobs=2)
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert list(df["status"]) == ["ok"] * 4
    assert list(df["scratchpads[0].size"]) == ["4KiB", "4KiB", "16KiB", "16KiB"]
    hw = tessel.HwConfig.load("edge-small")
    for row in df.itertuples(index=False):
        point = hw.replace(**{"scratchpads[0].size": row[df.columns.get_loc("scratchpads[0].size")],
                              "dram.bandwidth": row[df.columns.get_loc("dram.bandwidth")]})
        s = tessel.schedule("tiny_residual", point, policy="optimal")
        assert row.cycles == s.cycles
        assert row[df.columns.get_loc("dram_bytes.total")] == s.dram_bytes["total"]
    # Resumed: nothing left to evaluate, the same rows come back.
    again, summary = tessel.sweep(buffer_bandwidth_spec(), out=out, summary=True)
    assert summary["already_done"] == 4 and summary["ok"] == 0
    pd.testing.assert_frame_equal(again, df)
    assert len(out.read_text().splitlines()) == 4


def test_sweep_from_a_spec_file_and_progress_lines(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"mode: synthetic\nhw: {CONFIG_DIR / 'edge-small.yaml'}\n"
                    "models: [tiny_conv, tiny_residual]\npolicies: [layerwise]\n"
                    "axes: {dram.bandwidth: [1GB/s, 2GB/s, 3GB/s]}\n")
    lines = []
    df = tessel.sweep(str(spec), jobs=1, progress=lines.append)
    assert len(df) == 6 and list(df["model"]) == ["tiny_conv"] * 3 + ["tiny_residual"] * 3
    assert any("6/6" in line for line in lines)


def test_bad_specs_raise_located_errors():
    with pytest.raises(tessel.InputError, match="did you mean 'policies'"):
        tessel.sweep(buffer_bandwidth_spec(polices=["optimal"]))
    with pytest.raises(tessel.InputError, match="dram.bandwith"):
        tessel.sweep(buffer_bandwidth_spec(axes={"dram.bandwith": ["1GB/s"]}))
    with pytest.raises(tessel.InputError, match="spec"):
        tessel.sweep(42)


def test_ctrl_c_stops_between_points_and_a_rerun_resumes(tmp_path):
    out = tmp_path / "r.jsonl"
    spec = buffer_bandwidth_spec(mode="synthetic", synthetic={"delay_ms": 40},
                                 axes={"dram.bandwidth": [f"{g}GB/s" for g in range(1, 41)]})
    sent = []

    def interrupt_after_the_first_point(line):  # progress comes after a point is written
        if not sent:
            sent.append(line)
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        tessel.sweep(spec, out=out, jobs=1, progress=interrupt_after_the_first_point)
    done = len(out.read_text().splitlines())
    assert 0 < done < 40
    df, summary = tessel.sweep(spec, out=out, jobs=2, summary=True)
    assert summary["already_done"] == done and summary["ok"] == 40 - done
    assert len(df) == 40 and df["id"].is_unique
