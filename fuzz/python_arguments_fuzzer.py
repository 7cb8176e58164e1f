"""Fuzz target (atheris, libFuzzer for Python): the edgegan module's argument checking.

Every call gets arguments built from the fuzzer's bytes: arrays of any dtype, rank and
shape (empty, zero-sized, non-contiguous, read-only, object arrays), input names that
do not exist, labels out of range, layouts and option values that are wrong, absurd
batch and thread counts, models made of mutated file bytes, calls in the wrong order.
Each call must return or raise ValueError, TypeError, OverflowError or edgegan.Error;
any other exception fails the run, and a crash of the interpreter is what the fuzzer
is there to find.

    python fuzz/python_arguments_fuzzer.py -max_total_time=60 -rss_limit_mb=4096
    (scripts/test_package.sh runs it in the venv where it installed the wheel)

Coverage comes from this file's instrumented functions (the module's C++ is not
instrumented), so the search is guided by which argument shapes were tried.
"""

import pathlib
import sys
import tempfile
import warnings

import atheris
import numpy as np

import edgegan

REPO = pathlib.Path(__file__).resolve().parents[1]
MODEL_FILES = [REPO / "models" / "dcgan_digits" / "generator.egan", REPO / "models" / "cgan_digits" / "generator.egan"]
MODELS = [edgegan.Model.load(p) for p in MODEL_FILES]
MODEL_BYTES = [p.read_bytes() for p in MODEL_FILES]
SESSIONS = [edgegan.Session(m, batch=2, threads=1) for m in MODELS]
# A small x4 super-resolution model for ImageToImage (the shipped models take noise).
SR_PATH = pathlib.Path(tempfile.mkdtemp()) / "sr.egan"
edgegan.convert(REPO / "tests" / "golden" / "cases" / "zoo_realesrgan_compact" / "model.onnx", SR_PATH)
UPSCALER = edgegan.ImageToImage(SR_PATH, threads=1)
EXPECTED = (ValueError, TypeError, OverflowError, edgegan.Error)
DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_, np.complex64, object]
LAYOUTS = ["nchw", "nhwc", "NCHW", "", "nchwc"]
warnings.simplefilter("ignore")  # files from before checksums warn; not the point here


def pick(fdp, items):
    return items[fdp.ConsumeIntInRange(0, len(items) - 1)]


def some_int(fdp):
    """A count or index: small, or out of every range. (Huge valid sizes are left out: a
    request for 2**31 noise values is a real 8 GB allocation, not a bug to find.)"""
    return pick(fdp, [0, 1, 2, 3, -1, -(2**31), 2**33 + 1, 2**62, 2**64, fdp.ConsumeIntInRange(-5, 70)])


@atheris.instrument_func
def some_array(fdp, model):
    """An array: the right shape and dtype for one of the model's inputs, or anything near it."""
    info = pick(fdp, model.inputs)
    shape = [2 if d < 0 else d for d in info["shape"]]
    kind = fdp.ConsumeIntInRange(0, 7)
    if kind == 1:  # another rank and shape
        shape = [fdp.ConsumeIntInRange(0, 9) for _ in range(fdp.ConsumeIntInRange(0, 5))]
    elif kind == 2 and shape:  # one dimension off
        shape[fdp.ConsumeIntInRange(0, len(shape) - 1)] += pick(fdp, [-1, 1, 7])
        shape = [max(d, 0) for d in shape]
    dtype = np.int64 if info["dtype"] == "int64" else np.float32
    if kind == 3:
        dtype = pick(fdp, DTYPES)
    count = int(np.prod(shape)) if shape else 1
    values = fdp.ConsumeFloatListInRange(min(count, 4096), -1e3, 1e3) if dtype is not object else []
    values = (values + [0.0] * count)[:count]
    if dtype is object:
        array = np.empty(shape, dtype=object)
    else:
        with np.errstate(all="ignore"):
            array = np.asarray(values, dtype=np.float64).reshape(shape).astype(dtype)
    if info["dtype"] == "int64" and kind == 4:  # labels outside the table
        array = np.full(shape, pick(fdp, [-1, model.label_count, 2**40]), dtype=np.int64)
    if kind == 5 and array.ndim >= 1 and array.shape[-1] > 1:  # not contiguous
        array = array[..., ::2]
    if kind == 6:
        array.flags.writeable = False
    if kind == 7:
        return pick(fdp, [None, "text", 3.5, [1, 2], {"a": 1}, b"bytes"])
    return array


@atheris.instrument_func
def some_picture(fdp):
    """A picture for ImageToImage.run or write_image: small, of any rank, channels, dtype and strides."""
    shape = [fdp.ConsumeIntInRange(0, 12) for _ in range(pick(fdp, [3, 3, 2, 1, 4]))]
    dtype = np.uint8 if fdp.ConsumeBool() else pick(fdp, DTYPES)
    if dtype is object:
        return np.empty(shape, dtype=object)
    array = np.asarray(fdp.ConsumeIntListInRange(int(np.prod(shape)), 0, 255) + [0] * int(np.prod(shape)))[: int(np.prod(shape))]
    array = array.reshape(shape).astype(dtype)
    if fdp.ConsumeBool() and array.ndim >= 2:
        array = array[:, ::2]
    return array


@atheris.instrument_func
def exercise(fdp):
    which = fdp.ConsumeIntInRange(0, len(MODELS) - 1)
    model, session = MODELS[which], SESSIONS[which]
    action = fdp.ConsumeIntInRange(0, 8)
    layout = pick(fdp, LAYOUTS)
    if action == 0:
        inputs = {}
        for _ in range(fdp.ConsumeIntInRange(0, 3)):
            name = pick(fdp, [i["name"] for i in model.inputs] + ["", "nope", "z\x00", "\ud800"])
            inputs[name] = some_array(fdp, model)
        session.run(inputs, layout=layout)
    elif action == 1:
        labels = some_array(fdp, model) if fdp.ConsumeBool() else None
        session.generate(some_array(fdp, model), labels, layout=layout)
    elif action == 2:
        options = {
            "threads": some_int(fdp),
            "batch": some_int(fdp),
            "backend": pick(fdp, ["cpu", "cuda", "gpu", ""]),
            "algo": pick(fdp, ["split", "zero-insert", "col2im", "fast"]),
            "precision": pick(fdp, ["fp32", "tf32", "fp16", "bf16", ""]),
            # Bounded: the default (2 GiB) would let a batch of 65536 allocate what it asks for.
            "memory_limit_bytes": pick(fdp, [0, 1, 2**20, 64 << 20, -1, 2**64]),
        }
        s = edgegan.Session(model, **options)
        s.generate(some_array(fdp, model), some_array(fdp, model) if model.label_count else None)
    elif action == 3:
        data = bytearray(MODEL_BYTES[which])
        for _ in range(fdp.ConsumeIntInRange(0, 4)):
            data[fdp.ConsumeIntInRange(0, len(data) - 1)] ^= fdp.ConsumeIntInRange(1, 255)
        if fdp.ConsumeBool():
            data = data[: fdp.ConsumeIntInRange(0, len(data))]
        edgegan.Model.from_bytes(bytes(data), verify_checksums=fdp.ConsumeBool())
    elif action == 4:
        trainer = edgegan.Trainer(model, batch=pick(fdp, [1, 2, 0, -3, 2**40]), threads=1,
                                  optimizer=pick(fdp, ["adam", "sgd", "rmsprop"]),
                                  lr=pick(fdp, [2e-4, 0.0, -1.0, float("nan"), float("inf")]),
                                  freeze=[some_int(fdp) for _ in range(fdp.ConsumeIntInRange(0, 2))])
        if fdp.ConsumeBool():
            trainer.backward({model.outputs[0]["name"]: some_array(fdp, model)}, layout=layout)  # before forward
        outputs = trainer.forward({i["name"]: some_array(fdp, model) for i in model.inputs}, layout=layout)
        trainer.backward({name: some_array(fdp, model) if fdp.ConsumeBool() else out for name, out in outputs.items()},
                         layout=layout)
        trainer.step()
    elif action == 5:
        edgegan.normal_noise(pick(fdp, [some_int(fdp), (some_int(fdp), 3), (), [2, -2], "x"]), seed=some_int(fdp))
    elif action == 7:
        runner = UPSCALER
        if fdp.ConsumeBool():
            runner = edgegan.ImageToImage(SR_PATH, threads=1, tile=some_int(fdp), overlap=some_int(fdp),
                                          backend=pick(fdp, ["cpu", "cuda", "gpu"]),
                                          memory_limit=pick(fdp, [None, 0, 1, 2**20, -1, 2**64]),
                                          outscale=pick(fdp, [None, 0.5, 1.5, 4.0, 0.0, -1.0, float("nan"), 100.0]))
        runner.run(some_picture(fdp))
    elif action == 8:
        path = pathlib.Path(tempfile.gettempdir()) / pick(fdp, ["fuzz.png", "fuzz.jpg", "fuzz.webp", "fuzz.gif", "fuzz"])
        edgegan.write_image(path, some_picture(fdp), format=pick(fdp, [None, "png", "jpg", "webp", "bmp"]),
                            quality=pick(fdp, [None, 1, 95, 100, 0, 101, -5]))
        edgegan.read_image(path)
    else:
        session.memory_report()
        edgegan.Model.load(pick(fdp, ["", "/", "/nonexistent.egan", "\x00", str(MODEL_FILES[which])]),
                           verify_checksums=fdp.ConsumeBool())


def test_one_input(data):
    try:
        exercise(atheris.FuzzedDataProvider(data))
    except EXPECTED:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
