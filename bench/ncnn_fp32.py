"""ncnn as every bench script here runs it. An ncnn.Net: fp32 throughout, like the
other engines. Its defaults store activations in fp16 or bf16 where the CPU can (x86 with
F16C included), which moves its outputs up to 3e-3 from PyTorch's: a different
computation, and not the one the others are timed on."""


def fp32_net(threads):
    import ncnn
    net = ncnn.Net()
    net.opt.num_threads = threads
    net.opt.use_packing_layout = True
    for flag in ("use_fp16_storage", "use_fp16_packed", "use_fp16_arithmetic", "use_bf16_storage", "use_bf16_packed"):
        if hasattr(net.opt, flag):
            setattr(net.opt, flag, False)
    return net


def extractor_run(net, x, in_blob, out_blob):
    """A function that runs `net` once on x (C, H, W) and returns its output ncnn.Mat: a
    fresh extractor per call, as ncnn's own benchmark does, timed with it."""
    import ncnn
    import numpy as np
    mat = ncnn.Mat(np.ascontiguousarray(x))

    def run():
        ex = net.create_extractor()
        ex.input(in_blob, mat)
        ret, out = ex.extract(out_blob)
        if ret != 0:
            raise RuntimeError("ncnn extract returned %d" % ret)
        return out
    return run
