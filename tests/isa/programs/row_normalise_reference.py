#!/usr/bin/env python3
"""A second implementation of the integer Softmax and LayerNorm/RMSNorm of docs/quantization.md
("Softmax (integer)", "LayerNormalization and RMSNormalization"), in Python integers, for the
microbenchmarks softmax.tasm and norm.tasm: it derives their tables and parameters from the
scales written below (as compiler/quant/workload_params.cpp does, in double) and prints the DRAM
the programs start from and the outputs they must leave, as the sidecars' JSON fragments.

    python3 row_normalise_reference.py softmax|norm
    python3 row_normalise_reference.py --check   # the sidecars hold exactly these (CTest)

Written from the document, not from the C++ (support/int_nonlinear.hpp), so that the sidecars
check the simulator and the RTL against an independent reading of the rules.
"""
import json
import math
import os
import sys


def rha(t, r):
    """round_half_away(t / 2^r) for integers."""
    if r == 0:
        return t
    mag = (abs(t) + (1 << (r - 1))) >> r
    return mag if t >= 0 else -mag


def rha_double(v):
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def clamp(v, lo, hi):
    return max(lo, min(hi, v))


def requantize(acc, m, r, zp, lo, hi):
    return clamp(rha(acc * m, r) + zp, lo, hi)


def softmax_tables(s_x):
    high = [rha_double(2**15 * math.exp(-s_x * 256 * a)) for a in range(256)]
    low = [rha_double(2**15 * math.exp(-s_x * b)) for b in range(256)]
    return high, low


def softmax_row(x, keep, high, low, m, r, lo, hi):
    kept = [v for v, k in zip(x, keep) if k]
    if not kept:
        return [0] * len(x)
    mx = max(kept)

    def e(v):
        u = mx - v
        return rha(high[u >> 8] * low[u & 255], 15)

    total = sum(e(v) for v, k in zip(x, keep) if k)
    recip = (1 << 45) // total
    return [requantize(rha(e(v) * recip, 15), m, r, 0, lo, hi) if k else 0
            for v, k in zip(x, keep)]


def quantize_multiplier(real):
    """(M, r) with M * 2^-r ~ real, M in [2^30, 2^31) (sign kept), as quantize_multiplier."""
    if real == 0:
        return 0, 0
    mant, exp = math.frexp(abs(real))
    m = rha_double(mant * 2**31)
    if m == 2**31:
        m //= 2
        exp += 1
    return (m if real > 0 else -m), 31 - exp


def norm_row(x, centre, eps_term, affine, lo, hi):
    n = len(x)
    s1 = sum(x)
    s2 = sum(v * v for v in x)
    d = n * s2 - s1 * s1 if centre else n * s2
    w = d + eps_term
    if w == 0:
        inv, g = 0, 0
    else:
        g = (61 - w.bit_length()) >> 1
        s = math.isqrt(w << (2 * g))
        inv = (1 << 54) // s
    out = []
    for k, v in enumerate(x):
        c = n * v - s1 if centre else n * v
        t = rha(c * inv, 38 - g)
        gk, rk, bk = affine[k]
        out.append(clamp(rha(t * gk + bk, rk), lo, hi))
    return out


def norm_affine(gammas, betas, s_y):
    affine = []
    for gamma, beta in zip(gammas, betas):
        gk, rk = quantize_multiplier(gamma / (2**16 * s_y))
        affine.append((gk, rk, rha_double(beta / s_y * 2**rk)))
    return affine


def le_bytes(values, width):
    out = []
    for v in values:
        out += list((v & ((1 << (8 * width)) - 1)).to_bytes(width, "little"))
    return out


def softmax():
    # Program 1: i8 scores at s_x = 1/16, 3 queries x 5 keys, causal with mask_offset 2
    # (query i keeps keys 0 .. i + 2); output i8 at s_y = 1/127: M * 2^-r = 127 / 2^30.
    x8 = [[20, -3, 7, 100, -128], [0, 0, 0, 0, 127], [-50, 12, 12, -7, 90]]
    hi8, lo8 = softmax_tables(1 / 16)
    m1, r1 = 127 * 2**23, 53
    keep = [[int(c <= i + 2) for c in range(5)] for i in range(3)]
    y8 = [softmax_row(row, k, hi8, lo8, m1, r1, -128, 127) for row, k in zip(x8, keep)]
    # Program 2: i16 scores at s_x = 1/256 (u up to 6000 uses both tables), one row of 6 keys,
    # no mask; output i16 at s_y = 1/32767: M * 2^-r = 32767 / 2^30.
    x16 = [1500, -4500, 1499, 0, 1000, -300]
    hi16, lo16 = softmax_tables(1 / 256)
    m2, r2 = 32767 * 2**16, 46
    y16 = softmax_row(x16, [1] * 6, hi16, lo16, m2, r2, -32768, 32767)
    init = [
        {"addr": "0x2000", "elem": "i8", "values": sum(x8, [])},
        {"addr": "0x2010", "elem": "i16", "values": x16},
        {"addr": "0x4000", "elem": "i16", "values": [v - 65536 if v > 32767 else v
                                                     for v in hi8 + lo8 + hi16 + lo16]},
    ]
    out = [{"addr": "0x3000", "elem": "i8", "values": sum(y8, [])},
           {"addr": "0x3010", "elem": "i16", "values": y16}]
    return {"multipliers": [[m1, r1], [m2, r2]], "dram_init": init, "dram": out}


def norm():
    # Program 1: LayerNorm of 2 rows x 6 i8 codes at s_x = 1/16, epsilon 0.01 (E = rha(36 * 0.01
    # * 256) = 92), output i8 at s_y = 1/32, per-channel gamma and beta.
    x8 = [[10, -20, 30, 5, 0, -7], [3, 3, 3, 3, 3, 3]]
    e1 = rha_double(36 * 0.01 / (1 / 16) ** 2)
    aff1 = norm_affine([1.0, 0.5, -1.0, 2.0, 0.0, 1.5], [0.0, 0.25, -0.5, 1.0, 0.125, -2.0], 1 / 32)
    y8 = [norm_row(row, True, e1, aff1, -128, 127) for row in x8]
    # Program 2: RMSNorm of one row of 4 i16 codes at s_x = 1/1024, epsilon 1e-6 (E =
    # rha(16 * 1e-6 * 2^20) = 17), gamma only, output i16 at s_y = 1/4096.
    x16 = [1024, -2048, 300, 5000]
    e2 = rha_double(16 * 1e-6 / (1 / 1024) ** 2)
    aff2 = norm_affine([1.0, 0.75, -2.0, 1.25], [0.0] * 4, 1 / 4096)
    y16 = norm_row(x16, False, e2, aff2, -32768, 32767)
    params = le_bytes([e1], 8)
    for g, r, b in aff1:
        params += le_bytes([g, r], 4) + le_bytes([b], 8)
    params += [0] * (0x80 - len(params))
    params += le_bytes([e2], 8)
    for g, r, b in aff2:
        params += le_bytes([g, r], 4) + le_bytes([b], 8)
    init = [
        {"addr": "0x2000", "elem": "i8", "values": sum(x8, [])},
        {"addr": "0x2010", "elem": "i16", "values": x16},
        {"addr": "0x4000", "elem": "i8", "values": [b - 256 if b > 127 else b for b in params]},
    ]
    out = [{"addr": "0x3000", "elem": "i8", "values": sum(y8, [])},
           {"addr": "0x3010", "elem": "i16", "values": y16}]
    return {"E": [e1, e2], "affine": [aff1, aff2], "dram_init": init, "dram": out}


def check():
    here = os.path.dirname(os.path.abspath(__file__))
    failed = False
    for name, make in (("softmax", softmax), ("norm", norm)):
        with open(os.path.join(here, name + ".expect.json")) as f:
            spec = json.load(f)
        ref = make()
        for key, have in (("dram_init", spec["dram_init"]), ("dram", spec["expect"]["dram"])):
            if have != ref[key]:
                print(f"{name}.expect.json: {key} differs from the reference", file=sys.stderr)
                failed = True
    if not failed:
        print("softmax, norm: the sidecars hold the reference's DRAM")
    return 1 if failed else 0


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "softmax"
    if which == "--check":
        sys.exit(check())
    print(json.dumps(softmax() if which == "softmax" else norm()))
