// What every edgegan shader shares: buffer references for the arena's tensors and the
// kernel's upload (no descriptor sets: addresses come in push constants), the push
// constants' layout, and the grid-stride loop over a dispatch's elements.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require

layout(local_size_x = 64) in;

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Ints { int v[]; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Uints { uint v[]; };

// Every shader's push constants: the kernel's upload (its parameter block: ints, and the
// weights it addresses by float offset from the same base), up to four tensors of the
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
// The upload's floats from word `offset` (a weight array in the kernel's upload).
Floats upload_floats() { return Floats(pc.params); }

#define FOR_EACH_ELEMENT(i) for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)
