"""samples/ray_image_to_image.py, the Ray Data pipeline, on a local Ray of 2 CPUs (2
workers of 1 thread) writes the files `edgegan upscale` writes for the same folder tree,
with the same pixels, and fails on the same damaged picture while writing the others;
bad arguments are one line and exit 2 before Ray starts.

Needs `ray[data]`: scripts/test_package.sh installs it, so in CI this runs; elsewhere
it is skipped when ray cannot be imported."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import edgegan
from conftest import REPO

pytest.importorskip("ray.data", reason="ray[data] is not installed (pip install 'ray[data]'); scripts/test_package.sh installs it")

SAMPLE = REPO / "samples" / "ray_image_to_image.py"
IMAGES = REPO / "tests" / "data" / "images"
SR_ONNX = REPO / "tests" / "golden" / "cases" / "zoo_realesrgan_compact" / "model.onnx"
# No usage report sent from a test run; OpenMP threads wait passively on a shared machine.
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "OMP_WAIT_POLICY": "passive"}


@pytest.fixture(scope="module")
def sr_model(tmp_path_factory):
    """The small x4 Real-ESRGAN-style model, as test_images.py converts it."""
    path = tmp_path_factory.mktemp("sr") / "sr.egan"
    edgegan.convert(SR_ONNX, path)
    return path


def run(*args):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=ENV, timeout=300)
    return done.returncode, done.stdout, done.stderr


def picture_tree(root):
    """Every layout the CLI reads, in subfolders, plus a damaged picture and a text file."""
    (root / "sub" / "deeper").mkdir(parents=True)
    shutil.copy(IMAGES / "rgb.png", root / "rgb.png")
    shutil.copy(IMAGES / "photo.jpg", root / "sub" / "photo.jpg")
    shutil.copy(IMAGES / "transparent_rgba.png", root / "sub" / "deeper" / "transparent_rgba.png")
    shutil.copy(IMAGES / "opaque_grey_alpha.png", root / "sub" / "grey_alpha.PNG")
    edgegan.write_image(root / "sub" / "deeper" / "opaque.webp", edgegan.read_image(IMAGES / "opaque_rgba.png"), quality=100)
    (root / "sub" / "cut.png").write_bytes((IMAGES / "rgb.png").read_bytes()[:60])
    (root / "notes.txt").write_text("not a picture")


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_ray_pipeline_equals_cli_folder_mode(cli, tmp_path, sr_model):
    picture_tree(tmp_path / "in")
    code, _, cli_err = run(cli, "upscale", sr_model, tmp_path / "in", "-o", tmp_path / "cli", "-q", "--threads", 2)
    assert code == 1 and "cut.png" in cli_err, cli_err  # the CLI's own verdict on the damaged picture
    code, out, err = run(sys.executable, SAMPLE, sr_model, tmp_path / "in", tmp_path / "ray", "--workers", 2, "--threads-per-worker", 1,
                         "--num-cpus", 2, "-q")
    assert code == 1, err
    errors = [line for line in err.splitlines() if line.startswith("ray_image_to_image:")]
    assert len(errors) == 2 and "cut.png" in errors[0] and "1 of 6 pictures failed" in errors[1], err
    assert "wrote 5 pictures" in out, out

    written = files_under(tmp_path / "ray")
    assert written == files_under(tmp_path / "cli")
    assert written == ["rgb.png", "sub/deeper/opaque.png", "sub/deeper/transparent_rgba.png", "sub/grey_alpha.png", "sub/photo.png"]
    for name in written:
        ours, theirs = edgegan.read_image(tmp_path / "ray" / name), edgegan.read_image(tmp_path / "cli" / name)
        assert ours.shape == theirs.shape and np.array_equal(ours, theirs), name
    assert edgegan.read_image(tmp_path / "ray" / "sub" / "deeper" / "transparent_rgba.png").shape == (120, 164, 4)


@pytest.mark.parametrize(
    "make, args, message",
    [
        (None, ["missing", "out"], "is not a folder"),
        (None, ["in", "out"], "holds no .png, .jpg, .jpeg or .webp files"),
        (lambda d: [shutil.copy(IMAGES / "rgb.png", d / "in" / n) for n in ("a.png", "a.jpg")], ["in", "out"], "would both be written to"),
        (lambda d: shutil.copy(IMAGES / "rgb.png", d / "in" / "a.png"), ["in", "in"], "would overwrite an input"),
        (lambda d: shutil.copy(IMAGES / "rgb.png", d / "in" / "a.png"), ["in", "out", "--quality", "90"], "png is always lossless"),
        (lambda d: shutil.copy(IMAGES / "rgb.png", d / "in" / "a.png"), ["in", "out", "--workers", "0"], "at least 1"),
        (lambda d: shutil.copy(IMAGES / "rgb.png", d / "in" / "a.png"), ["in", "out", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments_are_one_line(tmp_path, sr_model, make, args, message):
    (tmp_path / "in").mkdir()
    if make is not None:
        make(tmp_path)
    code, out, err = run(sys.executable, SAMPLE, sr_model, *[tmp_path / a if i < 2 else a for i, a in enumerate(args)])
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_bad_model_is_one_line(tmp_path):
    (tmp_path / "model.egan").write_text("not a model")
    shutil.copytree(IMAGES, tmp_path / "in")
    code, _, err = run(sys.executable, SAMPLE, tmp_path / "model.egan", tmp_path / "in", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and err.startswith("ray_image_to_image: error:") and "model.egan" in err, err
