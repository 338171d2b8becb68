"""The machine's fp32 matrix-product peak on one core, as LibTorch's BLAS reaches it.

A 1024-cubed torch.mm (sgemm in the libblas.so.3 LibTorch calls, the same library slimtrain's
LibTorch uses) on one thread, best of --repeats after a warm-up: the roofline's ceiling for
bench/train. With --seconds S, the rate sustained over S seconds instead (bench/train runs two
at once that way: what two busy cores of this machine give each, the ceiling of 1 -> 2 rank
scaling). Prints: GEMM n=1024 threads=1 gflops=... blas=...
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=0.0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    n = args.n
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        torch.mm(a, b)
    best = float("inf")
    if args.seconds > 0:
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            torch.mm(a, b)
            count += 1
        best = (time.perf_counter() - start) / count
    for _ in range(args.repeats if args.seconds <= 0 else 0):
        t = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    blas = "unknown"
    try:
        # Which libblas the process mapped (the same alternative slimtrain's LibTorch resolves).
        for line in open("/proc/self/maps"):
            if "blas" in line:
                blas = line.split()[-1]
                break
    except OSError:
        pass
    print(f"GEMM n={n} threads=1 gflops={2 * n ** 3 / best / 1e9:.1f} blas={blas}")


if __name__ == "__main__":
    main()
