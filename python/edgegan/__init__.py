"""edgegan: run, convert and fine-tune GAN generators (.egan models) with NumPy.

    import edgegan
    edgegan.convert("generator.onnx", "generator.egan")
    model = edgegan.Model.load("generator.egan")
    session = edgegan.Session(model, batch=16, threads=2)
    images = session.generate(edgegan.normal_noise((16, model.noise_size), seed=1))  # (16, C, H, W) float32

Failures reported by the engine or the converter raise edgegan.Error; arrays of the
wrong dtype or shape, missing inputs and bad option values raise ValueError.
docs/python.md in the source tree describes the module.
"""

from ._edgegan import (
    FILE_FORMAT_VERSION,
    Error,
    ImageToImage,
    Model,
    Session,
    Trainer,
    __version__,
    convert,
    finetune,
    normal_noise,
    read_image,
    write_image,
    write_png_grid,
)

__all__ = [
    "FILE_FORMAT_VERSION",
    "Error",
    "ImageToImage",
    "Model",
    "Session",
    "Trainer",
    "__version__",
    "convert",
    "finetune",
    "normal_noise",
    "read_image",
    "write_image",
    "write_png_grid",
]
