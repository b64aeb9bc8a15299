"""The install target: `cmake --install BUILD --component python --prefix P` puts the package
(extension, __init__.py, stubs, py.typed) under P/lib/python3.X/dist-packages, and a fresh
interpreter that has only that on its path imports it from there and gives the in-tree module's
numbers."""

import json
import os
import pathlib
import subprocess
import sys

import tessel

BUILD_DIR = pathlib.Path(tessel.__file__).resolve().parents[2]  # BUILD/python/tessel


def test_the_installed_package_imports_and_gives_the_same_schedule(tmp_path):
    done = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--component", "python",
                           "--prefix", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    site = tmp_path / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / \
        "dist-packages"
    installed = sorted(p.name for p in (site / "tessel").iterdir())
    assert installed == sorted(["__init__.py", "__init__.pyi", "_tessel.pyi", "py.typed",
                                pathlib.Path(tessel._tessel.__file__).name])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    script = ("import json, tessel; s = tessel.schedule('tiny_residual', 'edge-small', "
              "policy='optimal'); print(json.dumps([tessel.__file__, s.to_json()]))")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    where, schedule = json.loads(run.stdout)
    assert pathlib.Path(where).parent == site / "tessel"
    here = tessel.schedule("tiny_residual", "edge-small", policy="optimal")
    drop = ("search_seconds",)
    assert ({k: v for k, v in json.loads(schedule).items() if k not in drop} ==
            {k: v for k, v in json.loads(here.to_json()).items() if k not in drop})
