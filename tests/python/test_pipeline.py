"""Schedules and simulations from Python equal the CLI's JSON (tiny nets here, the zoo: slow)."""

import json
import subprocess

import pytest

import tessel
from conftest import TESSEL_BIN, without

TINY = ["tiny_conv", "tiny_residual", "tiny_inception", "tiny_stem"]
ZOO = ["resnet18", "resnet50", "vgg19", "googlenet", "inception_v3", "mobilenet_v2"]


def check_schedule_equals_cli(cli, model, hw, policy, objective="bytes"):
    text = cli("schedule", "--model", model, "--hw", hw, "--policy", policy, "--objective",
               objective, "--json", "-", "-q")
    s = tessel.schedule(model, hw, policy=policy, objective=objective)
    # search_seconds is wall-clock time and tool_version the build stamp (the CLI and the
    # module may be linked in different builds); every other key must be equal.
    assert json.loads(s.to_json())["tool_version"] == tessel.__version__
    assert (without(s.to_json(), "search_seconds", "tool_version") ==
            without(text, "search_seconds", "tool_version"))
    return s


def check_simulation_equals_cli(cli, tmp_path, model, hw, policy):
    folder = tmp_path / f"{model}-{policy}"
    cli("compile", "--model", model, "--hw", hw, "--policy", policy, "--out", folder)
    # (--json: the simulator's report; the folder's own report.json adds per-group rows.)
    sim_json = tmp_path / f"{model}-{policy}.json"
    cli("sim", folder, "--timing-only", "--json", sim_json)
    program = tessel.compile(model, hw, policy=policy)
    report = tessel.simulate(program, timing_only=True)
    assert (without(report.to_json(), "tool_version") ==
            without(sim_json.read_text(), "tool_version"))
    # The program itself is the one the CLI wrote.
    assert program.tasm() == (folder / "program.tasm").read_text()
    return report


@pytest.mark.parametrize("model", TINY)
@pytest.mark.parametrize("policy", ["layerwise", "fusion+reuse", "optimal"])
def test_schedule_equals_cli(cli, model, policy):
    check_schedule_equals_cli(cli, model, "edge-small", policy)


@pytest.mark.parametrize("model,policy", [("tiny_residual", "optimal"),
                                          ("tiny_inception", "layerwise")])
def test_simulation_equals_cli(cli, tmp_path, model, policy):
    check_simulation_equals_cli(cli, tmp_path, model, "edge-small", policy)


def test_schedule_figures_are_consistent():
    s = tessel.schedule("tiny_residual", tessel.HwConfig.load("edge-small"), policy="optimal",
                        objective="latency")
    assert s.policy == "optimal" and s.objective == "latency" and s.config == "edge-small"
    d = s.dram_bytes
    assert d["total"] == d["read"] + d["write"] > 0
    assert s.cycles >= s.lower_bound_cycles >= s.roofline_cycles > 0
    assert s.bounds["compulsory_bytes"] == s.compulsory_bytes
    assert sum(len(g["ops"]) for g in s.groups) >= 1
    assert "cycles" in s.table()
    assert json.loads(s.to_json())["cycles"] == s.cycles


def test_full_simulation_is_bit_exact_and_matches_the_schedule():
    hw = tessel.HwConfig.load("edge-small")
    program = tessel.compile("tiny_inception", hw, policy="optimal")
    full = tessel.simulate(program)
    timing = tessel.simulate(program, timing_only=True)
    assert full.bit_exact is True and timing.bit_exact is None
    assert full.cycles == timing.cycles  # timing-only gives the same cycles
    assert full.dram_bytes == timing.dram_bytes
    assert program.instructions > 0 and program.schedule.policy == "optimal"


def test_pipeline_errors_are_exceptions_not_crashes():
    hw = tessel.HwConfig.load("edge-small")
    with pytest.raises(tessel.Error, match="nosuch"):
        tessel.schedule("tiny_conv", hw, policy="nosuch")
    with pytest.raises(tessel.InputError, match="objective"):
        tessel.schedule("tiny_conv", hw, objective="speed")
    with pytest.raises(tessel.InputError, match="hw"):
        tessel.schedule("tiny_conv", 42)
    with pytest.raises(tessel.InputError, match="model"):
        tessel.schedule(3.5, hw)
    tiny = hw.replace(**{"scratchpads[0].size": "128B"})
    with pytest.raises(tessel.Error, match="'conv' does not fit on chip"):
        tessel.schedule("tiny_conv", tiny, policy="fusion+reuse")
    q = tessel.quantize("tiny_residual", hw, policy="optimal")
    with pytest.raises(tessel.InputError, match="quantize"):
        tessel.compile(q, hw, policy="layerwise")  # BatchNorm unfolded there, folded here


@pytest.mark.slow
@pytest.mark.parametrize("model", ZOO)
def test_zoo_schedule_and_simulation_equal_cli(cli, tmp_path, model):
    for policy in tessel.policies():
        check_schedule_equals_cli(cli, model, "npc19-deepfusion", policy)
    check_simulation_equals_cli(cli, tmp_path, model, "npc19-deepfusion", "optimal")


# Every zoo model the lists above leave out (transformers, SiLU/Transpose nets, ...): the same
# schedule JSON as the CLI, or the same refusal (the message of `tessel schedule`'s error), on
# edge-small (which refuses what needs lookup tables or a row normaliser) and on cloud-large
# (which schedules them all).
OTHERS = [m for m in tessel.zoo_models() if m not in TINY + ZOO]


@pytest.mark.parametrize("hw", ["edge-small", "cloud-large"])
@pytest.mark.parametrize("model", OTHERS)
def test_other_zoo_models_schedule_or_are_refused_as_by_the_cli(model, hw):
    done = subprocess.run([TESSEL_BIN, "schedule", "--model", model, "--hw", hw,
                           "--json", "-", "-q"], capture_output=True, text=True)
    try:
        s = tessel.schedule(model, hw)
    except tessel.Error as e:
        assert done.returncode != 0, f"the CLI schedules {model}, Python refuses: {e}"
        assert done.stderr.strip() == f"error: {e}"
        return
    assert done.returncode == 0, f"Python schedules {model}, the CLI refuses: {done.stderr}"
    assert (without(s.to_json(), "search_seconds", "tool_version") ==
            without(done.stdout, "search_seconds", "tool_version"))
