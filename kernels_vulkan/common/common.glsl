// What every edgegan shader shares: buffer references for the arena's tensors and the
// kernel's upload (no descriptor sets: addresses come in push constants), the push
// constants' layout, and the grid-stride loop over a dispatch's elements.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require
#ifdef EDGEGAN_FP16
#extension GL_EXT_shader_16bit_storage : require
#endif

layout(local_size_x = 64) in;

// The arena's float tensors and the uploads' weights: floats, or with EDGEGAN_FP16 (the
// _f16 variant of every shader, for fp16 sessions) halves. Shaders reach them only
// through ld() and st(), which widen to float and round back, so arithmetic and
// accumulation are float in both variants.
#ifdef EDGEGAN_FP16
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer Floats { float16_t v[]; };
float ld(Floats b, uint i) { return float(b.v[i]); }
void st(Floats b, uint i, float x) { b.v[i] = float16_t(x); }
#else
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Floats { float v[]; };
float ld(Floats b, uint i) { return b.v[i]; }
void st(Floats b, uint i, float x) { b.v[i] = x; }
#endif
// Floats in both variants (statistics a kernel keeps in its workspace).
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Stats { float v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Ints { int v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Uints { uint v[]; };

// Every shader's push constants: the kernel's upload (its parameter block: ints, and the
// weights it addresses by Floats element offset from the same base), up to four tensors of the
// arena, and the number of elements the dispatch covers.
layout(push_constant, scalar) uniform Push {
  Ints params;
  Floats t0;
  Floats t1;
  Floats t2;
  Floats t3;
  uint count;
  uint first;  // an index the host passes per dispatch (a Concat input's column)
} pc;

int param(int i) { return pc.params.v[i]; }
float param_f(int i) { return intBitsToFloat(pc.params.v[i]); }
// The upload as Floats: ld(upload_floats(), k) reads element k (its weight arrays).
Floats upload_floats() { return Floats(pc.params); }

#define FOR_EACH_ELEMENT(i) for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)
