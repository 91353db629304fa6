"""image_pipeline_torch.py: scripts/image_pipeline.lua written with PyTorch.

The baseline of bench_image_pipeline.sh: the same steps on the same image
on cuda:0 (a separable box blur of radius R with the nearest edge pixel
repeated, the Sobel edge magnitude of the blurred image, a 256-bin
histogram of it by floor(v), read back to the host: torch.histc, which
counts in shared memory per block as the engine's kernel does), run
eagerly and under torch.compile. Prints one line per mode:

    <mode> <median_ms> <min_ms> <max_ms>

timed from the host around each run, after a synchronize, to the
histogram's arrival on the host (as the engine's graph run ends with its
host op reading the bins).
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def checker(w, h, device):
    # dc.image.generate(w, h, "checker") with the script's cell size.
    cell = max(2, min(w, h) // 8)
    x = torch.arange(w, device=device) // cell
    y = torch.arange(h, device=device) // cell
    return (((y[:, None] + x[None, :]) % 2) * 255).to(torch.float32)


SOBEL_X = [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]
SOBEL_Y = [[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]


def make_pipeline(radius, device):
    k = 2 * radius + 1
    kernels = torch.tensor([[SOBEL_X], [SOBEL_Y]], device=device)

    def pipeline(img):
        x = img[None, None]
        t = F.avg_pool2d(F.pad(x, (radius, radius, 0, 0), mode="replicate"),
                         (1, k), stride=1)
        blurred = F.avg_pool2d(F.pad(t, (0, 0, radius, radius),
                                     mode="replicate"), (k, 1), stride=1)
        g = F.conv2d(F.pad(blurred, (1, 1, 1, 1), mode="replicate"), kernels)
        edges = torch.sqrt(g[:, 0] * g[:, 0] + g[:, 1] * g[:, 1])
        # Bins of width 1 from 0: bin floor(v) for v in [0, 256), as the
        # engine's floor(clamp(v, 0, 255)) for the blurred image's values.
        bins = torch.histc(blurred, bins=256, min=0.0, max=256.0)
        return blurred, edges, bins

    return pipeline


def time_runs(fn, img, runs, warmup):
    for _ in range(warmup):
        fn(img)[2].cpu()
    samples = []
    for _ in range(runs):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn(img)[2].cpu()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples), min(samples), max(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="4096x4096")
    parser.add_argument("--radius", type=int, default=1)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    device = torch.device("cuda:0")
    img = checker(w, h, device)
    pipeline = make_pipeline(args.radius, device)
    print("eager %.3f %.3f %.3f" % time_runs(pipeline, img, args.runs,
                                             args.warmup))
    try:
        compiled = torch.compile(pipeline)
        print("compile %.3f %.3f %.3f" % time_runs(compiled, img, args.runs,
                                                   args.warmup))
    except Exception as e:  # no compiler toolchain: say so, go on
        print("compile-failed %s" % str(e).splitlines()[0][:200],
              file=sys.stderr)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
