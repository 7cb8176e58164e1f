# Independent PyTorch definitions of published GAN architectures, written the way their
# repositories write them (small widths); check_published_architectures.py converts and runs them.
import functools, torch, torch.nn as nn, torch.nn.functional as F
from torch.nn.utils import weight_norm

# ---- CycleGAN ResnetGenerator (junyanz/pytorch-CycleGAN-and-pix2pix style)
class ResnetBlock(nn.Module):
    def __init__(self, dim, norm_layer, use_dropout, use_bias):
        super().__init__()
        b = [nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, padding=0, bias=use_bias), norm_layer(dim), nn.ReLU(True)]
        if use_dropout: b += [nn.Dropout(0.5)]
        b += [nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, padding=0, bias=use_bias), norm_layer(dim)]
        self.conv_block = nn.Sequential(*b)
    def forward(self, x): return x + self.conv_block(x)

class ResnetGenerator(nn.Module):
    def __init__(self, input_nc=3, output_nc=3, ngf=16, n_blocks=3, use_dropout=True):
        super().__init__()
        norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
        use_bias = True
        model = [nn.ReflectionPad2d(3), nn.Conv2d(input_nc, ngf, 7, padding=0, bias=use_bias), norm_layer(ngf), nn.ReLU(True)]
        for i in range(2):
            mult = 2 ** i
            model += [nn.Conv2d(ngf * mult, ngf * mult * 2, 3, stride=2, padding=1, bias=use_bias), norm_layer(ngf * mult * 2), nn.ReLU(True)]
        mult = 4
        for i in range(n_blocks): model += [ResnetBlock(ngf * mult, norm_layer, use_dropout, use_bias)]
        for i in range(2):
            mult = 2 ** (2 - i)
            model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), 3, stride=2, padding=1, output_padding=1, bias=use_bias),
                      norm_layer(int(ngf * mult / 2)), nn.ReLU(True)]
        model += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, output_nc, 7, padding=0), nn.Tanh()]
        self.model = nn.Sequential(*model)
    def forward(self, x): return self.model(x)

# ---- pix2pix UnetGenerator
class UnetSkipConnectionBlock(nn.Module):
    def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, innermost=False, norm_layer=nn.BatchNorm2d, use_dropout=False):
        super().__init__()
        self.outermost = outermost
        use_bias = False
        if input_nc is None: input_nc = outer_nc
        downconv = nn.Conv2d(input_nc, inner_nc, 4, stride=2, padding=1, bias=use_bias)
        downrelu = nn.LeakyReLU(0.2, True); downnorm = norm_layer(inner_nc)
        uprelu = nn.ReLU(True); upnorm = norm_layer(outer_nc)
        if outermost:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, 4, stride=2, padding=1)
            model = [downconv] + [submodule] + [uprelu, upconv, nn.Tanh()]
        elif innermost:
            upconv = nn.ConvTranspose2d(inner_nc, outer_nc, 4, stride=2, padding=1, bias=use_bias)
            model = [downrelu, downconv] + [uprelu, upconv, upnorm]
        else:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, 4, stride=2, padding=1, bias=use_bias)
            model = [downrelu, downconv, downnorm] + [submodule] + [uprelu, upconv, upnorm] + ([nn.Dropout(0.5)] if use_dropout else [])
        self.model = nn.Sequential(*model)
    def forward(self, x):
        if self.outermost: return self.model(x)
        return torch.cat([x, self.model(x)], 1)

class UnetGenerator(nn.Module):
    def __init__(self, input_nc=3, output_nc=3, num_downs=6, ngf=8):
        super().__init__()
        b = UnetSkipConnectionBlock(ngf * 8, ngf * 8, innermost=True)
        for i in range(num_downs - 5): b = UnetSkipConnectionBlock(ngf * 8, ngf * 8, submodule=b, use_dropout=True)
        b = UnetSkipConnectionBlock(ngf * 4, ngf * 8, submodule=b)
        b = UnetSkipConnectionBlock(ngf * 2, ngf * 4, submodule=b)
        b = UnetSkipConnectionBlock(ngf, ngf * 2, submodule=b)
        self.model = UnetSkipConnectionBlock(output_nc, ngf, input_nc=input_nc, submodule=b, outermost=True)
    def forward(self, x): return self.model(x)

# ---- fast neural style TransformerNet (pytorch/examples style)
class ConvLayer(nn.Module):
    def __init__(self, i, o, k, s):
        super().__init__(); self.reflection_pad = nn.ReflectionPad2d(k // 2); self.conv2d = nn.Conv2d(i, o, k, s)
    def forward(self, x): return self.conv2d(self.reflection_pad(x))
class StyleResidual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = ConvLayer(c, c, 3, 1); self.in1 = nn.InstanceNorm2d(c, affine=True)
        self.conv2 = ConvLayer(c, c, 3, 1); self.in2 = nn.InstanceNorm2d(c, affine=True); self.relu = nn.ReLU()
    def forward(self, x):
        r = x; out = self.relu(self.in1(self.conv1(x))); out = self.in2(self.conv2(out)); return out + r
class UpsampleConvLayer(nn.Module):
    def __init__(self, i, o, k, s, upsample=None):
        super().__init__(); self.upsample = upsample; self.reflection_pad = nn.ReflectionPad2d(k // 2); self.conv2d = nn.Conv2d(i, o, k, s)
    def forward(self, x):
        if self.upsample: x = F.interpolate(x, mode='nearest', scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x))
class TransformerNet(nn.Module):
    def __init__(self, w=8):
        super().__init__()
        self.conv1 = ConvLayer(3, w, 9, 1); self.in1 = nn.InstanceNorm2d(w, affine=True)
        self.conv2 = ConvLayer(w, 2*w, 3, 2); self.in2 = nn.InstanceNorm2d(2*w, affine=True)
        self.conv3 = ConvLayer(2*w, 4*w, 3, 2); self.in3 = nn.InstanceNorm2d(4*w, affine=True)
        self.res = nn.Sequential(*[StyleResidual(4*w) for _ in range(3)])
        self.deconv1 = UpsampleConvLayer(4*w, 2*w, 3, 1, upsample=2); self.in4 = nn.InstanceNorm2d(2*w, affine=True)
        self.deconv2 = UpsampleConvLayer(2*w, w, 3, 1, upsample=2); self.in5 = nn.InstanceNorm2d(w, affine=True)
        self.deconv3 = ConvLayer(w, 3, 9, 1); self.relu = nn.ReLU()
    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X))); y = self.relu(self.in2(self.conv2(y))); y = self.relu(self.in3(self.conv3(y)))
        y = self.res(y); y = self.relu(self.in4(self.deconv1(y))); y = self.relu(self.in5(self.deconv2(y))); return self.deconv3(y)

# ---- SRResNet / SRGAN generator
class SRRes(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.b = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c), nn.PReLU(), nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c))
    def forward(self, x): return x + self.b(x)
class SRGANGenerator(nn.Module):
    def __init__(self, c=16, n=3, scale=4):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, c, 9, 1, 4), nn.PReLU())
        self.body = nn.Sequential(*[SRRes(c) for _ in range(n)])
        self.mid = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c))
        ups = []
        for _ in range(scale // 2): ups += [nn.Conv2d(c, c * 4, 3, 1, 1), nn.PixelShuffle(2), nn.PReLU()]
        self.up = nn.Sequential(*ups); self.tail = nn.Conv2d(c, 3, 9, 1, 4)
    def forward(self, x):
        h = self.head(x); y = self.mid(self.body(h)) + h; return self.tail(self.up(y))

# ---- ESRGAN RRDBNet (BasicSR style)
class ResidualDenseBlock_5C(nn.Module):
    def __init__(self, nf=16, gc=8):
        super().__init__()
        self.conv1 = nn.Conv2d(nf, gc, 3, 1, 1); self.conv2 = nn.Conv2d(nf + gc, gc, 3, 1, 1); self.conv3 = nn.Conv2d(nf + 2 * gc, gc, 3, 1, 1)
        self.conv4 = nn.Conv2d(nf + 3 * gc, gc, 3, 1, 1); self.conv5 = nn.Conv2d(nf + 4 * gc, nf, 3, 1, 1); self.lrelu = nn.LeakyReLU(0.2, True)
    def forward(self, x):
        x1 = self.lrelu(self.conv1(x)); x2 = self.lrelu(self.conv2(torch.cat((x, x1), 1))); x3 = self.lrelu(self.conv3(torch.cat((x, x1, x2), 1)))
        x4 = self.lrelu(self.conv4(torch.cat((x, x1, x2, x3), 1))); x5 = self.conv5(torch.cat((x, x1, x2, x3, x4), 1)); return x5 * 0.2 + x
class RRDB(nn.Module):
    def __init__(self, nf, gc):
        super().__init__(); self.RDB1 = ResidualDenseBlock_5C(nf, gc); self.RDB2 = ResidualDenseBlock_5C(nf, gc); self.RDB3 = ResidualDenseBlock_5C(nf, gc)
    def forward(self, x): return self.RDB3(self.RDB2(self.RDB1(x))) * 0.2 + x
class RRDBNet(nn.Module):
    def __init__(self, nf=16, nb=2, gc=8):
        super().__init__()
        self.conv_first = nn.Conv2d(3, nf, 3, 1, 1); self.RRDB_trunk = nn.Sequential(*[RRDB(nf, gc) for _ in range(nb)])
        self.trunk_conv = nn.Conv2d(nf, nf, 3, 1, 1); self.upconv1 = nn.Conv2d(nf, nf, 3, 1, 1); self.upconv2 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.HRconv = nn.Conv2d(nf, nf, 3, 1, 1); self.conv_last = nn.Conv2d(nf, 3, 3, 1, 1); self.lrelu = nn.LeakyReLU(0.2, True)
    def forward(self, x):
        fea = self.conv_first(x); fea = fea + self.trunk_conv(self.RRDB_trunk(fea))
        fea = self.lrelu(self.upconv1(F.interpolate(fea, scale_factor=2, mode='nearest')))
        fea = self.lrelu(self.upconv2(F.interpolate(fea, scale_factor=2, mode='nearest')))
        return self.conv_last(self.lrelu(self.HRconv(fea)))

# ---- Real-ESRGAN SRVGGNetCompact
class SRVGGNetCompact(nn.Module):
    def __init__(self, num_in_ch=3, num_out_ch=3, num_feat=16, num_conv=4, upscale=4):
        super().__init__()
        self.upscale = upscale
        self.body = nn.ModuleList([nn.Conv2d(num_in_ch, num_feat, 3, 1, 1), nn.PReLU(num_parameters=num_feat)])
        for _ in range(num_conv): self.body += [nn.Conv2d(num_feat, num_feat, 3, 1, 1), nn.PReLU(num_parameters=num_feat)]
        self.body.append(nn.Conv2d(num_feat, num_out_ch * upscale * upscale, 3, 1, 1)); self.upsampler = nn.PixelShuffle(upscale)
    def forward(self, x):
        out = x
        for m in self.body: out = m(out)
        out = self.upsampler(out); base = F.interpolate(x, scale_factor=self.upscale, mode='nearest'); return out + base

# ---- AnimeGANv2 generator (bryandlee/animegan2-pytorch style)
class ConvNormLReLU(nn.Sequential):
    def __init__(self, in_ch, out_ch, kernel_size=3, stride=1, padding=1, pad_mode="reflect", groups=1, bias=False):
        pad_layer = {"zero": nn.ZeroPad2d, "same": nn.ReplicationPad2d, "reflect": nn.ReflectionPad2d}
        super().__init__(pad_layer[pad_mode](padding), nn.Conv2d(in_ch, out_ch, kernel_size, stride, 0, groups=groups, bias=bias),
                         nn.GroupNorm(1, out_ch, affine=True), nn.LeakyReLU(0.2, inplace=True))
class InvertedResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, expansion_ratio=2):
        super().__init__()
        self.use_res_connect = in_ch == out_ch
        bottleneck = int(round(in_ch * expansion_ratio))
        layers = []
        if expansion_ratio != 1: layers.append(ConvNormLReLU(in_ch, bottleneck, kernel_size=1, padding=0))
        layers.append(ConvNormLReLU(bottleneck, bottleneck, groups=bottleneck, bias=True))
        layers.append(nn.Conv2d(bottleneck, out_ch, kernel_size=1, padding=0, bias=False))
        layers.append(nn.GroupNorm(1, out_ch, affine=True))
        self.layers = nn.Sequential(*layers)
    def forward(self, x):
        out = self.layers(x)
        return x + out if self.use_res_connect else out
class AnimeGenerator(nn.Module):
    def __init__(self, w=8):
        super().__init__()
        self.block_a = nn.Sequential(ConvNormLReLU(3, 2*w, kernel_size=7, padding=3), ConvNormLReLU(2*w, 4*w, stride=2, padding=(0, 1, 0, 1)), ConvNormLReLU(4*w, 4*w))
        self.block_b = nn.Sequential(ConvNormLReLU(4*w, 8*w, stride=2, padding=(0, 1, 0, 1)), ConvNormLReLU(8*w, 8*w))
        self.block_c = nn.Sequential(ConvNormLReLU(8*w, 8*w), InvertedResBlock(8*w, 16*w), InvertedResBlock(16*w, 16*w), ConvNormLReLU(16*w, 8*w))
        self.block_d = nn.Sequential(ConvNormLReLU(8*w, 4*w), ConvNormLReLU(4*w, 4*w))
        self.block_e = nn.Sequential(ConvNormLReLU(4*w, 2*w), ConvNormLReLU(2*w, 2*w), ConvNormLReLU(2*w, 2*w, kernel_size=7, padding=3))
        self.out_layer = nn.Sequential(nn.Conv2d(2*w, 3, kernel_size=1, stride=1, padding=0, bias=False), nn.Tanh())
    def forward(self, input, align_corners=True):
        out = self.block_a(input); half_size = out.size()[-2:]
        out = self.block_b(out); out = self.block_c(out)
        out = F.interpolate(out, half_size, mode="bilinear", align_corners=True)
        out = self.block_d(out)
        out = F.interpolate(out, input.size()[-2:], mode="bilinear", align_corners=True)
        out = self.block_e(out); return self.out_layer(out)

# ---- PatchGAN NLayerDiscriminator
class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc=3, ndf=8, n_layers=3):
        super().__init__()
        seq = [nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True)]
        nf_mult = 1
        for n in range(1, n_layers):
            prev, nf_mult = nf_mult, min(2 ** n, 8)
            seq += [nn.Conv2d(ndf * prev, ndf * nf_mult, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        prev, nf_mult = nf_mult, min(2 ** n_layers, 8)
        seq += [nn.Conv2d(ndf * prev, ndf * nf_mult, 4, 1, 1, bias=False), nn.BatchNorm2d(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        seq += [nn.Conv2d(ndf * nf_mult, 1, 4, 1, 1)]
        self.model = nn.Sequential(*seq)
    def forward(self, x): return self.model(x)

# ---- HiFi-GAN generator (jik876 style; weight norm kept, as a model exported mid-training would have it)
LRELU_SLOPE = 0.1
def get_padding(k, d=1): return int((k * d - d) / 2)
class ResBlock1(nn.Module):
    def __init__(self, ch, k=3, dil=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList([weight_norm(nn.Conv1d(ch, ch, k, 1, dilation=d, padding=get_padding(k, d))) for d in dil])
        self.convs2 = nn.ModuleList([weight_norm(nn.Conv1d(ch, ch, k, 1, dilation=1, padding=get_padding(k, 1))) for _ in dil])
    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = F.leaky_relu(x, LRELU_SLOPE); xt = c1(xt); xt = F.leaky_relu(xt, LRELU_SLOPE); xt = c2(xt); x = xt + x
        return x
class HiFiGAN(nn.Module):
    def __init__(self, mels=16, ch=32, rates=(4, 4), kernels=(8, 8), rk=(3, 7), rd=((1, 3, 5), (1, 3, 5))):
        super().__init__()
        self.num_kernels = len(rk); self.conv_pre = weight_norm(nn.Conv1d(mels, ch, 7, 1, padding=3))
        self.ups = nn.ModuleList([weight_norm(nn.ConvTranspose1d(ch // 2 ** i, ch // 2 ** (i + 1), k, u, padding=(k - u) // 2)) for i, (u, k) in enumerate(zip(rates, kernels))])
        self.resblocks = nn.ModuleList([ResBlock1(ch // 2 ** (i + 1), k, d) for i in range(len(self.ups)) for k, d in zip(rk, rd)])
        self.conv_post = weight_norm(nn.Conv1d(ch // 2 ** len(rates), 1, 7, 1, padding=3))
    def forward(self, x):
        x = self.conv_pre(x)
        for i, up in enumerate(self.ups):
            x = F.leaky_relu(x, LRELU_SLOPE); x = up(x); xs = None
            for j in range(self.num_kernels):
                r = self.resblocks[i * self.num_kernels + j](x); xs = r if xs is None else xs + r
            x = xs / self.num_kernels
        x = F.leaky_relu(x); x = self.conv_post(x); return torch.tanh(x)

# ---- MelGAN generator (descriptinc style)
def WNConv1d(*a, **k): return weight_norm(nn.Conv1d(*a, **k))
def WNConvTranspose1d(*a, **k): return weight_norm(nn.ConvTranspose1d(*a, **k))
class MelResnetBlock(nn.Module):
    def __init__(self, dim, dilation=1):
        super().__init__()
        self.block = nn.Sequential(nn.LeakyReLU(0.2), nn.ReflectionPad1d(dilation), WNConv1d(dim, dim, kernel_size=3, dilation=dilation), nn.LeakyReLU(0.2), WNConv1d(dim, dim, kernel_size=1))
        self.shortcut = WNConv1d(dim, dim, kernel_size=1)
    def forward(self, x): return self.shortcut(x) + self.block(x)
class MelGenerator(nn.Module):
    def __init__(self, input_size=16, ngf=8, n_residual_layers=3, ratios=(4, 4)):
        super().__init__()
        mult = int(2 ** len(ratios))
        model = [nn.ReflectionPad1d(3), WNConv1d(input_size, mult * ngf, kernel_size=7, padding=0)]
        for r in ratios:
            model += [nn.LeakyReLU(0.2), WNConvTranspose1d(mult * ngf, mult * ngf // 2, kernel_size=r * 2, stride=r, padding=r // 2 + r % 2, output_padding=r % 2)]
            for j in range(n_residual_layers): model += [MelResnetBlock(mult * ngf // 2, dilation=3 ** j)]
            mult //= 2
        model += [nn.LeakyReLU(0.2), nn.ReflectionPad1d(3), WNConv1d(ngf, 1, kernel_size=7, padding=0), nn.Tanh()]
        self.model = nn.Sequential(*model)
    def forward(self, x): return self.model(x)

# ---- FSRCNN (Dong, Loy and Tang, "Accelerating the Super-Resolution Convolutional Neural Network", 2016)
# Feature extraction 5x5 1->d, shrinking 1x1 d->s, m mapping 3x3 s->s, expanding 1x1 s->d,
# each followed by a PReLU (one slope per channel), then a 9x9 transposed convolution to
# one channel at stride `scale` (pads 4, output_padding scale - 1: exactly scale x the input).
class FSRCNN(nn.Module):
    def __init__(self, scale=3, d=56, s=12, m=4):
        super().__init__()
        self.feature = nn.Sequential(nn.Conv2d(1, d, 5, padding=2), nn.PReLU(d))
        layers = [nn.Conv2d(d, s, 1), nn.PReLU(s)]
        for _ in range(m): layers += [nn.Conv2d(s, s, 3, padding=1), nn.PReLU(s)]
        layers += [nn.Conv2d(s, d, 1), nn.PReLU(d)]
        self.mid = nn.Sequential(*layers)
        self.last = nn.ConvTranspose2d(d, 1, 9, stride=scale, padding=4, output_padding=scale - 1)
    def forward(self, x): return self.last(self.mid(self.feature(x)))

# ---- ESPCN (Shi et al., "Real-Time Single Image and Video Super-Resolution Using an Efficient
# Sub-Pixel Convolutional Neural Network", 2016): 5x5 1->64, 3x3 64->32 (tanh in the paper),
# 3x3 32->r^2, pixel shuffle.
class ESPCN(nn.Module):
    def __init__(self, scale=3, f1=64, f2=32):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, f1, 5, padding=2), nn.Tanh(), nn.Conv2d(f1, f2, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(f2, scale * scale, 3, padding=1))
        self.shuffle = nn.PixelShuffle(scale)
    def forward(self, x): return self.shuffle(self.body(x))

MODELS = {
    "cyclegan": (ResnetGenerator, (2, 3, 64, 64)),
    "pix2pix": (UnetGenerator, (2, 3, 64, 64)),
    "style": (TransformerNet, (2, 3, 64, 64)),
    "srgan": (SRGANGenerator, (2, 3, 16, 16)),
    "esrgan": (RRDBNet, (2, 3, 12, 12)),
    "realesrgan": (SRVGGNetCompact, (2, 3, 16, 16)),
    "animegan": (AnimeGenerator, (2, 3, 64, 64)),
    "patchgan": (NLayerDiscriminator, (2, 3, 64, 64)),
    "hifigan": (HiFiGAN, (2, 16, 20)),
    "melgan": (MelGenerator, (2, 16, 20)),
    "fsrcnn": (FSRCNN, (2, 1, 17, 23)),
    "espcn": (ESPCN, (2, 1, 17, 23)),
}
