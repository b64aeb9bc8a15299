"""The hostile-input catalogue: data for run_hostile.py, grouped by input boundary.

A case is files to create in a fresh folder, a tessel command (tokens; {d} is the folder), the
expected exit code (1: a refused input) and regular expressions stderr must match ({d} again).
Every case also asserts that no file in the folder changed. Expectations are written from the
rules in docs/hostile-input.md and docs/config.md, not from what the code printed.
"""
import os
import struct


class Special:
    """A file that is not plain content."""

    def __init__(self, kind, arg=None):
        self.kind, self.arg = kind, arg

    def make(self, path):
        if self.kind == "dir":
            os.makedirs(path, exist_ok=True)
        elif self.kind == "fifo":
            os.mkfifo(path)
        elif self.kind == "symlink":
            os.symlink(self.arg, path)
        elif self.kind == "hardlink":  # another name of a file made before it
            os.link(os.path.join(os.path.dirname(path), self.arg), path)
        elif self.kind == "sparse":  # a large file without the disk blocks
            with open(path, "wb") as f:
                f.truncate(self.arg)
        else:
            raise ValueError(self.kind)


DIR, FIFO = Special("dir"), Special("fifo")


def link(target):
    return Special("symlink", target)


class Case:
    def __init__(self, category, name, files, argv, expect, exit_code=1, timeout=20):
        self.category, self.name, self.files = category, name, files
        self.argv, self.expect, self.exit_code, self.timeout = argv, expect, exit_code, timeout


# ---------------------------------------------------------------------------------------------
# Hardware configs (tessel config check FILE): one line of a valid base config replaced.
BASE_CONFIG = [
    "name: hostile-base",                                    # 1
    "description: base of the hostile-input cases",          # 2
    "clock_mhz: 200",                                        # 3
    "matrix:",                                               # 4
    "  rows: 16",                                            # 5
    "  cols: 16",                                            # 6
    "  input_bits: 8",                                       # 7
    "  weight_bits: 8",                                      # 8
    "  accumulator_bits: 32",                                # 9
    "vector:",                                               # 10
    "  lanes: 16",                                           # 11
    "scratchpads:",                                          # 12
    "  - name: unified",                                     # 13
    "    size: 64KiB",                                       # 14
    "    banks: 4",                                          # 15
    "    port_width_bytes: 16",                              # 16
    "    holds: [activations, weights, accumulators, outputs]",  # 17
    "dram:",                                                 # 18
    "  bandwidth: 1GB/s",                                    # 19
    "  latency_ns: 100",                                     # 20
    "  burst_bytes: 64",                                     # 21
    "  max_outstanding_requests: 8",                         # 22
    "queues:",                                               # 23
    "  instruction_queue_depth: 16",                         # 24
    "  token_fifo_depth: 8",                                 # 25
]


def base_config(replace=None, append=None):
    lines = list(BASE_CONFIG)
    for number, text in (replace or {}).items():
        lines[number - 1] = text
    return "\n".join(lines + (append or [])) + "\n"


# (name, line, replacement, key, message regex)
CONFIG_MUTATIONS = [
    ("scratchpad_1tib", 14, "    size: 1TiB", r"scratchpads\[0\]\.size", r"must be at most 1GiB"),
    ("scratchpad_2pow62", 14, "    size: 4611686018427387904", r"scratchpads\[0\]\.size",
     r"must be at most 1GiB"),
    ("scratchpad_2pow63", 14, "    size: 9223372036854775808", r"scratchpads\[0\]\.size", r""),
    ("scratchpad_negative", 14, "    size: -64KiB", r"scratchpads\[0\]\.size", r""),
    ("scratchpad_fraction", 14, "    size: 0.5B", r"scratchpads\[0\]\.size", r""),
    ("scratchpad_zero", 14, "    size: 0", r"scratchpads\[0\]\.size", r"greater than 0"),
    ("scratchpad_nan", 14, "    size: .nan", r"scratchpads\[0\]\.size", r""),
    ("scratchpad_sequence", 14, "    size: [1, 2]", r"scratchpads\[0\]\.size",
     r"expected a size"),
    ("scratchpad_not_multiple", 14, "    size: 65537", r"scratchpads\[0\]\.size",
     r"not a multiple of banks"),
    ("scratchpad_too_small_for_tile", 14, "    size: 64", r"scratchpads\[0\]\.size",
     r"cannot hold one 16x16 matrix tile"),
    ("banks_2pow40", 15, "    banks: 1099511627776", r"scratchpads\[0\]\.banks",
     r"must be between 1 and 1024"),
    ("banks_three", 15, "    banks: 3", r"scratchpads\[0\]\.banks", r"power of two"),
    ("port_width_huge", 16, "    port_width_bytes: 1048576",
     r"scratchpads\[0\]\.port_width_bytes", r"must be between 1 and 4096"),
    ("holds_unknown", 17, "    holds: [activations, weights, accumulators, outputz]",
     r"scratchpads\[0\]\.holds\[3\]", r"unknown data kind 'outputz'"),
    ("holds_empty", 17, "    holds: []", r"scratchpads\[0\]\.holds", r"at least one"),
    ("rows_huge", 5, "  rows: 1000000000", r"matrix\.rows", r"must be between 1 and 4096"),
    ("rows_zero", 5, "  rows: 0", r"matrix\.rows", r"must be between 1 and 4096"),
    ("rows_negative", 5, "  rows: -16", r"matrix\.rows", r"must be between 1 and 4096"),
    ("rows_float", 5, "  rows: 16.5", r"matrix\.rows", r"expected an integer"),
    ("rows_hex_overflow", 5, "  rows: 0xffffffffffffffffff", r"matrix\.rows",
     r"expected an integer"),
    ("cols_string", 6, "  cols: sixteen", r"matrix\.cols", r"expected an integer"),
    ("input_bits_12", 7, "  input_bits: 12", r"matrix\.input_bits", r"must be 8 or 16"),
    ("accumulator_bits_huge", 9, "  accumulator_bits: 99999999999999999999",
     r"matrix\.accumulator_bits", r"expected an integer"),
    ("lanes_huge", 11, "  lanes: 65536", r"vector\.lanes", r"must be between 1 and 4096"),
    ("clock_zero", 3, "clock_mhz: 0", r"clock_mhz", r"greater than 0"),
    ("clock_inf", 3, "clock_mhz: .inf", r"clock_mhz", r"expected a number"),
    ("clock_nan", 3, "clock_mhz: .nan", r"clock_mhz", r"expected a number"),
    ("clock_1e300", 3, "clock_mhz: 1e300", r"clock_mhz", r"must be at most"),
    ("clock_negative", 3, "clock_mhz: -200", r"clock_mhz", r"greater than 0"),
    ("bandwidth_1_byte_per_second", 19, "  bandwidth: 1B/s", r"dram\.bandwidth",
     r"5e-09 bytes per cycle, below the supported minimum of 1/1024"),
    ("bandwidth_100_kb_per_second", 19, "  bandwidth: 100KB/s", r"dram\.bandwidth",
     r"0\.0005 bytes per cycle, below the supported minimum"),
    ("bandwidth_2000_tb_per_second", 19, "  bandwidth: 2000TB/s", r"dram\.bandwidth",
     r"must be at most 1PB/s"),
    ("bandwidth_zero", 19, "  bandwidth: 0GB/s", r"dram\.bandwidth", r"greater than 0"),
    ("bandwidth_negative", 19, "  bandwidth: -1GB/s", r"dram\.bandwidth", r""),
    ("bandwidth_no_unit", 19, "  bandwidth: 1000", r"dram\.bandwidth", r""),
    ("bandwidth_nan", 19, "  bandwidth: nanGB/s", r"dram\.bandwidth", r""),
    ("latency_negative", 20, "  latency_ns: -1", r"dram\.latency_ns", r"at least 0"),
    ("latency_huge", 20, "  latency_ns: 1e12", r"dram\.latency_ns", r"must be at most"),
    ("burst_not_power_of_two", 21, "  burst_bytes: 48", r"dram\.burst_bytes", r"power of two"),
    ("burst_huge", 21, "  burst_bytes: 1073741824", r"dram\.burst_bytes",
     r"must be between 1 and 65536"),
    ("outstanding_zero", 22, "  max_outstanding_requests: 0", r"dram\.max_outstanding_requests",
     r"must be between 1 and 1048576"),
    ("queue_depth_huge", 24, "  instruction_queue_depth: 4294967296",
     r"queues\.instruction_queue_depth", r"must be between 1 and 65536"),
    ("token_depth_string", 25, "  token_fifo_depth: '8'", r"queues\.token_fifo_depth",
     r"expected an integer"),
    ("unknown_top_key", 2, "descriptoin: typo", r"descriptoin", r"unknown key"),
    ("unknown_matrix_key", 8, "  weight_bitz: 8", r"matrix\.weight_bitz", r"unknown key"),
    ("duplicate_key", 6, "  rows: 16", r"matrix\.rows", r"duplicate key"),
    ("name_with_slash", 1, "name: ../../etc", r"name", r"not a valid name"),
    ("matrix_is_a_list", 4, "matrix: [1, 2]", r"matrix", r"expected a mapping"),
]


def config_cases():
    out = []
    for name, line, text, key, message in CONFIG_MUTATIONS:
        files = {"cfg.yaml": base_config({line: text})}
        if name == "matrix_is_a_list":  # the matrix block's children then hang off nothing
            lines = list(BASE_CONFIG)
            lines[3:9] = ["matrix: [1, 2]"]
            files = {"cfg.yaml": "\n".join(lines) + "\n"}
        out.append(Case("config: values", "config_" + name, files,
                        ["config", "check", "{d}/cfg.yaml"],
                        [r"{d}/cfg\.yaml:" + str(line) + r":\d+: error: " + key + ": .*" + message]))
    documents = [
        ("second_document", base_config(append=["---", "name: other"]), 27,
         r"a second YAML document"),
        ("second_document_bare", base_config(append=["---", "just text"]), 27,
         r"a second YAML document"),
        ("tab_indentation", base_config({6: "\tcols: 16"}), 0, r"invalid YAML|error"),
        ("unclosed_flow", base_config({17: "    holds: [activations, weights"}), 0,
         r"invalid YAML"),
        ("anchor_bomb", "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a]\n"
         "c: &c [*b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c]\n", 1,
         r"unknown key"),
        ("top_level_scalar", "just a string\n", 1, r"the top level must be a mapping"),
        ("top_level_list", "- 1\n- 2\n", 1, r"the top level must be a mapping"),
        ("empty_file", "", 1, r"the config is empty"),
        ("only_comments", "# nothing here\n", 1, r"the config is empty"),
        ("binary_garbage", bytes(range(256)) * 4, 1, r"the top level must be a mapping"),
        ("invalid_utf8_description", base_config({2: "description: caf\xe9"}).encode("latin-1")
         + b"", -1, r""),
        ("nul_bytes", base_config().encode() + b"\0\0\0", 26, r"invalid YAML"),
        # yaml-cpp 0.7 loops forever, growing, on a ',' outside a flow collection (fuzz_config)
        ("comma_outside_flow", ",\n", 1, r"invalid YAML: unexpected ','"),
        ("comma_after_flow_map", "# c\n{a: 1},\n", 2, r"invalid YAML: unexpected ','"),
    ]
    for name, text, line, message in documents:
        where = r":\d+:\d+" if line == 0 else (r"(:\d+)*" if line == -1 else f":{line}:\\d+")
        exit_code = 0 if name == "invalid_utf8_description" else 1
        expect = [] if exit_code == 0 else [r"{d}/cfg\.yaml" + where + r": error: .*" + message]
        out.append(Case("config: documents", "config_" + name, {"cfg.yaml": text},
                        ["config", "check", "{d}/cfg.yaml"], expect, exit_code=exit_code))
    # `config show --json` of a description that is not UTF-8: escaped, not an abort.
    out.append(Case("config: documents", "config_show_json_latin1_description",
                    {"cfg.yaml": base_config({2: "description: caf\xe9"}).encode("latin-1")},
                    ["config", "show", "--json", "{d}/cfg.yaml"], [], exit_code=0))
    return out


# ---------------------------------------------------------------------------------------------
# Files that are not regular files, or too large, wherever a file is read.
NOT_FILES = [
    ("directory", DIR, r"is a directory, expected a regular file"),
    ("fifo", FIFO, r"is a FIFO \(named pipe\), expected a regular file"),
    ("missing", None, r"cannot open: No such file or directory"),
    ("dangling_symlink", link("nowhere"), r"cannot open: No such file or directory"),
    ("symlink_to_directory", link("."), r"is a directory, expected a regular file"),
]


def path_reader_cases():
    """(command template, input name, size limit in bytes) per reader; {in} is the input."""
    readers = [
        ("config check", ["config", "check", "{in}"], "x.yaml", 16 << 20),
        ("asm", ["asm", "{in}", "-o", "{d}/out.bin"], "x.tasm", 1 << 30),
        ("disasm", ["disasm", "{in}", "-o", "{d}/out.tasm"], "x.bin", 1 << 30),
        ("disasm stdout", ["disasm", "{in}"], "x.bin", 1 << 30),
        ("infer --input", ["infer", "--model", "tiny_conv", "--input", "{in}", "--output",
                           "{d}/out.npy"], "x.npy", (4 << 30) + 65536),
        ("sweep spec", ["sweep", "{in}", "--list"], "x.yaml", 16 << 20),
        ("sim --hw", ["sim", "{d}/p.tasm", "--hw", "{in}"], "x.yaml", 16 << 20),
        ("sim program", ["sim", "{in}", "--hw", "{d}/hw.yaml"], "x.bin", 1 << 30),
        ("sim --dram", ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml", "--dram", "{in}"], "x.bin",
         4 << 30),
        ("asm --hw", ["asm", "{d}/p.tasm", "-o", "{d}/out.bin", "--hw", "{in}"], "x.yaml",
         16 << 20),
        ("import --model", ["import", "--model", "{in}", "-o", "{d}/out.txt"], "x.onnx",
         (2 << 30) - 1),
    ]
    out = []
    for label, argv, name, limit in readers:
        slug = label.replace(" ", "_").replace("-", "")
        common = {"p.tasm": "finish\n", "hw.yaml": base_config()}
        for kind, special, message in NOT_FILES:
            if label == "sim program" and kind in ("directory", "symlink_to_directory"):
                # A folder is a run folder for `tessel sim`: it must hold a program.
                message = r"program: the folder has no program\.bin or program\.tasm"
            files = dict(common)
            if special is not None:
                files[name] = special
            out.append(Case("paths: non-regular inputs", f"read_{slug}_{kind}", files,
                            [a.replace("{in}", "{d}/" + name) for a in argv],
                            [r"{d}/" + re.escape(name) + r": error: " + message]))
        # /dev/zero: a device with no end; refused, never read. A model is named by its .onnx
        # suffix (anything else is a zoo name): a link x.onnx -> /dev/zero stands for it.
        if name.endswith(".onnx"):
            files = dict(common)
            files[name] = link("/dev/zero")
            out.append(Case("paths: non-regular inputs", f"read_{slug}_dev_zero", files,
                            [a.replace("{in}", "{d}/" + name) for a in argv],
                            [r"{d}/" + re.escape(name) +
                             r": error: is a character device, expected a regular file"],
                            timeout=10))
            continue
        out.append(Case("paths: non-regular inputs", f"read_{slug}_dev_zero", dict(common),
                        [a.replace("{in}", "/dev/zero") for a in argv],
                        [r"/dev/zero: error: is a character device, expected a regular file"],
                        timeout=10))
        # One byte over the documented limit (sparse: no disk used). The .npy and DRAM limits
        # (4 GiB) are too large for a scratch folder on some machines; the limit itself is
        # covered by the unit tests.
        if limit <= 1 << 30:
            files = dict(common)
            files[name] = Special("sparse", limit + 1)
            out.append(Case("paths: size limits", f"read_{slug}_over_limit", files,
                            [a.replace("{in}", "{d}/" + name) for a in argv],
                            [r"{d}/" + re.escape(name) + r": error: the file has " +
                             str(limit + 1) + r" bytes, over the limit of " + str(limit)]))
    return out


import re  # noqa: E402  (used above in the templates)


# ---------------------------------------------------------------------------------------------
# Outputs that are inputs: refused before anything is read, the input unchanged.
def output_cases():
    same = r"error: the output is the same file as the input"
    tasm = "finish\n"
    onnx = b"\x08\x07\x12\x04fake"  # not read: the refusal comes first
    rows = [
        ("asm_o_is_input", {"p.tasm": tasm}, ["asm", "{d}/p.tasm", "-o", "{d}/p.tasm"],
         r"{d}/p\.tasm: " + same),
        ("asm_o_is_hw", {"p.tasm": tasm, "hw.yaml": base_config()},
         ["asm", "{d}/p.tasm", "-o", "{d}/hw.yaml", "--hw", "{d}/hw.yaml"],
         r"{d}/hw\.yaml: " + same),
        ("asm_o_symlink_to_input", {"p.tasm": tasm, "out.bin": link("p.tasm")},
         ["asm", "{d}/p.tasm", "-o", "{d}/out.bin"], r"{d}/out\.bin: " + same),
        ("asm_o_hard_link_to_input", {"p.tasm": tasm, "h.tasm": Special("hardlink", "p.tasm")},
         ["asm", "{d}/p.tasm", "-o", "{d}/h.tasm"], r"{d}/h\.tasm: " + same),
        ("asm_o_other_spelling_of_input", {"p.tasm": tasm, "sub": DIR},
         ["asm", "{d}/p.tasm", "-o", "{d}/./sub/../p.tasm"], r"{d}/\./sub/\.\./p\.tasm: " + same),
        ("disasm_o_is_input", {"p.bin": b"TISA"}, ["disasm", "{d}/p.bin", "-o", "{d}/p.bin"],
         r"{d}/p\.bin: " + same),
        ("quantize_out_is_model", {"m.onnx": onnx},
         ["quantize", "--model", "{d}/m.onnx", "--out", "{d}/m.onnx"], r"{d}/m\.onnx: " + same),
        ("quantize_export_is_model", {"m.onnx": onnx},
         ["quantize", "--model", "{d}/m.onnx", "--out", "{d}/q.json", "--export-onnx",
          "{d}/m.onnx"], r"{d}/m\.onnx: " + same),
        ("quantize_dump_is_config", {"m.onnx": onnx, "q.yaml": "bits: 8\n"},
         ["quantize", "--model", "{d}/m.onnx", "--config", "{d}/q.yaml", "--out", "{d}/q.json",
          "--dump-graph", "{d}/q.yaml"], r"{d}/q\.yaml: " + same),
        ("import_o_is_model", {"m.onnx": onnx}, ["import", "--model", "{d}/m.onnx", "-o",
                                                 "{d}/m.onnx"], r"{d}/m\.onnx: " + same),
        ("opt_o_is_model", {"m.onnx": onnx}, ["opt", "--model", "{d}/m.onnx", "-p", "fold-batchnorm",
                                              "-o", "{d}/m.onnx"], r"{d}/m\.onnx: " + same),
        ("infer_output_is_input", {"x.npy": b"\x93NUMPY"},
         ["infer", "--model", "tiny_conv", "--input", "{d}/x.npy", "--output", "{d}/x.npy"],
         r"{d}/x\.npy: " + same),
        ("infer_output_is_model", {"m.onnx": onnx},
         ["infer", "--model", "{d}/m.onnx", "--output", "{d}/m.onnx"], r"{d}/m\.onnx: " + same),
        ("infer_dump_dir_is_a_file", {"notes.txt": "keep me\n"},
         ["infer", "--model", "tiny_conv", "--output", "{d}/out.npy", "--dump-dir",
          "{d}/notes.txt"], r"{d}/notes\.txt: error: is not a regular file|{d}/notes\.txt: error"),
        ("schedule_json_is_hw", {"hw.yaml": base_config()},
         ["schedule", "--model", "tiny_conv", "--hw", "{d}/hw.yaml", "--json", "{d}/hw.yaml"],
         r"{d}/hw\.yaml: " + same),
        ("sim_json_is_program", {"p.tasm": tasm, "hw.yaml": base_config()},
         ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml", "--json", "{d}/p.tasm"],
         r"{d}/p\.tasm: " + same),
        ("sim_dram_out_is_hw", {"p.tasm": tasm, "hw.yaml": base_config()},
         ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml", "--dram-out", "{d}/hw.yaml"],
         r"{d}/hw\.yaml: " + same),
        ("sim_trace_is_program", {"p.tasm": tasm, "hw.yaml": base_config()},
         ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml", "--trace", "{d}/p.tasm"],
         r"{d}/p\.tasm: " + same),
        ("compile_out_is_hw", {"hw.yaml": base_config()},
         ["compile", "--model", "tiny_conv", "--hw", "{d}/hw.yaml", "--out", "{d}/hw.yaml"],
         r"{d}/hw\.yaml: " + same),
        ("compile_out_is_model", {"m.onnx": onnx},
         ["compile", "--model", "{d}/m.onnx", "--out", "{d}/m.onnx"], r"{d}/m\.onnx: " + same),
        ("asm_o_is_directory", {"p.tasm": tasm, "out": DIR},
         ["asm", "{d}/p.tasm", "-o", "{d}/out"], r"{d}/out: error: is a directory; refusing"),
        ("asm_o_is_fifo", {"p.tasm": tasm, "out": FIFO},
         ["asm", "{d}/p.tasm", "-o", "{d}/out"], r"{d}/out: error: is a FIFO"),
        ("asm_o_in_missing_folder", {"p.tasm": tasm},
         ["asm", "{d}/p.tasm", "-o", "{d}/no/such/out.bin"],
         r"{d}/no/such/out\.bin: error: cannot create a temporary file"),
        ("disasm_o_is_directory", {"p.bin": DIR, "out": DIR},
         ["disasm", "{d}/p.bin", "-o", "{d}/out"], r"{d}/p\.bin: error: is a directory"),
    ]
    return [Case("paths: output is an input", "out_" + n, f, a, [e]) for n, f, a, e in rows]


# ---------------------------------------------------------------------------------------------
# .npy network inputs (tiny_conv takes float32 1x3x8x8).
def npy(descr, shape, data, version=1, header_extra=""):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), %s}" % (descr, dims,
                                                                              header_extra)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    if version == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
    else:
        pre = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(header))
    return pre + header.encode() + data


def floats(values):
    return struct.pack("<%df" % len(values), *values)


def npy_cases():
    ok_values = [0.5] * 192
    nan_at_5 = list(ok_values)
    nan_at_5[5] = float("nan")
    inf_last = list(ok_values)
    inf_last[191] = float("inf")
    ninf_first = list(ok_values)
    ninf_first[0] = float("-inf")
    big = list(ok_values)
    big[100] = 3.0e38
    rows = [
        ("nan", npy("<f4", (1, 3, 8, 8), floats(nan_at_5)),
         r"data\[0, 0, 0, 5\]: value is NaN \(flat index 5\)"),
        ("plus_inf", npy("<f4", (1, 3, 8, 8), floats(inf_last)),
         r"data\[0, 2, 7, 7\]: value is \+Inf \(flat index 191\)"),
        ("minus_inf", npy("<f4", (1, 3, 8, 8), floats(ninf_first)),
         r"data\[0, 0, 0, 0\]: value is -Inf"),
        ("float64", npy("<f8", (1, 3, 8, 8), b"\0" * 1536), r"header\.descr: unsupported dtype"),
        ("big_endian", npy(">f4", (1, 3, 8, 8), b"\0" * 768), r"header\.descr: unsupported"),
        ("int8_input", npy("|i1", (1, 3, 8, 8), b"\0" * 192),
         r"header\.descr: the network input %input must be float32, got int8"),
        ("wrong_shape", npy("<f4", (1, 3, 8, 7), b"\0" * 672), r"header\.shape: input has shape"),
        ("fortran", npy("<f4", (1, 3, 8, 8), b"\0" * 768).replace(b"False", b"True "),
         r"header\.fortran_order"),
        ("short_data", npy("<f4", (1, 3, 8, 8), b"\0" * 700),
         r"data: shape \(1, 3, 8, 8\) of float32 needs 768 data bytes but the file has 700"),
        ("long_data", npy("<f4", (1, 3, 8, 8), b"\0" * 800), r"data: .*needs 768 data bytes"),
        ("shape_wraps_uint64", npy("<f4", (4294967296, 4294967296), b""),
         r"header\.shape: the shape needs more than 4294967296 data bytes"),
        ("shape_huge_dim", npy("<f4", (99999999999999999,), b""), r"header\.shape"),
        ("shape_dim_overflow", npy("<f4", (1,), b"").replace(b"(1,)", b"(99999999999999999999,)"),
         r"header\.shape: dimension too large"),
        ("negative_dim", npy("<f4", (1,), b"").replace(b"(1,)", b"(-1,)  "),
         r"header\.shape: expected a non-negative integer"),
        ("bad_magic", b"\x93NUMPX\x01\x00" + b"\0" * 100, r"magic: not a \.npy file"),
        ("version_9", npy("<f4", (1,), floats([1.0]), version=9),
         r"magic: unsupported \.npy format version 9"),
        ("header_len_past_end", b"\x93NUMPY\x01\x00\xff\xff{'descr'", r"header: truncated"),
        ("v2_header_len_4gib", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{", r"header: truncated"),
        ("unknown_header_key", npy("<f4", (1, 3, 8, 8), b"\0" * 768, header_extra="'evil': 1, "),
         r"header\.evil: unknown header key"),
        ("unterminated_string", b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4  ", r"header"),
        ("empty_file", b"", r"magic: not a \.npy file"),
        ("text_file", b"1,2,3\n4,5,6\n", r"magic: not a \.npy file"),
    ]
    out = [Case(".npy network inputs", "npy_" + n, {"x.npy": data},
                ["infer", "--model", "tiny_conv", "--input", "{d}/x.npy", "--output",
                 "{d}/out.npy"], [r"{d}/x\.npy: error: " + e]) for n, data, e in rows]
    return out


# ---------------------------------------------------------------------------------------------
# ISA programs: .tasm text and .bin binaries.
def bin_header(count, version=2, width=32):
    return b"TISA" + struct.pack("<HHI", version, width, count) + b"\0" * 4


def isa_cases():
    finish_word = bytes([0x0a]) + b"\0" * 31
    rows = [
        ("tasm_unknown_mnemonic", {"p.tasm": "jump to=0\n"}, ["asm", "{d}/p.tasm", "-o",
                                                              "{d}/o.bin"], r"{d}/p\.tasm:1:"),
        ("tasm_field_overflow", {"p.tasm": "load sp=0 kind=activations elem=i8 sram_addr=0x0 "
                                 "dram_addr=0x1 y_size=1 x_size=1 c_size=99999999999999\n"},
         ["asm", "{d}/p.tasm", "-o", "{d}/o.bin"], r"{d}/p\.tasm:1:\d+: error: .*c_size"),
        ("tasm_binary_garbage", {"p.tasm": bytes(range(256))}, ["asm", "{d}/p.tasm", "-o",
                                                                 "{d}/o.bin"], r"{d}/p\.tasm:1"),
        ("tasm_empty_sram_name", {"p.tasm": "load sp=nonesuch kind=activations elem=i8 "
                                  "sram_addr=0 dram_addr=0 y_size=1 x_size=1 c_size=1\n"},
         ["asm", "{d}/p.tasm", "-o", "{d}/o.bin"], r"{d}/p\.tasm:1:\d+: error: "),
        ("bin_truncated_header", {"p.bin": b"TISA\x01"}, ["disasm", "{d}/p.bin"],
         r"{d}/p\.bin: error: "),
        ("bin_bad_magic", {"p.bin": b"ELF\x7f" + b"\0" * 60}, ["disasm", "{d}/p.bin"],
         r"{d}/p\.bin: error: "),
        ("bin_wrong_version", {"p.bin": bin_header(1, version=7) + finish_word},
         ["disasm", "{d}/p.bin"], r"{d}/p\.bin: error: .*version"),
        ("bin_count_says_4g", {"p.bin": bin_header(0xFFFFFFFF) + finish_word},
         ["disasm", "{d}/p.bin"], r"{d}/p\.bin: error: "),
        ("bin_count_short", {"p.bin": bin_header(2) + finish_word}, ["disasm", "{d}/p.bin"],
         r"{d}/p\.bin: error: "),
        ("bin_reserved_bits", {"p.bin": bin_header(1) + bytes([0x0a]) + b"\xff" * 31},
         ["disasm", "{d}/p.bin"], r"{d}/p\.bin: error: instruction 0"),
        ("sim_bin_count_says_4g", {"p.bin": bin_header(0xFFFFFFFF) + finish_word,
                                   "hw.yaml": base_config()},
         ["sim", "{d}/p.bin", "--hw", "{d}/hw.yaml"], r"{d}/p\.bin: error: header\.count"),
        ("sim_dram_size_2pow60", {"p.tasm": "finish\n", "hw.yaml": base_config()},
         ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml", "--dram-size", "1152921504606846976"],
         r"--dram-size: error: 1152921504606846976 bytes is over the limit"),
        ("sim_config_1tib_scratchpad", {"p.tasm": "finish\n",
                                        "hw.yaml": base_config({14: "    size: 1TiB"})},
         ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml"],
         r"{d}/hw\.yaml:14:\d+: error: scratchpads\[0\]\.size: must be at most 1GiB"),
        ("sim_config_1bps_bus", {"p.tasm": "finish\n",
                                 "hw.yaml": base_config({19: "  bandwidth: 1B/s"})},
         ["sim", "{d}/p.tasm", "--hw", "{d}/hw.yaml"],
         r"{d}/hw\.yaml:19:\d+: error: dram\.bandwidth: 1B/s at 200 MHz"),
    ]
    return [Case("ISA programs", "isa_" + n, f, a, [e]) for n, f, a, e in rows]


# ---------------------------------------------------------------------------------------------
# Compile folders: incomplete or mixed folders are refused naming what is missing or different.
def compile_folder_cases():
    listed = '{"files": {"program.bin": {"bytes": 44, "fnv1a64": "0000000000000000"}}}\n'
    rows = [
        ("interrupted_compile", {"f/schedule.json": "{}\n", "f/program.tasm": "finish\n",
                                 "f/hw.yaml": base_config()},
         r"{d}/f/compile\.json: error: missing: the folder is an incomplete compile"),
        ("listed_file_missing", {"f/compile.json": listed, "f/program.tasm": "finish\n",
                                 "f/hw.yaml": base_config()},
         r"{d}/f/program\.bin: error: missing: compile\.json lists it"),
        ("listed_file_differs", {"f/compile.json": listed, "f/program.bin": b"x" * 44,
                                 "f/hw.yaml": base_config()},
         r"{d}/f/program\.bin: error: does not match compile\.json \(44 bytes"),
        ("listed_file_other_size", {"f/compile.json": listed, "f/program.bin": b"x" * 40,
                                    "f/hw.yaml": base_config()},
         r"{d}/f/program\.bin: error: does not match compile\.json \(40 bytes.*listed: 44"),
        ("listed_name_escapes", {"f/compile.json": '{"files": {"../x": {"bytes": 1, '
                                 '"fnv1a64": "00"}}}', "f/program.tasm": "finish\n",
                                 "f/hw.yaml": base_config()},
         r"{d}/f/compile\.json: error: files\.\.\./x: not a plain file name"),
        ("listed_entry_malformed", {"f/compile.json": '{"files": {"program.bin": 5}}',
                                    "f/program.tasm": "finish\n", "f/hw.yaml": base_config()},
         r"{d}/f/compile\.json: error: files\.program\.bin: expected"),
        ("compile_json_not_json", {"f/compile.json": "{not json", "f/program.tasm": "finish\n",
                                   "f/hw.yaml": base_config()},
         r"{d}/f/compile\.json: error: invalid JSON"),
        ("compile_json_is_directory", {"f/compile.json": DIR, "f/program.tasm": "finish\n",
                                       "f/hw.yaml": base_config()},
         r"{d}/f/compile\.json: error: is a directory"),
        ("manifest_is_fifo", {"f/manifest.json": FIFO, "f/program.tasm": "finish\n",
                              "f/hw.yaml": base_config()},
         r"{d}/f/manifest\.json: error: is a FIFO"),
        ("fpga_interrupted", {"f/synth.ys": "read_verilog x.sv\n", "f/program.tasm": "finish\n",
                              "f/hw.yaml": base_config()},
         r"{d}/f/fpga\.json: error: missing: the folder is an incomplete `tessel fpga` run"),
        ("fpga_listed_file_differs", {"f/fpga.json": '{"files": {"rtl/top.sv": {"bytes": 3, '
                                      '"fnv1a64": "0000000000000000"}}}',
                                      "f/rtl/top.sv": "abc", "f/program.tasm": "finish\n",
                                      "f/hw.yaml": base_config()},
         r"{d}/f/rtl/top\.sv: error: does not match fpga\.json \(3 bytes"),
        ("fpga_listed_name_escapes", {"f/fpga.json": '{"files": {"rtl/../../x": {"bytes": 1, '
                                      '"fnv1a64": "00"}}}', "f/program.tasm": "finish\n",
                                      "f/hw.yaml": base_config()},
         r"{d}/f/fpga\.json: error: files\.rtl/\.\./\.\./x: not a relative path inside"),
        ("hw_yaml_second_document", {"f/program.tasm": "finish\n",
                                     "f/hw.yaml": base_config(append=["---", "x: 1"])},
         r"{d}/f/hw\.yaml:27:1: error: a second YAML document"),
    ]
    return [Case("compile folders", "folder_" + n, f, ["sim", "{d}/f"], [e])
            for n, f, e in rows]


# ---------------------------------------------------------------------------------------------
# Sweep specs and results files.
def spec(quantization="{bits: 8}", extra=""):
    return ("name: hostile\nmode: synthetic\nhw: hw.yaml\nquantization: " + quantization +
            "\nmodels: [tiny_conv]\npolicies: [layerwise]\n" + extra)


def sweep_cases():
    hw = base_config()
    rows = [
        ("quantization_unknown_key", spec("{bits: 8, bitz: 16}"),
         r"{d}/s\.yaml:4:\d+: error: quantization\.bitz: unknown key"),
        ("quantization_bits_12", spec("{bits: 12}"),
         r"{d}/s\.yaml:4:\d+: error: quantization\.bits: bits must be 8 or 16"),
        ("quantization_method_typo", spec("{method: minmux}"),
         r"{d}/s\.yaml:4:\d+: error: quantization\.method"),
        ("second_document", spec() + "---\nname: other\n",
         r"{d}/s\.yaml:8:1: error: a second YAML document"),
        ("comma_outside_flow", "# a spec\n,\n", r"{d}/s\.yaml:2:1: error: invalid YAML: unexpected ','"),
        ("hw_is_directory", spec().replace("hw: hw.yaml", "hw: sub"),
         r"{d}/sub: error: is a directory"),
        ("hw_second_document", spec().replace("hw: hw.yaml", "hw: hw2.yaml"),
         r"{d}/hw2\.yaml:27:1: error: a second YAML document"),
        ("not_a_mapping", "- a\n- b\n", r"{d}/s\.yaml:1:1: error: "),
        ("unknown_top_key", spec(extra="polices: [x]\n"), r"{d}/s\.yaml:7:1: error: polices"),
    ]
    out = [Case("sweep specs", "sweep_" + n,
                {"s.yaml": text, "hw.yaml": hw, "hw2.yaml": base_config(append=["---", "x: 1"]),
                 "sub": DIR}, ["sweep", "{d}/s.yaml", "--list"], [e]) for n, text, e in rows]
    # --out on a file that is not a results file: refused, and its last line kept.
    for name, content, message in [
            ("out_is_notes", b"first line\nlast line without newline",
             r"{d}/notes\.txt:1: not a results line"),
            ("out_is_single_json", b'{"name": 1}', r"not the torn start of one"),
            ("out_is_binary", bytes(range(256)), r"not a results line")]:
        out.append(Case("sweep specs", "sweep_" + name, {"s.yaml": spec(), "hw.yaml": hw,
                                                          "notes.txt": content},
                        ["sweep", "{d}/s.yaml", "--out", "{d}/notes.txt"], [message]))
    out.append(Case("sweep specs", "sweep_out_is_directory",
                    {"s.yaml": spec(), "hw.yaml": hw, "r": DIR},
                    ["sweep", "{d}/s.yaml", "--out", "{d}/r"], [r"{d}/r"]))
    return out


# ---------------------------------------------------------------------------------------------
# ONNX models past the import limits (compiler/frontend/onnx_import.hpp; docs/onnx-import.md
# "Limits"), written with a minimal protobuf encoder (no onnx package needed).
def _varint(n):
    n &= (1 << 64) - 1  # negative int64 as ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field, n):
    return _varint(field << 3) + _varint(n)


def _bytes(field, payload):
    payload = payload.encode() if isinstance(payload, str) else payload
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _value_info(name, dims):
    """ValueInfoProto: a float tensor of the given dims (no shape when dims is empty)."""
    tensor_type = _int(1, 1)
    if dims:
        tensor_type += _bytes(2, b"".join(_bytes(1, _int(1, d)) for d in dims))
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _attr(name, value):
    """AttributeProto: an int (type 2) or a list of ints (type 7)."""
    if isinstance(value, list):
        return _bytes(1, name) + b"".join(_int(8, v) for v in value) + _int(20, 7)
    return _bytes(1, name) + _int(3, value) + _int(20, 2)


def _node(op, name, inputs, outputs, attrs=()):
    return (b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs) +
            _bytes(3, name) + _bytes(4, op) + b"".join(_bytes(5, _attr(k, v)) for k, v in attrs))


def _initializer(name, dims, floats=None, int64s=None):
    """TensorProto: FLOAT (1) with float_data, or INT64 (7) with int64_data."""
    body = b"".join(_int(1, d) for d in dims)
    if int64s is not None:
        body += _int(2, 7) + b"".join(_int(7, v) for v in int64s)
    else:
        body += _int(2, 1) + b"".join(_varint(4 << 3 | 5) + struct.pack("<f", v) for v in floats)
    return body + _bytes(8, name)


def onnx_model(nodes, inputs, outputs, initializers=()):
    """A ModelProto of opset 13: nodes as _node(...), inputs/outputs as (name, dims)."""
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "g")
    graph += b"".join(_bytes(5, t) for t in initializers)
    graph += b"".join(_bytes(11, _value_info(n, d)) for n, d in inputs)
    graph += b"".join(_bytes(12, _value_info(n, d)) for n, d in outputs)
    return _int(1, 8) + _bytes(8, _bytes(1, "") + _int(2, 13)) + _bytes(7, graph)


def onnx_cases():
    big = 1 << 62
    limit = str(1 << 30)
    conv_w = _initializer("w", [1, 1, 1, 1], floats=[1.0])
    lstm_w = [_initializer("W", [1, 4, 1], floats=[0.5] * 4),
              _initializer("R", [1, 4, 1], floats=[0.5] * 4)]
    x4 = [("x", [1, 1, 4, 4])]
    y = [("y", [])]
    rows = [
        # (name, model, where in the message, message)
        ("input_dims_1e9",
         onnx_model([_node("Relu", "r", ["x"], ["y"])], [("x", [1, 3, 10**9, 10**9])], y),
         r"graph input 0 'x'", r"shape \[1,3,1000000000,1000000000\] has more than " + limit +
         r" elements"),
        ("input_dims_wrap_int64",
         onnx_model([_node("Relu", "r", ["x"], ["y"])], [("x", [1 << 32, 1 << 32, 4])], y),
         r"graph input 0 'x'", r"shape \[4294967296,4294967296,4\] has more than " + limit),
        ("conv_pads_2p62",
         onnx_model([_node("Conv", "c", ["x", "w"], ["y"], [("pads", [big, 0, 0, 0])])], x4, y,
                    [conv_w]),
         r"node 0 'c' \(Conv\)", r"pads \[" + str(big) + r",0,0,0\]: " + str(big) +
         r" is over the limit of " + limit),
        ("conv_strides_2p62",
         onnx_model([_node("Conv", "c", ["x", "w"], ["y"], [("strides", [big, 1])])], x4, y,
                    [conv_w]),
         r"node 0 'c' \(Conv\)", r"strides \[" + str(big) + r",1\]: .* over the limit"),
        ("conv_dilations_2p62",
         onnx_model([_node("Conv", "c", ["x", "w"], ["y"], [("dilations", [1, big])])], x4, y,
                    [conv_w]),
         r"node 0 'c' \(Conv\)", r"dilations \[1," + str(big) + r"\]: .* over the limit"),
        ("maxpool_kernel_2p62",
         onnx_model([_node("MaxPool", "p", ["x"], ["y"], [("kernel_shape", [big, 1])])], x4, y),
         r"node 0 'p' \(MaxPool\)", r"kernel_shape \[" + str(big) + r",1\]: .* over the limit"),
        ("pad_amount_2p62",
         onnx_model([_node("Pad", "p", ["x", "pads"], ["y"])], x4, y,
                    [_initializer("pads", [8], int64s=[0, 0, big, 0, 0, 0, 0, 0])]),
         r"node 0 'p' \(Pad\)", r"pads \[0,0," + str(big) + r",0,0,0,0,0\]: .* over the limit"),
        ("averagepool_pad_equals_kernel",
         onnx_model([_node("AveragePool", "a", ["x"], ["y"],
                           [("kernel_shape", [2, 2]), ("pads", [2, 0, 0, 0])])], x4, y),
         r"node 0 'a' \(AveragePool\)", r"pads \[2,0,0,0\]: pad 2 on axis 2 is not smaller "
         r"than kernel_shape "
         r"\[2,2\] \(a window would lie wholly in the padding\)"),
        ("averagepool_end_pad_over_kernel",
         onnx_model([_node("AveragePool", "a", ["x"], ["y"],
                           [("kernel_shape", [3, 3]), ("pads", [1, 1, 1, 5])])],
                    [("x", [1, 1, 8, 8])], y),
         r"node 0 'a' \(AveragePool\)", r"pads \[1,1,1,5\]: pad 5 on axis 3 is not smaller"),
        ("maxpool_pad_over_kernel",
         onnx_model([_node("MaxPool", "m", ["x"], ["y"],
                           [("kernel_shape", [1, 1]), ("pads", [0, 1, 0, 0])])], x4, y),
         r"node 0 'm' \(MaxPool\)", r"pads \[0,1,0,0\]: pad 1 on axis 3 is not smaller than "
         r"kernel_shape \[1,1\]"),
        ("expand_to_2p32_elements",
         onnx_model([_node("Expand", "e", ["x", "s"], ["y"])], [("x", [1, 1])], y,
                    [_initializer("s", [2], int64s=[65536, 65536])]),
         r"node 0 'e' \(Expand\)", r"shape \[65536,65536\] is too large"),
        ("reshape_to_2p40_elements",
         onnx_model([_node("Reshape", "r", ["x", "s"], ["y"])], [("x", [1, 1])], y,
                    [_initializer("s", [2], int64s=[1 << 20, 1 << 20])]),
         r"node 0 'r' \(Reshape\)", r"shape \[1048576,1048576\] is too large"),
        ("broadcast_result_2p32_elements",
         onnx_model([_node("Add", "add", ["a", "b"], ["y"])], [("a", [65536, 1]), ("b", [1, 65536])],
                    y),
         r"node 0 'add' \(Add\)", r"result 'y': shape \[65536,65536\] has more than " + limit),
        ("lstm_sequence_100000_steps",
         onnx_model([_node("LSTM", "l", ["x", "W", "R"], ["y"], [("hidden_size", 1)])],
                    [("x", [100000, 1, 1])], y, lstm_w),
         r"node 0 'l' \(LSTM\)", r"sequence length 100000 is over the limit of 16384"),
        ("lstm_hidden_size_2p62",
         onnx_model([_node("LSTM", "l", ["x", "W", "R"], ["y"], [("hidden_size", big)])],
                    [("x", [2, 1, 1])], y, lstm_w),
         r"node 0 'l' \(LSTM\)", r"hidden_size " + str(big) + r" is outside \[1, 65536\]"),
        ("gru_hidden_size_negative",
         onnx_model([_node("GRU", "g", ["x", "W", "R"], ["y"], [("hidden_size", -3)])],
                    [("x", [2, 1, 1])], y,
                    [_initializer("W", [1, 3, 1], floats=[0.5] * 3),
                     _initializer("R", [1, 3, 1], floats=[0.5] * 3)]),
         r"node 0 'g' \(GRU\)", r"hidden_size -3 is outside \[1, 65536\]"),
    ]
    out = []
    for name, model, where, message in rows:
        commands = [["import", "--model", "{d}/m.onnx", "-o", "{d}/out.txt"]]
        if name.startswith(("input_dims", "averagepool")):  # the issue's `infer` examples
            commands.append(["infer", "--model", "{d}/m.onnx", "--output", "{d}/out.npy"])
        for command in commands:
            out.append(Case("onnx: import limits", f"onnx_{command[0]}_{name}", {"m.onnx": model},
                            command, [r"{d}/m\.onnx: error: " + where + ": " + message]))
    return out


def all_cases():
    return (config_cases() + path_reader_cases() + output_cases() + npy_cases() + isa_cases() +
            compile_folder_cases() + sweep_cases() + onnx_cases())
