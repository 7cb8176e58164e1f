"""Pictures from Python: read_image/write_image round trips, and ImageToImage.run
equal, byte for byte, to `edgegan upscale`/`translate` on the same file (RGB, RGBA,
grey, --outscale), run_batch against runs alone, plus the ValueErrors of wrong arrays
and options."""

import re

import numpy as np
import pytest

import edgegan
from conftest import REPO, run_tool

IMAGES = REPO / "tests" / "data" / "images"
SR_ONNX = REPO / "tests" / "golden" / "cases" / "zoo_realesrgan_compact" / "model.onnx"


@pytest.fixture(scope="module")
def sr_model(tmp_path_factory):
    """The small x4 Real-ESRGAN-style model, converted with its input range as the CLI tests do."""
    path = tmp_path_factory.mktemp("sr") / "sr.egan"
    edgegan.convert(SR_ONNX, path)
    return path


def picture(height, width, channels, seed):
    return np.random.default_rng(seed).integers(0, 256, size=(height, width, channels), dtype=np.uint8)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_round_trip_is_exact(tmp_path, channels):
    image = picture(9, 13, channels, channels)
    edgegan.write_image(tmp_path / "x.png", image)
    back = edgegan.read_image(tmp_path / "x.png")
    assert back.dtype == np.uint8 and back.shape == (9, 13, channels)
    assert np.array_equal(back, image)


def test_webp_lossless_and_jpeg(tmp_path):
    image = picture(8, 10, 4, 7)
    image[..., 3] = np.maximum(image[..., 3], 1)  # lossless WebP may recolour fully transparent pixels
    edgegan.write_image(tmp_path / "x.webp", image, quality=100)
    assert np.array_equal(edgegan.read_image(tmp_path / "x.webp"), image)
    smooth = np.tile(np.linspace(40, 200, 32, dtype=np.uint8)[None, :, None], (24, 1, 3))
    edgegan.write_image(tmp_path / "x.jpeg", smooth, quality=95)
    back = edgegan.read_image(tmp_path / "x.jpeg").astype(np.float64)
    psnr = 10 * np.log10(255.0**2 / max(np.mean((back - smooth) ** 2), 1e-12))
    assert psnr > 40
    # A strided view (every other column) is read as it is seen.
    view = picture(6, 12, 3, 8)[:, ::2]
    edgegan.write_image(tmp_path / "view.png", view)
    assert np.array_equal(edgegan.read_image(tmp_path / "view.png"), view)


@pytest.mark.parametrize(
    "name, args",
    [("rgb.png", []), ("transparent_rgba.png", []), ("opaque_grey_alpha.png", []), ("photo.jpg", ["-s", "2"]), ("rgb.png", ["-s", "1.5"]),
     ("transparent_rgba.png", ["--alpha", "model"]), ("transparent_rgba.png", ["-s", "1.5", "--alpha", "model"])],
)
def test_run_equals_cli(cli, tmp_path, sr_model, name, args):
    out = tmp_path / "cli.png"
    run_tool(cli, "upscale", sr_model, IMAGES / name, "-o", out, "-q", "--threads", "2", *args)
    outscale = float(args[args.index("-s") + 1]) if "-s" in args else None
    alpha = args[args.index("--alpha") + 1] if "--alpha" in args else "lanczos"
    runner = edgegan.ImageToImage(sr_model, threads=2, outscale=outscale, alpha=alpha)
    result = runner.run(edgegan.read_image(IMAGES / name))
    assert np.array_equal(result, edgegan.read_image(out))
    height, width = edgegan.read_image(IMAGES / name).shape[:2]
    assert runner.output_size(width, height) == (result.shape[1], result.shape[0])


def test_alpha_and_grey(sr_model):
    runner = edgegan.ImageToImage(edgegan.Model.load(sr_model), tile=16, overlap=4)
    assert runner.scale == 4 and runner.input_channels == 3
    rgba = edgegan.read_image(IMAGES / "transparent_rgba.png")
    out = runner.run(rgba)
    assert out.shape == (120, 164, 4)
    assert out[..., 3].min() < 255  # the transparent pixel survives
    grey = picture(7, 9, 1, 3)
    assert np.array_equal(runner.run(grey[..., 0]), runner.run(np.repeat(grey, 3, axis=2)))


def test_alpha_through_the_model(sr_model):
    """alpha="model": the colours as before; the alpha is the luma of the model's output
    on the alpha plane as an RGB picture (as `--alpha model` and Real-ESRGAN's script)."""
    rgba = picture(10, 12, 4, 11)
    lanczos = edgegan.ImageToImage(sr_model).run(rgba)
    through = edgegan.ImageToImage(sr_model, alpha="model").run(rgba)
    assert through.shape == lanczos.shape == (40, 48, 4)
    assert np.array_equal(through[..., :3], lanczos[..., :3])
    plane = edgegan.ImageToImage(sr_model).run(np.repeat(rgba[..., 3:], 3, axis=2)).astype(np.float32)
    luma = 0.299 * plane[..., 0] + 0.587 * plane[..., 1] + 0.114 * plane[..., 2]
    assert np.abs(luma - through[..., 3]).max() <= 0.5 + 1e-3
    with pytest.raises(ValueError, match="alpha must be 'lanczos' or 'model'"):
        edgegan.ImageToImage(sr_model, alpha="nearest")
    with pytest.raises(ValueError, match="tile_stats must be 'exact' or 'approx'"):
        edgegan.ImageToImage(sr_model, tile_stats="sometimes")
    # A model without whole-map statistics: both ways are the same tiles.
    a = edgegan.ImageToImage(sr_model, tile=8, overlap=2, tile_stats="approx").run(rgba)
    assert np.array_equal(a, edgegan.ImageToImage(sr_model, tile=8, overlap=2).run(rgba))


def test_run_batch_equals_runs_alone(sr_model):
    """Frames of one size as one job, two per model run (three frames: a short last run)."""
    frames = [picture(12, 10, 3, seed) for seed in range(3)]
    alone = edgegan.ImageToImage(sr_model, threads=2)
    outs = edgegan.ImageToImage(sr_model, threads=2, batch=2).run_batch(frames)
    assert len(outs) == 3
    for frame, out in zip(frames, outs):
        expected = alone.run(frame)
        assert out.shape == expected.shape == (48, 40, 3)
        difference = np.abs(out.astype(int) - expected.astype(int))
        assert difference.max() <= 1 and np.count_nonzero(difference) <= difference.size // 1000
    with pytest.raises(edgegan.Error, match="one size"):
        alone.run_batch([picture(12, 10, 3, 0), picture(10, 12, 3, 1)])
    with pytest.raises(ValueError, match="batch"):
        edgegan.ImageToImage(sr_model, batch=0)


def test_cuda_backend_runs_or_names_its_problem(sr_model):
    """backend="cuda" runs where CUDA can (within one level of the CPU's picture), and
    elsewhere is refused when the runner is made, with the reason in CUDA's words."""
    image = edgegan.read_image(IMAGES / "rgb.png")
    try:
        runner = edgegan.ImageToImage(sr_model, backend="cuda")
    except edgegan.Error as e:
        assert re.fullmatch(r"image-to-image: the CUDA backend (has no usable device: .+|is not available in this build.*)", str(e)), str(e)
        return
    cpu = edgegan.ImageToImage(sr_model).run(image)
    gpu = runner.run(image)
    assert gpu.shape == cpu.shape
    assert np.abs(gpu.astype(np.int16) - cpu.astype(np.int16)).max() <= 1


def test_wrong_arrays_and_options(tmp_path, sr_model):
    runner = edgegan.ImageToImage(sr_model)
    with pytest.raises(ValueError, match="uint8"):
        runner.run(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="channels"):
        runner.run(np.zeros((4, 4, 5), np.uint8))
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        runner.run(np.zeros(16, np.uint8))
    with pytest.raises(ValueError, match="backend"):
        edgegan.ImageToImage(sr_model, backend="tpu")
    with pytest.raises(ValueError, match="outscale"):
        edgegan.ImageToImage(sr_model, outscale=0)
    with pytest.raises(ValueError, match="quality"):
        edgegan.write_image(tmp_path / "x.png", picture(2, 2, 3, 1), quality=50)
    with pytest.raises(ValueError, match="format"):
        edgegan.write_image(tmp_path / "x.gif", picture(2, 2, 3, 1))
    with pytest.raises(edgegan.Error, match="no alpha"):
        edgegan.write_image(tmp_path / "x.jpg", picture(2, 2, 4, 1))
    assert not (tmp_path / "x.jpg").exists()
    (tmp_path / "cut.png").write_bytes((IMAGES / "rgb.png").read_bytes()[:60])
    with pytest.raises(edgegan.Error, match="cut.png"):
        edgegan.read_image(tmp_path / "cut.png")
