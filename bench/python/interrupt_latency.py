"""Ctrl-C latency of each long call: a child runs the call, the parent sends SIGINT `--after`
seconds into it and prints how long the KeyboardInterrupt took and its note (whether the C++
stopped early). A measurement, not a test (tests/python/test_interrupt.py is the test).

    PYTHONPATH=build/default/python OMP_NUM_THREADS=1 python3 bench/python/interrupt_latency.py
"""

import argparse
import json
import signal
import subprocess
import sys
import time

SETUP = {
    "schedule": ("g = tessel.load_model('inception_v3', with_weights=False)",
                 "tessel.schedule(g, 'cloud-large', policy='optimal', objective='energy')"),
    "quantize": ("g = tessel.load_model('vgg19')",
                 "tessel.quantize(g, 'npc19-deepfusion', policy='layerwise')"),
    "infer": ("g = tessel.load_model('vgg19'); x = tessel.default_input(g.shape(g.inputs[0]))",
              "tessel.infer(g, x)"),
    "compile": ("g = tessel.load_model('resnet50')",
                "tessel.compile(g, 'npc19-deepfusion', policy='optimal')"),
    "simulate": ("p = tessel.compile('resnet50', 'edge-small', policy='layerwise')",
                 "tessel.simulate(p, trace='/tmp/tessel-interrupt-trace.json')"),
}

CHILD = """
import json, os, time, tessel
{setup}
print("calling", flush=True)
start = time.monotonic()
try:
    {call}
    print(json.dumps({{"finished_s": time.monotonic() - start}}), flush=True)
except KeyboardInterrupt as e:
    print(json.dumps({{"stopped": time.monotonic(), "notes": getattr(e, "__notes__", []),
                      "trace_left": os.path.exists("/tmp/tessel-interrupt-trace.json")}}),
          flush=True)
"""


def measure(name, after):
    setup, call = SETUP[name]
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(setup=setup, call=call)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "calling"
    time.sleep(after)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=600)
    result = json.loads(out.splitlines()[0])
    if "stopped" in result:
        result["latency_s"] = round(result.pop("stopped") - sent, 3)
    print(json.dumps({"call": name, "sigint_after_s": after, **result}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="*", default=list(SETUP))
    parser.add_argument("--after", type=float, default=0.5)
    args = parser.parse_args()
    for name in args.calls:
        measure(name, args.after)


if __name__ == "__main__":
    main()
