#!/usr/bin/env python3
"""Merges ski_slope.sh's per-capacity CSVs: results/ski_slope.csv (capacity_bytes added) and
results/ski_slope.md (optimal bytes / bound per capacity, the bound / compulsory in brackets,
cells over 1.10 bold). Fails if any schedule moves fewer bytes than its bound."""
import csv
import sys

UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def size_bytes(text):
    for suffix, scale in UNITS.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * scale)
    return int(text)


def main():
    results, pairs = sys.argv[1], sys.argv[2:]
    rows, caps = [], []
    for pair in pairs:
        name, path = pair.split("=", 1)
        caps.append(name)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                row["capacity"] = name
                row["capacity_bytes"] = str(size_bytes(name))
                rows.append(row)
    below = [r for r in rows if int(r["dram_bytes"]) < int(r["bound_bytes"])
             or int(r["dram_bytes"]) < int(r["bound_group_caps_bytes"])]
    for r in below:
        print(f"error: {r['model']} {r['policy']} {r['objective']} @{r['capacity']}: "
              f"{r['dram_bytes']} bytes < bound {r['bound_bytes']} "
              f"(group caps {r['bound_group_caps_bytes']})", file=sys.stderr)
    fields = list(rows[0].keys())
    with open(f"{results}/ski_slope.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    models = []
    for r in rows:
        if r["model"] not in models:
            models.append(r["model"])
    lines, over = [], 0
    for key, title in (("bound_bytes", "the bound"),
                       ("bound_group_caps_bytes", "the bound with the planner's group caps")):
        lines += [f"optimal (bytes) DRAM bytes / {title} (in brackets: that bound / compulsory)",
                  "", "| net | " + " | ".join(caps) + " |", "|---|" + "---|" * len(caps)]
        for m in models:
            cells = []
            for c in caps:
                r = next((x for x in rows if x["model"] == m and x["capacity"] == c
                          and x["policy"] == "optimal" and x["objective"] == "bytes"), None)
                if r is None:
                    cells.append("none fits")
                    continue
                ratio = int(r["dram_bytes"]) / int(r[key])
                slope = int(r[key]) / int(r["compulsory_bytes"])
                over += ratio > 1.10 and key == "bound_bytes"
                cell = f"{ratio:.3f}"
                cells.append((f"**{cell}**" if ratio > 1.10 else cell) + f" ({slope:.3f})")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(f"{over} of {len(models) * len(caps)} cells over 1.10 (the bound); "
                 f"{len(rows)} schedules, {len(below)} below a bound.")
    with open(f"{results}/ski_slope.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
