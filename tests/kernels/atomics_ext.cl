// atomics_ext.cl: every atomic on __global and __local memory: the 32-bit
// atomic_* on int and uint, the atom_* forms on 64-bit long and ulong,
// atomic_xchg on float and atom_xchg on double. Results are the final
// values, which do not depend on the order the work-items ran in.
// The runs and their expected outputs are in manifest.txt.
__kernel void global64(__global long* l, __global ulong* u) {
  long i = get_global_id(0);
  atom_add(&l[0], i << 33);
  atom_sub(&l[1], i);
  atom_min(&l[2], -i * 1000000007L);
  atom_max(&l[3], i * 3000000000L);
  atom_and(&l[4], ~(1L << (i % 63)));
  atom_or(&l[5], 1L << (i % 63));
  atom_xor(&l[6], i * 0x10001L);
  atom_inc(&l[7]);
  atom_dec(&l[8]);
  long old;
  do { old = l[9]; } while (atom_cmpxchg(&l[9], old, old + i) != old);
  atom_add(&u[0], (ulong)i << 40);
  atom_min(&u[1], (ulong)(i + 5));
  atom_max(&u[2], (ulong)i << 60);
  atom_and(&u[3], ~((ulong)1 << (i % 64)));
  atom_or(&u[4], (ulong)1 << (i % 64));
  atom_sub(&u[5], 1ul);
  atom_xchg(&u[6], 42ul);
}

__kernel void local32(__global int* out, __local int* t, __local uint* u) {
  int l = get_local_id(0);
  if (l == 0) {
    for (int k = 0; k < 8; ++k) { t[k] = 0; u[k] = 0; }
    t[2] = 1 << 30; t[3] = -(1 << 30); t[4] = -1; u[3] = 0xffffffffu;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&t[0], l);
  atomic_sub(&t[1], l * 2);
  atomic_min(&t[2], l - 7);
  atomic_max(&t[3], l * 11);
  atomic_and(&t[4], ~(1 << (l % 31)));
  atomic_or(&t[5], 1 << (l % 31));
  atomic_xor(&t[6], l);
  atomic_inc(&u[0]);
  atomic_dec(&u[1]);
  atomic_max(&u[2], (uint)l * 7u);
  atomic_min(&u[3], (uint)l + 100u);
  uint old;
  do { old = u[4]; } while (atomic_cmpxchg(&u[4], old, old + 2u) != old);
  atom_add(&u[5], 3u);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l < 8) {
    __global int* o = out + get_group_id(0) * 16;
    o[l] = t[l];
    o[8 + l] = (int)u[l];
  }
}

__kernel void exchange(__global float* f, __global double* d,
                       __global int* valid) {
  int i = get_global_id(0), n = get_global_size(0);
  float was = atomic_xchg(&f[0], (float)i);
  double dwas = atom_xchg(&d[0], (double)i * 0.5);
  // Which value each one sees depends on the order; that each sees one
  // that was stored (or the initial -1) does not.
  atomic_add(&valid[0], was >= -1.0f && was < n && was == (int)was);
  atomic_add(&valid[1], dwas >= -0.5 && dwas < n * 0.5);
}
