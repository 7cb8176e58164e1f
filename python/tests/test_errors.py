"""Bad arguments raise exceptions with the engine's or the binding's message, and never
crash the interpreter: ValueError for arrays of the wrong dtype or shape, missing or
unknown inputs and bad option values; edgegan.Error for what the engine refuses (a
missing, truncated or corrupt file, a label outside the table, a session over its
limits); TypeError for arguments of the wrong Python type."""

import numpy as np
import pytest

import edgegan
from conftest import MODELS

DCGAN = MODELS / "dcgan_digits" / "generator.egan"
CGAN = MODELS / "cgan_digits" / "generator.egan"


@pytest.fixture(scope="module")
def dcgan():
    return edgegan.Model.load(DCGAN)


@pytest.fixture(scope="module")
def session(dcgan):
    return edgegan.Session(dcgan, batch=4, threads=1)


@pytest.fixture(scope="module")
def cgan_session():
    return edgegan.Session(edgegan.Model.load(CGAN), batch=4, threads=1)


def noise(batch=4, size=64):
    return edgegan.normal_noise((batch, size), seed=0)


# ---- arrays


def test_wrong_dtype(session):
    with pytest.raises(ValueError, match=r"'z' must be float32, got float64 \(convert with \.astype\(numpy\.float32\)\)"):
        session.generate(noise().astype(np.float64))
    with pytest.raises(ValueError, match="'z' must be float32, got int64"):
        session.run({"z": np.zeros((4, 64, 1, 1), np.int64)})


def test_wrong_shape(session):
    with pytest.raises(ValueError, match=r"'z' has shape \(2, 64\); this session makes 4 samples of 64 noise values: give shape \(4, 64\)"):
        session.generate(noise(batch=2))
    with pytest.raises(ValueError, match=r"'z' has shape \(4, 64\), the model needs \(4, 64, 1, 1\) \(N, C, H, W\)"):
        session.run({"z": noise()})
    with pytest.raises(ValueError, match=r"the model needs \(4, 1, 1, 64\) \(N, H, W, C\)"):
        session.run({"z": noise().reshape(4, 64, 1, 1)}, layout="nhwc")


def test_missing_and_unknown_inputs(session):
    with pytest.raises(ValueError, match="input 'z' is missing"):
        session.run({})
    with pytest.raises(ValueError, match="the model has no input named 'noise' \\(it has 'z'\\)"):
        session.run({"noise": noise()})
    with pytest.raises(TypeError, match="names \\(str\\)"):
        session.run({0: noise()})
    with pytest.raises(TypeError):
        session.run([noise()])


def test_labels(cgan_session):
    z = noise()
    with pytest.raises(ValueError, match=r"conditional \(10 classes\): give labels"):
        cgan_session.generate(z)
    with pytest.raises(ValueError, match="'labels' must hold integers \\(int64 or int32\\), got float64"):
        cgan_session.generate(z, np.arange(4.0))
    with pytest.raises(ValueError, match=r"'labels' has shape \(3,\), give one per sample: \(4,\)"):
        cgan_session.generate(z, np.arange(3))
    with pytest.raises(edgegan.Error, match="input 'label': value 10 at position 3 is outside 0..9"):
        cgan_session.generate(z, np.array([0, 1, 2, 10]))
    with pytest.raises(ValueError, match="the model takes no labels"):
        edgegan.Session(edgegan.Model.load(DCGAN), batch=4).generate(z, np.arange(4))


@pytest.mark.parametrize("value", [None, "noise", [["a", "b"]], np.zeros(3, dtype=object), 1.5, {"z": 1}])
def test_non_arrays(session, value):
    with pytest.raises(ValueError):
        session.generate(value)


def test_strided_arrays_are_read_as_numpy_sees_them(session):
    z = noise()
    want = session.generate(z)
    assert np.array_equal(session.generate(np.asfortranarray(z)), want)
    reversed_rows = np.ascontiguousarray(z[::-1])
    assert np.array_equal(session.generate(reversed_rows[::-1]), want)
    wide = np.zeros((4, 128), np.float32)
    wide[:, ::2] = z
    assert np.array_equal(session.generate(wide[:, ::2]), want)
    read_only = z.copy()
    read_only.setflags(write=False)
    assert np.array_equal(session.generate(read_only), want)


def test_bad_layout(session):
    with pytest.raises(ValueError, match="layout must be 'nchw' or 'nhwc', got 'NCHW'"):
        session.generate(noise(), layout="NCHW")


# ---- files


def test_missing_file(tmp_path):
    with pytest.raises(edgegan.Error, match=f"cannot open '{tmp_path}/none.egan': No such file or directory"):
        edgegan.Model.load(tmp_path / "none.egan")


def test_corrupt_files(tmp_path):
    data = DCGAN.read_bytes()
    (tmp_path / "truncated.egan").write_bytes(data[: len(data) // 2])
    with pytest.raises(edgegan.Error, match="corrupt model: its checksum trailer is missing"):
        edgegan.Model.load(tmp_path / "truncated.egan")
    (tmp_path / "text.egan").write_text("not a model at all, just some text")
    with pytest.raises(edgegan.Error, match="invalid model: not an .egan file"):
        edgegan.Model.load(tmp_path / "text.egan")
    flipped = bytearray(data)
    rng = np.random.default_rng(1)
    for _ in range(200):  # a bit flipped anywhere: always refused by the checksums, never a crash
        flipped[:] = data
        at = int(rng.integers(0, len(data)))
        flipped[at] ^= 1 << int(rng.integers(0, 8))
        with pytest.raises(edgegan.Error, match="corrupt model|invalid model"):
            edgegan.Model.from_bytes(bytes(flipped))
    with pytest.raises(edgegan.Error, match="invalid model"):
        edgegan.Model.from_bytes(b"")


def test_checksums(tmp_path):
    data = bytearray(DCGAN.read_bytes())
    assert edgegan.Model.from_bytes(bytes(data)).integrity == "verified"
    data[len(data) // 2] ^= 0x08  # a weight byte
    (tmp_path / "damaged.egan").write_bytes(data)
    with pytest.raises(edgegan.Error, match=r"corrupt model: the weights \(data section.*fail their checksum"):
        edgegan.Model.load(tmp_path / "damaged.egan")
    skipped = edgegan.Model.load(tmp_path / "damaged.egan", verify_checksums=False)  # explicit opt-out
    assert skipped.integrity == "not verified" and skipped.warnings == []


def test_files_from_before_checksums_load_with_a_warning():
    old = MODELS.parent / "tests" / "fixtures" / "schema_v1" / "cgan_digits_generator.egan"
    with pytest.warns(UserWarning, match="carries no checksum"):
        model = edgegan.Model.load(old)
    assert model.schema_version == 1 and model.integrity == "no checksum"
    assert len(model.warnings) == 1


def test_convert_errors(tmp_path):
    with pytest.raises(edgegan.Error, match="cannot open"):
        edgegan.convert(tmp_path / "none.onnx", tmp_path / "x.egan")
    (tmp_path / "bad.onnx").write_bytes(b"\xff" * 64)
    with pytest.raises(edgegan.Error, match="not a valid ONNX model"):
        edgegan.convert(tmp_path / "bad.onnx", tmp_path / "x.egan")
    with pytest.raises(ValueError, match="weights must be 'fp32' or 'fp16', got 'int8'"):
        edgegan.convert(MODELS / "dcgan_digits" / "generator.onnx", tmp_path / "x.egan", weights="int8")
    assert not (tmp_path / "x.egan").exists()


# ---- options


def test_session_options(dcgan):
    with pytest.raises(ValueError, match="backend must be 'cpu', 'cuda' or 'vulkan', got 'tpu'"):
        edgegan.Session(dcgan, backend="tpu")
    with pytest.raises(ValueError, match="algo must be"):
        edgegan.Session(dcgan, algo="fft")
    with pytest.raises(ValueError, match="batch must be at least 1, got 0"):
        edgegan.Session(dcgan, batch=0)
    with pytest.raises(ValueError, match="threads must be 0"):
        edgegan.Session(dcgan, threads=-1)
    with pytest.raises(edgegan.Error, match="memory limit|exceed|over"):
        edgegan.Session(dcgan, batch=64, memory_limit_bytes=1024)
    with pytest.raises(TypeError):
        edgegan.Session(dcgan, batch=2**40)
    with pytest.raises(TypeError):
        edgegan.Session(dcgan, 4)  # options are keywords
    with pytest.raises(TypeError):
        edgegan.Model()


def test_precision(dcgan):
    session = edgegan.Session(dcgan, precision="fp32")
    assert session.precision == "fp32"
    assert edgegan.Session(dcgan).precision == "fp32"
    assert session.memory_report()["precision"] == "fp32"
    # fp16 on the CPU is half storage; tf32 is the CUDA backend's, refused naming the CPU
    half = edgegan.Session(dcgan, precision="fp16")
    assert half.precision == "fp16"
    assert half.memory_report()["precision"] == "fp16"
    with pytest.raises(edgegan.Error, match="^session: the cpu backend runs fp32 and fp16, not tf32"):
        edgegan.Session(dcgan, precision="tf32")
    with pytest.raises(ValueError, match="unknown precision 'fp8' \\(expected fp32, tf32 or fp16\\)"):
        edgegan.Session(dcgan, precision="fp8")
    with pytest.raises(TypeError):
        edgegan.Session(dcgan, allow_tf32=True)  # folded into precision


def test_trainer_errors(dcgan, sevens):
    with pytest.raises(ValueError, match="optimizer must be 'adam' or 'sgd', got 'lion'"):
        edgegan.Trainer(dcgan, optimizer="lion")
    with pytest.raises(edgegan.Error, match="frozen op 9 is outside 0..3"):
        edgegan.Trainer(dcgan, freeze=[9])
    g = edgegan.Trainer(dcgan, batch=4, threads=1)
    with pytest.raises(ValueError, match="'images' must be float32, got float64"):
        edgegan.finetune(g, sevens.astype(np.float64), steps=1)
    with pytest.raises(ValueError, match=r"'images' has shape \(32, 1, 16, 16\), the model needs \(32, 1, 32, 32\)"):
        edgegan.finetune(g, sevens[:, :, :16, :16], steps=1)
    with pytest.raises(edgegan.Error, match=r"values span \[-255, 255\].*rescale"):
        edgegan.finetune(g, sevens * 255, steps=1)
    with pytest.raises(edgegan.Error, match="the batch \\(4\\) is larger than the 2 images"):
        edgegan.finetune(g, sevens[:2], steps=1)
    with pytest.raises(ValueError, match="labels given, but the generator is not conditional"):
        edgegan.finetune(g, sevens, np.zeros(32, np.int64), steps=1)
    with pytest.raises(ValueError, match="another Trainer than the generator"):
        edgegan.finetune(g, sevens, discriminator=g, steps=1)
    with pytest.raises(ValueError, match="loss must be 'mse' or 'l1'"):
        edgegan.finetune(g, sevens, steps=1, loss="huber")
    with pytest.raises(TypeError, match="progress must be callable"):
        edgegan.finetune(g, sevens, steps=1, progress=3)
    with pytest.raises(ValueError, match="output gradient 'image' is missing"):
        g.backward({})
    with pytest.raises(edgegan.Error, match="refusing to write"):
        g.save(DCGAN, source_path=DCGAN)


def test_progress_callback_exception_stops_and_propagates(dcgan, sevens):
    g = edgegan.Trainer(dcgan, batch=4, threads=1)

    def fail_at_two(progress):
        if progress["step"] == 2:
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        edgegan.finetune(g, sevens, steps=10, progress=fail_at_two)
    assert g.steps_taken == 2
