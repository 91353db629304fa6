// loop_shapes.cl: goto and switch in kernels without barriers; a helper
// assigned to a vector component (check_program.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void loop_goto(__global int* o) {
  int i = get_global_id(0);
  if (i == 1) goto skip;
  o[i] = 10;
  return;
skip:
  o[i] = 20;
}
__kernel void barrier_inner_break(__global int* o, __local int* t) {
  int l = get_local_id(0);
  t[l] = l;
  barrier(CLK_LOCAL_MEM_FENCE);
  int found = -1;
  for (int k = 0; k < 4; ++k) {
    if (t[k] == 2) { found = k; break; }
  }
  switch (l) { case 0: found += 100; break; default: break; }
  o[get_global_id(0)] = found;
}
float scale(float x) { return 3.0f * x; }
__kernel void v(__global float* o) {
  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  a.x = scale(a.y);
  o[0] = a.x + a.s3;
}
