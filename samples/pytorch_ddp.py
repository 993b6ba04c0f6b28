#!/usr/bin/env python3
"""A small PyTorch DDP training loop with PyTorch-style NVTX step markers, for recording real
GPU runs with Syncopate (and for bench/gpu_check.sh, which compares the collector with
torch.profiler on it).

Every step is inside an NVTX range named ``ProfilerStep#<n>`` (numbered from 0 over warm-up and
measured steps, as torch.profiler names its steps), with ``forward``, ``backward`` and
``optimizer`` ranges inside; DDP's gradient all-reduces run in backward.

    # one GPU, no launcher (the rendezvous defaults to this host):
    syncopate record -o run -- python3 samples/pytorch_ddp.py --steps 20
    # several GPUs:
    syncopate record -o run -- torchrun --nproc-per-node 8 samples/pytorch_ddp.py --steps 20

``--torch-profile FILE`` also traces the measured steps with torch.profiler and writes its
Chrome trace to FILE (on rank 0). Do not combine it with the collector's CUPTI backend: CUPTI
serves one client per process.

Each rank prints ``step=<n> phase=warmup|measured time_ms=<t> loss=<l>`` per step and, at the
end, ``summary steps=<n> warmup=<w> mean_ms=<t> world_size=<p>``.
"""

import argparse
import os
import sys


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="measured steps (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="steps before them (default 5)")
    parser.add_argument("--batch", type=int, default=32, help="samples per rank and step (default 32)")
    parser.add_argument("--width", type=int, default=1024, help="hidden width of the model (default 1024)")
    parser.add_argument("--layers", type=int, default=8, help="residual MLP blocks (default 8)")
    parser.add_argument("--bucket-mb", type=float,
                        help="DDP's bucket_cap_mb: every bucket, the first one too, cut at this many MiB "
                             "(default: unset, DDP's 25 MiB buckets after a first one of 1 MiB)")
    parser.add_argument("--first-bucket-bytes", type=int,
                        help="with --bucket-mb unset, DDP's first bucket cut at this many bytes "
                             "(torch.distributed._DEFAULT_FIRST_BUCKET_BYTES, which DDP reads only then)")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="bfloat16",
                        help="autocast precision of the forward pass (default bfloat16)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--torch-profile", metavar="FILE",
                        help="trace the measured steps with torch.profiler into this Chrome trace (rank 0)")
    arguments = parser.parse_args(argv)
    for name in ("steps", "batch", "width", "layers"):
        if getattr(arguments, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if arguments.warmup < 0:
        parser.error("--warmup must not be negative")
    if arguments.bucket_mb is not None and arguments.bucket_mb <= 0:
        parser.error("--bucket-mb must be positive")
    if arguments.first_bucket_bytes is not None:
        if arguments.first_bucket_bytes < 1:
            parser.error("--first-bucket-bytes must be positive")
        if arguments.bucket_mb is not None:
            parser.error("--first-bucket-bytes applies only with --bucket-mb unset: DDP then cuts the first bucket at "
                         "the cap too")
    return arguments


def rendezvous_defaults():
    """Without a launcher, this process is the one rank of a one-rank job on this host."""
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")


def main(argv):
    arguments = parse_arguments(argv)
    try:
        import torch
        import torch.distributed as dist
        from torch import nn
        from torch.nn.parallel import DistributedDataParallel
    except ImportError as error:
        print(f"pytorch_ddp: PyTorch is needed ({error}); install it on a machine with an NVIDIA GPU",
              file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("pytorch_ddp: no CUDA device is visible; this sample needs an NVIDIA GPU", file=sys.stderr)
        return 1

    rendezvous_defaults()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    torch.manual_seed(arguments.seed + rank)

    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.norm = nn.LayerNorm(width)
            self.up = nn.Linear(width, 4 * width)
            self.down = nn.Linear(4 * width, width)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    model = nn.Sequential(*[Block(arguments.width) for _ in range(arguments.layers)]).cuda()
    if arguments.first_bucket_bytes is not None:
        dist._DEFAULT_FIRST_BUCKET_BYTES = arguments.first_bucket_bytes
    model = DistributedDataParallel(model, bucket_cap_mb=arguments.bucket_mb)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    autocast_dtype = torch.bfloat16 if arguments.dtype == "bfloat16" else torch.float32
    inputs = torch.randn(arguments.batch, arguments.width, device="cuda")
    targets = torch.randn(arguments.batch, arguments.width, device="cuda")

    profiler = None
    if arguments.torch_profile and rank == 0:
        from torch.profiler import ProfilerActivity, profile, schedule
        profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                           schedule=schedule(wait=0, warmup=arguments.warmup, active=arguments.steps, repeat=1),
                           on_trace_ready=lambda p: p.export_chrome_trace(arguments.torch_profile))
        profiler.start()

    nvtx = torch.cuda.nvtx
    times = []
    total = arguments.warmup + arguments.steps
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    for step in range(total):
        nvtx.range_push(f"ProfilerStep#{step}")
        start_event.record()
        nvtx.range_push("forward")
        with torch.autocast(device_type="cuda", dtype=autocast_dtype, enabled=autocast_dtype != torch.float32):
            loss = torch.nn.functional.mse_loss(model(inputs).float(), targets)
        nvtx.range_pop()
        nvtx.range_push("backward")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        optimizer.step()
        nvtx.range_pop()
        end_event.record()
        nvtx.range_pop()
        if profiler is not None:
            profiler.step()
        end_event.synchronize()
        elapsed = start_event.elapsed_time(end_event)
        measured = step >= arguments.warmup
        if measured:
            times.append(elapsed)
        print(f"step={step} phase={'measured' if measured else 'warmup'} time_ms={elapsed:.3f} loss={loss.item():.6f}",
              flush=True)
    if profiler is not None:
        profiler.stop()
    torch.cuda.synchronize()
    print(f"summary steps={arguments.steps} warmup={arguments.warmup} mean_ms={sum(times) / len(times):.3f} "
          f"world_size={world_size} rank={rank}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
