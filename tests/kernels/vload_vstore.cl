// vload_vstore.cl: vloadN and vstoreN of every width, at aligned and
// unaligned addresses, on global, local and private memory.
// The runs and their expected outputs are in manifest.txt.
__kernel void floats(__global const float* in, __global float* out,
                     __local float* scratch) {
  size_t i = get_global_id(0);
  size_t l = get_local_id(0);
  float4 a = vload4(i, in);            // aligned
  float4 b = vload4(0, in + i + 1);    // unaligned
  float2 c = vload2(i, in + 3);
  float8 d = vload8(i, in);
  float16 e = vload16(0, in + i);
  vstore4(a + b, i, out);
  vstore2(c, 0, out + 4 * get_global_size(0) + 2 * i);
  vstore8(d * 2.0f, 0, out + 6 * get_global_size(0) + 9 * i);
  vstore16(e, 0, out + 16 * get_global_size(0) + 17 * i);
  vstore4(a, l, scratch);
  barrier(CLK_LOCAL_MEM_FENCE);
  float4 back = vload4((l + 1) % get_local_size(0), scratch);
  float priv[9];
  for (int k = 0; k < 9; ++k) priv[k] = (float)k;
  vstore4(back, 0, priv + 1);
  out[34 * get_global_size(0) + i] = priv[0] + priv[3] * 10.0f + priv[8];
}
