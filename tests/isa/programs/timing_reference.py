#!/usr/bin/env python3
"""A second, deliberately naive implementation of docs/timing.md (cycle stepping, no SystemC).

It exists to check the hand-computed cycle counts of the microbenchmarks before the simulator
relies on them: `timing_reference.py PROGRAM.tasm` prints every instruction's dispatch, start
and finish cycle and the total; `--check` runs every NAME.tasm here against NAME.expect.json
(cycles, DRAM bytes, or a deadlock and its cycle) and exits 1 on any mismatch.
Timing only: it touches no data. Needs python3-yaml.
"""
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TABLE = yaml.safe_load((HERE.parent.parent.parent / "isa" / "isa_table.yaml").read_text())
VECTOR_PIPELINE = 4
ENGINE_OF = {op["name"]: op["engine"] for op in TABLE["opcodes"]}
ELEM_BYTES = {"i8": 1, "i16": 2, "i32": 4}
# FIFO names by (engine, flag)
FIFO = {("load", "pop_next"): "c2l", ("load", "push_next"): "l2c",
        ("compute", "pop_prev"): "l2c", ("compute", "pop_next"): "s2c",
        ("compute", "push_prev"): "c2l", ("compute", "push_next"): "c2s",
        ("store", "pop_prev"): "c2s", ("store", "push_prev"): "s2c"}


def parse_config(path):
    c = yaml.safe_load(Path(path).read_text())
    bw = c["dram"]["bandwidth"]
    units = {"GB/s": 10**9, "MB/s": 10**6, "B/s": 1}
    for suffix, scale in units.items():
        if str(bw).endswith(suffix):
            bandwidth = Fraction(str(bw)[: -len(suffix)]) * scale
            break
    clock_hz = Fraction(str(c["clock_mhz"])) * 10**6
    return {
        "R": c["matrix"]["rows"], "C": c["matrix"]["cols"],
        "F": c["matrix"]["fill_cycles"], "D": c["matrix"]["drain_cycles"],
        "V": c["vector"]["lanes"],
        "L": math.ceil(Fraction(str(c["dram"]["latency_ns"])) * Fraction(str(c["clock_mhz"])) / 1000),
        "B": c["dram"]["burst_bytes"], "T": c["dram"]["burst_bytes"] / (bandwidth / clock_hz),
        "O": c["dram"]["max_outstanding_requests"],
        "W": min(max(c["dram"]["burst_bytes"], 16), 64),  # the DMA mover's bytes a cycle
        "Q": c["queues"]["instruction_queue_depth"], "K": c["queues"]["token_fifo_depth"],
    }


def parse_program(path):
    program = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#")[0].split(";")[0].split()
        if not line:
            continue
        fields = dict(token.split("=", 1) for token in line[1:])
        for key, value in fields.items():
            try:
                fields[key] = int(value, 0)
            except ValueError:
                pass  # enum or scratchpad name
        program.append((line[0], fields))
    return program


def get(fields, name, default=0):
    return fields.get(name, default)


def compute_cost(op, f, cfg):
    if op == "conv":
        positions = f["out_h"] * f["out_w"]
        dw = get(f, "depthwise")
        passes = f["oc_blocks"] * f["kh"] * f["kw"] * (1 if dw else f["ic_blocks"])
        w = 1 if dw else cfg["R"]
        return w + passes * max(positions, w) + cfg["F"] + cfg["D"]
    if op == "matmul":  # b loads a row (R) or, transposed, a column (C) of the array a cycle
        w = cfg["C"] if get(f, "transpose_b") else cfg["R"]
        passes = -(-f["n_size"] // cfg["C"]) * -(-f["k_size"] // cfg["R"])
        return w + passes * max(f["m_size"], w) + cfg["F"] + cfg["D"]
    lanes = lambda c: -(-c // cfg["V"])
    if op in ("requant", "add", "copy", "reduce", "mul"):
        return f["y_size"] * f["x_size"] * lanes(f["c_size"]) + VECTOR_PIPELINE
    if op == "softmax":  # 512 exp entries V a cycle; per row max, sum, reciprocal, normalise
        return (lanes(512) + f["y_size"] * f["x_size"] * (3 * lanes(f["c_size"]) + 31)
                + VECTOR_PIPELINE)
    if op == "norm":  # per row statistics, rsqrt and reciprocal (56), normalise
        return f["y_size"] * f["x_size"] * (2 * lanes(f["c_size"]) + 56) + VECTOR_PIPELINE
    if op == "lut":  # the 256-entry table enters V entries a cycle, then the box streams
        return lanes(256) + f["y_size"] * f["x_size"] * lanes(f["c_size"]) + VECTOR_PIPELINE
    if op == "pool":
        return f["out_h"] * f["out_w"] * f["kh"] * f["kw"] * lanes(f["c_size"]) + VECTOR_PIPELINE
    return 1


def dma_runs(op, f):
    e = ELEM_BYTES[get(f, "elem", "i8")]
    if op == "gather":  # the ids' run, then one request per row at the table's row stride
        return [[get(f, "ids_addr"), 4 * f["y_size"]]] + [
            [get(f, "dram_addr") + r * get(f, "dram_stride_y") * e, f["c_size"] * e]
            for r in range(f["y_size"])]
    runs = []
    for y in range(f["y_size"]):
        for x in range(f["x_size"]):
            a = get(f, "dram_addr") + (y * get(f, "dram_stride_y") + x * get(f, "dram_stride_x")) * e
            if runs and runs[-1][0] + runs[-1][1] == a:
                runs[-1][1] += f["c_size"] * e
            else:
                runs.append([a, f["c_size"] * e])
    return runs


class Dram:
    def __init__(self, cfg):
        self.cfg, self.bus_free, self.slots = cfg, Fraction(0), []

    def access(self, address, size, issue):
        B, L, T, O = self.cfg["B"], self.cfg["L"], self.cfg["T"], self.cfg["O"]
        done = None
        for _ in range(address // B, (address + size - 1) // B + 1):
            i = max(issue, self.slots[-O]) if len(self.slots) >= O else issue
            start = max(Fraction(i + L), self.bus_free)
            self.bus_free = start + T
            done = math.ceil(self.bus_free)
            self.slots.append(done)
        return done


def run(program, cfg, limit=100000):
    n = len(program)
    engine = [get(f, "engine", "load") if op == "nop" else ENGINE_OF[op] for op, f in program]
    d, s, fin = [None] * n, [None] * n, [None] * n
    pushes = {k: [] for k in ("l2c", "c2l", "c2s", "s2c")}  # finish cycles of pushers
    reserves = {k: [] for k in pushes}  # start cycles of pushers
    pops = {k: [] for k in pushes}  # cycles of pops
    dram = Dram(cfg)
    next_dispatch, last_dispatch = 0, -1
    queues = {"load": [], "compute": [], "store": []}  # dispatched, not started
    started_by_engine = {"load": [], "compute": [], "store": []}  # in engine order
    busy_until = {"load": 0, "compute": 0, "store": 0}
    finish_index = next((i for i, (op, _) in enumerate(program) if op == "finish"), None)
    stop = finish_index + 1 if finish_index is not None else n
    bytes_moved = {"read": 0, "write": 0}
    progress = 0
    for t in range(limit):
        # starts (LOAD, COMPUTE, STORE order: DRAM presentation order)
        for eng in ("load", "compute", "store"):
            if not queues[eng] or busy_until[eng] > t:
                continue
            i = queues[eng][0]
            op, f = program[i]
            if d[i] + 1 > t:
                continue
            ok = True
            for flag in ("pop_prev", "pop_next"):
                if get(f, flag):
                    q = FIFO[(eng, flag)]
                    visible = sum(1 for c in pushes[q] if c <= t) - sum(1 for c in pops[q] if c < t)
                    ok &= visible >= 1
            for flag in ("push_prev", "push_next"):
                if get(f, flag):
                    q = FIFO[(eng, flag)]
                    occupancy = sum(1 for c in reserves[q] if c < t) - sum(1 for c in pops[q] if c < t)
                    ok &= occupancy < cfg["K"]
            if not ok:
                continue
            queues[eng].pop(0)
            s[i] = t
            started_by_engine[eng].append(i)
            for flag in ("pop_prev", "pop_next"):
                if get(f, flag):
                    pops[FIFO[(eng, flag)]].append(t)
            if op in ("load", "store", "gather"):
                done = t
                for a, size in dma_runs(op, f):
                    done = dram.access(a, size, t)
                    bytes_moved["write" if op == "store" else "read"] += size
                if op == "gather":  # the mover: an id, the row's address, W bytes a cycle
                    e = ELEM_BYTES[get(f, "elem", "i8")]
                    done = max(done, t + 2 + f["y_size"] * (2 + -(-f["c_size"] * e // cfg["W"])))
                fin[i] = done
            else:
                fin[i] = t + compute_cost(op, f, cfg)
            for flag in ("push_prev", "push_next"):
                if get(f, flag):
                    reserves[FIFO[(eng, flag)]].append(t)
                    pushes[FIFO[(eng, flag)]].append(fin[i])
            busy_until[eng] = fin[i]
            progress = t
        # dispatch (a queue slot freed by a start this cycle is usable now)
        if next_dispatch < stop and t >= last_dispatch + 1:
            i = next_dispatch
            eng = engine[i]
            if len(queues[eng]) < cfg["Q"]:
                d[i] = t
                queues[eng].append(i)
                last_dispatch = t
                next_dispatch += 1
                progress = t
        all_idle = all(busy_until[e] <= t for e in busy_until)
        if next_dispatch == stop and all_idle and not any(queues.values()):
            if finish_index is None:
                return {"fault": "no finish", "cycle": t}
            return {"cycles": max(x for x in fin if x is not None), "d": d, "s": s, "f": fin,
                    "bytes": bytes_moved}
        if all_idle and t > progress + 1:
            last = max([progress] + [x for x in fin if x is not None])
            return {"fault": "deadlock", "cycle": last, "d": d, "s": s, "f": fin}
    return {"fault": "limit"}


def report(path, cfg):
    program = parse_program(path)
    result = run(program, cfg)
    for i, (op, _) in enumerate(program):
        if "d" in result:
            print(f"{i:3} {op:8} d={result['d'][i]} s={result['s'][i]} f={result['f'][i]}")
    print({k: v for k, v in result.items() if k not in ("d", "s", "f")})
    return result


def main(argv):
    if argv[1:2] == ["--check"]:
        failures = 0
        for expect_path in sorted(HERE.glob("*.expect.json")):
            expect = json.loads(expect_path.read_text())
            program_path = expect_path.with_name(expect_path.name.replace(".expect.json", ".tasm"))
            cfg = parse_config(HERE / expect["config"])
            result = run(parse_program(program_path), cfg)
            want = expect["expect"]
            if want.get("status") == "fault":
                got = (result.get("fault"), result.get("cycle"))
                good = got == (want["fault"], want["fault_cycle"])
            else:
                got = (result.get("cycles"), result.get("bytes", {}).get("read"),
                       result.get("bytes", {}).get("write"))
                good = got == (want["cycles"], want["dram_read_bytes"], want["dram_write_bytes"])
            print(("ok  " if good else "FAIL"), program_path.name, got)
            failures += not good
        return 1 if failures else 0
    cfg = parse_config(argv[2] if len(argv) > 2 else HERE / "micro.yaml")
    report(argv[1], cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
