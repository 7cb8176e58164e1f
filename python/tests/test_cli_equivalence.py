"""The module computes what the command-line tools compute, bit for bit, on the shipped
models: the same Session.run outputs as `edgegan run`, the same PNG as
`edgegan generate`, the same .egan as `edgegan-convert` and `edgegan finetune`."""

import filecmp
import json

import numpy as np
import pytest

import edgegan
from conftest import MODELS, run_tool

SHIPPED = sorted(MODELS.glob("*/*.egan"))
THREADS = 2


def model_inputs(model, batch, seed):
    """Inputs for any shipped model, NCHW as `edgegan run` reads them."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for info in model.inputs:
        shape = (batch,) + tuple(info["shape"][1:])
        if info["role"] == "label":
            inputs[info["name"]] = rng.integers(0, info["label_count"], size=shape, dtype=np.int64)
        else:
            inputs[info["name"]] = rng.uniform(-1, 1, size=shape).astype(np.float32)
    return inputs


def test_shipped_models_exist():
    names = {f"{p.parent.name}/{p.name}" for p in SHIPPED}
    assert {"dcgan_digits/generator.egan", "cgan_digits/generator.egan"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_run_equals_cli_run(cli, tmp_path, path, layout):
    model = edgegan.Model.load(path)
    batch = 5
    inputs = model_inputs(model, batch, seed=7)
    if layout == "nhwc":  # NHWC: image inputs in the engine's storage order
        inputs = {k: (np.ascontiguousarray(v.transpose(0, 2, 3, 1)) if v.ndim == 4 else v) for k, v in inputs.items()}
    args = [cli, "run", path, "--threads", THREADS, "-o", tmp_path / "out.npy"] + (["--nhwc"] if layout == "nhwc" else [])
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        args += ["-i", f"{name}={tmp_path / name}.npy"]
    run_tool(*args)

    outputs = edgegan.Session(model, batch=batch, threads=THREADS).run(inputs, layout=layout)
    assert list(outputs) == [o["name"] for o in model.outputs]
    (name, got), = outputs.items()
    want = np.load(tmp_path / "out.npy")
    assert got.dtype == want.dtype == np.float32
    assert got.shape == want.shape
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name, count, columns", [("dcgan_digits", 64, 0), ("cgan_digits", 100, 10)])
def test_generate_png_equals_cli(cli, tmp_path, name, count, columns):
    path = MODELS / name / "generator.egan"
    run_tool(cli, "generate", path, "-n", count, "--seed", 1, "--threads", THREADS, "-o", tmp_path / "cli.png",
             "--npy", tmp_path / "cli.npy")
    model = edgegan.Model.load(path)
    session = edgegan.Session(model, batch=count, threads=THREADS)
    z = edgegan.normal_noise((count, model.noise_size), seed=1)
    labels = np.arange(count) % model.label_count if model.label_count else None  # the CLI's class = column
    images = session.generate(z, labels)
    assert images.shape[:2] == (count, 1)
    assert np.array_equal(images.transpose(0, 2, 3, 1), np.load(tmp_path / "cli.npy"))
    edgegan.write_png_grid(tmp_path / "py.png", images, columns=columns, value_range=model.outputs[0]["value_range"])
    assert filecmp.cmp(tmp_path / "py.png", tmp_path / "cli.png", shallow=False)


@pytest.mark.parametrize("weights", ["fp32", "fp16"])
def test_convert_equals_cli(convert_cli, tmp_path, weights):
    onnx = MODELS / "dcgan_digits" / "generator.onnx"
    run_tool(convert_cli, onnx, "--weights", weights, "-q", "-o", tmp_path / "cli.egan")
    summary = edgegan.convert(onnx, tmp_path / "py.egan", weights=weights)
    assert "ConvTranspose2D" in summary
    assert filecmp.cmp(tmp_path / "py.egan", tmp_path / "cli.egan", shallow=False)
    assert edgegan.Model.load(tmp_path / "py.egan").ops[0]["fp16_weights"] == (weights == "fp16")


def test_convert_checkpoint_equals_cli(convert_cli, tmp_path):
    # A PyTorch checkpoint (tests/checkpoint): read without running its pickle, architecture detected.
    pth = MODELS.parent / "tests" / "checkpoint" / "cases" / "compact_x4_params_zip" / "model.pth"
    run_tool(convert_cli, pth, "-q", "-o", tmp_path / "cli.egan")
    summary = edgegan.convert(pth, tmp_path / "py.egan")
    assert "SRVGGNetCompact: in 3, out 3, features 8, convs 3, scale 4" in summary
    assert filecmp.cmp(tmp_path / "py.egan", tmp_path / "cli.egan", shallow=False)
    hostile = MODELS.parent / "tests" / "checkpoint" / "hostile" / "os_system.pth"
    with pytest.raises(edgegan.Error, match="refers to 'posix.system'"):
        edgegan.convert(hostile, tmp_path / "x.egan")
    assert not (tmp_path / "x.egan").exists()


def test_convert_blend_equals_cli(convert_cli, tmp_path):
    # blend=(path_b, t) is --blend path_b:t: the same bytes; another architecture is refused.
    blend = MODELS.parent / "tests" / "checkpoint" / "blend"
    run_tool(convert_cli, blend / "a.pth", "--blend", "%s:0.3" % (blend / "b.pth"), "-q", "-o", tmp_path / "cli.egan")
    edgegan.convert(blend / "a.pth", tmp_path / "py.egan", blend=(blend / "b.pth", 0.3))
    assert filecmp.cmp(tmp_path / "py.egan", tmp_path / "cli.egan", shallow=False)
    with pytest.raises(edgegan.Error, match="different architectures"):
        edgegan.convert(blend / "a.pth", tmp_path / "x.egan", blend=(blend / "other.pth", 0.5))
    with pytest.raises(edgegan.Error, match="not in \\[0, 1\\]"):
        edgegan.convert(blend / "a.pth", tmp_path / "x.egan", blend=(blend / "b.pth", 1.5))
    assert not (tmp_path / "x.egan").exists()


def test_finetune_equals_cli(cli, tmp_path, sevens):
    g_path = MODELS / "dcgan_digits" / "generator.egan"
    d_path = MODELS / "dcgan_digits" / "discriminator.egan"
    data = MODELS / "few_shot" / "sevens_32.npy"
    run_tool(cli, "finetune", g_path, "--discriminator", d_path, "--data", data, "--steps", 3, "--batch", 8,
             "--lr", "1e-3", "--d-lr", "5e-5", "--freeze", "1,2", "--seed", 4, "--threads", THREADS, "-q",
             "-o", tmp_path / "cli_g.egan", "--discriminator-output", tmp_path / "cli_d.egan")
    g = edgegan.Trainer(edgegan.Model.load(g_path), batch=8, lr=1e-3, threads=THREADS, freeze=[1, 2])
    d = edgegan.Trainer(edgegan.Model.load(d_path), batch=8, lr=5e-5, threads=THREADS)
    result = edgegan.finetune(g, sevens, discriminator=d, steps=3, seed=4)
    assert result["steps"] == 3 and len(result["discriminator_losses"]) == 3
    g.save(tmp_path / "py_g.egan", source_path=g_path)
    d.save(tmp_path / "py_d.egan", source_path=d_path)
    assert filecmp.cmp(tmp_path / "py_g.egan", tmp_path / "cli_g.egan", shallow=False)
    assert filecmp.cmp(tmp_path / "py_d.egan", tmp_path / "cli_d.egan", shallow=False)


def test_memory_report_equals_cli_report(cli):
    path = MODELS / "cgan_digits" / "generator.egan"
    want = json.loads(run_tool(cli, "report", path, "--batch", 4, "--threads", THREADS, "--json"))
    got = edgegan.Session(edgegan.Model.load(path), batch=4, threads=THREADS).memory_report()
    got["model"] = want["model"]  # the CLI names the report after the file
    assert got == want


def test_trainer_memory_equals_cli_training_report(cli):
    path = MODELS / "dcgan_digits" / "generator.egan"
    want = json.loads(run_tool(cli, "report", path, "--training", "--batch", 4, "--json"))
    got = edgegan.Trainer(edgegan.Model.load(path), batch=4).memory()
    assert {f"{k}_bytes": v for k, v in got.items()} == {k: v for k, v in want.items() if k.endswith("_bytes")}


def test_versions_agree(cli, convert_cli):
    assert run_tool(cli, "--version").split()[1] == edgegan.__version__
    assert run_tool(convert_cli, "--version").split()[1] == edgegan.__version__
