"""Helpers for writing golden test cases in the layout the C++ tests expect:

tests/golden/cases/<case>/
    model.onnx           (or model_path.txt with a repo-relative path to the ONNX)
    inputs/<name>.npy    float32 (float inputs) / int64 (label inputs)
    outputs/<name>.npy   float32, exactly as PyTorch returns it
    README.md            optional description
"""
import copy
import os
import shutil

import numpy as np
import torch
import torch.nn as nn

GOLDEN_DIR = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(GOLDEN_DIR, "cases")


def _to_np(t):
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    if a.dtype.kind == "f":
        a = a.astype(np.float32)
    elif a.dtype.kind in "iu":
        a = a.astype(np.int64)
    return np.ascontiguousarray(a)


def write_case(name, inputs, outputs, model_path=None, onnx_bytes_path=None, readme=None):
    """inputs/outputs: dict name -> tensor/array.
    model_path: repo-relative path written to model_path.txt (shipped models);
    onnx_bytes_path: an existing ONNX file to copy as model.onnx."""
    d = os.path.join(CASES_DIR, name)
    if os.path.isdir(d):
        shutil.rmtree(d)  # regenerate from scratch so stale files never linger
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "outputs"))
    if model_path is not None:
        with open(os.path.join(d, "model_path.txt"), "w") as f:
            f.write(model_path + "\n")
    if onnx_bytes_path is not None:
        shutil.copyfile(onnx_bytes_path, os.path.join(d, "model.onnx"))
    for k, v in inputs.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), _to_np(v))
    for k, v in outputs.items():
        np.save(os.path.join(d, "outputs", k + ".npy"), _to_np(v))
    if readme:
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write(readme.rstrip() + "\n")
    return d


def fix_output_shapes(onnx_path, output_shapes):
    """Overwrite declared graph-output shapes with concrete dims (dim 0 stays 'N').

    torch.onnx sometimes declares symbolic names such as 'Reshapelogit_dim_1' for
    non-batch dims it could not infer; replace them with the real sizes observed in
    PyTorch so the graph's I/O signature is fully known except for the batch dim."""
    import onnx
    m = onnx.load(onnx_path)
    for out in m.graph.output:
        if out.name not in output_shapes:
            continue
        shape = out.type.tensor_type.shape
        del shape.dim[:]
        for i, n in enumerate(output_shapes[out.name]):
            d = shape.dim.add()
            if i == 0:
                d.dim_param = "N"
            else:
                d.dim_value = int(n)
    onnx.checker.check_model(m)
    onnx.save(m, onnx_path)


def fold_batchnorm(model):
    """A copy of `model` with every (Conv|ConvTranspose|Linear, BatchNorm) pair inside a
    Sequential merged into one layer with a bias (eval statistics): the function edgegan
    trains, since the converter folds BatchNorm the same way."""
    model = copy.deepcopy(model)

    def fold_pair(layer, bn):
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        shift = bn.bias - bn.running_mean * scale
        if isinstance(layer, nn.ConvTranspose2d):
            new = nn.ConvTranspose2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride, layer.padding,
                                     layer.output_padding, layer.groups, True, layer.dilation)
            w = layer.weight * scale.view(1, -1, 1, 1)
        elif isinstance(layer, nn.Conv2d):
            new = nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride, layer.padding,
                            layer.dilation, layer.groups, True)
            w = layer.weight * scale.view(-1, 1, 1, 1)
        else:
            new = nn.Linear(layer.in_features, layer.out_features, True)
            w = layer.weight * scale.view(-1, 1)
        b = shift if layer.bias is None else layer.bias * scale + shift
        with torch.no_grad():
            new.weight.copy_(w)
            new.bias.copy_(b)
        return new

    def walk(module):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Sequential):
                layers, kids = [], list(child.children())
                i = 0
                while i < len(kids):
                    if (i + 1 < len(kids) and isinstance(kids[i], (nn.Conv2d, nn.ConvTranspose2d, nn.Linear))
                            and isinstance(kids[i + 1], (nn.BatchNorm1d, nn.BatchNorm2d))):
                        layers.append(fold_pair(kids[i], kids[i + 1]))
                        i += 2
                    else:
                        layers.append(kids[i])
                        i += 1
                setattr(module, name, nn.Sequential(*layers))
            else:
                walk(child)

    walk(model)
    return model


def export_onnx(model, args, input_names, output_names, path, opset=13):
    """torch.onnx.export with a dynamic batch dim on every input/output and the first
    output's non-batch dims written as concrete sizes. The model is put in eval mode."""
    model.eval()
    dyn = {n: {0: "N"} for n in input_names + output_names}
    torch.onnx.export(model, args, path, opset_version=opset, input_names=input_names, output_names=output_names,
                      dynamic_axes=dyn, do_constant_folding=True)
    with torch.no_grad():
        out = model(*args)
    fix_output_shapes(path, {output_names[0]: tuple(out.shape)})
