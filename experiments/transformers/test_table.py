#!/usr/bin/env python3
"""table.py and decode_table.py on hand-written results files: the ratios against
hand-computed values, the bandwidth filter, an invalid point's reason, and sweep.csv's rows
(ctest transformers_table)."""
import csv
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent


def point(policy, gbps, total=None, cycles=None, reason=None):
    line = {"id": policy + str(gbps), "model": "m", "policy": policy, "objective": "bytes",
            "axes": {"scratchpads[0].size": 1048576,
                     "dram.bandwidth": "1.2TB/s" if gbps == 1200 else f"{gbps:g}GB/s"},
            "status": "invalid" if reason else "ok", "tool_version": "test"}
    if reason:
        line["reason"] = reason
    else:
        line["figures"] = {"dram_bytes": {"total": total}, "compulsory_bytes": 1_000_000,
                           "bound_bytes": 1_600_000, "cycles": cycles,
                           "lower_bound_cycles": 100, "onchip_capacity_bytes": 2_097_152,
                           "dram_bandwidth_gbps": gbps, "groups": 3}
    return json.dumps(line)


class TableTest(unittest.TestCase):
    def test_ratios_filter_and_invalid_rows(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            lines = [point("layerwise", 1200, 2_000_000, 300), point("optimal", 1200, 1_250_000, 200),
                     point("fusion", 1200, reason="does not fit"),
                     point("optimal", 100, 9_000_000, 900)]
            (tmp / "r.jsonl").write_text("\n".join(lines) + "\n")
            subprocess.run([sys.executable, str(HERE / "table.py"), str(tmp / "r.jsonl"), "--out",
                            str(tmp)], check=True, capture_output=True)
            with open(tmp / "table.csv") as f:
                rows = list(csv.reader(f))
            self.assertEqual(rows[1:], [
                # 2.0 MB / 1.0 MB compulsory, / 1.6 MB bound; 300 cycles / 100.
                ["m", "2048", "layerwise", "2.000", "2.000", "1.250", "300", "3.000", "1.00",
                 "1.00", "3", ""],
                # No figures: the capacity of the points with its sizes that ran (2 MiB).
                ["m", "2048", "fusion"] + [""] * 8 + ["does not fit"],
                # 1.25 MB: 1.25x compulsory, 0.781x the bound; layerwise moves 1.60x, takes 1.50x.
                ["m", "2048", "optimal", "1.250", "1.250", "0.781", "200", "2.000", "1.60",
                 "1.50", "3", ""]])
            with open(tmp / "sweep.csv") as f:
                self.assertEqual(len(list(csv.reader(f))), 1 + 4)  # every point, any bandwidth

    def test_sim_table_subtracts_the_instruction_fetch(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            (tmp / "r.jsonl").write_text(point("layerwise", 1200, 2_000_000, 300) + "\n")
            sim = json.loads(point("optimal", 1200, 1_250_000, 200))
            sim["figures"].update({"sim_dram_bytes": {"total": 1_253_648,
                                                      "instructions_read": 3_648},
                                   "sim_cycles": 201, "bit_exact": True})
            (tmp / "s.jsonl").write_text(json.dumps(sim) + "\n" +
                                         point("layerwise", 1200, reason="no fit") + "\n")
            subprocess.run([sys.executable, str(HERE / "table.py"), str(tmp / "r.jsonl"), "--out",
                            str(tmp), "--sim", str(tmp / "s.jsonl")], check=True,
                           capture_output=True)
            with open(tmp / "sim_table.csv") as f:
                rows = list(csv.reader(f))
            # 1,253,648 - 3,648 = 1,250,000 B: equal to the prediction; 201 / 200 cycles.
            self.assertEqual(rows[1:], [
                ["m", "layerwise"] + [""] * 7 + ["no fit"],
                ["m", "optimal", "1250000", "1250000", "True", "200", "201", "1.0050", "True", ""]])


class DecodeTableTest(unittest.TestCase):
    def test_bound_less_the_tokens_and_the_bandwidth_bound(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            sim = json.loads(point("optimal", 96, 9_800, 2_000))
            sim["model"] = "dec-batch2-layers1"
            sim["figures"].update({"compulsory_bytes": 10_000, "latency_ms": 0.002,
                                   "sim_dram_bytes": {"total": 10_000, "instructions_read": 304},
                                   "sim_cycles": 2_050, "bit_exact": True})
            refused = json.loads(point("layerwise", 96, reason="op 'x' needs a row normaliser"))
            refused["model"] = "dec-layers1"
            (tmp / "s.jsonl").write_text(json.dumps(sim) + "\n")
            (tmp / "r.jsonl").write_text(json.dumps(refused) + "\n")
            subprocess.run([sys.executable, str(HERE / "decode_table.py"), f"big={tmp / 's.jsonl'}",
                            f"small={tmp / 'r.jsonl'}", "--out", str(tmp), "--model-dim", "100"],
                           check=True, capture_output=True)
            with open(tmp / "decode_table.csv") as f:
                rows = list(csv.reader(f))
            self.assertEqual(rows[1:], [
                # bound 10,000 - 2 x 2 x 100 = 9,600 B; simulated 10,000 - 304 = 9,696 = 1.01x.
                # 2,000 cycles in 2 us: 1 GHz, 96 GB/s = 96 B a cycle: 9,600 / 96 = 100 cycles,
                # 2,050 simulated = 20.5x.
                ["big", "dec-batch2-layers1", "2", "optimal", "9696", "9800", "9600", "1.0100",
                 "2050", "2000", "100", "20.5", "True", ""],
                ["small", "dec-layers1", "1", "layerwise"] + [""] * 9 +
                ["op 'x' needs a row normaliser"]])


if __name__ == "__main__":
    unittest.main()
