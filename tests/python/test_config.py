"""HwConfig from Python: the YAML loader's validation and located errors as exceptions."""

import numpy as np
import pytest

import tessel
from conftest import CONFIG_DIR

# edge-small.yaml's values in the YAML schema, written out by hand.
EDGE_SMALL = {
    "name": "edge-dict",
    "clock_mhz": 400,
    "matrix": {"rows": 8, "cols": 8, "input_bits": 8, "weight_bits": 8,
               "accumulator_bits": 32, "fill_cycles": 8, "drain_cycles": 8},
    "vector": {"lanes": 8},
    "scratchpads": [{"name": "unified", "size": "128KiB", "banks": 8, "port_width_bytes": 8,
                     "holds": ["activations", "weights", "accumulators", "outputs"]}],
    "dram": {"bandwidth": "6.4GB/s", "latency_ns": 120, "burst_bytes": 32,
             "max_outstanding_requests": 32},
    "queues": {"instruction_queue_depth": 16, "token_fifo_depth": 8},
    "energy": {"mac_pj": 0.3, "sram_read_pj_per_byte": 1.25, "sram_write_pj_per_byte": 1.25,
               "dram_pj_per_byte": 32},
}


def test_load_by_name_equals_load_by_path():
    by_name = tessel.HwConfig.load("edge-small")
    by_path = tessel.HwConfig.load(str(CONFIG_DIR / "edge-small.yaml"))
    assert by_name == by_path
    assert by_name.name == "edge-small"
    assert by_name.clock_mhz == 400
    assert by_name.macs_per_cycle == 64  # 8 x 8
    assert by_name.dram_bandwidth_bytes_per_second == 6.4e9
    assert by_name.dram_bytes_per_cycle == pytest.approx(6.4e9 / 400e6)  # 16 B/cycle


def test_yaml_round_trip_is_identity():
    hw = tessel.HwConfig.load("npc19-deepfusion")
    assert tessel.HwConfig.from_yaml(hw.to_yaml()) == hw


def test_from_dict_validates_like_a_file():
    hw = tessel.HwConfig.from_dict(EDGE_SMALL)
    edge = tessel.HwConfig.load("edge-small")
    # Same hardware, other label: the content hash leaves name and description out.
    assert hw.content_hash == edge.content_hash
    assert hw.total_onchip_bytes == 128 * 1024
    assert hw.to_dict()["scratchpads"][0]["size_bytes"] == 131072


def test_replace_changes_one_value_and_keeps_the_rest():
    hw = tessel.HwConfig.load("edge-small")
    faster = hw.replace(**{"dram.bandwidth": "12.8GB/s", "scratchpads[0].size": "256KiB"})
    assert faster.dram_bandwidth_bytes_per_second == 12.8e9
    assert faster.total_onchip_bytes == 262144
    assert faster.clock_mhz == hw.clock_mhz
    assert hw.dram_bandwidth_bytes_per_second == 6.4e9  # the original is unchanged
    # Numbers are written as YAML would; a float keeps its value.
    assert hw.replace(**{"dram.latency_ns": 90.5}).to_dict()["dram"]["latency_ns"] == 90.5
    assert hw.replace(**{"matrix.rows": 16}).macs_per_cycle == 16 * 8
    # numpy scalars (DataFrame cells) are their values.
    assert hw.replace(**{"matrix.rows": np.int64(16)}).macs_per_cycle == 16 * 8
    # The loader's own rules hold: a bandwidth needs a unit.
    with pytest.raises(tessel.InputError, match="dram.bandwidth.*needs a unit"):
        hw.replace(**{"dram.bandwidth": 1e9})


def test_replace_with_a_misspelt_key_names_it():
    hw = tessel.HwConfig.load("edge-small")
    with pytest.raises(tessel.InputError) as error:
        hw.replace(**{"dram.bandwith": "2GB/s"})
    assert "dram.bandwith" in str(error.value)
    assert any(d["key_path"] == "dram.bandwith" for d in error.value.diagnostics)


def test_replace_with_a_bad_value_names_the_key_path():
    hw = tessel.HwConfig.load("edge-small")
    with pytest.raises(tessel.InputError) as error:
        hw.replace(**{"scratchpads[0].size": 1000})  # not a multiple of 8 banks x 8 B
    assert "scratchpads[0].size" in str(error.value)
    with pytest.raises(tessel.InputError, match="matrix.rows"):
        hw.replace(**{"matrix.rows": -3})
    assert isinstance(error.value, ValueError)


def test_bad_dicts_raise_located_errors():
    missing = {k: v for k, v in EDGE_SMALL.items() if k != "dram"}
    with pytest.raises(tessel.InputError, match="dram"):
        tessel.HwConfig.from_dict(missing)
    wrong_type = dict(EDGE_SMALL, matrix=dict(EDGE_SMALL["matrix"], rows="eight"))
    with pytest.raises(tessel.InputError, match="matrix.rows"):
        tessel.HwConfig.from_dict(wrong_type)
    with pytest.raises(tessel.InputError, match="keys must be strings"):
        tessel.HwConfig.from_dict(dict(EDGE_SMALL, vector={1: 8}))
    with pytest.raises(tessel.InputError, match="cannot be written as YAML"):
        tessel.HwConfig.from_dict(dict(EDGE_SMALL, clock_mhz=object()))


def test_a_missing_file_is_an_input_error_naming_it(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(tessel.InputError, match="nope.yaml"):
        tessel.HwConfig.load(str(path))
