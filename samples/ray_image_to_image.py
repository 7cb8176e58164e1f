#!/usr/bin/env python3
"""Upscales or translates a folder tree of pictures on Ray: what `edgegan upscale
MODEL IN/ -o OUT/` (or `translate`) does on one machine, spread over Ray workers. A
picture at IN/a/b/c.jpg is written to OUT/a/b/c.png (or the -f format), subfolders
created, as the CLI's folder mode writes it and with the same pixels.

    pip install . "ray[data]"          # edgegan from the source tree, and Ray Data
    python3 samples/ray_image_to_image.py realesr_x4.egan photos/ big/ --workers 2
    python3 samples/ray_image_to_image.py realesr_x4.egan /nfs/in /nfs/out --address auto --workers 16

The pipeline: the driver lists the pictures (sorted, as the CLI does) into a Ray
Dataset of relative paths; `map_batches` hands them to --workers actors, each holding
ONE `edgegan.ImageToImage` for its whole life (the model is loaded once per worker,
not once per picture); a worker reads each picture, runs it and writes the result with
`edgegan.write_image` (atomically). Pictures travel as paths, not pixels: every worker
must see IN and OUT at the same paths (one machine, or a shared file system).

Memory: each worker memory-maps the .egan file read-only and never writes it, so the
weights are the page cache's pages of that file, one copy per machine however many
workers it runs; each worker owns only its activation arena and the pictures in flight
(docs/image-to-image.md, "Beyond one machine").

Exit codes as the CLI's: 0 every picture written; 1 some failed (one line each, the
others written); 2 nothing run (bad arguments, folder, model, or too few CPUs).
"""

import argparse
import logging
import os
import pathlib
import socket
import sys
import time

import numpy as np

import edgegan

PROG = "ray_image_to_image"
PICTURE_EXTENSIONS = {"png", "jpg", "jpeg", "webp"}


class UsageError(Exception):
    """A bad argument, folder or model: one line, exit 2, nothing run."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own prints the whole usage first
        raise UsageError(message)


def parse_args(argv):
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("model", help=".egan image-to-image or super-resolution model")
    p.add_argument("input", help="folder of .png/.jpg/.jpeg/.webp pictures, walked recursively")
    p.add_argument("output", help="folder to write into (subfolders kept)")
    p.add_argument("--workers", type=int, default=1, help="Ray actors, each with one ImageToImage (default 1)")
    p.add_argument("--threads-per-worker", type=int, default=1,
                   help="CPU threads of each worker's model, and the CPUs it reserves in Ray (default 1)")
    p.add_argument("-s", "--outscale", type=float, help="final size = input size x this, by Lanczos after the model's own scale")
    p.add_argument("-f", "--format", choices=["png", "jpg", "webp"], default="png", help="output format (default png)")
    p.add_argument("--quality", type=int, help="1-100 for jpg and webp (default 95; webp at 100 is lossless)")
    p.add_argument("--tile", type=int, default=0, help="tile side in input pixels (default 0: the whole picture)")
    p.add_argument("--overlap", type=int, default=16, help="input pixels neighbouring tiles share (default 16)")
    p.add_argument("--address", help="a running Ray cluster ('auto' or host:port); default: start a local Ray")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray started without --address (default: all)")
    p.add_argument("-q", "--quiet", action="store_true", help="no Ray progress or logs; only errors and the summary")
    a = p.parse_args(argv)
    if a.workers < 1 or a.threads_per_worker < 1:
        raise UsageError("--workers and --threads-per-worker must be at least 1")
    if a.quality is not None and (a.format == "png" or not 1 <= a.quality <= 100):
        raise UsageError("--quality is 1 to 100 and applies to jpg and webp; png is always lossless")
    if a.num_cpus is not None and (a.address or a.num_cpus < 1):
        raise UsageError("--num-cpus (at least 1) sizes the local Ray; a cluster named by --address has its own")
    return a


def is_picture(name):
    # As the CLI (image_format_of_path): the text after the last dot, in any case.
    return "." in name and name.rpartition(".")[2].lower() in PICTURE_EXTENSIONS


def list_jobs(input_dir, output_dir, extension, model):
    """(input, output) paths relative to the two folders for every picture under
    input_dir, sorted by input path as the CLI sorts its jobs. Refuses before anything
    runs what the CLI refuses: no pictures, two pictures written to one file, an output
    that would overwrite an input or the model."""
    if not input_dir.is_dir():
        raise UsageError(f"'{input_dir}' is not a folder")

    def unreadable(error):
        raise UsageError(f"cannot list '{error.filename}': {error.strerror}")

    inputs = []
    # Symbolic links to folders are not followed (as the CLI: no cycles); links to files are.
    for folder, _, names in os.walk(input_dir, onerror=unreadable):
        inputs += [pathlib.Path(folder, n).relative_to(input_dir) for n in names if is_picture(n) and pathlib.Path(folder, n).is_file()]
    if not inputs:
        raise UsageError(f"'{input_dir}' holds no .png, .jpg, .jpeg or .webp files")
    inputs.sort(key=str)
    protected = {(input_dir / rel).resolve() for rel in inputs} | {model}
    jobs, writers = [], {}
    for rel in inputs:
        out = rel.parent / f"{rel.stem}.{extension}"
        if out in writers:
            raise UsageError(f"'{input_dir / writers[out]}' and '{input_dir / rel}' would both be written to {output_dir / out}")
        if (output_dir / out).resolve() in protected:
            raise UsageError(f"{output_dir / out} would overwrite an input; choose another output folder")
        writers[out] = rel
        jobs.append((str(rel), str(out)))
    return jobs


class PictureWorker:
    """One Ray actor: one ImageToImage, kept for every picture the actor is given."""

    def __init__(self, model, input_dir, output_dir, threads, tile, overlap, outscale, format, quality):
        self.runner = edgegan.ImageToImage(model, threads=threads, tile=tile, overlap=overlap, outscale=outscale)
        self.input_dir, self.output_dir = pathlib.Path(input_dir), pathlib.Path(output_dir)
        self.format, self.quality = format, quality
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def __call__(self, batch):
        errors = []
        for rel_in, rel_out in zip(batch["input"], batch["output"]):
            source, target = self.input_dir / rel_in, self.output_dir / rel_out
            try:
                result = self.runner.run(edgegan.read_image(source))
                target.parent.mkdir(parents=True, exist_ok=True)
                edgegan.write_image(target, result, format=self.format, quality=self.quality)
                errors.append("")
            except (edgegan.Error, ValueError, OSError) as e:
                # A failed picture is reported and skipped, as the CLI does; the read errors name the file already.
                errors.append(str(e) if str(source) in str(e) else f"'{source}': {e}")
        return {"input": batch["input"], "error": np.array(errors, dtype=object), "worker": np.full(len(errors), self.name, dtype=object)}


def start_ray(args):
    import ray

    ray.init(address=args.address, num_cpus=args.num_cpus, include_dashboard=False,
             logging_level=logging.WARNING if args.quiet else logging.INFO, log_to_driver=not args.quiet)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = not args.quiet
    if args.quiet:
        logging.getLogger("ray.data").setLevel(logging.WARNING)
    cpus = ray.cluster_resources().get("CPU", 0)
    if args.workers * args.threads_per_worker > cpus:
        # Ray would wait for ever for CPUs that never come.
        raise UsageError(f"{args.workers} workers x {args.threads_per_worker} threads need "
                         f"{args.workers * args.threads_per_worker} CPUs; Ray has {cpus:g}")


def run_pipeline(args, model, input_dir, output_dir, jobs):
    """Runs the jobs on the Ray already started; returns (failures, pictures per worker)."""
    import ray

    # About 100 blocks per worker, so one finishing early still finds work, and a huge
    # folder is not a million blocks.
    blocks = min(len(jobs), 100 * args.workers)
    rows = [{"input": i, "output": o} for i, o in jobs]
    dataset = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
        PictureWorker,
        fn_constructor_kwargs=dict(model=str(model), input_dir=str(input_dir), output_dir=str(output_dir), threads=args.threads_per_worker,
                                   tile=args.tile, overlap=args.overlap, outscale=args.outscale, format=args.format, quality=args.quality),
        compute=ray.data.ActorPoolStrategy(size=args.workers),  # a fixed pool (Ray 2.51 deprecated concurrency=N for this)
        num_cpus=args.threads_per_worker,
        batch_size=1,  # a picture is a whole model run: nothing gained by grouping them
    )
    failures, per_worker = 0, {}
    for row in dataset.iter_rows():
        per_worker[row["worker"]] = per_worker.get(row["worker"], 0) + 1
        if row["error"]:
            failures += 1
            print(f"{PROG}: error: {row['error']}", file=sys.stderr)
    return failures, per_worker


def main(argv):
    try:
        args = parse_args(argv)
        model = pathlib.Path(args.model).resolve()
        input_dir, output_dir = pathlib.Path(args.input).resolve(), pathlib.Path(args.output).resolve()
        # Loaded and checked here too, so a bad model or option is one line before any worker starts.
        edgegan.ImageToImage(model, threads=1, tile=args.tile, overlap=args.overlap, outscale=args.outscale)
        jobs = list_jobs(input_dir, output_dir, args.format, model)
        start_ray(args)
    except (UsageError, edgegan.Error, ValueError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"{len(jobs)} pictures, {args.workers} workers x {args.threads_per_worker} threads")
    start = time.monotonic()
    failures, per_worker = run_pipeline(args, model, input_dir, output_dir, jobs)
    seconds = time.monotonic() - start
    written = len(jobs) - failures
    shares = " + ".join(str(n) for n in sorted(per_worker.values(), reverse=True))
    print(f"wrote {written} pictures to {output_dir} in {seconds:.2f} s ({written / seconds:.2f} pictures/s; pictures per worker: {shares})")
    if failures:
        print(f"{PROG}: {failures} of {len(jobs)} pictures failed; nothing was written for them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
