"""The module's API: versions, models, sessions (layouts, threads), trainers, fine-tuning."""

import re
import threading

import numpy as np
import pytest

import edgegan
from conftest import MODELS, REPO

DCGAN = MODELS / "dcgan_digits" / "generator.egan"
CGAN = MODELS / "cgan_digits" / "generator.egan"


def test_version_is_the_projects():
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert edgegan.__version__ == re.search(r"project\(edgegan VERSION ([0-9.]+)", cmake).group(1)
    assert edgegan.FILE_FORMAT_VERSION == edgegan.Model.load(DCGAN).schema_version


def test_model_description():
    model = edgegan.Model.load(str(DCGAN))  # str or path-like
    assert model.noise_size == 64 and model.label_count == 0
    (z,) = model.inputs
    assert z["name"] == "z" and z["role"] == "noise" and z["shape"] == (-1, 64, 1, 1) and z["storage_shape"] == (-1, 1, 1, 64)
    (image,) = model.outputs
    assert image["shape"] == (-1, 1, 32, 32) and image["value_range"] == (-1.0, 1.0)
    assert [op["kind"] for op in model.ops][0] == "ConvTranspose2D"
    assert model.file_bytes == DCGAN.stat().st_size
    assert model.producer.startswith("edgegan-convert")
    same = edgegan.Model.from_bytes(DCGAN.read_bytes())
    assert same.ops == model.ops
    assert "edgegan.Model" in repr(model)


def test_layouts():
    model = edgegan.Model.load(DCGAN)
    session = edgegan.Session(model, batch=3, threads=1)
    z = edgegan.normal_noise((3, 64), seed=5)
    nchw = session.generate(z)
    nhwc = session.generate(z, layout="nhwc")
    assert nchw.shape == (3, 1, 32, 32) and nhwc.shape == (3, 32, 32, 1)
    assert nchw.flags.c_contiguous and nhwc.flags.c_contiguous and nhwc.flags.writeable
    assert np.array_equal(nchw, nhwc.transpose(0, 3, 1, 2))
    assert np.array_equal(session.run({"z": z.reshape(3, 64, 1, 1)})["image"], nchw)


def test_generate_is_deterministic_across_threads_and_sessions():
    model = edgegan.Model.load(CGAN)
    z = edgegan.normal_noise((8, model.noise_size), seed=2)
    labels = np.arange(8, dtype=np.int32) % 10
    one = edgegan.Session(model, batch=8, threads=1).generate(z, labels)
    two = edgegan.Session(model, batch=8, threads=2).generate(z, labels)
    assert np.array_equal(one, two)


def test_one_session_from_several_python_threads():
    model = edgegan.Model.load(DCGAN)
    session = edgegan.Session(model, batch=2, threads=1)
    z = [edgegan.normal_noise((2, 64), seed=s) for s in range(6)]
    want = [session.generate(v) for v in z]
    got = [None] * len(z)

    def work(i):
        got[i] = session.generate(z[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(z))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_memory_report():
    session = edgegan.Session(edgegan.Model.load(DCGAN), batch=4, threads=1)
    report = session.memory_report()
    assert report["batch"] == 4 and report["algorithm"] == "split"
    assert report["totals"]["session_bytes"] == session.measured_allocation_bytes
    assert len(report["layers"]) == len(session.kernel_names)


def test_normal_noise():
    a = edgegan.normal_noise((2, 3), seed=1)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert np.array_equal(a.ravel(), edgegan.normal_noise(6, seed=1))
    assert not np.array_equal(a, edgegan.normal_noise((2, 3), seed=2))


def test_trainer_forward_backward_step(tmp_path):
    model = edgegan.Model.load(DCGAN)
    trainer = edgegan.Trainer(model, batch=2, threads=1, optimizer="sgd", lr=1e-2, freeze=[1, 2, 3])
    z = edgegan.normal_noise((2, 64, 1, 1), seed=0)
    image = trainer.forward({"z": z})["image"]
    assert image.shape == (2, 1, 32, 32)
    # MSE towards zero: d/dx mean(x^2) = 2x / n
    grads = trainer.backward({"image": (2 * image / image.size).astype(np.float32)})
    assert grads["z"].shape == z.shape
    params = trainer.parameters()
    assert {p["op"] for p in params if p["trainable"]} == {0}
    before = [p["values"] for p in params]
    trainer.step()
    after = [p["values"] for p in trainer.parameters()]
    assert trainer.steps_taken == 1
    assert all(np.array_equal(b, a) != p["trainable"] for b, a, p in zip(before, after, params))
    assert trainer.memory()["total"] > 0
    trainer.save(tmp_path / "tuned.egan", source_path=DCGAN)
    assert edgegan.Model.load(tmp_path / "tuned.egan").inputs == model.inputs


def test_finetune_reconstruction_learns(sevens):
    trainer = edgegan.Trainer(edgegan.Model.load(DCGAN), batch=8, lr=1e-3, threads=2)
    seen = []
    result = edgegan.finetune(trainer, sevens, steps=30, progress=seen.append)
    assert result["steps"] == 30 and len(result["generator_losses"]) == 30 and result["discriminator_losses"] == []
    assert [p["step"] for p in seen] == list(range(1, 31))
    assert seen[-1]["discriminator_loss"] is None and seen[-1]["seconds"] > 0
    first, last = np.mean(result["generator_losses"][:3]), np.mean(result["generator_losses"][-3:])
    assert last < first / 2


def test_finetune_stops_when_the_callback_says_so(sevens):
    trainer = edgegan.Trainer(edgegan.Model.load(DCGAN), batch=4, threads=1)
    result = edgegan.finetune(trainer, sevens, steps=50, progress=lambda p: p["step"] < 3)
    assert result["steps"] == 3 and trainer.steps_taken == 3


def test_finetune_conditional_adversarial():
    g = edgegan.Trainer(edgegan.Model.load(CGAN), batch=4, threads=1)
    d = edgegan.Trainer(edgegan.Model.load(MODELS / "cgan_digits" / "discriminator.egan"), batch=4, threads=1)
    images = np.load(MODELS / "few_shot" / "sevens_16.npy")
    labels = np.load(MODELS / "few_shot" / "sevens_labels.npy")
    result = edgegan.finetune(g, images, labels, discriminator=d, steps=2)
    assert len(result["discriminator_losses"]) == 2
    with pytest.raises(ValueError, match="give labels, one per image"):
        edgegan.finetune(g, images, discriminator=d, steps=1)


def test_finetune_paired_image_to_image(tmp_path):
    # pix2pix's U-Net from the golden zoo, tuned towards reproducing its input.
    case = REPO / "tests" / "golden" / "cases" / "zoo_pix2pix_unet"
    egan = tmp_path / "unet.egan"
    edgegan.convert(case / "model.onnx", egan)
    trainer = edgegan.Trainer(edgegan.Model.load(egan), batch=2, lr=1e-3, threads=2)
    images = np.load(case / "inputs" / "image.npy")
    result = edgegan.finetune(trainer, images, targets=images, steps=20, loss="l1")
    assert result["steps"] == 20 and result["discriminator_losses"] == []
    assert np.mean(result["generator_losses"][-3:]) < np.mean(result["generator_losses"][:3])
    with pytest.raises(ValueError, match="one target per image"):
        edgegan.finetune(trainer, images, targets=images[:1], steps=1)
    with pytest.raises(ValueError, match="give targets"):
        edgegan.finetune(trainer, images, steps=1)


def test_converts_beside_the_onnx_package(tmp_path):
    # Both link protobuf; loading one must not break the other.
    onnx = pytest.importorskip("onnx")
    source = MODELS / "dcgan_digits" / "generator.onnx"
    assert len(onnx.load(str(source)).graph.node) > 0
    edgegan.convert(source, tmp_path / "g.egan")
    assert edgegan.Model.load(tmp_path / "g.egan").noise_size == 64
