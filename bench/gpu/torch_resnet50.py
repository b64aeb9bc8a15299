#!/usr/bin/env python3
"""PyTorch fp16 channels-last ResNet-50 latency on the local GPU: the baseline of bench/gpu/run.sh.

Times the forward pass with CUDA events after a warm-up (cuDNN autotuning on), median of --runs,
and prints one JSON object. Random weights (torchvision resnet50(weights=None)): latency does
not depend on weight values.
"""
import argparse
import json
import statistics

import torch
import torchvision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()

    if not torch.cuda.is_available():
        raise SystemExit("torch_resnet50.py: no CUDA device")
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda")
    model = torchvision.models.resnet50(weights=None).eval().to(device)
    model = model.half().to(memory_format=torch.channels_last)
    x = torch.randn(args.batch, 3, 224, 224, device=device).half()
    x = x.contiguous(memory_format=torch.channels_last)

    times = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            model(x)
        torch.cuda.synchronize()
        for _ in range(args.runs):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            model(x)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
    print(json.dumps({
        "framework": f"torch {torch.__version__} cuDNN {torch.backends.cudnn.version()}",
        "device": torch.cuda.get_device_name(0),
        "model": "resnet50", "dtype": "fp16", "memory_format": "channels_last",
        "batch": args.batch, "runs": args.runs,
        "latency_ms": {"median": statistics.median(times), "min": min(times), "max": max(times)},
    }))


if __name__ == "__main__":
    main()
