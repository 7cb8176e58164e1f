# Type stubs of the edgegan module (written by hand; python/tests/test_stubs.py checks
# that they name exactly what the extension module defines).
import os
from typing import Any, Callable, Literal, Mapping, Sequence, TypedDict

import numpy as np
import numpy.typing as npt

__version__: str
FILE_FORMAT_VERSION: int

Layout = Literal["nchw", "nhwc"]
PathLike = str | os.PathLike[str]
FloatArray = npt.NDArray[np.float32]
PictureArray = npt.NDArray[np.uint8]  # (H, W, C): C 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA

class Error(RuntimeError):
    """An error reported by the edgegan engine or converter."""

class InputInfo(TypedDict):
    name: str
    role: Literal["noise", "label", "image", "other"]
    dtype: Literal["float32", "int64"]
    shape: tuple[int, ...]
    storage_shape: tuple[int, ...]
    layout: Literal["nhwc", "row-major"]
    noise_size: int
    label_count: int

class OutputInfo(TypedDict):
    name: str
    role: Literal["image", "score", "other"]
    dtype: Literal["float32"]
    shape: tuple[int, ...]
    storage_shape: tuple[int, ...]
    layout: Literal["nhwc", "row-major"]
    value_range: tuple[float, float] | None

class OpInfo(TypedDict):
    kind: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attributes: str
    weight_bytes: int
    fp16_weights: bool
    phases: int

class Model:
    @staticmethod
    def load(path: PathLike, verify_checksums: bool = True) -> Model: ...
    @staticmethod
    def from_bytes(data: bytes, verify_checksums: bool = True) -> Model: ...
    @property
    def integrity(self) -> Literal["verified", "not verified", "no checksum"]: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def schema_version(self) -> int: ...
    @property
    def producer(self) -> str: ...
    @property
    def source_sha256(self) -> str: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    @property
    def inputs(self) -> list[InputInfo]: ...
    @property
    def outputs(self) -> list[OutputInfo]: ...
    @property
    def ops(self) -> list[OpInfo]: ...
    @property
    def noise_size(self) -> int: ...
    @property
    def label_count(self) -> int: ...
    @property
    def weight_bytes(self) -> int: ...
    @property
    def file_bytes(self) -> int: ...

class Session:
    def __init__(
        self,
        model: Model,
        *,
        threads: int = 0,
        batch: int = 1,
        backend: Literal["cpu", "cuda", "vulkan"] = "cpu",
        device: int = 0,
        algo: Literal["split", "zero-insert", "col2im"] = "split",
        precision: Literal["fp32", "tf32", "fp16"] | None = None,
        memory_limit_bytes: int | None = None,
        compute_limit_macs: int | None = None,
    ) -> None: ...
    def generate(self, z: npt.ArrayLike, labels: npt.ArrayLike | None = None, *, layout: Layout = "nchw") -> FloatArray: ...
    def run(self, inputs: Mapping[str, npt.ArrayLike], *, layout: Layout = "nchw") -> dict[str, FloatArray]: ...
    def memory_report(self) -> dict[str, Any]: ...
    @property
    def batch(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def backend(self) -> Literal["cpu", "cuda"]: ...
    @property
    def precision(self) -> Literal["fp32", "tf32", "fp16"]: ...
    @property
    def algo(self) -> Literal["split", "zero-insert", "col2im"]: ...
    @property
    def model(self) -> Model: ...
    @property
    def kernel_names(self) -> list[str]: ...
    @property
    def arena_bytes(self) -> int: ...
    @property
    def measured_allocation_bytes(self) -> int: ...
    @property
    def weight_placement(self) -> str: ...

class ParameterInfo(TypedDict):
    name: str
    op: int
    trainable: bool
    values: FloatArray
    gradient: FloatArray

class Trainer:
    def __init__(
        self,
        model: Model,
        *,
        batch: int = 1,
        threads: int = 0,
        optimizer: Literal["adam", "sgd"] = "adam",
        lr: float = 2e-4,
        momentum: float = 0.0,
        beta1: float = 0.5,
        beta2: float = 0.999,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        freeze: Sequence[int] = (),
    ) -> None: ...
    def forward(self, inputs: Mapping[str, npt.ArrayLike], *, layout: Layout = "nchw") -> dict[str, FloatArray]: ...
    def backward(self, output_gradients: Mapping[str, npt.ArrayLike], *, layout: Layout = "nchw") -> dict[str, FloatArray]: ...
    def step(self) -> None: ...
    def zero_grad(self) -> None: ...
    def save(self, path: PathLike, source_path: PathLike | None = None) -> None: ...
    def memory(self) -> dict[str, int]: ...
    def parameters(self) -> list[ParameterInfo]: ...
    @property
    def batch(self) -> int: ...
    @property
    def parameter_count(self) -> int: ...
    @property
    def steps_taken(self) -> int: ...
    @property
    def kernel_names(self) -> list[str]: ...
    @property
    def model(self) -> Model: ...

class FinetuneProgress(TypedDict):
    step: int
    steps: int
    generator_loss: float
    discriminator_loss: float | None
    seconds: float

class FinetuneResult(TypedDict):
    steps: int
    generator_losses: list[float]
    discriminator_losses: list[float]
    seconds: float

def finetune(
    generator: Trainer,
    images: npt.ArrayLike,
    labels: npt.ArrayLike | None = None,
    *,
    discriminator: Trainer | None = None,
    targets: npt.ArrayLike | None = None,
    steps: int = 200,
    loss: Literal["mse", "l1"] = "mse",
    seed: int = 0,
    layout: Layout = "nchw",
    progress: Callable[[FinetuneProgress], bool | None] | None = None,
) -> FinetuneResult: ...
def convert(
    onnx_path: PathLike, egan_path: PathLike, weights: Literal["fp32", "fp16"] = "fp32", *, blend: tuple[PathLike, float] | None = None
) -> str: ...
def normal_noise(shape: int | Sequence[int], seed: int) -> FloatArray: ...
def write_png_grid(
    path: PathLike,
    images: npt.ArrayLike,
    *,
    columns: int = 0,
    scale: int = 4,
    value_range: tuple[float, float] | None = None,
    layout: Layout = "nchw",
) -> None: ...
def read_image(path: PathLike) -> PictureArray: ...
def write_image(
    path: PathLike,
    image: npt.ArrayLike,
    *,
    format: Literal["png", "jpg", "jpeg", "webp"] | None = None,
    quality: int | None = None,
) -> None: ...

class ImageToImage:
    def __init__(
        self,
        model: Model | PathLike,
        *,
        backend: Literal["cpu", "cuda"] = "cpu",
        threads: int = 0,
        tile: int = 0,
        overlap: int = 16,
        batch: int = 1,
        memory_limit: int | None = None,
        outscale: float | None = None,
        alpha: Literal["lanczos", "model"] = "lanczos",
        tile_stats: Literal["exact", "approx"] = "exact",
    ) -> None: ...
    def run(self, image: npt.ArrayLike) -> PictureArray: ...
    def run_batch(self, images: Sequence[npt.ArrayLike]) -> list[PictureArray]: ...
    def output_size(self, width: int, height: int) -> tuple[int, int]: ...
    @property
    def scale(self) -> int: ...
    @property
    def alignment(self) -> int: ...
    @property
    def input_channels(self) -> int: ...
    @property
    def output_channels(self) -> int: ...
    @property
    def model(self) -> Model: ...
